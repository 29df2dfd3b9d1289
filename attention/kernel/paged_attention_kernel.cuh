// The paged attention kernel: persistent, warp-specialised, memory-bound.
// Included only by the per-(dtype, head_dim) .cu files.
//
// Each CTA is one worker of the plan (attention/planner/work_plan.h) and runs
// its segments in order with five warps:
//   - a producer warp streams the segment's K/V key tiles (16 KB each) through
//     the page table into a ring of kStages shared-memory stages, page ids
//     looked up one tile ahead: whole page rows by TMA for units of more than
//     32 rows (StreamsByTma) when every key of the tile is in the segment,
//     else 16-byte cp.async; each stage's "full" mbarrier completes when its
//     bytes land (TMA byte count, or cp.async.mbarrier.arrive);
//   - four consumer warps compute S = Q K^T, the online softmax and O += P V
//     with mma.sync m16n8k16 on the unit's packed query rows (query token x
//     query head of one KV head, so each K/V byte is read once for the whole
//     GQA group), and release each stage through its "empty" mbarrier; units
//     of 64 rows take wgmma as one warpgroup instead, for Q K^T and (head_dim
//     <= 128) for O += P V with P from registers.
// No CTA-wide barrier runs per tile: loads and math of different tiles overlap
// and the producer runs up to kStages tiles ahead. The consumers load each
// segment's query rows while the segment before it runs, into the other of
// two query tiles (KernelTraits::kQueryTiles).
//
// Consumer layout per unit (rows = packed rows, <= kUnitRows):
//   rows <= 16: one row block, the 4 warps take alternate key tiles;
//   rows <= 32: two row blocks x 2 key ways;   rows <= 64: four row blocks.
// Key ways are merged through shared memory (LSE-weighted) at the segment's
// end, so decode (a few rows) keeps all four warps busy. Plans whose units
// all have at most DecodeMaxRows rows (16; 8 at head_dim 256) run the decode
// instantiation (HasDecodeKernel; 16-row query tiles).
//
// A unit cut into pieces writes float32 partials. When it has at most
// kFusedMergeMaxRows rows (decode; twice that for KV head pairs), each worker counts its finished
// piece on the unit's MergeTask::arrivals and the one that finishes last merges the partials at
// once (the threadFenceReduction pattern: fence, atomic count, fence), so a split decode is one
// launch; larger units are left to the merge kernel. In the decode kernel launched cooperatively, a
// unit whose pieces all end their workers' lists (WorkSegment::merge_by_all) is merged by all of
// them: each waits for the count and merges a slice (MergeIfLastPiece). CTAs
// also zero the query tokens of CUDA-graph padding rows.
//
// Eager plans of co-read groups may run two workers per CTA (member pairs,
// WorkPlanView::member_pair_offset): two consumer warpgroups over one K/V
// stream, one CTA per SM (kGroups; PairWalk).
//
// K/V rows outside the segment's key range are never read (zero-filled), so
// NaN in unused pool slots cannot leak through 0 * NaN.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_
#define ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_

#include <cuda.h>  // CUtensorMap (types only: the encoder comes through cudart)
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "attention/base/ceil_div.h"
#include "attention/kernel/merge_partials.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

// Decode kernel: a second instantiation for plans whose units all have at most
// 16 rows (decode, and draft-extend up to 16 / group query tokens), without
// trees: one row block, no wgmma, no TMA (its units stream by cp.async only,
// StreamsByTma, whose tiles land in issue order, so its ring needs no multiple
// of the key ways). Code that only decode runs (the fused merge's row pairs)
// lives here, where it cannot change how ptxas builds the general kernel's
// 64-row loop (every change to the fused merge in the one kernel moved 64-row
// units by 2-5%, NOTES.md). head_dim 64 takes five stages (3-5% faster on its
// decode); head_dim 128 and 256 keep four, since five were 2% faster on short
// requests but 0.5-1.4% slower on long ones at head_dim 128 (NOTES.md).
//
// At head_dim 256 the decode kernel takes units of at most 8 rows, keeps
// only their O (RowState<256, 8>: 64 registers, not 128) and gives its
// consumers 200 registers (SplitsRegisters), so it spills nothing: with 16
// rows at 168 registers it spilled like the general kernel, whose spill
// reloads under a saturated memory system made each unit boundary cost ~7.5
// us (its fold and write; NOTES.md `HD256D`, the timeline, `D8`, `D8WG`).
// Two query tiles fit beside its ring with three fold slots (FoldSlots).
constexpr bool HasDecodeKernel(int head_dim) {
  return head_dim == 64 || head_dim == 128 || head_dim == 256;
}
// Rows of the decode kernel's units, and of its RowState.
constexpr int DecodeMaxRows(int head_dim) { return head_dim == 256 ? 8 : 16; }
constexpr int kDecodeQueryRows = 16;  // rows of its query tiles (one m16 row block)
// The paired-tiles instantiations (head_dim 128, general and tree kernels):
// units of four row blocks (more than 32 rows, the wgmma units) take two key
// tiles per softmax step, which took 64-row verify and prefill 13-17% (NOTES.md,
// `PAIR`). A kernel of its own because the same loop in the general kernel
// slowed its 32-row units 1-15% by code generation alone. Plans whose largest
// unit has more rows run it, so every unit of four row blocks does (the
// rounding of a paired step differs from two single ones).
constexpr bool HasPairedTilesKernel(int head_dim) { return head_dim == 128; }
constexpr int kPairedTilesMinRows = 33;
constexpr int DecodeStages(int head_dim) { return head_dim == 64 ? 5 : 4; }
// The decode kernel folds its key ways without a CTA barrier for whole units
// of at most kFoldSlotRows rows: a thread's row lane / 4 (its second row,
// lane / 4 + 8, is padding there), whose O, max and sum fill one fold slot.
constexpr int kFoldSlotRows = 8;
constexpr int FoldSlotFloats(int head_dim) { return (head_dim / 8) * 2 * 32 + 2 * 32; }
// Fold slots: one per key way, but at head_dim 256 the folder keeps its own
// state in registers (FoldKeyWaysIntoFolder): four slots of 8.25 KB there
// would leave no room for two CTAs per SM beside two query tiles.
constexpr int FoldSlots(int head_dim) { return head_dim == 256 ? 3 : 4; }
// Slot of key way `way` when `folder` folds without a slot of its own: the
// ways after the folder's, in order.
__device__ __forceinline__ int FoldSlotOf(int way, int folder) { return (way - folder + 3) % 4; }
constexpr int MaxOf(int a, int b) { return a > b ? a : b; }
// The deep ring of the paired-tiles kernels that run compute-bound plans
// (requests whose units share K/V: q_len x group > kUnitRows): five stages, for
// one query tile (see kQueryTiles). With four, such units wait for their loads:
// a paired step holds two stages, leaving the producer one pair of lookahead
// (NOTES.md `PVQ`, `R5`). Memory-bound plans keep four stages and the second
// query tile, which the fifth stage cost them 1-4% (`R5`).
constexpr int kDeepRingStages = 5;

// kGroups: consumer warpgroups per CTA. 2 (the deep ring only): each runs one
// worker of a member pair (WorkPlanView::member_pair_offset) on the one K/V
// stream of the CTA's producer, which the two members' workers would each
// stream for themselves: one CTA per SM, each K/V tile read once from L2 for
// 128 rows, and a ring of twice the stages.
template <int kHeadDim, bool kDecode = false, bool kDeepRing = false, int kGroups = 1>
struct KernelTraits {
  static_assert(IsSupportedHeadDim(kHeadDim), "unsupported head_dim");
  static_assert(!kDecode || HasDecodeKernel(kHeadDim), "no decode kernel at this head_dim");
  static_assert(kGroups == 1 || (kGroups == 2 && kDeepRing), "member pairs: the deep ring");
  static constexpr int kKeysPerTile = KeysPerTile(kHeadDim);
  // 16 KB stages: 64 KB of K/V in flight per CTA, two CTAs per SM. Four, a
  // multiple of the key ways, keep each stage's rounds with one key way (see
  // the wait in ConsumeSegments). Five were within 1% on most shapes but
  // 3-5% faster on short-request and head_dim 64 decode (NOTES.md): the
  // decode kernel, whose tiles land in order, has DecodeStages (six were no
  // faster than five).
  static constexpr int kStages = kDecode     ? DecodeStages(kHeadDim)
                                 : kDeepRing ? kDeepRingStages * kGroups
                                             : 4;
  static constexpr int kConsumerWarps = 4;
  static constexpr int kConsumerThreads = kConsumerWarps * 32;
  static constexpr int kThreads = kConsumerThreads + 32;   // + the producer warp
  static constexpr int kChunksPerRow = kHeadDim / 8;       // 16-byte chunks of one K/V row
  static constexpr int kRowsPerPass = 32 / kChunksPerRow;  // key rows per producer-warp pass
  static constexpr int kPasses = kKeysPerTile / kRowsPerPass;
  static constexpr int kKeysPerLane = (kKeysPerTile + 31) / 32;  // page lookups per producer lane
  static constexpr int kTileElems = kKeysPerTile * kHeadDim;
  static constexpr int kQueryRows = kDecode ? kDecodeQueryRows : kUnitRows;  // rows of a query tile
  static constexpr int kQElems = kQueryRows * kHeadDim;
  static constexpr int kQBytes = kQElems * 2;
  static constexpr int kRingBytes = 2 * kStages * kTileElems * 2;  // K and V
  // The merge of key ways (two warps' O in fp32), the fused merge's per-warp
  // weight tables and the decode kernel's fold slots (one per key way, for
  // its fold without a CTA barrier: FoldKeyWays): in the query tile once it
  // is no longer read, or in a scratch of their own where the query tile is
  // too small (decode). The scratch's users take turns (ConsumeDecodeSegments).
  // Rows of the consumers' RowState (DecodeMaxRows).
  static constexpr int kStateRows = kDecode ? DecodeMaxRows(kHeadDim) : 16;
  static constexpr int kKeyWayMergeBytes = 2 * kStateRows * kHeadDim * 4;
  static constexpr int kWeightTableBytes = kConsumerWarps * kMergeWeights * 4;
  static constexpr int kFoldBytes =
      kDecode ? FoldSlots(kHeadDim) * FoldSlotFloats(kHeadDim) * 4 : 0;
  static constexpr int kMergeScratchBytes =
      MaxOf(MaxOf(kKeyWayMergeBytes, kWeightTableBytes), kFoldBytes);
  static constexpr bool kScratchInQueryTile = kQBytes >= kMergeScratchBytes;
  static constexpr int kScratchBytes = kScratchInQueryTile ? 0 : kMergeScratchBytes;
  static constexpr int kMergeStateFloats = 4 * 32;  // m0, m1, l0, l1 per lane
  static constexpr int kMergeStateBytes = 2 * kMergeStateFloats * 4;
  // The decode kernel has four more barriers: the query tiles' "full" and
  // the fold's "full" and "free".
  static constexpr int kBarrierBytes = 2 * kStages * 8 + (kDecode ? 4 * 8 : 0);
  static constexpr int kFlagBytes = 48;  // FusedMergeFlag
  // (Per consumer group: the query tiles, scratch, merge state and flag.)
  static constexpr int kOneQuerySmemBytes =
      kGroups * (kQBytes + kScratchBytes + kMergeStateBytes + kFlagBytes) + kRingBytes +
      kBarrierBytes + 1024;  // + alignment slack
  // A second query tile lets the consumers load the next segment's queries
  // while the current segment runs (no DRAM round trip at a segment
  // boundary), where two CTAs per SM still fit (not in the general kernel at
  // head_dim 256, whose query tile holds 64 rows). The
  // deep ring spends that tile on a fifth stage instead: compute-bound units
  // are long, so few workers cross many segment boundaries.
  static constexpr int kQueryTiles =
      !kDeepRing && 2 * (kOneQuerySmemBytes + kQBytes) + 2 * 1024 <= 228 * 1024 ? 2 : 1;
  static constexpr int kSmemBytes = kOneQuerySmemBytes + kGroups * (kQueryTiles - 1) * kQBytes;

  static_assert(kUnitRows == kConsumerWarps * 16, "one m16 row block per consumer warp");
  static_assert(kKeysPerTile % 16 == 0, "whole mma k16 steps of P V");
  static_assert(kPasses * kRowsPerPass == kKeysPerTile && 32 % kRowsPerPass == 0,
                "producer passes cover the tile; no pass straddles 32 keys");
  // Every key-way count (1, 2, 4) divides kStages, so each stage's rounds go
  // to one key way (see the parity argument in ConsumeSegments). The decode
  // kernel's tiles land in issue order, which is enough; so do those of the
  // deep ring's units of more than one key way (<= 32 rows: by cp.async
  // only, StreamsByTma), and its TMA units have one key way.
  static_assert(kDecode || kDeepRing || kStages % kConsumerWarps == 0,
                "each stage's rounds stay with one key way");
  static_assert(!kDeepRing || !kDecode, "the deep ring is the paired-tiles kernels'");
  static_assert(!kDeepRing || kStages >= kConsumerWarps, "a warp's previous tile is a stage back");
  static_assert(!kDecode || kStages >= kConsumerWarps, "a warp's previous tile is a stage back");
  static_assert(!kDecode || kQueryTiles == 2, "the decode kernel's queries alternate tiles");
  static_assert(kGroups == 2 || 2 * kSmemBytes + 2 * 1024 <= 228 * 1024, "two CTAs per SM");
  static_assert(kSmemBytes + 1024 <= 228 * 1024, "one CTA per SM");
};

// Threads of a CTA. The deep-ring kernels and every head_dim 256 kernel give
// the producer a warpgroup of its own (one of its warps produces, the others
// leave) so that setmaxnreg, which moves registers a warpgroup at a time, can
// pass most of the producer's to the consumers (FlashAttention-3's layout): at
// two CTAs of five warps per SM, ptxas caps every thread at 168, and the
// compute-bound paired steps ran 2-4% faster with 184 (NOTES.md `R5WG`).
// Head_dim 256's consumers spilled at 168 registers, and under a saturated
// memory system each reload is a DRAM-queued L2 access: with 200 the decode
// kernel spills nothing (2-3% faster, NOTES.md `D8`, `D8WG`), the general and
// tree kernels 16 / 20 B instead of 132 / 192 (4-11% faster, `RS`).
// Memory-bound plans at head_dim 64 and 128, which do not spill, keep five
// warps: the same split cost them 0.5-1.3% (`WG`).
constexpr bool SplitsRegisters(int head_dim, bool deep_ring) {
  return deep_ring || head_dim == 256;
}
template <int kHeadDim, bool kDeepRing, int kGroups = 1>
constexpr int CtaThreads() {
  return SplitsRegisters(kHeadDim, kDeepRing)
             ? (kGroups + 1) * KernelTraits<kHeadDim>::kConsumerThreads
             : KernelTraits<kHeadDim>::kThreads;
}
// Per-thread registers after setmaxnreg where SplitsRegisters: launched at
// 128 (two CTAs of 256 threads per SM), the producer warpgroup gives up
// 128 - ProducerRegisters each and the consumer warpgroup takes as many. The
// deep ring's producer keeps 72 (at 56 it spilled once the stage index
// became % 5); head_dim 256's producers (four stages) fit in 56. Its
// consumers spill nothing at 200 in the decode kernel (166 B at 168, 70 B at
// 184); the general kernel's still spill 16 B, and 12 B at 216 (producer 40).
// With two consumer warpgroups (kGroups: one CTA of 384 threads per SM,
// launched at 168) the consumers take what the producer's warpgroup leaves of
// the SM's 64 K registers, in multiples of 8: 216.
constexpr int ProducerRegisters(bool deep_ring) { return deep_ring ? 72 : 56; }
constexpr int ConsumerRegisters(bool deep_ring, int groups = 1) {
  return groups == 1 ? 2 * 128 - ProducerRegisters(deep_ring)
                     : (65536 / 128 - ProducerRegisters(deep_ring)) / groups / 8 * 8;
}

__device__ __forceinline__ WorkSegment LoadSegment(const WorkSegment* segment) {
  const int4* words = reinterpret_cast<const int4*>(segment);
  const int4 a = __ldg(words), b = __ldg(words + 1), c = __ldg(words + 2);
  WorkSegment s;
  s.request = a.x;
  s.kv_head = a.y;
  s.unit_tile = a.z;
  s.key_begin = a.w;
  s.key_end = b.x;
  s.partial = b.y;
  s.q_begin = b.z;
  s.q_len = b.w;
  s.k_len = c.x;
  s.merge_task = c.y;
  s.merge_by_all = c.z;
  s.reserved = 0;
  return s;
}

// Key tiles of a segment: [first_tile, first_tile + num_tiles) x kKeysPerTile.
struct SegmentTiles {
  int first_tile;
  int num_tiles;
};

template <int kKeysPerTile>
__device__ __forceinline__ SegmentTiles TilesOf(const WorkSegment& segment) {
  if (segment.key_end <= segment.key_begin) return {0, 0};
  const int first = segment.key_begin / kKeysPerTile;
  return {first, CeilDiv(segment.key_end, kKeysPerTile) - first};
}

// ---------------------------------------------------------------------------
// Producer warp.

// Page ids of the keys one producer lane looks up for one tile (key
// lane + 32 * i of the tile); -1 for keys outside the segment.
template <int kKeysPerLane>
struct TilePages {
  int page[kKeysPerLane];
  int in_page[kKeysPerLane];
};

// Page arithmetic of the producer's per-tile path. Engines use page sizes
// that are powers of two; shift and mask then replace the division by a
// runtime value (~25 instructions for each of `/` and `%`), which ncu found
// on the producer warp's per-tile path (NOTES.md, Variants: the source-level
// profile at dc5e6bb).
struct PageGeometry {
  int size;
  int shift;  // log2(size) when size is a power of two, else -1

  __device__ __forceinline__ explicit PageGeometry(int page_size) {
    size = page_size;
    shift = (page_size & (page_size - 1)) == 0 ? __ffs(page_size) - 1 : -1;
  }
  __device__ __forceinline__ int Page(int key) const {
    return shift >= 0 ? key >> shift : key / size;
  }
  __device__ __forceinline__ int InPage(int key) const {
    return shift >= 0 ? key & (size - 1) : key % size;
  }
};

template <typename Traits>
__device__ __forceinline__ TilePages<Traits::kKeysPerLane> LookUpPages(const int32_t* page_row,
                                                                       int key0, int key_begin,
                                                                       int key_end,
                                                                       const PageGeometry& pages_of,
                                                                       int lane) {
  TilePages<Traits::kKeysPerLane> pages;
#pragma unroll
  for (int i = 0; i < Traits::kKeysPerLane; ++i) {
    const int in_tile = lane + 32 * i;
    const int key = key0 + in_tile;
    const bool valid = in_tile < Traits::kKeysPerTile && key >= key_begin && key < key_end;
    pages.page[i] = valid ? __ldg(page_row + pages_of.Page(key)) : -1;
    pages.in_page[i] = pages_of.InPage(key);
  }
  return pages;
}

// Issues one key tile by 16-byte cp.async: in pass `pass` each lane copies
// chunk `chunk` of key row pass * kRowsPerPass + row_in_pass of K and of V.
// `k_lane` / `v_lane` point at this lane's chunk of slot 0's row of the
// segment's KV head, so a key's address is one 32 x 32 -> 64-bit multiply-add
// from its slot. Slots of -1 (keys outside the segment) zero-fill their rows.
template <int kHeadDim>
__device__ __forceinline__ void IssueTileByCpAsync(
    const char* k_lane, const char* v_lane, uint32_t slot_bytes,
    const int (&slot)[KernelTraits<kHeadDim>::kKeysPerLane], uint32_t k_stage, uint32_t v_stage,
    int row_in_pass, int chunk, uint64_t* full) {
  using Traits = KernelTraits<kHeadDim>;
#pragma unroll
  for (int pass = 0; pass < Traits::kPasses; ++pass) {
    const int row = pass * Traits::kRowsPerPass + row_in_pass;  // key within the tile
    // Key `row`'s slot was looked up by lane row % 32, in register row / 32
    // (the same for every lane of the pass).
    const int key_slot = __shfl_sync(kFullMask, slot[(pass * Traits::kRowsPerPass) / 32], row % 32);
    const bool valid = key_slot >= 0;
    const uint64_t offset = uint64_t{static_cast<uint32_t>(max(key_slot, 0))} * slot_bytes;
    const uint32_t smem_offset = 2 * TileOffset<kHeadDim, Traits::kKeysPerTile>(row, chunk);
    CpAsync16(k_stage + smem_offset, k_lane + offset, valid);
    CpAsync16(v_stage + smem_offset, v_lane + offset, valid);
  }
  // One arrival per lane on "full" once this lane's copies have landed.
  CpAsyncMbarrierArrive(full);
}

// Whether the tiles of a unit of `rows` packed rows go by TMA (when the call
// allows it at all). Measured on the H200 (NOTES.md): TMA frees the issue
// slots and shared-memory pipe that 16-byte cp.async takes from the math
// warps, which pays where those are busy: 64-row units (cp.async 15% slower
// at 64/8 q8 verify). Elsewhere a TMA copy's longer latency shows: decode
// units (<= 16 rows) were 1-5% slower by TMA, and once the logits stopped
// branching per element (5a1eda4) so were 32-row units (cp.async 0.87-0.95
// of TMA at head_dim 64/128/256 verify).
__device__ __forceinline__ bool StreamsByTma(int rows) { return rows > 32; }

// Issues one key tile whose keys are all in the segment as TMA copies of whole
// page rows: kKeysPerTile / tma_box_rows boxes (one page, or the tile's part
// of one page) x K and V x 64-column blocks, one copy per lane; the boxes land
// in TileOffset's layout (TMA's 128-byte swizzle over 1024-byte-aligned
// 8-row groups). Lane 0 arrives with the tile's byte count, the others
// plainly: "full" still counts 32 arrivals per round, as for cp.async tiles.
template <typename T, int kHeadDim>
__device__ __forceinline__ void IssueTileByTma(
    const PagedAttentionParams& p, const int (&slot)[KernelTraits<kHeadDim>::kKeysPerLane],
    int kv_head, T* k_stage, T* v_stage, uint64_t* full, int lane) {
  using Traits = KernelTraits<kHeadDim>;
  constexpr int kColumnBlocks = kHeadDim / 64;
  const int box_rows = p.tma_box_rows;
  const int column_block = lane % kColumnBlocks;
  const bool is_v = (lane / kColumnBlocks) % 2 != 0;
  const int first_key = (lane / (2 * kColumnBlocks)) * box_rows;  // of this lane's box
  // The box's first slot, from the lane that looked its key up.
  int box_slot = 0;
#pragma unroll
  for (int i = 0; i < Traits::kKeysPerLane; ++i) {
    const int looked_up = __shfl_sync(kFullMask, slot[i], first_key % 32);
    if (first_key / 32 == i) box_slot = looked_up;
  }
  if (lane == 0) MbarrierArriveExpectTx(full, 2 * Traits::kTileElems * sizeof(T));
  __syncwarp();
  if (first_key < Traits::kKeysPerTile) {
    const uint32_t stage = SmemAddress(is_v ? v_stage : k_stage);
    TmaLoad3d(stage + column_block * (Traits::kKeysPerTile * 128) + first_key * 128,
              is_v ? &p.v_tma : &p.k_tma, column_block * 64, kv_head, box_slot, full);
  }
  if (lane != 0) MbarrierArrive(full, 1);
}

// A member pair's walk (kGroups 2) over the segment lists of its two
// workers: list a of worker blockIdx.x (member m of the plan's co-read
// groups) and list b of worker blockIdx.x + member_pair_offset (member m +
// member_pair_unit_offset). Both lists are in dealing order: request, KV
// head, group, then keys. A step takes the next segment of each list when
// both are pieces of one group from the same first key tile, as one stream of
// their union (the further end); else the one that comes first, alone (the
// other member has no such piece: a group with fewer members, or keys outside
// its range). The producer and both consumer groups walk alike, so they agree
// on every tile of the stream whatever the lists hold (in any other order
// only the sharing suffers).
struct PairWalk {
  int a, a_end;  // list a's next segment and end
  int b, b_end;
};
struct PairStep {
  int a = -1;  // the step's segment of list a, or -1
  int b = -1;
  WorkSegment stream;   // the stream's unit (a's when it has keys) and key range
  SegmentTiles tiles;   // the stream's tiles: each segment's own come first
  bool by_tma = false;  // every unit with keys takes TMA (StreamsByTma)
};

template <int kKeysPerTile>
__device__ __forceinline__ PairStep NextPairStep(const PagedAttentionParams& p, PairWalk& walk) {
  const bool has_a = walk.a < walk.a_end, has_b = walk.b < walk.b_end;
  const WorkSegment x = has_a ? LoadSegment(p.plan.segments + walk.a) : WorkSegment{};
  const WorkSegment y = has_b ? LoadSegment(p.plan.segments + walk.b) : WorkSegment{};
  const SegmentTiles x_tiles = TilesOf<kKeysPerTile>(x), y_tiles = TilesOf<kKeysPerTile>(y);
  // < 0: x first, alone; > 0: y alone; 0: together.
  const int order = !has_b   ? -1
                    : !has_a ? 1
                             : MemberPairOrder(x, y, p.plan.member_pair_unit_offset, kKeysPerTile);
  PairStep step;
  if (order <= 0) step.a = walk.a++;
  if (order >= 0) step.b = walk.b++;
  const bool x_keys = order <= 0 && x_tiles.num_tiles > 0;
  const bool y_keys = order >= 0 && y_tiles.num_tiles > 0;
  step.stream = x_keys || !y_keys ? x : y;
  step.tiles = x_keys ? x_tiles : y_tiles;
  if (x_keys && y_keys) {
    step.tiles.num_tiles = max(x_tiles.num_tiles, y_tiles.num_tiles);
    step.stream.key_begin = min(x.key_begin, y.key_begin);
    step.stream.key_end = max(x.key_end, y.key_end);
  }
  step.by_tma = (!x_keys || StreamsByTma(UnitRowCount(x.q_len, p.group, x.unit_tile))) &&
                (!y_keys || StreamsByTma(UnitRowCount(y.q_len, p.group, y.unit_tile)));
  return step;
}

// Streams the K/V tiles of the worker's segments [segment_begin,
// segment_end); with kGroups 2, of the member pair's walk (PairWalk, the
// partner's list [partner_begin, partner_end)), by TMA only where every
// unit of the step takes it (StreamsByTma: a unit of several key ways relies
// on cp.async tiles landing in issue order, ConsumeSegments).
template <typename T, int kHeadDim, bool kDecode, bool kDeepRing, int kGroups = 1>
__device__ __forceinline__ void ProduceSegments(const PagedAttentionParams& p, int segment_begin,
                                                int segment_end, int partner_begin, int partner_end,
                                                T* k_ring, T* v_ring, uint64_t* full,
                                                uint64_t* empty) {
  using Traits = KernelTraits<kHeadDim, kDecode, kDeepRing, kGroups>;
  constexpr int kKeysPerTile = Traits::kKeysPerTile;
  const int lane = threadIdx.x % 32;
  const int chunk = lane % Traits::kChunksPerRow;
  const int row_in_pass = lane / Traits::kChunksPerRow;
  const uint32_t slot_bytes = static_cast<uint32_t>(p.num_kv_heads) * kHeadDim * sizeof(T);
  const PageGeometry pages_of(p.page_size);
  uint32_t tile_counter = 0;  // tiles produced by this CTA so far: picks stage and phase
  PairWalk walk{segment_begin, segment_end, partner_begin, partner_end};  // (kGroups 2)

  // (With kGroups 2, s only counts the walk's steps.)
  for (int s = segment_begin;
       kGroups == 1 ? s < segment_end : walk.a < walk.a_end || walk.b < walk.b_end; ++s) {
    WorkSegment segment;
    SegmentTiles tiles;
    bool pair_by_tma = false;
    if constexpr (kGroups == 1) {
      segment = LoadSegment(p.plan.segments + s);
      tiles = TilesOf<kKeysPerTile>(segment);
    } else {
      const PairStep step = NextPairStep<kKeysPerTile>(p, walk);
      segment = step.stream;
      tiles = step.tiles;
      pair_by_tma = step.by_tma;
    }
    if (tiles.num_tiles == 0) continue;
    const bool tma_unit =
        !kDecode && p.tma_box_rows > 0 &&
        (kGroups == 1 ? StreamsByTma(UnitRowCount(segment.q_len, p.group, segment.unit_tile))
                      : pair_by_tma);
    const int32_t* page_row = p.page_table + int64_t{segment.request} * p.max_pages_per_request;
    const int64_t lane_offset = (int64_t{segment.kv_head} * kHeadDim + chunk * 8) * sizeof(T);
    const char* k_lane = static_cast<const char*>(p.k_cache) + lane_offset;
    const char* v_lane = static_cast<const char*>(p.v_cache) + lane_offset;
    TilePages<Traits::kKeysPerLane> next =
        LookUpPages<Traits>(page_row, tiles.first_tile * kKeysPerTile, segment.key_begin,
                            segment.key_end, pages_of, lane);
    for (int t = 0; t < tiles.num_tiles; ++t) {
      const TilePages<Traits::kKeysPerLane> current = next;
      if (t + 1 < tiles.num_tiles) {
        next = LookUpPages<Traits>(page_row, (tiles.first_tile + t + 1) * kKeysPerTile,
                                   segment.key_begin, segment.key_end, pages_of, lane);
      }
      const int stage = tile_counter % Traits::kStages;
      // The consumers released this stage's previous round (the first round
      // passes at once: parity 1 of a fresh barrier counts as complete).
      MbarrierWait(&empty[stage], ((tile_counter / Traits::kStages) & 1) ^ 1);
      int slot[Traits::kKeysPerLane];
#pragma unroll
      for (int i = 0; i < Traits::kKeysPerLane; ++i) {
        slot[i] = current.page[i] >= 0 ? current.page[i] * p.page_size + current.in_page[i] : -1;
      }
      T* k_stage = k_ring + stage * Traits::kTileElems;
      T* v_stage = v_ring + stage * Traits::kTileElems;
      const int key0 = (tiles.first_tile + t) * kKeysPerTile;
      if (tma_unit && key0 >= segment.key_begin && key0 + kKeysPerTile <= segment.key_end) {
        // Every key of the tile is in range: whole page rows by TMA.
        IssueTileByTma<T, kHeadDim>(p, slot, segment.kv_head, k_stage, v_stage, &full[stage], lane);
      } else {
        IssueTileByCpAsync<kHeadDim>(k_lane, v_lane, slot_bytes, slot, SmemAddress(k_stage),
                                     SmemAddress(v_stage), row_in_pass, chunk, &full[stage]);
      }
      ++tile_counter;
    }
  }
  CpAsyncWaitAll();  // leave no copy in flight behind an exited thread
}

// ---------------------------------------------------------------------------
// Consumer warps.

// How two running softmax states of one row combine (RowState::Merge): the
// new running max and each side's factor.
struct MergeWeights {
  float max;
  float mine;
  float theirs;
};

__device__ __forceinline__ MergeWeights MergeWeightsOf(float my_max, float other_max) {
  const float new_max = fmaxf(my_max, other_max);
  const float reference = new_max == -INFINITY ? 0.0f : new_max;
  return {new_max, exp2f(my_max - reference), exp2f(other_max - reference)};
}

// x * x_weight + y * y_weight, rounded the same way wherever it is written: the key ways' fold runs
// in registers (ConsumeSegments) and from shared memory (FoldKeyWays), and a unit must come out bit
// for bit the same from either kernel (VariantFor), so the contraction into an FMA is spelled out
// rather than left to the compiler.
__device__ __forceinline__ float Weighted(float x, float x_weight, float y, float y_weight) {
  return __fmaf_rn(x_weight, x, __fmul_rn(y_weight, y));
}

// The running softmax state of one warp's kRows rows over the keys it has
// seen: 16 (this thread's two rows: lane / 4 and lane / 4 + 8), or 8 (row
// lane / 4 only: the head_dim 256 decode kernel, KernelTraits::kStateRows),
// whose O is then half as many registers (64 at head_dim 256).
template <int kHeadDim, int kRows = 16>
struct RowState {
  static_assert(kRows == 8 || kRows == 16, "one or both of a thread's rows");
  static constexpr int kHalves = kRows / 8;  // this thread's rows
  float o[kHeadDim / 8][2 * kHalves];        // unnormalised O, mma accumulator layout
  float max[kHalves];  // running max of the logits, log2 units (-inf: no key yet)
  float sum[kHalves];  // this thread's share of the running sum of exp2(s - max)

  __device__ __forceinline__ void Reset() {
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
      for (int e = 0; e < 2 * kHalves; ++e) o[d][e] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kHalves; ++i) {
      max[i] = -INFINITY;
      sum[i] = 0.0f;
    }
  }

  // Folds another state of the same rows in (LSE-weighted).
  __device__ __forceinline__ void Merge(const float* other_o, const float* other_ml, int lane) {
#pragma unroll
    for (int i = 0; i < kHalves; ++i) {
      const MergeWeights w = MergeWeightsOf(max[i], other_ml[i * 32 + lane]);
      max[i] = w.max;
      // (The sum's terms in the other order: the compiler's choice before
      // the rounding was spelled out, kept so the code stays the same.)
      sum[i] = Weighted(other_ml[(2 + i) * 32 + lane], w.theirs, sum[i], w.mine);
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
        o[d][2 * i] =
            Weighted(o[d][2 * i], w.mine, other_o[(d * 2 * kHalves + 2 * i) * 32 + lane], w.theirs);
        o[d][2 * i + 1] = Weighted(o[d][2 * i + 1], w.mine,
                                   other_o[(d * 2 * kHalves + 2 * i + 1) * 32 + lane], w.theirs);
      }
    }
  }

  __device__ __forceinline__ void Store(float* to_o, float* to_ml, int lane) const {
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
      for (int e = 0; e < 2 * kHalves; ++e) to_o[(d * 2 * kHalves + e) * 32 + lane] = o[d][e];
    }
#pragma unroll
    for (int i = 0; i < kHalves; ++i) to_ml[i * 32 + lane] = max[i];
#pragma unroll
    for (int i = 0; i < kHalves; ++i) to_ml[(2 + i) * 32 + lane] = sum[i];
  }
};

// What a consumer warp needs to know about the unit of the current segment.
struct UnitView {
  int q_begin;    // first query token of the request
  int unit_row0;  // first packed row of the unit
  int rows;       // packed rows of the unit (<= kUnitRows)
  int kv_head;
  int key_begin;  // segment keys
  int key_end;
  int row_diag[2];  // this thread's rows' last visible key (causal)
  int min_diag;     // over the unit's rows
  int max_diag;
  // Tree masks (AttentionMetadata::tree_mask): the first key a mask word
  // covers, and the query token of a row whose last visible key is `diag`:
  // diag + diag_to_token.
  int tree_base;
  int diag_to_token;
};

// The UnitView fields that do not depend on the thread.
__device__ __forceinline__ UnitView UnitOf(const WorkSegment& segment, int group) {
  UnitView unit;
  unit.q_begin = segment.q_begin;
  unit.unit_row0 = segment.unit_tile * kUnitRows;
  unit.rows = UnitRowCount(segment.q_len, group, segment.unit_tile);
  unit.kv_head = segment.kv_head;
  unit.key_begin = segment.key_begin;
  unit.key_end = segment.key_end;
  return unit;
}

// The UnitView fields of this thread's rows (row block `row_block`) and the
// unit's causal diagonals and tree-mask positions.
__device__ __forceinline__ void SetDiagonals(UnitView& unit, const WorkSegment& segment, int group,
                                             int row_block, int lane) {
  // Query j's last visible key: j + diagonal_offset.
  const int diagonal_offset = segment.k_len - segment.q_len;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = min(row_block * 16 + lane / 4 + 8 * i, unit.rows - 1);
    unit.row_diag[i] = (unit.unit_row0 + row) / group + diagonal_offset;
  }
  unit.tree_base = segment.k_len - kTreeMaskKeys;
  unit.diag_to_token = unit.q_begin - diagonal_offset;
  unit.min_diag = unit.unit_row0 / group + diagonal_offset;
  unit.max_diag = (unit.unit_row0 + unit.rows - 1) / group + diagonal_offset;
}

// 16-row blocks of a unit of `rows` rows; the other factor of the four
// consumer warps are its key ways. (The decode kernel's units are one block.)
__device__ __forceinline__ int RowBlocks(int rows) { return rows <= 16 ? 1 : rows <= 32 ? 2 : 4; }

// S = Q K^T for one warp's 16 rows (row block `row_block` of the unit) with
// mma.sync. (Splitting the k-steps over two accumulator sets was tried: the
// extra registers spilled and every mma.sync shape ran 5-7% slower.)
// With kRows 8 (RowState), rows 8-15 of the A fragments are zeros: one
// ldmatrix.x2 per k-step instead of x4, and half the fragment registers.
template <typename T, int kHeadDim, int kQueryRows, int kRows = 16>
__device__ __forceinline__ void QueryKeyMmaSync(int row_block, uint32_t q_base, uint32_t k_base,
                                                float (&s)[KeysPerTile(kHeadDim) / 8][4]) {
  constexpr int kKeys = KeysPerTile(kHeadDim);
  const int lane = threadIdx.x % 32;
  const int ldm_row = lane % 8;
  const int ldm_hi8 = (lane / 8) % 2;
  const int ldm_hi16 = lane / 16;
#pragma unroll
  for (int ks = 0; ks < kHeadDim / 16; ++ks) {
    uint32_t a[4];
    if constexpr (kRows == 16) {
      LdMatrixX4(a, q_base + 2 * TileOffset<kHeadDim, kQueryRows>(
                                     row_block * 16 + ldm_row + ldm_hi8 * 8, ks * 2 + ldm_hi16));
    } else {  // lanes 0-7: rows 0-7 at k 0-7; lanes 8-15: at k 8-15
      uint32_t top[2];
      LdMatrixX2(top, q_base + 2 * TileOffset<kHeadDim, kQueryRows>(row_block * 16 + ldm_row,
                                                                    ks * 2 + ldm_hi8));
      a[0] = top[0];
      a[1] = 0u;
      a[2] = top[1];
      a[3] = 0u;
    }
#pragma unroll
    for (int nb = 0; nb < kKeys / 16; ++nb) {
      uint32_t b[4];
      LdMatrixX4(b, k_base + 2 * TileOffset<kHeadDim, kKeys>(nb * 16 + ldm_row + ldm_hi16 * 8,
                                                             ks * 2 + ldm_hi8));
      Mma16816<T>(s[2 * nb], a, b[0], b[1]);
      Mma16816<T>(s[2 * nb + 1], a, b[2], b[3]);
    }
  }
}

// S = Q K^T for all 64 rows of the unit with one warpgroup wgmma per k-step
// (the four consumer warps together; each gets its 16 rows in the mma.sync
// accumulator layout). Asynchronous tensor-core work at twice mma.sync's rate:
// what 64-row verify tiles need to stay memory-bound. kTiles key tiles (ring
// stages, `k_base` each) land in consecutive column blocks of S, all issued
// before the one wait.
template <typename T, int kHeadDim, int kTiles>
__device__ __forceinline__ void QueryKeyWgmma(uint32_t q_base, const uint32_t (&k_base)[kTiles],
                                              float (&s)[kTiles * KeysPerTile(kHeadDim) / 8][4]) {
#if PA_HAS_WGMMA
  constexpr int kKeys = KeysPerTile(kHeadDim);
  // Descriptors per tile; each k-step's is one of them plus its offset.
  const uint64_t q_descriptor = WgmmaDescriptor(q_base);
  uint64_t k_descriptors[kTiles];
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile) k_descriptors[tile] = WgmmaDescriptor(k_base[tile]);
  WgmmaFence();
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile) {
    const uint64_t k_descriptor = k_descriptors[tile];
    auto& s_tile = *reinterpret_cast<float(*)[kKeys / 8][4]>(&s[tile * (kKeys / 8)]);
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      // k-step ks: 64-column block ks / 4, 32 bytes per k-step inside it.
      const uint32_t q_offset = (ks / 4) * (kUnitRows * 128) + (ks % 4) * 32;
      const uint32_t k_offset = (ks / 4) * (kKeys * 128) + (ks % 4) * 32;
      Wgmma<T, kKeys>::Run(s_tile, WgmmaDescriptorPlus(q_descriptor, q_offset),
                           WgmmaDescriptorPlus(k_descriptor, k_offset), ks > 0 ? 1 : 0);
    }
  }
  WgmmaCommit();
  WgmmaWaitAll();
#endif
}

// Scales O's values of this thread's row i (0: lane / 4, 1: lane / 4 + 8).
template <int kHeadDim, int kRows>
__device__ __forceinline__ void RescaleRow(RowState<kHeadDim, kRows>& state, int i, float factor) {
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) {
    state.o[d][2 * i] *= factor;
    state.o[d][2 * i + 1] *= factor;
  }
}

// Keys kb * 16 .. + 15 of P (the probabilities in S's accumulators) as one
// bf16/fp16 A fragment of m16n8k16 (two n8 blocks of S); wgmma's register A
// fragment has the same layout.
// With kRows 8, rows 8-15 are zeros (their products are discarded).
template <typename T, int kKeys, int kRows = 16>
__device__ __forceinline__ void PackProbabilities(const float (&s)[kKeys / 8][4], int kb,
                                                  uint32_t (&a)[4]) {
  a[0] = PackPair<T>(s[2 * kb][0], s[2 * kb][1]);
  a[1] = kRows == 16 ? PackPair<T>(s[2 * kb][2], s[2 * kb][3]) : 0u;
  a[2] = PackPair<T>(s[2 * kb + 1][0], s[2 * kb + 1][1]);
  a[3] = kRows == 16 ? PackPair<T>(s[2 * kb + 1][2], s[2 * kb + 1][3]) : 0u;
}

// S = Q K^T, mask, online softmax and O += P V for one warp's 16 rows
// (row block `row_block` of the unit) and kTiles consecutive key tiles from
// key0 (ring stages at k_base / v_base). Two tiles at once (64-row units on
// wgmma) run the softmax's reductions, the rescale test and both wgmma waits
// once per 64 keys instead of once per 32. kScaleInExp (paired steps only):
// the logit scale applied in the exponent (see below).
template <typename T, int kHeadDim, int kQueryRows, bool kTreeMasks, int kTiles = 1,
          bool kScaleInExp = false, int kRows = 16>
__device__ __forceinline__ void AttendTile(const PagedAttentionParams& p, const UnitView& unit,
                                           int row_block, int key0, bool use_wgmma, uint32_t q_base,
                                           const uint32_t (&k_base)[kTiles],
                                           const uint32_t (&v_base)[kTiles],
                                           RowState<kHeadDim, kRows>& state) {
  constexpr int kHalves = kRows / 8;  // this thread's rows (RowState)
  constexpr int kTileKeys = KeysPerTile(kHeadDim);
  constexpr int kKeys = kTiles * kTileKeys;
  static_assert(kKeys <= 64, "a row's visible keys are one 64-bit mask");
  static_assert(kRows == 16 || (kHeadDim == 256 && kTiles == 1),
                "8-row states: head_dim 256 decode");
  const int lane = threadIdx.x % 32;
  const int ldm_row = lane % 8;
  const int ldm_hi8 = (lane / 8) % 2;
  const int ldm_hi16 = lane / 16;

  float s[kKeys / 8][4];
#pragma unroll
  for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
  }
  if (PA_HAS_WGMMA && use_wgmma) {
    QueryKeyWgmma<T, kHeadDim, kTiles>(q_base, k_base, s);
  } else if constexpr (kTiles == 1) {
    QueryKeyMmaSync<T, kHeadDim, kQueryRows, kRows>(row_block, q_base, k_base[0], s);
  }

  // Logits in log2 units, then the mask (only on tiles that need one). Each
  // choice is the same for the whole warp (a parameter, or a property of the
  // tile), so each is one branch around a loop over the tile: written as one
  // loop with the choices inside, ptxas branched per element (ncu at
  // 929cbfd: 132 instructions per tile and 40% of the consumer warps' stall
  // samples on 64-row units, for 16 multiplies).
  // kScaleInExp leaves the scale to the softmax: the max of the raw logits
  // times a positive scale is the max of the scaled ones, bit for bit, and
  // each exponent is then one FFMA instead of a multiply and a subtraction
  // (ConsumeSegments pairs tiles only when logit_scale > 0), with 2^x
  // flushing subnormals (one MUFU).
  static_assert(!kScaleInExp || kTiles > 1, "the scale in the exponent: paired steps");
  const bool softcap = p.softcap_log2 != 0.0f;
  const float logit_scale = kScaleInExp && !softcap ? p.scale_log2 : 1.0f;
  if (softcap) {
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[n][e] = p.softcap_log2 * TanhApprox(s[n][e] * p.scale_over_softcap);
    }
  } else if constexpr (!kScaleInExp) {
    const float scale_log2 = p.scale_log2;
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] *= scale_log2;
    }
  }
  const bool causal = p.causal != 0;
  const int window = causal ? p.window_left : -1;
  // Tree masks touch only the last kTreeMaskKeys keys; their words are read
  // here, on the few tiles that need them, to keep them out of the registers
  // of the main loop. (A separate instantiation: the runtime check alone cost
  // chain verify 5-12% on the H200.)
  const bool tree_tile = kTreeMasks && key0 + kKeys > unit.tree_base;
  const bool needs_mask = key0 < unit.key_begin || key0 + kKeys > unit.key_end || tree_tile ||
                          (causal && (key0 + kKeys - 1 > unit.min_diag ||
                                      (window >= 0 && key0 < unit.max_diag - window)));
  if (needs_mask) {
    // A row's visible keys are one range (the segment, the causal diagonal,
    // the window), cut by the row's mask word on tree tiles: a bit mask per
    // row over the tile, then one select per element.
#pragma unroll
    for (int i = 0; i < kHalves; ++i) {
      int first = unit.key_begin - key0;  // tile-relative, inclusive
      int last = unit.key_end - 1 - key0;
      if (causal) {
        last = min(last, unit.row_diag[i] - key0);
        if (window >= 0) first = max(first, unit.row_diag[i] - window - key0);
      }
      first = max(first, 0);
      last = min(last, kKeys - 1);
      uint64_t visible = last >= first ? (~0ull >> (63 - (last - first))) << first : 0ull;
      if (tree_tile) {
        // The word covers keys tree_base.. (bit j: key tree_base + j); keys
        // before it are not in the tree. tree_base - key0 is in (-64, kKeys).
        const uint64_t word = __ldg(p.tree_mask + unit.row_diag[i] + unit.diag_to_token);
        const int shift = unit.tree_base - key0;
        visible &= shift >= 0 ? (word << shift) | ((1ull << shift) - 1) : word >> -shift;
      }
      visible >>= (lane % 4) * 2;  // this thread's keys: n * 8 + (lane % 4) * 2 + {0, 1}
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (((visible >> (n * 8 + e)) & 1) == 0) s[n][2 * i + e] = -INFINITY;
        }
      }
    }
  }

  // Online softmax; a row that has seen no key yet keeps max -inf and uses 0
  // as its reference so no -inf - -inf appears.
  float rescale[2];
#pragma unroll
  for (int i = 0; i < kHalves; ++i) {
    float tile_max;
    if constexpr (kScaleInExp) {
      float raw_max = -INFINITY;
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
        raw_max = fmaxf(raw_max, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      }
      raw_max = fmaxf(raw_max, __shfl_xor_sync(kFullMask, raw_max, 1));
      raw_max = fmaxf(raw_max, __shfl_xor_sync(kFullMask, raw_max, 2));
      tile_max = fmaxf(state.max[i], raw_max * logit_scale);
    } else {
      tile_max = state.max[i];
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
        tile_max = fmaxf(tile_max, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, 2));
    }
    const float reference = tile_max == -INFINITY ? 0.0f : tile_max;
    const float row_rescale = kScaleInExp ? Exp2FlushSubnormal(state.max[i] - reference)
                                          : exp2f(state.max[i] - reference);
    rescale[i] = row_rescale;
    state.max[i] = tile_max;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& x = s[n][2 * i + e];
        x = kScaleInExp ? Exp2FlushSubnormal(fmaf(x, logit_scale, -reference))
                        : exp2f(x - reference);
      }
      sum += s[n][2 * i] + s[n][2 * i + 1];
    }
    state.sum[i] = state.sum[i] * row_rescale + sum;
    if constexpr (kHeadDim > 128) RescaleRow(state, i, row_rescale);
  }
  // O's rescale (kHeadDim / 2 multiplies per thread) only when a row of the
  // warp raised its max: once the running maxima settle most tiles leave them,
  // and a multiply by exactly 1 changes no bit. It shortens the path into
  // O += P V (64-row units 1-2% faster beside wgmma P V, NOTES.md). Head_dim
  // 256 rescales every tile, above: the branch made its spills 2% slower.
  if constexpr (kHeadDim <= 128) {
    if (__any_sync(kFullMask, rescale[0] != 1.0f || rescale[1] != 1.0f)) {
      RescaleRow(state, 0, rescale[0]);
      RescaleRow(state, 1, rescale[1]);
    }
  }

  // O += P V, P as A fragments (PackProbabilities).
#if PA_HAS_WGMMA
  // (head_dim 256 keeps mma.sync: two 128-column wgmma per k-step spilled
  // more and ran its verify 9% slower, NOTES.md.)
  if constexpr (kHeadDim <= 128) {
    if (use_wgmma) {
      // The warpgroup's 64 rows at once, P from registers (wgmma's A fragment
      // layout is mma.sync's) and V from shared memory.
      uint32_t a[kKeys / 16][4];
#pragma unroll
      for (int kb = 0; kb < kKeys / 16; ++kb) PackProbabilities<T, kKeys>(s, kb, a[kb]);
      WgmmaFence();  // o and a were written by this thread
#pragma unroll
      for (int kb = 0; kb < kKeys / 16; ++kb) {
        // Keys kb * 16 .. + 15: 16 rows of 128 bytes into each column block
        // of their tile.
        constexpr int kStepsPerTile = kTileKeys / 16;
        WgmmaRegisterA<T, kHeadDim>::Run(
            state.o, a[kb],
            WgmmaDescriptorNMajor(v_base[kb / kStepsPerTile] + (kb % kStepsPerTile) * 16 * 128,
                                  kTileKeys * 128),
            1);
      }
      WgmmaCommit();
      WgmmaWaitAll();
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
        for (int e = 0; e < 4; ++e) PinRegister(state.o[d][e]);
      }
      return;
    }
  }
#endif
  if constexpr (kTiles == 1) {
#pragma unroll
    for (int kb = 0; kb < kKeys / 16; ++kb) {
      uint32_t a[4];
      PackProbabilities<T, kKeys, kRows>(s, kb, a);
      const int row = kb * 16 + ldm_row + ldm_hi8 * 8;
#pragma unroll
      for (int db = 0; db < kHeadDim / 16; ++db) {
        uint32_t b[4];
        LdMatrixX4Trans(b, v_base[0] + 2 * TileOffset<kHeadDim, kKeys>(row, db * 2 + ldm_hi16));
        if constexpr (kRows == 16) {
          Mma16816<T>(state.o[2 * db], a, b[0], b[1]);
          Mma16816<T>(state.o[2 * db + 1], a, b[2], b[3]);
        } else {  // rows 8-15 are padding: only rows 0-7 accumulate
          Mma16816TopRows<T>(state.o[2 * db], a, b[0], b[1]);
          Mma16816TopRows<T>(state.o[2 * db + 1], a, b[2], b[3]);
        }
      }
    }
  }
}

// Starts copying the unit's query rows (the first `row_blocks` x 16; rows past
// the unit zero-filled) into the swizzled query tile by cp.async, every
// consumer thread taking every kConsumerThreads-th 16-byte chunk, as one
// cp.async group of this thread (the caller waits for it).
template <typename T, int kHeadDim, int kQueryRows, int kGroups = 1>
__device__ __forceinline__ void IssueQueryTile(const PagedAttentionParams& p, const UnitView& unit,
                                               int row_blocks, T* q_smem) {
  using Traits = KernelTraits<kHeadDim>;
  const T* q = static_cast<const T*>(p.q);
  const int chunks = row_blocks * 16 * Traits::kChunksPerRow;
  for (int c = GroupThread<kGroups>(); c < chunks; c += Traits::kConsumerThreads) {
    const int row = c / Traits::kChunksPerRow;
    const int chunk = c % Traits::kChunksPerRow;
    const bool valid = row < unit.rows;
    const T* src = q;
    if (valid) {
      const int packed = unit.unit_row0 + row;
      const int token = unit.q_begin + packed / p.group;
      const int head = unit.kv_head * p.group + packed % p.group;
      src = q + (int64_t{token} * p.num_q_heads + head) * kHeadDim + chunk * 8;
    }
    CpAsync16(SmemAddress(q_smem) + 2 * TileOffset<kHeadDim, kQueryRows>(row, chunk), src, valid);
  }
  CpAsyncCommit();
}

// Normalises the warp's rows and writes out/lse (partial < 0) or the segment's
// partial. kKvHeadPairs (the head_dim 128 decode kernel's pairs
// instantiation): each row's output is the half of the kernel's columns that
// its KV head's values filled (LoadDecodeQueries put its query there),
// written as a row of kHeadDim / 2 to out or to the partial.
template <typename T, int kHeadDim, bool kKvHeadPairs = false, int kRows = 16>
__device__ __forceinline__ void WriteRows(const PagedAttentionParams& p, const UnitView& unit,
                                          int row_block, int partial,
                                          const RowState<kHeadDim, kRows>& state) {
  constexpr int kOutHeadDim = kKvHeadPairs ? kHeadDim / 2 : kHeadDim;
  constexpr int kUpper = kOutHeadDim / 8;  // O's column blocks of the upper half
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < RowState<kHeadDim, kRows>::kHalves; ++i) {
    float sum = state.sum[i];
    sum += __shfl_xor_sync(kFullMask, sum, 1);
    sum += __shfl_xor_sync(kFullMask, sum, 2);
    const int row = row_block * 16 + lane / 4 + 8 * i;
    if (row >= unit.rows) continue;
    // No visible key: zeros and lse = -inf.
    const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
    const float lse = sum > 0.0f ? state.max[i] * kLn2 + logf(sum) : -INFINITY;
    // The pair's second head: the upper half of the (twice as large) group.
    const bool upper = kKvHeadPairs && 2 * ((unit.unit_row0 + row) % p.group) >= p.group;
    if (partial < 0) {
      const int packed = unit.unit_row0 + row;
      const int token = unit.q_begin + packed / p.group;
      const int head = unit.kv_head * p.group + packed % p.group;
      T* out = static_cast<T*>(p.out) + (int64_t{token} * p.num_q_heads + head) * kOutHeadDim;
#pragma unroll
      for (int d = 0; d < kOutHeadDim / 8; ++d) {
        const float x = upper ? state.o[d + kUpper][2 * i] : state.o[d][2 * i];
        const float y = upper ? state.o[d + kUpper][2 * i + 1] : state.o[d][2 * i + 1];
        *reinterpret_cast<uint32_t*>(out + d * 8 + (lane % 4) * 2) =
            PackPair<T>(x * inv_sum, y * inv_sum);
      }
      if (p.lse != nullptr && lane % 4 == 0) {
        p.lse[int64_t{head} * p.total_q_tokens + token] = lse;
      }
    } else {
      const int64_t partial_row = int64_t{partial} * kUnitRows + row;
      float* out = p.partial_out + partial_row * kOutHeadDim;
#pragma unroll
      for (int d = 0; d < kOutHeadDim / 8; ++d) {
        const float x = upper ? state.o[d + kUpper][2 * i] : state.o[d][2 * i];
        const float y = upper ? state.o[d + kUpper][2 * i + 1] : state.o[d][2 * i + 1];
        *reinterpret_cast<float2*>(out + d * 8 + (lane % 4) * 2) =
            make_float2(x * inv_sum, y * inv_sum);
      }
      if (lane % 4 == 0) p.partial_lse[partial_row] = lse;
    }
  }
}

// Shared memory of the fused merge's hand-off from thread 0 to the other
// consumer threads.
struct FusedMergeFlag {
  int4 task[2];  // the unit's MergeTask (MergeTaskFromWords)
  int is_last;   // this worker finished the unit's last piece
  int spread;    // every piece merges a slice (MergeIfLastPiece)
  int reserved[2];
};
static_assert(sizeof(FusedMergeFlag) == KernelTraits<128>::kFlagBytes, "kFlagBytes");

// Called by the four consumer warps after they wrote this worker's partial of
// a cut unit of `rows` rows (MergedByAttentionKernel): counts the piece on the
// unit's merge task and, if it was the last one, merges the unit's partials
// (one warp per row, or per two rows in the decode kernel; `scratch` holds the
// warps' weight tables).
//
// In the decode kernel, when the grid is resident at once (p.cooperative) and
// every piece of the unit ends its worker's list (merge_by_all), no piece
// leaves: each waits for the count to wrap (the last piece's arrival) and
// merges its own slice of the unit (MergeSlice), so the merge's reads are
// spread over the unit's CTAs instead of one CTA reading all partials.
template <typename T, int kHeadDim, bool kDecode, int kOutHeadDim = kHeadDim, int kGroups = 1>
__device__ __forceinline__ void MergeIfLastPiece(const PagedAttentionParams& p, int merge_task,
                                                 int rows, float* scratch, FusedMergeFlag* flag,
                                                 const WorkSegment& segment, T* staging) {
  static_assert(kGroups == 1 || !kDecode, "member pairs: the deep ring");
  const bool spread = kDecode && p.cooperative != 0 && segment.merge_by_all != 0;
  GroupBarrier<kGroups>();  // every consumer warp's partial stores are issued
  if (GroupThread<kGroups>() == 0) {
    // MergeTask::arrivals is the one plan word a kernel writes (work_plan.h).
    // The task's other words are constant: loaded here, they arrive while the
    // fence waits, and the merge starts without a load of its own (the merge
    // is the kernel's tail, NOTES.md).
    MergeTask* task = const_cast<MergeTask*>(p.plan.merge_tasks) + merge_task;
    const MergeTaskWords words = LoadMergeTaskWords(task);
    const unsigned last = static_cast<unsigned>(words.tail.x - 1);  // num_partials - 1
    FenceAcqRelGpu();  // release: the CTA's partials (ordered by the barrier) before the count
    // atomicInc wraps to 0 at `last`: the count is back at 0 for the next launch.
    const unsigned arrived = atomicInc(reinterpret_cast<unsigned*>(&task->arrivals), last);
    const bool finished_last = arrived == last;
    // The same answer on every piece of the unit: all of them wait, or none.
    const bool spread_unit = spread && words.tail.x <= kMergeWeights - 2;
    if (spread_unit && !finished_last) {
      // The count goes arrived + 1 .. last, then wraps to 0 at the last
      // piece's arrival: wait for a value <= arrived. Every CTA is resident
      // (cooperative launch) and every piece is its worker's last segment, so
      // the last piece is running; a bound turns a broken promise into an
      // error, not a hang.
      WaitForCountAtMost(&task->arrivals, arrived);
    }
    // Acquire: the partials after the count. A waiting piece's acquire load
    // already saw the last arrival, the end of every piece's release (their
    // increments form one release sequence); the barrier below hands it on.
    if (finished_last) FenceAcqRelGpu();
    flag->task[0] = words.head;
    flag->task[1] = words.tail;
    flag->is_last = finished_last ? 1 : 0;
    if (kDecode) flag->spread = spread_unit ? 1 : 0;
  }
  GroupBarrier<kGroups>();
  if constexpr (kDecode) {
    if (flag->spread != 0) {
      const MergeTask task = MergeTaskFromWords(flag->task[0], flag->task[1]);
      // A slice has at most half of the unit's outputs (two pieces or more).
      constexpr int kThreads = KernelTraits<kHeadDim>::kConsumerThreads;
      constexpr int kMaxOutputs =
          FusedMergeMaxRows(kOutHeadDim != kHeadDim ? 2 : 1) * kOutHeadDim / 4;
      MergeSlice<T, kThreads, CeilDiv(kMaxOutputs, 2 * kThreads)>(
          p, kOutHeadDim, task, rows, segment.partial - task.first_partial, scratch,
          SmemAddress(staging), reinterpret_cast<const float4*>(staging), threadIdx.x);
      return;
    }
  }
  if (flag->is_last == 0) return;
  const MergeTask task = MergeTaskFromWords(flag->task[0], flag->task[1]);
  const int warp = GroupThread<kGroups>() / 32;
  constexpr int kWarps = KernelTraits<kHeadDim>::kConsumerWarps;
  float* weights = scratch + warp * kMergeWeights;
  if (kDecode && rows > kWarps && rows % 2 == 0) {
    // More rows than warps (64/8 decode: 8): two adjacent rows per warp in one
    // pass, so the second row does not wait for the first one's round trips.
    // Bit for bit the per-row merge (MergeRows), so a plan merged here or in
    // the general kernel gives the same output. Units of KV head pairs
    // (kOutHeadDim half the kernel's) have up to 16 rows: two passes. The
    // other instantiations merge at most 8 rows, one pass; they keep the
    // single `if` so their code stays the code that was measured.
    if constexpr (kOutHeadDim != kHeadDim) {
      for (int row = 2 * warp; row < rows; row += 2 * kWarps) {
        MergeRows<T, 2>(p, kOutHeadDim, task, row, weights);
      }
    } else if (2 * warp < rows) {
      MergeRows<T, 2>(p, kOutHeadDim, task, 2 * warp, weights);
    }
  } else {
    for (int row = warp; row < rows; row += kWarps) {
      MergeRow<T>(p, kOutHeadDim, task, row, weights);
    }
  }
}

// Folds the key ways' states into way 0's with CTA barriers, halving each
// round (way w takes way w + half), through `merge_o` (two 16-row fp32 O
// states per row block) and `merge_state`. With kSkipEmptyRounds (the decode
// kernel), a round whose upper ways all had no tile (way w took tiles w,
// w + key_ways, ... of the segment's `num_tiles`) is skipped: it would fold
// empty states, which changes no bit (RowState::Merge scales by exactly 1
// and 0), so four key ways fold in two rounds and short segments, such as a
// one-tile call's, in one. The last round always runs, for its barriers.
// Uniform over the consumers.
template <int kHeadDim, bool kSkipEmptyRounds, int kRows = 16, int kGroups = 1>
__device__ __forceinline__ void FoldKeyWaysWithBarriers(RowState<kHeadDim, kRows>& state,
                                                        float* merge_o, float* merge_state,
                                                        int key_ways, int key_way, int row_blocks,
                                                        int row_block, int num_tiles, int lane) {
  constexpr int kMergeStateFloats = KernelTraits<kHeadDim>::kMergeStateFloats;
  for (int half = key_ways / 2; half >= 1; half /= 2) {
    if (kSkipEmptyRounds && half > 1 && num_tiles <= half) continue;
    GroupBarrier<kGroups>();
    if (key_way >= half && key_way < 2 * half) {
      const int slot = (key_way - half) * row_blocks + row_block;
      state.Store(merge_o + slot * kRows * kHeadDim, merge_state + slot * kMergeStateFloats, lane);
    }
    GroupBarrier<kGroups>();
    if (key_way < half) {
      const int slot = key_way * row_blocks + row_block;
      state.Merge(merge_o + slot * kRows * kHeadDim, merge_state + slot * kMergeStateFloats, lane);
    }
  }
}

// Member pairs (kGroups 2): stream tiles [from, to) of the segment starting
// at CTA tile `tile_counter` belong to the partner's keys only; every warp of
// this group waits for each (its stage's earlier round must be over before
// the stage is released again: the parity argument in ConsumeSegments) and
// releases it unread.
template <typename Traits>
__device__ __forceinline__ void ReleaseUnread(uint32_t tile_counter, int from, int to,
                                              uint64_t* full, uint64_t* empty) {
  for (int t = from; t < to; ++t) {
    const uint32_t g = tile_counter + t;
    const int stage = g % Traits::kStages;
    MbarrierWait(&full[stage], (g / Traits::kStages) & 1);
    WarpArrive(&empty[stage], 1);
  }
}

// The consumer warps of the general, tree and paired-tiles kernels (the
// decode kernel's are ConsumeDecodeSegments).
//
// With kGroups 2 each consumer warpgroup runs this for its own worker
// (segment_begin .. segment_end; the other's: partner_begin .. partner_end),
// on its own query tile, scratch, merge state and flag, over the CTA's one
// K/V stream of both workers' segments (PairWalk): it computes its own
// segment's tiles, which start where the step's stream does, exactly as a CTA
// of its own would, and releases the rest of the stream unread.
template <typename T, int kHeadDim, bool kTreeMasks, bool kPairedTiles, bool kDeepRing,
          int kGroups = 1>
__device__ __forceinline__ void ConsumeSegments(const PagedAttentionParams& p, int segment_begin,
                                                int segment_end, int partner_begin, int partner_end,
                                                T* q_smem, T* k_ring, T* v_ring, float* scratch,
                                                float* merge_state, uint64_t* full, uint64_t* empty,
                                                FusedMergeFlag* merge_flag) {
  using Traits = KernelTraits<kHeadDim, false, kDeepRing, kGroups>;
  static_assert(kGroups == 1 || (kDeepRing && !kTreeMasks), "member pairs: the general deep ring");
  static_assert(!kPairedTiles || HasPairedTilesKernel(kHeadDim),
                "paired tiles: general and tree kernels at head_dim 128");
  static_assert(!kDeepRing || kPairedTiles, "the deep ring is the paired-tiles kernels'");
  constexpr int kQueryRows = Traits::kQueryRows;
  constexpr int kKeysPerTile = Traits::kKeysPerTile;
  const int warp = GroupThread<kGroups>() / 32;
  const int lane = threadIdx.x % 32;
  RowState<kHeadDim> state;
  uint32_t tile_counter = 0;  // tiles consumed by this CTA so far: same sequence as the producer's
  // With two query tiles, each segment's queries are loaded into the other
  // tile while the segment before it runs (`prefetched`: the segment whose
  // queries are in flight to, or in, tile `query_tile`).
  int query_tile = 0;
  int prefetched = -1;

  // Segment s; with kGroups 2 the step's stream has `stream_tiles` tiles, of
  // which this segment's come first.
  auto consume_segment = [&](int s, int stream_tiles) {
    const WorkSegment segment = LoadSegment(p.plan.segments + s);
    const SegmentTiles tiles = TilesOf<kKeysPerTile>(segment);
    UnitView unit = UnitOf(segment, p.group);
    const int q_len = segment.q_len;
    // Warp layout for this unit: row_blocks x key_ways = 4 warps.
    const int row_blocks = RowBlocks(unit.rows);
    const int key_ways = Traits::kConsumerWarps / row_blocks;
    const int row_block = warp % row_blocks;
    const int key_way = warp / row_blocks;
    SetDiagonals(unit, segment, p.group, row_block, lane);

    T* q_tile = q_smem + query_tile * Traits::kQElems;
    // Through a shuffle from lane 0 in the paired kernels (see the paired
    // loop), except the shallow-ring tree one, where it spills (24 bytes at
    // 168 registers; the deep ring's consumers have 184).
    const uint32_t q_base = kPairedTiles && (!kTreeMasks || kDeepRing)
                                ? __shfl_sync(kFullMask, SmemAddress(q_tile), 0)
                                : SmemAddress(q_tile);
    // The query tile, once it is no longer read, else the scratch.
    float* merge_o = Traits::kScratchInQueryTile ? reinterpret_cast<float*>(q_tile) : scratch;
    // The previous segment is done with the query tiles (and merge scratch).
    GroupBarrier<kGroups>();
    if (tiles.num_tiles > 0) {
      if (prefetched != s) {
        IssueQueryTile<T, kHeadDim, kQueryRows, kGroups>(p, unit, row_blocks, q_tile);
      }
      bool prefetching = false;
      if (Traits::kQueryTiles > 1 && s + 1 < segment_end) {
        const WorkSegment following = LoadSegment(p.plan.segments + s + 1);
        if (following.key_end > following.key_begin) {
          const UnitView next_unit = UnitOf(following, p.group);
          IssueQueryTile<T, kHeadDim, kQueryRows>(p, next_unit, RowBlocks(next_unit.rows),
                                                  q_smem + (query_tile ^ 1) * Traits::kQElems);
          prefetching = true;
        }
      }
      if (prefetching) {
        CpAsyncWaitAllButLast();  // this segment's queries, not the next one's
        prefetched = s + 1;
      } else {
        CpAsyncWaitAll();
      }
      FenceProxyAsync();  // wgmma may read the query tile
    }
    GroupBarrier<kGroups>();
    if (prefetched == s + 1) query_tile ^= 1;  // the next segment reads the tile it went to

    state.Reset();
    // wgmma takes the whole warpgroup: only units of four row blocks, where
    // every warp reads every tile (warps of padding rows compute and discard).
    const bool use_wgmma = PA_HAS_WGMMA && p.use_wgmma != 0 && row_blocks == 4;
    const bool has_rows = row_block * 16 < unit.rows;
    const bool computes = has_rows || use_wgmma;
    int t = key_way;
    if constexpr (kPairedTiles) {
      // (Only with a positive logit scale: the scale-in-exponent form below
      // scales the row max instead of every logit.)
      if (use_wgmma && (p.softcap_log2 != 0.0f || p.scale_log2 > 0.0f)) {
        // Tiles two at a time (key_ways is 1: the warpgroup takes every tile):
        // one softmax step per 64 keys. An odd last tile takes the loop below.
        // (This loop repeats the one below on purpose, without its `computes`
        // and `use_wgmma` tests: sharing one body between them made the
        // paired units 17-21% slower on the H200, NOTES.md `PAIR`.)
        // The stage index (and, in all but the shallow-ring tree kernel, the
        // query tile's address q_base) come through a shuffle from lane 0: every lane
        // holds the same values, but ptxas cannot prove it for values derived
        // from loaded segment words, so it built every wgmma descriptor in
        // regular registers and moved each to uniform registers before its
        // wgmma (72 R2UR per pair step, NOTES.md). From a shuffle they are
        // known warp-uniform.
        //
        // The softmax form is the request's: with the scale in the exponent
        // (one FFMA and one MUFU per probability) when its units share their
        // K/V, else as the single-tile loop. Only units that share K/V are
        // compute-bound; on the memory-bound ones (64/8 q8, 32/8 q16 verify)
        // the shorter softmax was 1-4% slower at free clocks (NOTES.md
        // `FUSED`, `UgF`), for reasons not yet known. The request decides,
        // not the plan, so eager and replayed launches agree bit for bit.
        auto attend_pairs = [&](auto scale_in_exp) {
          constexpr bool kScaleInExp = decltype(scale_in_exp)::value;
          for (; t + 1 < tiles.num_tiles; t += 2) {
            const uint32_t g = __shfl_sync(kFullMask, tile_counter + t, 0);
            const int stages[2] = {static_cast<int>(g % Traits::kStages),
                                   static_cast<int>((g + 1) % Traits::kStages)};
            MbarrierWait(&full[stages[0]], (g / Traits::kStages) & 1);
            MbarrierWait(&full[stages[1]], ((g + 1) / Traits::kStages) & 1);
            FenceProxyAsync();  // as below: cp.async tiles, read by wgmma
            const uint32_t k_base[2] = {SmemAddress(k_ring + stages[0] * Traits::kTileElems),
                                        SmemAddress(k_ring + stages[1] * Traits::kTileElems)};
            const uint32_t v_base[2] = {SmemAddress(v_ring + stages[0] * Traits::kTileElems),
                                        SmemAddress(v_ring + stages[1] * Traits::kTileElems)};
            const int key0 = (tiles.first_tile + t) * kKeysPerTile;
            if (kTreeMasks && key0 + 2 * kKeysPerTile > unit.tree_base) {
              AttendTile<T, kHeadDim, kQueryRows, true, 2, kScaleInExp>(
                  p, unit, row_block, key0, true, q_base, k_base, v_base, state);
            } else {
              AttendTile<T, kHeadDim, kQueryRows, false, 2, kScaleInExp>(
                  p, unit, row_block, key0, true, q_base, k_base, v_base, state);
            }
            WarpArrive(&empty[stages[0]], key_ways);
            WarpArrive(&empty[stages[1]], key_ways);
          }
        };
        if (q_len * p.group > kUnitRows) {
          attend_pairs(std::true_type{});
        } else {
          attend_pairs(std::false_type{});
        }
      }
    }
    for (; t < tiles.num_tiles; t += key_ways) {
      const uint32_t g = tile_counter + t;
      const int stage = g % Traits::kStages;
      // Parity (g / kStages) & 1 names this round of the stage unambiguously
      // only if the stage's previous round has completed: tiles land out of
      // order (TMA tiles complete independently of each other), so that must
      // not depend on other tiles having landed. It holds because kStages is a
      // multiple of key_ways: within a segment every round of this stage is
      // consumed by this warp's key way, so this warp waited for the previous
      // round itself, or it was consumed before the segment's first
      // ConsumerBarrier. (The stage cannot be a round ahead either: its next
      // round waits for this warp's release.) The deep ring's five stages
      // are no multiple of 2 or 4; there, units of several key ways
      // stream by cp.async only, whose tiles land in issue order per producer
      // lane, so this warp's own previous tile (a stage or more back) having
      // landed means the stage's previous round has, as in the decode kernel.
      MbarrierWait(&full[stage], (g / Traits::kStages) & 1);
      if (computes) {
        // The tile arrived through cp.async (generic proxy); wgmma reads it
        // through the async proxy.
        if (use_wgmma) FenceProxyAsync();
        const uint32_t k_base[1] = {SmemAddress(k_ring + stage * Traits::kTileElems)};
        const uint32_t v_base[1] = {SmemAddress(v_ring + stage * Traits::kTileElems)};
        const int key0 = (tiles.first_tile + t) * kKeysPerTile;
        // Only the last tiles of a tree request meet its mask words: the
        // others take the plain tile code, which the mask would slow down.
        if (kTreeMasks && key0 + kKeysPerTile > unit.tree_base) {
          AttendTile<T, kHeadDim, kQueryRows, true>(p, unit, row_block, key0, use_wgmma, q_base,
                                                    k_base, v_base, state);
        } else {
          AttendTile<T, kHeadDim, kQueryRows, false>(p, unit, row_block, key0, use_wgmma, q_base,
                                                     k_base, v_base, state);
        }
      }
      // The stage's "empty" barrier counts every consumer lane once per round:
      // each lane of the row_blocks warps that read it arrives for its key-way
      // siblings' lanes too.
      WarpArrive(&empty[stage], key_ways);
    }
    if constexpr (kGroups > 1) {
      stream_tiles = max(stream_tiles, tiles.num_tiles);
      ReleaseUnread<Traits>(tile_counter, tiles.num_tiles, stream_tiles, full, empty);
      tile_counter += stream_tiles;
    } else {
      tile_counter += tiles.num_tiles;
    }

    // Fold the key ways into way 0 through the query tile (two 16-row fp32
    // states fit).
    FoldKeyWaysWithBarriers<kHeadDim, false, 16, kGroups>(state, merge_o, merge_state, key_ways,
                                                          key_way, row_blocks, row_block,
                                                          tiles.num_tiles, lane);
    if (key_way == 0 && has_rows) {
      WriteRows<T, kHeadDim>(p, unit, row_block, segment.partial, state);
    }
    // (The general kernel never runs plans of KV head pairs.)
    if (segment.partial >= 0 && MergedByAttentionKernel(unit.rows, 1)) {
      MergeIfLastPiece<T, kHeadDim, false, kHeadDim, kGroups>(p, segment.merge_task, unit.rows,
                                                              merge_o, merge_flag, segment, q_smem);
    }
  };

  if constexpr (kGroups == 1) {
    for (int s = segment_begin; s < segment_end; ++s) consume_segment(s, 0);
  } else {
    // Group 0 runs list a's segments, group 1 list b's (PairWalk).
    const bool group_b = threadIdx.x >= Traits::kConsumerThreads;
    PairWalk walk = group_b ? PairWalk{partner_begin, partner_end, segment_begin, segment_end}
                            : PairWalk{segment_begin, segment_end, partner_begin, partner_end};
    while (walk.a < walk.a_end || walk.b < walk.b_end) {
      const PairStep step = NextPairStep<kKeysPerTile>(p, walk);
      const int own = group_b ? step.b : step.a;
      if (own >= 0) {
        consume_segment(own, step.tiles.num_tiles);
      } else {  // the partner's segment alone
        ReleaseUnread<Traits>(tile_counter, 0, step.tiles.num_tiles, full, empty);
        tile_counter += step.tiles.num_tiles;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The decode kernel's consumer warps.
//
// Its four warps are key ways of one unit: tile g of the CTA's sequence goes
// to warp g % 4, across segments, so the ways are not in step at a segment's
// end (its last tiles land one after another). A fold with CTA barriers holds
// every way until the last tile's way is through, then through the fold,
// the write and the next segment's start, while the ring (four tiles deep)
// fills with the next segment's first tiles and stops streaming (NOTES.md:
// ~2 us per boundary on b128 1k). So whole units of at most kFoldSlotRows
// rows fold without one: each way leaves its state in its fold slot and goes
// on to its next tile; the way of the segment's last tile (the folder) waits
// for the other three slots, folds, writes the rows and loads the queries of
// the segment after next. Pieces of cut units (which merge after the fold)
// and larger units fold with barriers (FoldKeyWaysWithBarriers).

// One key way's fold slot: O of the thread's row lane / 4, then its running
// max and sum.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void StoreFoldSlot(const RowState<kHeadDim, kRows>& state, float* slot,
                                              int lane) {
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) {
    slot[(2 * d) * 32 + lane] = state.o[d][0];
    slot[(2 * d + 1) * 32 + lane] = state.o[d][1];
  }
  slot[(kHeadDim / 4) * 32 + lane] = state.max[0];
  slot[(kHeadDim / 4 + 1) * 32 + lane] = state.sum[0];
}

// Row lane / 4 of (way 0 + way 2) + (way 1 + way 3) of the four key ways (by
// logical way: the way's tiles are 0, 1, 2, 3 mod 4 of the segment), into
// `state`: the barrier fold's tree (way w takes way w + 2, then way 0 takes
// way 1) in RowState::Merge's arithmetic, so the unit comes out bit for bit
// as in the general kernel. value(w, at, own) is way w's float at fold-slot
// offset `at` (FoldSlotFloats' layout); `own` is `state`'s value there, for
// a way whose state is `state` itself (FoldKeyWaysIntoFolder).
template <int kHeadDim, int kRows, typename WayValue>
__device__ __forceinline__ void FoldWays(RowState<kHeadDim, kRows>& state, WayValue value) {
  constexpr int kMax = (kHeadDim / 4) * 32;
  constexpr int kSum = kMax + 32;
  const float own_max = state.max[0];
  const float own_sum = state.sum[0];
  const MergeWeights a = MergeWeightsOf(value(0, kMax, own_max), value(2, kMax, own_max));
  const MergeWeights b = MergeWeightsOf(value(1, kMax, own_max), value(3, kMax, own_max));
  const MergeWeights ab = MergeWeightsOf(a.max, b.max);
  state.max[0] = ab.max;
  state.sum[0] = Weighted(
      Weighted(value(3, kSum, own_sum), b.theirs, value(1, kSum, own_sum), b.mine), ab.theirs,
      Weighted(value(2, kSum, own_sum), a.theirs, value(0, kSum, own_sum), a.mine), ab.mine);
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int at = (2 * d + e) * 32;
      const float own = state.o[d][e];
      state.o[d][e] =
          Weighted(Weighted(value(0, at, own), a.mine, value(2, at, own), a.theirs), ab.mine,
                   Weighted(value(1, at, own), b.mine, value(3, at, own), b.theirs), ab.theirs);
    }
  }
}

// FoldWays from the four key ways' fold slots.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void FoldKeyWays(const float* slots, RowState<kHeadDim, kRows>& state,
                                            int lane) {
  FoldWays(state,
           [&](int w, int at, float) { return slots[w * FoldSlotFloats(kHeadDim) + at + lane]; });
}

// FoldWays for the head_dim 256 decode kernel (FoldSlots): the folder's own
// way (logical way `folder`) is `state`, the other three are in slots
// FoldSlotOf(way, folder). Every way's values are loaded and the folder's
// replaced by a select (its pointer is slot 0's, never a slot past the
// three): no branch per element.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void FoldKeyWaysIntoFolder(const float* slots, int folder,
                                                      RowState<kHeadDim, kRows>& state, int lane) {
  const float* way[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    way[w] = slots + (w == folder ? 0 : FoldSlotOf(w, folder)) * FoldSlotFloats(kHeadDim) + lane;
  }
  FoldWays(state, [&](int w, int at, float own) { return w == folder ? own : way[w][at]; });
}

// Loads segment s's query tile into `tile` by one warp's cp.async (rows past
// the unit zero-filled); each lane arrives on `tile_full` (32 arrivals) once
// its copies have landed. Lane r works out row r's address (one division by
// the group) and hands it to the lanes that copy the row's chunks.
template <typename T, int kHeadDim, bool kKvHeadPairs>
__device__ __forceinline__ void LoadDecodeQueries(const PagedAttentionParams& p, int s, T* tile,
                                                  uint64_t* tile_full, int lane) {
  using Traits = KernelTraits<kHeadDim, true>;
  static_assert(Traits::kQueryRows <= 32, "a lane per row");
  const UnitView unit = UnitOf(LoadSegment(p.plan.segments + s), p.group);
  // A unit of a KV head pair (kKvHeadPairs): rows of kHeadDim / 2 in q, each
  // copied into its KV head's half of the tile's columns (the upper half: the
  // pair's second head, the group's upper half), the other half zero-filled.
  constexpr int kQHeadDim = kKvHeadPairs ? kHeadDim / 2 : kHeadDim;
  int64_t row_offset = 0;  // elements from q to row `lane`
  int row_half = 0;        // kKvHeadPairs: the half of row `lane`'s KV head
  if (lane < unit.rows) {
    const int packed = unit.unit_row0 + lane;
    const int token = unit.q_begin + packed / p.group;
    const int head = unit.kv_head * p.group + packed % p.group;
    row_offset = (int64_t{token} * p.num_q_heads + head) * kQHeadDim;
    if constexpr (kKvHeadPairs) row_half = 2 * (packed % p.group) >= p.group ? 1 : 0;
  }
  const T* q = static_cast<const T*>(p.q);
  const int chunk = lane % Traits::kChunksPerRow;
#pragma unroll
  for (int row0 = 0; row0 < Traits::kQueryRows; row0 += Traits::kRowsPerPass) {
    const int row = row0 + lane / Traits::kChunksPerRow;
    const int64_t offset = __shfl_sync(kFullMask, row_offset, row);
    const bool valid = row < unit.rows;
    const uint32_t to =
        SmemAddress(tile) + 2 * TileOffset<kHeadDim, Traits::kQueryRows>(row, chunk);
    if constexpr (kKvHeadPairs) {
      constexpr int kHalfChunks = Traits::kChunksPerRow / 2;
      const bool in_half = valid && chunk / kHalfChunks == __shfl_sync(kFullMask, row_half, row);
      CpAsync16(to, q + (in_half ? offset + (chunk % kHalfChunks) * 8 : 0), in_half);
    } else {
      CpAsync16(to, q + (valid ? offset + chunk * 8 : 0), valid);
    }
  }
  CpAsyncMbarrierArrive(tile_full);
}

// barriers: query_full[2] (the query tile of every other segment), fold_full
// (the four ways' slots are in), fold_free (the folder has read them).
//
// The fold slots share the scratch with the barrier fold and the fused merge
// (which keeps the CTA's shared memory at the size it had before the slots,
// NOTES.md `AFS`), so its users take turns: the barrier fold and the merge
// start behind a CTA barrier, which every way reaches only after its reads of
// the slots before; a fold into slots waits for the folder of the fold before
// it (fold_free), and after a barrier fold or merge, whose last reads end at
// no barrier of their own, for one CTA barrier.
template <typename T, int kHeadDim, bool kKvHeadPairs>
__device__ __forceinline__ void ConsumeDecodeSegments(const PagedAttentionParams& p,
                                                      int segment_begin, int segment_end, T* q_smem,
                                                      T* k_ring, T* v_ring, float* scratch,
                                                      float* merge_state, uint64_t* full,
                                                      uint64_t* empty, uint64_t* barriers,
                                                      FusedMergeFlag* merge_flag) {
  using Traits = KernelTraits<kHeadDim, true>;
  constexpr int kQueryRows = Traits::kQueryRows;
  constexpr int kKeysPerTile = Traits::kKeysPerTile;
  constexpr int kWays = Traits::kConsumerWarps;
  uint64_t* query_full = barriers;
  uint64_t* fold_full = barriers + 2;
  uint64_t* fold_free = barriers + 3;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  RowState<kHeadDim, Traits::kStateRows> state;
  uint32_t tile_counter = 0;  // tiles consumed by this CTA so far: same sequence as the producer's
  int folds = 0;              // barrier-free folds so far (fold_full / fold_free phases)
  bool scratch_read_by_barrier_fold = false;  // by the segment before (see above)

  // Segment i's queries go to tile i % 2, two segments ahead: the first two
  // now (warps 0 and 1), each later one by whoever finished the segment
  // before it in that tile.
  if (warp < 2 && segment_begin + warp < segment_end) {
    LoadDecodeQueries<T, kHeadDim, kKvHeadPairs>(
        p, segment_begin + warp, q_smem + warp * Traits::kQElems, &query_full[warp], lane);
  }
  for (int s = segment_begin; s < segment_end; ++s) {
    const int i = s - segment_begin;
    const WorkSegment segment = LoadSegment(p.plan.segments + s);
    const SegmentTiles tiles = TilesOf<kKeysPerTile>(segment);
    UnitView unit = UnitOf(segment, p.group);
    SetDiagonals(unit, segment, p.group, 0, lane);
    // This warp's logical way in the segment: its tiles are key_way,
    // key_way + 4, ... (as way key_way's in the general kernel). Its previous
    // tile is always the CTA's tile g - 4, which is what keeps each wait's
    // parity unambiguous: tiles land in issue order, so the stage's previous
    // round (tile g - kStages <= g - 4) has landed, as in ConsumeSegments.
    const int key_way = static_cast<int>((warp + kWays - tile_counter % kWays) % kWays);
    T* q_tile = q_smem + (i % 2) * Traits::kQElems;
    const uint32_t q_base = SmemAddress(q_tile);
    MbarrierWait(&query_full[i % 2], (i / 2) & 1);
    state.Reset();
    for (int t = key_way; t < tiles.num_tiles; t += kWays) {
      const uint32_t g = tile_counter + t;
      const int stage = g % Traits::kStages;
      MbarrierWait(&full[stage], (g / Traits::kStages) & 1);
      const uint32_t k_base[1] = {SmemAddress(k_ring + stage * Traits::kTileElems)};
      const uint32_t v_base[1] = {SmemAddress(v_ring + stage * Traits::kTileElems)};
      AttendTile<T, kHeadDim, kQueryRows, false, 1, false, Traits::kStateRows>(
          p, unit, 0, (tiles.first_tile + t) * kKeysPerTile, false, q_base, k_base, v_base, state);
      WarpArrive(&empty[stage], kWays);  // the stage's one reader, for every way
    }
    tile_counter += tiles.num_tiles;
    const bool has_next_query = s + 2 < segment_end;

    if (segment.partial < 0 && unit.rows <= kFoldSlotRows) {
      // The way that took the segment's last tile folds (way 0 if none).
      const int folder = tiles.num_tiles > 0 ? (tiles.num_tiles - 1) % kWays : 0;
      if (scratch_read_by_barrier_fold) ConsumerBarrier();  // uniform: every way is here
      scratch_read_by_barrier_fold = false;
      if (folds > 0) MbarrierWait(fold_free, (folds - 1) & 1);  // the last fold read the slots
      constexpr bool kSlotPerWay = FoldSlots(kHeadDim) == kWays;
      if constexpr (kSlotPerWay) {
        StoreFoldSlot(state, scratch + key_way * FoldSlotFloats(kHeadDim), lane);
      } else if (key_way != folder) {
        StoreFoldSlot(state, scratch + FoldSlotOf(key_way, folder) * FoldSlotFloats(kHeadDim),
                      lane);
      }
      WarpArrive(fold_full, 1);
      if (key_way == folder) {
        MbarrierWait(fold_full, folds & 1);
        if constexpr (kSlotPerWay) {
          FoldKeyWays(scratch, state, lane);
        } else {
          FoldKeyWaysIntoFolder(scratch, folder, state, lane);
        }
        WarpArrive(fold_free, 1);
        WriteRows<T, kHeadDim, kKvHeadPairs, Traits::kStateRows>(p, unit, 0, -1, state);
        // Every way is through the segment, so its query tile is free.
        if (has_next_query) {
          LoadDecodeQueries<T, kHeadDim, kKvHeadPairs>(p, s + 2, q_tile, &query_full[i % 2], lane);
        }
      }
      ++folds;
      continue;
    }

    // The barrier fold, in logical ways, without the rounds of no tiles
    // (short segments fold in one round).
    FoldKeyWaysWithBarriers<kHeadDim, true>(state, scratch, merge_state, kWays, key_way, 1, 0,
                                            tiles.num_tiles, lane);
    scratch_read_by_barrier_fold = true;
    // Past the fold's barriers every way is through the segment.
    if (key_way == 1 && has_next_query) {
      LoadDecodeQueries<T, kHeadDim, kKvHeadPairs>(p, s + 2, q_tile, &query_full[i % 2], lane);
    }
    if (key_way == 0) {
      WriteRows<T, kHeadDim, kKvHeadPairs, Traits::kStateRows>(p, unit, 0, segment.partial, state);
    }
    if (segment.partial >= 0 && MergedByAttentionKernel(unit.rows, kKvHeadPairs ? 2 : 1)) {
      // (Its spread form stages through the query tiles: only at a worker's
      // last segment, when no query load is in flight.)
      MergeIfLastPiece<T, kHeadDim, true, kKvHeadPairs ? kHeadDim / 2 : kHeadDim>(
          p, segment.merge_task, unit.rows, scratch, merge_flag, segment, q_smem);
    }
  }
}

// kTreeMasks: the instantiation for plans with tree masks
// (AttentionMetadata::tree_mask); the other one never looks at them.
// kDecode: the decode kernel (KernelTraits), for plans of units of at most
// DecodeMaxRows rows and no tree masks. kPairedTiles: two key tiles per
// softmax step for units of four row blocks (HasPairedTilesKernel); with
// kDeepRing, five stages and one query tile (kDeepRingStages) for plans whose
// units share K/V. The ring changes when tiles land, not what is computed.
// kKvHeadPairs: the head_dim 128 decode kernel over head_dim 64 plans of KV
// head pairs (WorkPlanView::kv_heads_per_unit): q, out and the partials have
// rows of 64, each in its KV head's half of the kernel's 128 columns.
// kGroups 2 (member pairs, the general deep ring): CTA c runs workers c and
// c + gridDim.x (WorkPlanView::member_pair_offset, the grid) as two consumer
// warpgroups over one K/V stream (KernelTraits, ConsumeSegments), one CTA
// per SM.
template <typename T, int kHeadDim, bool kTreeMasks, bool kDecode, bool kPairedTiles,
          bool kDeepRing, bool kKvHeadPairs = false, int kGroups = 1>
__global__ void __launch_bounds__((CtaThreads<kHeadDim, kDeepRing, kGroups>()),
                                  kGroups == 1 ? 2 : 1)
    PagedAttentionKernel(const __grid_constant__ PagedAttentionParams p) {
  using Traits = KernelTraits<kHeadDim, kDecode, kDeepRing, kGroups>;
  static_assert(!(kDecode && kTreeMasks), "tree plans take the general kernel");
  static_assert(!kKvHeadPairs || (kDecode && kHeadDim == 128),
                "KV head pairs: the head_dim 128 decode kernel");
  static_assert(kGroups == 1 || (kDeepRing && !kTreeMasks), "member pairs: the general deep ring");
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Tiles start 1024-byte aligned (the 128-byte swizzle's period), whatever
  // the dynamic shared memory's own alignment.
  uint8_t* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  // Query tiles, scratch, merge state and fused-merge flag: one set per
  // consumer group.
  T* q_smem = reinterpret_cast<T*>(smem);
  T* k_ring = q_smem + kGroups * Traits::kQueryTiles * Traits::kQElems;
  T* v_ring = k_ring + Traits::kStages * Traits::kTileElems;
  float* scratch = reinterpret_cast<float*>(v_ring + Traits::kStages * Traits::kTileElems);
  float* merge_state = scratch + kGroups * (Traits::kScratchBytes / 4);
  uint64_t* full =
      reinterpret_cast<uint64_t*>(merge_state + kGroups * 2 * Traits::kMergeStateFloats);
  uint64_t* empty = full + Traits::kStages;
  // The decode kernel's: query_full[2], fold_full, fold_free (ConsumeDecodeSegments).
  uint64_t* decode_barriers = empty + Traits::kStages;
  auto* merge_flag =
      reinterpret_cast<FusedMergeFlag*>(reinterpret_cast<uint8_t*>(full) + Traits::kBarrierBytes);

  // The merge step may launch now (it waits for this grid's end before it
  // reads anything): its launch overlaps this kernel instead of following it.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (p.plan.max_zero_fill_tokens > 0) {  // a CUDA-graph capacity with padding rows
    ZeroFillPadding<T>(p, kKvHeadPairs ? kHeadDim / 2 : kHeadDim, blockIdx.x, gridDim.x,
                       CtaThreads<kHeadDim, kDeepRing, kGroups>(), threadIdx.x);
  }
  const int segment_begin = p.plan.worker_begin[blockIdx.x];
  const int segment_end = p.plan.worker_begin[blockIdx.x + 1];
  // The partner of a member pair (kGroups 2), or none.
  const int partner = blockIdx.x + gridDim.x;
  const bool has_partner = kGroups > 1 && partner < p.plan.num_workers;
  const int partner_begin = has_partner ? p.plan.worker_begin[partner] : 0;
  const int partner_end = has_partner ? p.plan.worker_begin[partner + 1] : 0;
  if (segment_begin >= segment_end && partner_begin >= partner_end) return;  // idle (whole CTA)

  if (threadIdx.x == 0) {
#pragma unroll
    for (int stage = 0; stage < Traits::kStages; ++stage) {
      MbarrierInit(&full[stage], 32);  // one cp.async arrival per producer lane
      // Every consumer lane of every group (WarpArrive).
      MbarrierInit(&empty[stage], kGroups * Traits::kConsumerThreads);
    }
    if constexpr (kDecode) {
      MbarrierInit(&decode_barriers[0], 32);  // a query tile: one cp.async arrival per lane
      MbarrierInit(&decode_barriers[1], 32);  // of the warp that loads it
      MbarrierInit(&decode_barriers[2], Traits::kConsumerThreads);  // fold_full: every key way
      MbarrierInit(&decode_barriers[3], 32);  // fold_free: the folder's lanes (WarpArrive)
    }
  }
  __syncthreads();  // the last CTA-wide barrier: roles split below
  constexpr bool kSplitRegisters = SplitsRegisters(kHeadDim, kDeepRing);
  constexpr int kConsumers = kGroups * Traits::kConsumerThreads;  // threads 0 .. kConsumers - 1
  if (threadIdx.x >= kConsumers) {
    if constexpr (kSplitRegisters) {
#if PA_HAS_WGMMA
      asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(ProducerRegisters(kDeepRing)));
#endif
      if (threadIdx.x >= kConsumers + 32) return;  // one warp produces
    }
    if (p.tma_box_rows > 0 && threadIdx.x == kConsumers) {
      PrefetchTmaDescriptor(&p.k_tma);
      PrefetchTmaDescriptor(&p.v_tma);
    }
    ProduceSegments<T, kHeadDim, kDecode, kDeepRing, kGroups>(
        p, segment_begin, segment_end, partner_begin, partner_end, k_ring, v_ring, full, empty);
  } else {
#if PA_HAS_WGMMA
    if constexpr (kSplitRegisters) {
      asm volatile(
          "setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(ConsumerRegisters(kDeepRing, kGroups)));
    }
#endif
    if constexpr (kDecode) {
      ConsumeDecodeSegments<T, kHeadDim, kKvHeadPairs>(p, segment_begin, segment_end, q_smem,
                                                       k_ring, v_ring, scratch, merge_state, full,
                                                       empty, decode_barriers, merge_flag);
    } else if constexpr (kGroups == 1) {
      ConsumeSegments<T, kHeadDim, kTreeMasks, kPairedTiles, kDeepRing>(
          p, segment_begin, segment_end, 0, 0, q_smem, k_ring, v_ring, scratch, merge_state, full,
          empty, merge_flag);
    } else {
      // Group 1 runs the partner's segments, with the CTA's worker as its partner.
      const int group = threadIdx.x / Traits::kConsumerThreads;
      ConsumeSegments<T, kHeadDim, kTreeMasks, kPairedTiles, kDeepRing, kGroups>(
          p, group == 0 ? segment_begin : partner_begin, group == 0 ? segment_end : partner_end,
          group == 0 ? partner_begin : segment_begin, group == 0 ? partner_end : segment_end,
          q_smem + group * Traits::kQueryTiles * Traits::kQElems, k_ring, v_ring,
          scratch + group * (Traits::kScratchBytes / 4),
          merge_state + group * 2 * Traits::kMergeStateFloats, full, empty, merge_flag + group);
    }
  }
}

}  // namespace attention_kernel

// The kernel of (kDType, kHeadDim, kTreeMasks, kDecode, kPairedTiles,
// kDeepRing) and its dynamic shared memory, allowed once per process (not a
// stream operation: also fine during graph capture).
template <DType kDType, int kHeadDim, bool kTreeMasks, bool kDecode, bool kPairedTiles = false,
          bool kDeepRing = false, bool kKvHeadPairs = false, int kGroups = 1>
cudaError_t ConfiguredKernel(void (**kernel)(PagedAttentionParams), int* threads, int* smem_bytes) {
  using T = typename attention_kernel::CudaType<kDType>::Type;
  *kernel = attention_kernel::PagedAttentionKernel<T, kHeadDim, kTreeMasks, kDecode, kPairedTiles,
                                                   kDeepRing, kKvHeadPairs, kGroups>;
  *threads = attention_kernel::CtaThreads<kHeadDim, kDeepRing, kGroups>();
  *smem_bytes = attention_kernel::KernelTraits<kHeadDim, kDecode, kDeepRing, kGroups>::kSmemBytes;
  static const cudaError_t configured =
      cudaFuncSetAttribute(*kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, *smem_bytes);
  return configured;
}

// The instantiations a (dtype, head_dim) has (*DeepRing: the paired-tiles
// kernels with kDeepRing, for compute-bound plans; *MemberPairs: the general
// one's CTAs of two consumer warpgroups, for eager plans with member pairs;
// kDecodeKvHeadPairs: head_dim 64's plans of KV head pairs, run by the
// head_dim 128 decode kernel).
enum class KernelVariant {
  kGeneral,
  kGeneralPaired,
  kGeneralPairedDeepRing,
  kGeneralPairedDeepRingMemberPairs,
  kTreeMasks,
  kTreeMasksPaired,
  kTreeMasksPairedDeepRing,
  kDecode,
  kDecodeKvHeadPairs
};
constexpr KernelVariant kKernelVariants[] = {KernelVariant::kGeneral,
                                             KernelVariant::kGeneralPaired,
                                             KernelVariant::kGeneralPairedDeepRing,
                                             KernelVariant::kGeneralPairedDeepRingMemberPairs,
                                             KernelVariant::kTreeMasks,
                                             KernelVariant::kTreeMasksPaired,
                                             KernelVariant::kTreeMasksPairedDeepRing,
                                             KernelVariant::kDecode,
                                             KernelVariant::kDecodeKvHeadPairs};

template <DType kDType, int kHeadDim>
cudaError_t ConfiguredVariant(KernelVariant variant, void (**kernel)(PagedAttentionParams),
                              int* threads, int* smem_bytes) {
  constexpr bool kPaired = attention_kernel::HasPairedTilesKernel(kHeadDim);
  switch (variant) {
    case KernelVariant::kTreeMasksPairedDeepRing:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, true, false, true, true>(kernel, threads,
                                                                           smem_bytes);
      }
      [[fallthrough]];  // no paired kernels at this head_dim: the plain tree kernel
    case KernelVariant::kTreeMasksPaired:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, true, false, true>(kernel, threads, smem_bytes);
      } else {
        return ConfiguredKernel<kDType, kHeadDim, true, false>(kernel, threads, smem_bytes);
      }
    case KernelVariant::kTreeMasks:
      return ConfiguredKernel<kDType, kHeadDim, true, false>(kernel, threads, smem_bytes);
    case KernelVariant::kGeneralPairedDeepRingMemberPairs:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, false, false, true, true, false, 2>(
            kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kGeneralPairedDeepRing:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, false, false, true, true>(kernel, threads,
                                                                            smem_bytes);
      }
      break;
    case KernelVariant::kGeneralPaired:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, false, false, true>(kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kDecode:
      if constexpr (attention_kernel::HasDecodeKernel(kHeadDim)) {
        return ConfiguredKernel<kDType, kHeadDim, false, true>(kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kDecodeKvHeadPairs:
      if constexpr (kHeadDim == 64) {
        return ConfiguredKernel<kDType, 2 * kHeadDim, false, true, false, false, true>(
            kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kGeneral:
      break;
  }
  return ConfiguredKernel<kDType, kHeadDim, false, false>(kernel, threads, smem_bytes);
}

// The instantiation for `params`: with tree masks exactly when it has them,
// else the decode kernel when every unit fits it (max_unit_rows), else the
// general one; the paired-tiles form of the general and tree kernels when a
// unit may have four row blocks, with the deep ring when a request's units
// may share K/V (max_request_rows > kUnitRows: compute-bound). A unit of at
// most 32 rows runs the same arithmetic in every kernel, and a larger one
// always runs a paired kernel where the head_dim has one (a CUDA-graph
// capacity's max_unit_rows is at least the live batch's), whose two rings
// compute alike, so the choice does not change results (an eager launch and
// a replay at a larger capacity can choose differently).
//
// Plans of KV head pairs (head_dim 64, kv_heads_per_unit 2) take the head_dim
// 128 decode kernel's pairs instantiation, whatever else holds: nothing else
// runs them (the planner and CanImplement allow pairs only for units the
// decode kernel folds and merges itself, without tree masks).
template <int kHeadDim>
KernelVariant VariantFor(const PagedAttentionParams& params) {
  if (kHeadDim == 64 && params.kv_heads_per_unit == 2) return KernelVariant::kDecodeKvHeadPairs;
  const bool paired = attention_kernel::HasPairedTilesKernel(kHeadDim) &&
                      params.max_unit_rows >= attention_kernel::kPairedTilesMinRows;
  const bool deep_ring = paired && params.max_request_rows > kUnitRows;
  if (params.tree_mask != nullptr) {
    return deep_ring ? KernelVariant::kTreeMasksPairedDeepRing
           : paired  ? KernelVariant::kTreeMasksPaired
                     : KernelVariant::kTreeMasks;
  }
  if (attention_kernel::HasDecodeKernel(kHeadDim) &&
      params.max_unit_rows <= attention_kernel::DecodeMaxRows(kHeadDim)) {
    return KernelVariant::kDecode;
  }
  if (deep_ring && params.plan.member_pair_offset > 0) {
    return KernelVariant::kGeneralPairedDeepRingMemberPairs;
  }
  return deep_ring ? KernelVariant::kGeneralPairedDeepRing
         : paired  ? KernelVariant::kGeneralPaired
                   : KernelVariant::kGeneral;
}

// Workers one CTA of `variant` runs.
constexpr int WorkersPerCta(KernelVariant variant) {
  return variant == KernelVariant::kGeneralPairedDeepRingMemberPairs ? 2 : 1;
}

// The fewest workers per SM over the instantiations, as CTAs per SM (the
// planner's geometry must hold for each).
template <DType kDType, int kHeadDim>
cudaError_t PagedAttentionKernelOccupancy(int* ctas_per_sm) {
  int fewest = 1 << 30;
  for (const KernelVariant variant : kKernelVariants) {
    void (*kernel)(PagedAttentionParams) = nullptr;
    int threads = 0;
    int smem_bytes = 0;
    if (const cudaError_t error =
            ConfiguredVariant<kDType, kHeadDim>(variant, &kernel, &threads, &smem_bytes);
        error != cudaSuccess) {
      return error;
    }
    int ctas = 0;
    if (const cudaError_t error =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, threads, smem_bytes);
        error != cudaSuccess) {
      return error;
    }
    if (attention_kernel::HasPairedTilesKernel(kHeadDim)) ctas *= WorkersPerCta(variant);
    fewest = ctas < fewest ? ctas : fewest;
  }
  *ctas_per_sm = fewest;
  return cudaSuccess;
}

static_assert(sizeof(TmaDescriptor) == sizeof(CUtensorMap) &&
                  alignof(TmaDescriptor) == alignof(CUtensorMap),
              "TmaDescriptor mirrors CUtensorMap");

// Fills params->{k,v}_tma and tma_box_rows when TMA can stream this call's
// pools, else leaves tma_box_rows 0 (every tile by cp.async). The maps of the
// last pools seen on this thread are reused: encoding is host work only, but
// it is not free, and an engine launches on the same pools every step.
template <typename T, int kHeadDim>
void PrepareTma(PagedAttentionParams* params) {
  using Traits = attention_kernel::KernelTraits<kHeadDim>;
  params->tma_box_rows = 0;
  const int box_rows = TmaBoxRows(params->page_size, Traits::kKeysPerTile);
  const uint64_t slots = uint64_t(params->num_pages) * uint64_t(params->page_size);
  if (params->use_tma == 0 || box_rows == 0 || slots == 0 || slots > (uint64_t{1} << 32)) return;

  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // no TMA encoder: cp.async only, and no sticky error
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (encode == nullptr) return;

  struct Cached {
    const void* k = nullptr;
    const void* v = nullptr;
    uint64_t slots = 0;
    int32_t kv_heads = 0;
    int32_t box_rows = 0;
    TmaDescriptor k_tma, v_tma;
  };
  static thread_local Cached cached;
  if (cached.k != params->k_cache || cached.v != params->v_cache || cached.slots != slots ||
      cached.kv_heads != params->num_kv_heads || cached.box_rows != box_rows) {
    // (head_dim, kv_head, slot) with the pool's strides; boxes of one
    // 64-column block x one head x box_rows slots, 128-byte swizzled.
    const cuuint64_t dims[3] = {cuuint64_t(kHeadDim), cuuint64_t(params->num_kv_heads), slots};
    const cuuint64_t strides[2] = {cuuint64_t(kHeadDim) * sizeof(T),
                                   cuuint64_t(params->num_kv_heads) * kHeadDim * sizeof(T)};
    const cuuint32_t box[3] = {64, 1, cuuint32_t(box_rows)};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    const CUtensorMapDataType type = std::is_same<T, __half>::value
                                         ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                         : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    for (const bool is_v : {false, true}) {
      void* pool = const_cast<void*>(is_v ? params->v_cache : params->k_cache);
      auto* map = reinterpret_cast<CUtensorMap*>(is_v ? &cached.v_tma : &cached.k_tma);
      if (encode(map, type, 3, pool, dims, strides, box, element_strides,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        cached = Cached{};
        return;
      }
    }
    cached.k = params->k_cache;
    cached.v = params->v_cache;
    cached.slots = slots;
    cached.kv_heads = params->num_kv_heads;
    cached.box_rows = box_rows;
  }
  params->k_tma = cached.k_tma;
  params->v_tma = cached.v_tma;
  params->tma_box_rows = box_rows;
}

// CTAs of the (kDType, kHeadDim) decode kernel `kVariant` the current device
// holds at once (occupancy x SMs), asked once per process; 0 when the query
// fails (no cooperative launch then).
template <DType kDType, int kHeadDim, KernelVariant kVariant>
int ResidentDecodeCtas(void (*kernel)(PagedAttentionParams), int threads, int smem_bytes) {
  static const int resident = [&] {
    int device = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes) !=
            cudaSuccess) {
      cudaGetLastError();  // the failed query leaves no sticky error
      return 0;
    }
    return per_sm * sms;
  }();
  return resident;
}

template <DType kDType, int kHeadDim>
cudaError_t LaunchPagedAttentionKernel(const PagedAttentionParams& params, cudaStream_t stream) {
  using T = typename attention_kernel::CudaType<kDType>::Type;
  void (*kernel)(PagedAttentionParams) = nullptr;
  int threads = 0;
  int smem_bytes = 0;
  if (const cudaError_t error = ConfiguredVariant<kDType, kHeadDim>(VariantFor<kHeadDim>(params),
                                                                    &kernel, &threads, &smem_bytes);
      error != cudaSuccess) {
    return error;
  }
  if (params.plan.num_workers == 0) return cudaSuccess;
  PagedAttentionParams launch_params = params;
  const KernelVariant variant = VariantFor<kHeadDim>(params);
  // (Decode kernels stream by cp.async only; the pairs' params describe head
  // pairs, which no head_dim 64 tensor map would.)
  if (variant != KernelVariant::kDecodeKvHeadPairs) PrepareTma<T, kHeadDim>(&launch_params);
  const bool decode =
      variant == KernelVariant::kDecode || variant == KernelVariant::kDecodeKvHeadPairs;
  const int resident_decode_ctas =
      !decode ? 0
      : variant == KernelVariant::kDecode
          ? ResidentDecodeCtas<kDType, kHeadDim, KernelVariant::kDecode>(kernel, threads,
                                                                         smem_bytes)
          : ResidentDecodeCtas<kDType, kHeadDim, KernelVariant::kDecodeKvHeadPairs>(kernel, threads,
                                                                                    smem_bytes);
  // A decode plan whose merges all stay in this kernel (no merge kernel after
  // it) and whose grid fits on the GPU at once launches cooperatively: every
  // CTA is then resident, so the pieces of a unit may wait for each other and
  // spread its merge (MergeIfLastPiece). Else the unit's last piece merges it.
  if (decode && params.plan.max_merge_tasks > 0 &&
      MergedByAttentionKernel(params.max_unit_rows, params.kv_heads_per_unit) &&
      params.plan.num_workers <= resident_decode_ctas) {
    launch_params.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(params.plan.num_workers);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    const cudaError_t error = cudaLaunchKernelEx(&config, kernel, launch_params);
    // A GPU that holds fewer CTAs than the occupancy query said (another
    // device, a partitioned one): launch without the waits instead.
    if (error != cudaErrorCooperativeLaunchTooLarge) return error;
    cudaGetLastError();
    launch_params.cooperative = 0;
  }
  // Member pairs: CTA c runs workers c and c + member_pair_offset.
  const int ctas = variant == KernelVariant::kGeneralPairedDeepRingMemberPairs
                       ? params.plan.member_pair_offset
                       : params.plan.num_workers;
  kernel<<<ctas, threads, smem_bytes, stream>>>(launch_params);
  return cudaGetLastError();
}

#define PA_DEFINE_ATTENTION_KERNEL(dtype, head_dim)                                             \
  template cudaError_t LaunchPagedAttentionKernel<dtype, head_dim>(const PagedAttentionParams&, \
                                                                   cudaStream_t);               \
  template cudaError_t PagedAttentionKernelOccupancy<dtype, head_dim>(int*)

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_
