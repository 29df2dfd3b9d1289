// The paged attention kernel's compile-time shape (paged_attention_kernel.cuh):
// which instantiations exist (decode, paired tiles, deep ring, member pairs),
// their rings, shared memory and threads (KernelTraits, CtaThreads) and the
// register split between producer and consumers; and how a worker's segment
// words are read (LoadSegment, TilesOf). Device code only, for the kernel's
// .cu files.
#ifndef ATTENTION_KERNEL_KERNEL_TRAITS_CUH_
#define ATTENTION_KERNEL_KERNEL_TRAITS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

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

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_KERNEL_TRAITS_CUH_
