// What the consumer warps of both consumer loops (general_consumers.cuh,
// decode_consumers.cuh) do around a segment's tiles: load its query tile,
// fold their key ways, write its rows (or its piece's partials) and, for the
// last piece of a small cut unit, merge the unit (MergeIfLastPiece).
#ifndef ATTENTION_KERNEL_CONSUMER_STEPS_CUH_
#define ATTENTION_KERNEL_CONSUMER_STEPS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/attend_tile.cuh"
#include "attention/kernel/kernel_traits.cuh"
#include "attention/kernel/merge_partials.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

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

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_CONSUMER_STEPS_CUH_
