// The producer warp of the paged attention kernel (paged_attention_kernel.cuh):
// it streams each segment's K/V key tiles through the page table into the
// ring of shared-memory stages, by 16-byte cp.async or by TMA, page ids
// looked up one tile ahead, and (member pairs) walks two workers' segment
// lists as one stream (PairWalk).
#ifndef ATTENTION_KERNEL_KV_PRODUCER_CUH_
#define ATTENTION_KERNEL_KV_PRODUCER_CUH_

#include <cuda.h>  // CUtensorMap (types only)
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/kernel_traits.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

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

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_KV_PRODUCER_CUH_
