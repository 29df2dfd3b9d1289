// The merge kernel of the paged attention kernel (paged_attention_kernel.h):
// combines the partials of the plan's merge tasks whose units have more than
// kFusedMergeMaxRows rows (the attention kernel merges smaller units itself),
// with merge_partials.cuh's formula. Each (merge task, row) item goes to one,
// two or four warps of a block, as many as keep each warp's share of the
// row's partials to one batch of loads (the plan's kPlanMergeMaxPartials
// sets it for the launch); blocks loop over items, so the grid stays one
// wave however large the captured capacity. Rows of units cut into at most
// kOnePassMaxPartials pieces are merged in one pass (MergeRowInOnePass), the
// rest by MergeRow on one warp.
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

// How a warp covers a row in MergeRowInOnePass: kLanesPerSet lanes hold one
// copy of the row (kPiecesPerLane float4 pieces each), the warp's kGroups
// lane groups sum different partials side by side, kBatch partials per group
// and round trip. One warp takes kBatch x kGroups partials per round trip:
// 32 at head_dim 64, 16 at 128, 8 at 256.
template <int kHeadDim>
struct OnePassShape {
  static constexpr int kPieces = kHeadDim / 4;  // float4 pieces of a row
  static constexpr int kLanesPerSet = kPieces < 32 ? kPieces : 32;
  static constexpr int kGroups = 32 / kLanesPerSet;
  static constexpr int kPiecesPerLane = kPieces / kLanesPerSet;
  static constexpr int kBatch = kLoadsInFlight / kPiecesPerLane;
  static constexpr int kPartialsPerWarpTrip = kBatch * kGroups;
};

// Warps that merge one row between them, for a plan whose merge tasks have at
// most `max_partials` pieces: the fewest (1, 2 or 4) whose shares fit one
// round trip each, else 4. One-request plans cut units into ~33 pieces (one
// per worker): at head_dim 128 four warps take 9 each in one round trip,
// where one warp took three; plans of a few pieces keep a warp per row.
template <int kHeadDim>
__device__ __forceinline__ int WarpsPerRow(int max_partials) {
  constexpr int kPerWarp = OnePassShape<kHeadDim>::kPartialsPerWarpTrip;
  return max_partials <= kPerWarp ? 1 : max_partials <= 2 * kPerWarp ? 2 : kMergeWarps;
}

// The float4 pieces the warps of a row hand to its first warp: one copy of
// the row per warp (shared memory of the block).
template <int kHeadDim>
struct RowHandOff {
  float4 pieces[kMergeWarps][OnePassShape<kHeadDim>::kPiecesPerLane][32];
};

// Synchronises the `warps` warps of one row (named barrier 1 + slot; barrier
// 0 is __syncthreads'): the row's warps run the same task, so they agree.
__device__ __forceinline__ void RowBarrier(int slot, int warps) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + slot), "r"(warps * 32) : "memory");
}

// MergeRow's formula for units of at most kOnePassMaxPartials pieces, with
// fewer round trips: the row's LSEs (two per lane) are loaded together with
// the first batch of partials, and the row's `ways` warps (this one is
// `way`) take every ways-th lane group's share of the partials, kLoadsInFlight
// loads in flight per lane and batch, so a unit cut into 33 pieces at
// head_dim 128 costs one dependent L2 round trip with four warps (three with
// one; MergeRow takes six: its LSE pass, then five batches of eight). Each
// warp sums its partials in order; the row's warps add up in warp order
// (`hand_off`), so a launch's bits depend only on the plan. This kernel has
// the registers for it (128 threads, nothing else live). The attention
// kernel's fused merge keeps MergeRow: a change there moves the code
// generation of its hot loop, and the same pass in the head_dim 64 kernels
// was slower (NOTES.md, Variants).
template <typename T, int kHeadDim>
__device__ void MergeRowInOnePass(const PagedAttentionParams& p, const MergeTask& task, int row,
                                  int way, int ways, int slot, RowHandOff<kHeadDim>& hand_off) {
  using Shape = OnePassShape<kHeadDim>;
  constexpr int kLanesPerSet = Shape::kLanesPerSet;
  constexpr int kGroups = Shape::kGroups;
  constexpr int kPiecesPerLane = Shape::kPiecesPerLane;
  constexpr int kBatch = Shape::kBatch;
  const int lane = threadIdx.x % 32;
  const int group = lane / kLanesPerSet;
  const int first_piece = lane % kLanesPerSet;
  const int groups = kGroups * ways;           // lane groups over the row's warps
  const int my_group = way * kGroups + group;  // this lane's among them
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
  for (int base = 0; base < n; base += kBatch * groups) {
    float4 v[kBatch][kPiecesPerLane];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (base + u * groups >= n) break;  // units cut into a few pieces load a few
      const int j = base + u * groups + my_group;
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
      if (base + u * groups >= n) break;
      const int j = base + u * groups + my_group;  // lanes of one group share j
      const float w_low = __shfl_sync(kFullMask, weight_low, j % 32);
      const float w_high = __shfl_sync(kFullMask, weight_high, j % 32);
      const float w = j < n ? (j < 32 ? w_low : w_high) : 0.0f;
#pragma unroll
      for (int k = 0; k < kPiecesPerLane; ++k) AddScaled(acc[k], w, v[u][k]);
    }
  }
  FoldLaneGroups(acc, kLanesPerSet);
  if (ways > 1) {
    const int warp = threadIdx.x / 32;
    if (way > 0 && group == 0) {
#pragma unroll
      for (int k = 0; k < kPiecesPerLane; ++k) hand_off.pieces[warp][k][first_piece] = acc[k];
    }
    RowBarrier(slot, ways);
    if (way == 0 && group == 0) {
      for (int w = 1; w < ways; ++w) {
#pragma unroll
        for (int k = 0; k < kPiecesPerLane; ++k) {
          const float4 other = hand_off.pieces[warp + w][k][first_piece];
          acc[k].x += other.x;
          acc[k].y += other.y;
          acc[k].z += other.z;
          acc[k].w += other.w;
        }
      }
    }
    RowBarrier(slot, ways);  // the hand-off is free for the row's next item
  }
  if (way != 0 || group != 0) return;
  StoreMergedRow<T>(p, kHeadDim, task, row, acc, first_piece, kLanesPerSet, sum, max_lse,
                    lane == 0);
}

template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kMergeThreads, 4)
    MergeKernel(const PagedAttentionParams p, int32_t rows_per_task) {
  __shared__ float weights[kMergeWarps][kMergeWeights];
  __shared__ RowHandOff<kHeadDim> hand_off;
  const int warp = threadIdx.x / 32;
  // The plan's counters and merge tasks are constants of this launch (the
  // attention kernel writes only MergeTask::arrivals, which is not read
  // here), so the first task is loaded before the wait: it arrives while the
  // attention kernel finishes instead of after it.
  const int items = p.plan.counters[kPlanNumMergeTasks] * rows_per_task;
  const int ways = WarpsPerRow<kHeadDim>(p.plan.counters[kPlanMergeMaxPartials]);
  const int rows_per_block = kMergeWarps / ways;
  const int slot = warp / ways, way = warp % ways;  // a row's warps are adjacent
  const int step = gridDim.x * rows_per_block;
  int item = blockIdx.x * rows_per_block + slot;
  MergeTask task;
  if (item < items) task = LoadMergeTask(p.plan.merge_tasks + item / rows_per_task);
  // Everything below reads what the attention kernel wrote: wait for it
  // (this grid may have launched early, as a programmatic dependent).
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  for (; item < items; item += step) {
    const int rows = UnitRowCount(task.q_len, p.group, task.unit_tile);
    const int row = item % rows_per_task;
    if (!MergedByAttentionKernel(rows) && row < rows) {
      if (task.num_partials <= kOnePassMaxPartials) {
        MergeRowInOnePass<T, kHeadDim>(p, task, row, way, ways, slot, hand_off);
      } else if (way == 0) {
        MergeRow<T>(p, kHeadDim, task, row, weights[warp]);
      }
    }
    if (item + step < items)
      task = LoadMergeTask(p.plan.merge_tasks + (item + step) / rows_per_task);
  }
}

template <typename T>
cudaError_t LaunchMergeKernel(int32_t head_dim, const cudaLaunchConfig_t& config,
                              const PagedAttentionParams& params, int32_t rows_per_task) {
  switch (head_dim) {
    case 64:
      return cudaLaunchKernelEx(&config, MergeKernel<T, 64>, params, rows_per_task);
    case 128:
      return cudaLaunchKernelEx(&config, MergeKernel<T, 128>, params, rows_per_task);
    case 256:
      return cudaLaunchKernelEx(&config, MergeKernel<T, 256>, params, rows_per_task);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchPagedAttentionMerge(DType dtype, int32_t head_dim, int32_t rows_per_task,
                                      const PagedAttentionParams& params, int32_t merge_blocks,
                                      cudaStream_t stream) {
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
    return LaunchMergeKernel<__nv_bfloat16>(head_dim, config, params, rows_per_task);
  }
  if (dtype == DType::kFloat16) {
    return LaunchMergeKernel<__half>(head_dim, config, params, rows_per_task);
  }
  return cudaErrorInvalidValue;
}

}  // namespace paged_attention
