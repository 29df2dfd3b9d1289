// The consumer loop of the decode kernel (paged_attention_kernel.cuh): units
// of at most 16 rows, the four warps as key ways out of step across
// segments, folding whole small units without a CTA barrier through fold
// slots (ConsumeDecodeSegments).
#ifndef ATTENTION_KERNEL_DECODE_CONSUMERS_CUH_
#define ATTENTION_KERNEL_DECODE_CONSUMERS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/attend_tile.cuh"
#include "attention/kernel/consumer_steps.cuh"
#include "attention/kernel/kernel_traits.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

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
      AttendSingleTile<T, kHeadDim, kQueryRows, false, Traits::kStateRows>(
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

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_DECODE_CONSUMERS_CUH_
