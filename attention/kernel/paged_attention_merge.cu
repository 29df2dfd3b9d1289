// The merge kernel of the paged attention kernel (paged_attention_kernel.h):
// combines the partials of the plan's merge tasks whose units have more than
// kFusedMergeMaxRows rows (the attention kernel merges smaller units itself),
// with merge_partials.cuh's formula. One warp per (merge task, row) item;
// warps loop over items, so the grid stays one wave however large the
// captured capacity.
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

using attention_kernel::kMergeWeights;
using attention_kernel::LoadMergeTask;
using attention_kernel::MergeRow;

constexpr int kMergeThreads = 128;
constexpr int kMergeWarps = kMergeThreads / 32;

template <typename T>
__global__ void __launch_bounds__(kMergeThreads)
    MergeKernel(const PagedAttentionParams p, int32_t head_dim, int32_t rows_per_task) {
  __shared__ float weights[kMergeWarps][kMergeWeights];
  // Everything below reads what the attention kernel wrote: wait for it
  // (this grid may have launched early, as a programmatic dependent).
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  const int warp = threadIdx.x / 32;
  const int items = p.plan.counters[kPlanNumMergeTasks] * rows_per_task;
  for (int item = blockIdx.x * kMergeWarps + warp; item < items; item += gridDim.x * kMergeWarps) {
    const MergeTask task = LoadMergeTask(p.plan.merge_tasks + item / rows_per_task);
    const int rows = UnitRowCount(task.q_len, p.group, task.unit_tile);
    if (MergedByAttentionKernel(rows)) continue;
    const int row = item % rows_per_task;
    if (row >= rows) continue;
    MergeRow<T>(p, head_dim, task, row, weights[warp]);
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
    return cudaLaunchKernelEx(&config, MergeKernel<__nv_bfloat16>, params, head_dim, rows_per_task);
  }
  if (dtype == DType::kFloat16) {
    return cudaLaunchKernelEx(&config, MergeKernel<__half>, params, head_dim, rows_per_task);
  }
  return cudaErrorInvalidValue;
}

}  // namespace paged_attention
