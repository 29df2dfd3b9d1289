// Merging a cut unit's partials (work_plan.h), shared by the attention kernel
// (units of at most kFusedMergeMaxRows rows, twice that for KV head pairs
// (MergedByAttentionKernel), merged by the worker that
// finishes the unit's last piece) and the merge kernel (larger units):
//   out = sum_s w_s * O_s / sum_s w_s,  w_s = exp(lse_s - max_s lse_s),
//   lse = max + log(sum_s w_s),
// over the partials in plan order, so the result does not depend on which
// worker finished first. Included only by .cu files.
#ifndef ATTENTION_KERNEL_MERGE_PARTIALS_CUH_
#define ATTENTION_KERNEL_MERGE_PARTIALS_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

// Partials one warp's weights table holds per round (more are done in rounds).
constexpr int kMergeWeights = 512;
// Partial loads in flight per lane.
constexpr int kMergeUnroll = 8;
// float4 pieces of a row one lane holds at most (head_dim 256).
constexpr int kMaxMergePieces = 2;

template <typename T>
__device__ __forceinline__ void StoreFour(T* out, float4 value);

template <>
__device__ __forceinline__ void StoreFour<__nv_bfloat16>(__nv_bfloat16* out, float4 value) {
  __nv_bfloat162 lo = __floats2bfloat162_rn(value.x, value.y);
  __nv_bfloat162 hi = __floats2bfloat162_rn(value.z, value.w);
  *reinterpret_cast<uint2*>(out) =
      make_uint2(*reinterpret_cast<uint32_t*>(&lo), *reinterpret_cast<uint32_t*>(&hi));
}

template <>
__device__ __forceinline__ void StoreFour<__half>(__half* out, float4 value) {
  __half2 lo = __floats2half2_rn(value.x, value.y);
  __half2 hi = __floats2half2_rn(value.z, value.w);
  *reinterpret_cast<uint2*>(out) =
      make_uint2(*reinterpret_cast<uint32_t*>(&lo), *reinterpret_cast<uint32_t*>(&hi));
}

// A MergeTask's two 16-byte words, as the plan stores them.
struct MergeTaskWords {
  int4 head;  // request, kv_head, unit_tile, first_partial
  int4 tail;  // num_partials, q_begin, q_len, arrivals
};

// The words of a plan's merge task, through the read-only path: the plan's
// constant words. `tail.w` is `arrivals`, which the attention kernel counts
// on with atomics, so its value here is stale and never used.
__device__ __forceinline__ MergeTaskWords LoadMergeTaskWords(const MergeTask* task) {
  const int4* words = reinterpret_cast<const int4*>(task);
  return {__ldg(words), __ldg(words + 1)};
}

// A MergeTask from its two 16-byte words.
__device__ __forceinline__ MergeTask MergeTaskFromWords(int4 a, int4 b) {
  MergeTask t;
  t.request = a.x;
  t.kv_head = a.y;
  t.unit_tile = a.z;
  t.first_partial = a.w;
  t.num_partials = b.x;
  t.q_begin = b.y;
  t.q_len = b.z;
  t.arrivals = 0;  // not a plan constant: the attention kernel counts there
  return t;
}

__device__ __forceinline__ MergeTask LoadMergeTask(const MergeTask* task) {
  const MergeTaskWords words = LoadMergeTaskWords(task);
  return MergeTaskFromWords(words.head, words.tail);
}

__device__ __forceinline__ void AddScaled(float4& acc, float w, const float4& v) {
  acc.x += w * v.x;
  acc.y += w * v.y;
  acc.z += w * v.z;
  acc.w += w * v.w;
}

// The max and the sum of `x` over the warp's 32 lanes, in every lane.
__device__ __forceinline__ float WarpMax(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}
__device__ __forceinline__ float WarpSum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// Adds up the copies of a row's pieces that the warp's lane groups hold
// (lanes `lanes_per_piece_set` apart hold the same pieces), into every group.
template <int kPieces>
__device__ __forceinline__ void FoldLaneGroups(float4 (&acc)[kPieces], int lanes_per_piece_set) {
  for (int offset = lanes_per_piece_set; offset < 32; offset *= 2) {
#pragma unroll
    for (int k = 0; k < kPieces; ++k) {
      acc[k].x += __shfl_xor_sync(kFullMask, acc[k].x, offset);
      acc[k].y += __shfl_xor_sync(kFullMask, acc[k].y, offset);
      acc[k].z += __shfl_xor_sync(kFullMask, acc[k].z, offset);
      acc[k].w += __shfl_xor_sync(kFullMask, acc[k].w, offset);
    }
  }
}

// Writes row `row` of `task`'s unit, merged: out = acc / sum (acc holds this
// lane's float4 pieces first_piece, first_piece + lanes_per_piece_set, ...
// of the row) and, where `writes_lse` (one thread of the row), lse = max_lse +
// log(sum); zeros and -inf when no key was visible (sum 0). Called by the
// lanes of lane group 0.
template <typename T, int kPieces>
__device__ __forceinline__ void StoreMergedRow(const PagedAttentionParams& p, int32_t head_dim,
                                               const MergeTask& task, int row,
                                               const float4 (&acc)[kPieces], int first_piece,
                                               int lanes_per_piece_set, float sum, float max_lse,
                                               bool writes_lse) {
  const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
  const int packed = task.unit_tile * kUnitRows + row;
  const int token = task.q_begin + packed / p.group;
  const int head = task.kv_head * p.group + packed % p.group;
  T* out = static_cast<T*>(p.out) + (int64_t{token} * p.num_q_heads + head) * head_dim;
#pragma unroll
  for (int k = 0; k < kPieces; ++k) {
    const int piece = first_piece + k * lanes_per_piece_set;
    if (piece >= head_dim / 4) break;
    StoreFour<T>(out + piece * 4, make_float4(acc[k].x * inv_sum, acc[k].y * inv_sum,
                                              acc[k].z * inv_sum, acc[k].w * inv_sum));
  }
  if (p.lse != nullptr && writes_lse) {
    p.lse[int64_t{head} * p.total_q_tokens + token] = sum > 0.0f ? max_lse + logf(sum) : -INFINITY;
  }
}

// Merges rows first_row .. first_row + kRows - 1 of `task` with one warp: the
// lanes load the partials' LSEs side by side (once: the first round's
// weights are computed from the copy kept in `weights`), then split into
// `groups` lane groups that each sum every groups-th partial over the row's
// 16-byte pieces with kMergeUnroll loads per row in flight, and fold the
// groups with shuffles. A unit cut into 30 pieces costs a few round trips,
// not 30, and kRows rows cost the round trips of one (their loads are issued
// together). `weights` holds kMergeWeights floats, a table of
// kMergeWeights / kRows per row (more partials are done in rounds). Partials
// are read through L2 (ld.global.cg): other CTAs of this very launch may have
// just written them.
template <typename T, int kRows>
__device__ void MergeRows(const PagedAttentionParams& p, int32_t head_dim, const MergeTask& task,
                          int first_row, float* weights) {
  constexpr int kTable = kMergeWeights / kRows;  // weights per row and round
  const int lane = threadIdx.x % 32;
  const int n = task.num_partials;
  const float* lse_of = p.partial_lse + int64_t{task.first_partial} * kUnitRows + first_row;
  float max_lse[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) max_lse[r] = -INFINITY;
  for (int j = lane; j < n; j += 32) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float lse = __ldcg(lse_of + j * kUnitRows + r);
      if (j < kTable) weights[r * kTable + j] = lse;  // read back below by this same lane
      max_lse[r] = fmaxf(max_lse[r], lse);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) max_lse[r] = WarpMax(max_lse[r]);
  const int pieces = head_dim / 4;                  // float4 pieces of a row: 16..64
  const int lanes_per_piece_set = min(32, pieces);  // lanes covering one copy of the row
  const int groups = 32 / lanes_per_piece_set;      // partials summed side by side
  const int group = lane / lanes_per_piece_set;
  const int first_piece = lane % lanes_per_piece_set;
  const int64_t stride = int64_t{kUnitRows} * head_dim / 4;  // float4s from one partial to the next
  float4 acc[kRows][kMaxMergePieces];
  float sum[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    sum[r] = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxMergePieces; ++k) acc[r][k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  for (int base = 0; base < n; base += kTable) {
    const int count = min(kTable, n - base);
    for (int j = lane; j < count; j += 32) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float lse =
            base == 0 ? weights[r * kTable + j] : __ldcg(lse_of + (base + j) * kUnitRows + r);
        const float w = max_lse[r] == -INFINITY ? 0.0f : expf(lse - max_lse[r]);
        weights[r * kTable + j] = w;
        sum[r] += w;
      }
    }
    __syncwarp();
    // Row r of partial j: first + j * stride + r * head_dim / 4.
    const float4* first = reinterpret_cast<const float4*>(
        p.partial_out + (int64_t{task.first_partial + base} * kUnitRows + first_row) * head_dim);
#pragma unroll
    for (int k = 0; k < kMaxMergePieces; ++k) {
      const int piece = first_piece + k * lanes_per_piece_set;
      if (piece >= pieces) break;
      int j = group;
      for (; j + (kMergeUnroll - 1) * groups < count; j += kMergeUnroll * groups) {
        float4 v[kRows][kMergeUnroll];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
#pragma unroll
          for (int u = 0; u < kMergeUnroll; ++u)
            v[r][u] = __ldcg(first + (j + u * groups) * stride + r * pieces + piece);
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
#pragma unroll
          for (int u = 0; u < kMergeUnroll; ++u)
            AddScaled(acc[r][k], weights[r * kTable + j + u * groups], v[r][u]);
        }
      }
      for (; j < count; j += groups) {
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          AddScaled(acc[r][k], weights[r * kTable + j],
                    __ldcg(first + j * stride + r * pieces + piece));
      }
    }
    __syncwarp();  // weights are rewritten by the next round
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    sum[r] = WarpSum(sum[r]);
    FoldLaneGroups(acc[r], lanes_per_piece_set);
  }
  if (group != 0) return;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    StoreMergedRow<T>(p, head_dim, task, first_row + r, acc[r], first_piece, lanes_per_piece_set,
                      sum[r], max_lse[r], lane == 0);
  }
}

// Merges row `row` of `task` with one warp (MergeRows).
template <typename T>
__device__ void MergeRow(const PagedAttentionParams& p, int32_t head_dim, const MergeTask& task,
                         int row, float* weights) {
  MergeRows<T, 1>(p, head_dim, task, row, weights);
}

// Waits until *counter <= at_most (acquire, GPU scope). Spins are bounded: a
// wait that cannot end (a broken co-residency promise) traps instead of
// hanging the GPU.
__device__ __forceinline__ void WaitForCountAtMost(const int32_t* counter, unsigned at_most) {
  for (uint32_t spins = 0;; ++spins) {
    unsigned value;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(counter) : "memory");
    if (value <= at_most) return;
    if (spins > (1u << 24)) __trap();
    __nanosleep(32);
  }
}

// Merges slice `piece` of `task`'s unit (rows x head_dim / 4 float4 outputs,
// cut evenly over its num_partials pieces) with the kThreads consumer
// threads (this one is `thread`): the slice's partial values and its rows'
// LSEs are loaded at once (one round trip), each row's weights are computed
// by one warp exactly as MergeRow computes them (into that warp's table in
// `weights`), and each output float4 is summed by one thread in MergeRow's
// order (lane groups of j = g mod groups, folded as FoldLaneGroups does), so
// the bits equal MergeRow's. `staged` (shared memory, as an address and as a
// pointer) holds the slice's values. Requires rows <= 8, num_partials <=
// kMergeWeights - 2 (two table slots keep the row's max and sum) and a slice
// of at most kRounds x kThreads outputs: each thread sums up to kRounds of
// them (2 at head_dim 256, where 8 rows in 2 or 3 pieces are slices of 256 or
// 171 float4s; 1 elsewhere).
template <typename T, int kThreads, int kRounds>
__device__ void MergeSlice(const PagedAttentionParams& p, int32_t head_dim, const MergeTask& task,
                           int rows, int piece, float* weights, uint32_t staged_address,
                           const float4* staged, int thread) {
  const int n = task.num_partials;
  const int pieces = head_dim / 4;
  const int elements = rows * pieces;
  const int e_begin = piece * elements / n;
  const int count = (piece + 1) * elements / n - e_begin;
  const int row_first = e_begin / pieces;
  const int num_rows = count > 0 ? (e_begin + count - 1) / pieces - row_first + 1 : 0;
  const float4* partial_out = reinterpret_cast<const float4*>(p.partial_out);
  for (int i = thread; i < count * n; i += kThreads) {
    const int e = e_begin + i / n, j = i % n;
    CpAsync16(staged_address + 16 * i,
              partial_out + (int64_t{task.first_partial + j} * kUnitRows + e / pieces) * pieces +
                  e % pieces,
              true);
  }
  const int warp = thread / 32, lane = thread % 32;
  for (int w = warp; w < num_rows; w += kThreads / 32) {  // one warp per row, as MergeRow
    float* table = weights + w * kMergeWeights;
    const int row = row_first + w;
    const float* lse_of = p.partial_lse + int64_t{task.first_partial} * kUnitRows + row;
    float max_lse = -INFINITY;
    for (int j = lane; j < n; j += 32) {
      const float lse = __ldcg(lse_of + j * kUnitRows);
      table[j] = lse;
      max_lse = fmaxf(max_lse, lse);
    }
    max_lse = WarpMax(max_lse);
    float sum = 0.0f;
    for (int j = lane; j < n; j += 32) {
      const float weight = max_lse == -INFINITY ? 0.0f : expf(table[j] - max_lse);
      table[j] = weight;
      sum += weight;
    }
    sum = WarpSum(sum);
    if (lane == 0) {
      table[kMergeWeights - 2] = max_lse;
      table[kMergeWeights - 1] = sum;
    }
  }
  CpAsyncWaitAll();
  ConsumerBarrier();
#pragma unroll
  for (int round = 0; round < kRounds; ++round) {
    const int t = thread + round * kThreads;  // this output of the slice
    if (count <= t) return;
    const int e = e_begin + t;
    const int row = e / pieces, column = e % pieces;
    const float* table = weights + (row - row_first) * kMergeWeights;
    const int groups = 32 / min(32, pieces);  // MergeRow's lane groups (2 at head_dim 64)
    float4 acc[1] = {make_float4(0.0f, 0.0f, 0.0f, 0.0f)};
    for (int g = 0; g < groups; ++g) {
      float4 part = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int j = g; j < n; j += groups) AddScaled(part, table[j], staged[t * n + j]);
      if (g == 0) {
        acc[0] = part;
      } else {  // FoldLaneGroups: group 0's copy plus the others'
        acc[0].x += part.x;
        acc[0].y += part.y;
        acc[0].z += part.z;
        acc[0].w += part.w;
      }
    }
    StoreMergedRow<T>(p, head_dim, task, row, acc, column, pieces, table[kMergeWeights - 1],
                      table[kMergeWeights - 2], column == 0);
  }
}

// Writes zeros to out and -inf to lse for the query tokens of CUDA-graph
// padding rows (plan counters kPlanZeroFillBegin/End), spread over `parts`
// thread groups of `threads` threads; this thread is `thread` of group `part`.
template <typename T>
__device__ void ZeroFillPadding(const PagedAttentionParams& p, int32_t head_dim, int64_t part,
                                int64_t parts, int threads, int thread) {
  const int begin = p.plan.counters[kPlanZeroFillBegin];
  const int tokens = p.plan.counters[kPlanZeroFillEnd] - begin;
  if (tokens <= 0) return;
  const int64_t stride = parts * threads;
  const int64_t first = part * threads + thread;
  const int64_t pieces = int64_t{tokens} * p.num_q_heads * head_dim / 8;  // 16-byte pieces
  uint4* out =
      reinterpret_cast<uint4*>(static_cast<T*>(p.out) + int64_t{begin} * p.num_q_heads * head_dim);
  for (int64_t i = first; i < pieces; i += stride) out[i] = make_uint4(0, 0, 0, 0);
  if (p.lse != nullptr) {
    for (int64_t i = first; i < int64_t{tokens} * p.num_q_heads; i += stride) {
      const int64_t head = i / tokens;
      p.lse[head * p.total_q_tokens + begin + i % tokens] = -INFINITY;
    }
  }
}

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_MERGE_PARTIALS_CUH_
