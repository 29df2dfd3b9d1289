// The merge kernel of the paged attention kernel (paged_attention_kernel.h):
// combines the partials of the plan's merge tasks whose units have more than
// kFusedMergeMaxRows rows (MergedByAttentionKernel: the attention kernel
// merges smaller units itself),
// with merge_partials.cuh's formula. One warp per (merge task, row) item, or
// per two adjacent rows of a task when there are more items than warps;
// warps loop over items, so the grid stays one wave however large the
// captured capacity. Rows of units cut into at most kOnePassMaxPartials
// pieces are merged in one pass (MergeRowInOnePass; two rows of a unit of a
// few pieces together, MergeTwoRowsInOnePass), the rest by MergeRow.
//
// Launched as a programmatic dependent of the attention kernel: its launch
// overlaps the attention kernel's tail and it waits (griddepcontrol.wait)
// before reading the partials.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/merge_partials.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"

namespace paged_attention {
namespace {

using attention_kernel::AddScaled;
using attention_kernel::FoldLaneGroups;
using attention_kernel::kFullMask;
using attention_kernel::kMergeWeights;
using attention_kernel::LoadMergeTask;
using attention_kernel::MergeRow;
using attention_kernel::StoreMergedRow;
using attention_kernel::WarpMax;
using attention_kernel::WarpSum;

constexpr int kMergeThreads = 128;
constexpr int kMergeWarps = kMergeThreads / 32;

// Partials MergeRowInOnePass takes (two LSEs per lane); units cut into more
// pieces take MergeRow.
constexpr int kOnePassMaxPartials = 64;
// 16-byte partial loads in flight per lane: 16 keeps the kernel at 128
// registers, four blocks per SM. On the H200, 8 gained less at batch 1; 32
// took 228 registers and was measured only in a first form that also ran
// every batch slot for units of a few pieces (NOTES.md, Variants).
constexpr int kLoadsInFlight = 16;

// How a warp covers one row of partials in MergeRowInOnePass and
// MergeTwoRowsInOnePass: kLanesPerSet lanes hold one copy of the row
// (kPiecesPerLane float4 pieces each), and the warp's kGroups lane groups sum
// different partials side by side, kBatch partials per group and round trip.
// MergeTwoRowsInOnePass gives each of its two rows kPairSlots of those load
// slots, so kPairSlots x kGroups partials (4 at head_dim 64, 2 at 128: the
// two pieces of a b16 verify's units). More slots made ptxas spill 100-250
// bytes in this 128-register kernel; at head_dim 256 one slot holds one
// partial, so no unit pairs and the path is left out.
template <int kHeadDim>
struct OnePassShape {
  static constexpr int kPieces = kHeadDim / 4;                      // float4 pieces of a row
  static constexpr int kLanesPerSet = kPieces < 32 ? kPieces : 32;  // lanes covering one copy
  static constexpr int kGroups = 32 / kLanesPerSet;                 // partials summed side by side
  static constexpr int kPiecesPerLane = kPieces / kLanesPerSet;
  static constexpr int kBatch = kLoadsInFlight / kPiecesPerLane;  // partials per lane per trip
  static constexpr int kPairSlots = 2 / kPiecesPerLane;           // load slots per paired row
  static constexpr int kPairMaxPartials = kPairSlots * kGroups;
  static_assert(kPairMaxPartials <= 32, "a paired row's LSEs fit one per lane");
};

// MergeRow's formula for units of at most kOnePassMaxPartials pieces, with
// fewer round trips: the row's LSEs (two per lane) are loaded together with
// the first batch of partials, and each lane has kLoadsInFlight loads in
// flight per batch (16 partials a batch at head_dim 128, 32 at 64, 8 at 256),
// so a unit cut into 33 pieces at head_dim 128 costs three dependent L2 round
// trips where MergeRow takes six (its LSE pass, then five batches of eight).
// This kernel has the registers for it (128 threads, nothing else live). The
// attention kernel's fused merge keeps MergeRow: a change there moves the
// code generation of its hot loop, and the same pass in the head_dim 64
// kernels was slower (NOTES.md, Variants).
template <typename T, int kHeadDim>
__device__ void MergeRowInOnePass(const PagedAttentionParams& p, const MergeTask& task, int row) {
  using Shape = OnePassShape<kHeadDim>;
  constexpr int kLanesPerSet = Shape::kLanesPerSet;
  constexpr int kGroups = Shape::kGroups;
  constexpr int kPiecesPerLane = Shape::kPiecesPerLane;
  constexpr int kBatch = Shape::kBatch;
  const int lane = threadIdx.x % 32;
  const int group = lane / kLanesPerSet;
  const int first_piece = lane % kLanesPerSet;
  const int n = task.num_partials;
  const float* lse_of = p.partial_lse + int64_t{task.first_partial} * kUnitRows + row;
  // LSE of partial j: lane j % 32, register j / 32.
  const float lse_low = lane < n ? __ldcg(lse_of + lane * kUnitRows) : -INFINITY;
  const float lse_high = lane + 32 < n ? __ldcg(lse_of + (lane + 32) * kUnitRows) : -INFINITY;
  const int64_t stride = int64_t{kUnitRows} * kHeadDim / 4;  // float4s from one partial to the next
  const float4* first =
      reinterpret_cast<const float4*>(p.partial_out +
                                      (int64_t{task.first_partial} * kUnitRows + row) * kHeadDim) +
      first_piece;
  float4 acc[kPiecesPerLane];
#pragma unroll
  for (int k = 0; k < kPiecesPerLane; ++k) acc[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float max_lse = -INFINITY, weight_low = 0.0f, weight_high = 0.0f, sum = 0.0f;
  for (int base = 0; base < n; base += kBatch * kGroups) {
    float4 v[kBatch][kPiecesPerLane];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (base + u * kGroups >= n) break;  // units cut into a few pieces load a few
      const int j = base + u * kGroups + group;
#pragma unroll
      for (int k = 0; k < kPiecesPerLane; ++k) {
        v[u][k] = j < n ? __ldcg(first + j * stride + k * kLanesPerSet)
                        : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
    if (base == 0) {  // the LSEs have arrived with the first batch: weights once
      max_lse = WarpMax(fmaxf(lse_low, lse_high));
      if (max_lse != -INFINITY) {  // else no visible key: zeros and lse = -inf
        weight_low = expf(lse_low - max_lse);
        weight_high = expf(lse_high - max_lse);
      }
      sum = WarpSum(weight_low + weight_high);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (base + u * kGroups >= n) break;
      const int j = base + u * kGroups + group;  // < 64 + kGroups; lanes of one group share j
      const float w_low = __shfl_sync(kFullMask, weight_low, j % 32);
      const float w_high = __shfl_sync(kFullMask, weight_high, j % 32);
      const float w = j < n ? (j < 32 ? w_low : w_high) : 0.0f;
#pragma unroll
      for (int k = 0; k < kPiecesPerLane; ++k) AddScaled(acc[k], w, v[u][k]);
    }
  }
  FoldLaneGroups(acc, kLanesPerSet);
  if (group != 0) return;
  StoreMergedRow<T>(p, kHeadDim, task, row, acc, first_piece, kLanesPerSet, sum, max_lse,
                    threadIdx.x % 32 == 0);
}

// Rows `row` and `row` + 1 of `task`, each with MergeRowInOnePass's
// arithmetic, when the unit was cut into at most OnePassShape::kPairMaxPartials
// pieces: a unit cut into a few (a b16 verify's two) fills a slot or two of a
// warp's sixteen loads in flight, so the two rows load together and cost the
// one round trip a row costs. Each row sums the same partials in the same
// order as MergeRowInOnePass does (which stops at slot ceil(n / kGroups) <=
// kSlots, its second LSE register -inf), so the bits are its own.
template <typename T, int kHeadDim>
__device__ void MergeTwoRowsInOnePass(const PagedAttentionParams& p, const MergeTask& task,
                                      int row) {
  using Shape = OnePassShape<kHeadDim>;
  constexpr int kLanesPerSet = Shape::kLanesPerSet;
  constexpr int kGroups = Shape::kGroups;
  constexpr int kPiecesPerLane = Shape::kPiecesPerLane;
  constexpr int kSlots = Shape::kPairSlots;
  const int lane = threadIdx.x % 32;
  const int group = lane / kLanesPerSet;
  const int first_piece = lane % kLanesPerSet;
  const int n = task.num_partials;
  const int64_t first_row = int64_t{task.first_partial} * kUnitRows + row;
  const int64_t stride = int64_t{kUnitRows} * kHeadDim / 4;  // float4s from one partial to the next
  const float4* first =
      reinterpret_cast<const float4*>(p.partial_out + first_row * kHeadDim) + first_piece;
  float lse[2];
  float4 v[2][kSlots][kPiecesPerLane];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    lse[r] = lane < n ? __ldcg(p.partial_lse + first_row + r + lane * kUnitRows) : -INFINITY;
#pragma unroll
    for (int u = 0; u < kSlots; ++u) {
      if (u * kGroups >= n) break;
      const int j = u * kGroups + group;
#pragma unroll
      for (int k = 0; k < kPiecesPerLane; ++k) {
        v[r][u][k] = j < n ? __ldcg(first + r * (kHeadDim / 4) + j * stride + k * kLanesPerSet)
                           : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float max_lse = WarpMax(fmaxf(lse[r], -INFINITY));
    float weight_low = 0.0f, weight_high = 0.0f;
    if (max_lse != -INFINITY) {
      weight_low = expf(lse[r] - max_lse);
      weight_high = expf(-INFINITY - max_lse);
    }
    const float sum = WarpSum(weight_low + weight_high);
    float4 acc[kPiecesPerLane];
#pragma unroll
    for (int k = 0; k < kPiecesPerLane; ++k) acc[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int u = 0; u < kSlots; ++u) {
      if (u * kGroups >= n) break;
      const int j = u * kGroups + group;
      const float w_low = __shfl_sync(kFullMask, weight_low, j % 32);
      const float w = j < n ? w_low : 0.0f;
#pragma unroll
      for (int k = 0; k < kPiecesPerLane; ++k) AddScaled(acc[k], w, v[r][u][k]);
    }
    FoldLaneGroups(acc, kLanesPerSet);
    if (group == 0) {
      StoreMergedRow<T>(p, kHeadDim, task, row + r, acc, first_piece, kLanesPerSet, sum, max_lse,
                        lane == 0);
    }
  }
}

// kRowPairs: the instantiation with the two-row path, which the launcher
// picks where the plan's capacity can hold more items than the grid has
// warps: there, when the live items outnumber the warps, each warp takes two
// adjacent rows of a task, merged together where the unit has a few pieces
// (MergeTwoRowsInOnePass), else one after the other. The other instantiation
// is the one-row kernel as it compiled before that path existed (its PTX
// unchanged): inlined beside it, the path changed the loop's code and cost
// one-request plans 1-3% (NOTES.md `MP`, `MPI`).
template <typename T, int kHeadDim, bool kRowPairs>
__global__ void __launch_bounds__(kMergeThreads, 4)
    MergeKernel(const PagedAttentionParams p, int32_t rows_per_task) {
  __shared__ float weights[kMergeWarps][kMergeWeights];
  const int warp = threadIdx.x / 32;
  // The plan's counters and merge tasks are constants of this launch (the
  // attention kernel writes only MergeTask::arrivals, which is not read
  // here), so the first task is loaded before the wait: it arrives while the
  // attention kernel finishes instead of after it.
  const int items = p.plan.counters[kPlanNumMergeTasks] * rows_per_task;
  const int warps = gridDim.x * kMergeWarps;
  const bool row_pairs = kRowPairs && items > warps && rows_per_task % 2 == 0;
  const int per_warp = row_pairs ? 2 : 1;
  const int step = warps * per_warp;
  int item = (blockIdx.x * kMergeWarps + warp) * per_warp;
  MergeTask task;
  if (item < items) task = LoadMergeTask(p.plan.merge_tasks + item / rows_per_task);
  // Everything below reads what the attention kernel wrote: wait for it
  // (this grid may have launched early, as a programmatic dependent).
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  for (; item < items; item += step) {
    const int rows = UnitRowCount(task.q_len, p.group, task.unit_tile);
    const int row = item % rows_per_task;
    // (Plans of KV head pairs never launch this kernel: the attention kernel
    // merges all of their units.)
    if (!MergedByAttentionKernel(rows, 1) && row < rows) {
      if constexpr (kRowPairs) {
        const bool two_rows = row_pairs && row + 1 < rows;
        if (OnePassShape<kHeadDim>::kPairMaxPartials >= 2 && two_rows &&
            task.num_partials <= OnePassShape<kHeadDim>::kPairMaxPartials) {
          MergeTwoRowsInOnePass<T, kHeadDim>(p, task, row);
        } else {
          for (int r = row; r <= (two_rows ? row + 1 : row); ++r) {
            if (task.num_partials <= kOnePassMaxPartials) {
              MergeRowInOnePass<T, kHeadDim>(p, task, r);
            } else {
              MergeRow<T>(p, kHeadDim, task, r, weights[warp]);
            }
          }
        }
      } else {
        if (task.num_partials <= kOnePassMaxPartials) {
          MergeRowInOnePass<T, kHeadDim>(p, task, row);
        } else {
          MergeRow<T>(p, kHeadDim, task, row, weights[warp]);
        }
      }
    }
    if (item + step < items)
      task = LoadMergeTask(p.plan.merge_tasks + (item + step) / rows_per_task);
  }
}

template <typename T, bool kRowPairs>
cudaError_t LaunchMergeKernel(int32_t head_dim, const cudaLaunchConfig_t& config,
                              const PagedAttentionParams& params, int32_t rows_per_task) {
  switch (head_dim) {
    case 64:
      return cudaLaunchKernelEx(&config, MergeKernel<T, 64, kRowPairs>, params, rows_per_task);
    case 128:
      return cudaLaunchKernelEx(&config, MergeKernel<T, 128, kRowPairs>, params, rows_per_task);
    case 256:  // no row pairs at head_dim 256 (OnePassShape)
      return cudaLaunchKernelEx(&config, MergeKernel<T, 256, false>, params, rows_per_task);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchPagedAttentionMerge(DType dtype, int32_t head_dim, int32_t rows_per_task,
                                      const PagedAttentionParams& params, int32_t merge_blocks,
                                      bool row_pairs, cudaStream_t stream) {
  if (merge_blocks == 0) return cudaSuccess;
  // A programmatic dependent of the attention kernel just launched on `stream`.
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(merge_blocks);
  config.blockDim = dim3(kMergeThreads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  if (dtype == DType::kBFloat16) {
    return row_pairs
               ? LaunchMergeKernel<__nv_bfloat16, true>(head_dim, config, params, rows_per_task)
               : LaunchMergeKernel<__nv_bfloat16, false>(head_dim, config, params, rows_per_task);
  }
  if (dtype == DType::kFloat16) {
    return row_pairs ? LaunchMergeKernel<__half, true>(head_dim, config, params, rows_per_task)
                     : LaunchMergeKernel<__half, false>(head_dim, config, params, rows_per_task);
  }
  return cudaErrorInvalidValue;
}

}  // namespace paged_attention
