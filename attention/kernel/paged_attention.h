// Paged varlen attention on the GPU: the host API of the CUDA kernel.
//
// Computes, for every request of a batch described by AttentionMetadata, the
// attention of its query tokens over its keys/values in the paged K/V pool
// (layouts and masking in paged_attention_args.h). bf16 and fp16 inputs with
// float32 accumulation; head_dim 64, 128 or 256; any GQA ratio; any page size.
// The metadata's work plan (attention/planner/work_plan.h, made by the
// planner for this head geometry, head_dim and GPU) says which persistent CTA
// computes which key range; cut key ranges are merged by a second, small
// kernel.
//
// The flow (CUTLASS-style):
//   ASSIGN_OR_RETURN(KernelGeometry geometry, QueryKernelGeometry(dtype, head_dim));
//   ... plan with PlannerConfig{..., geometry.num_sms, geometry.ctas_per_sm} ...
//   RETURN_IF_ERROR(CanImplement(args));
//   size_t bytes = WorkspaceBytes(args.metadata);
//   ... allocate `bytes` of device memory once (sized for the capacity) ...
//   RETURN_IF_ERROR(LaunchPagedAttention(args, workspace, bytes, stream));
//
// The kernels take exact lengths and the plan from the device arrays and size
// their grids only from the metadata's capacities, so a launch captured into a
// CUDA graph replays correctly whenever the arrays change.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_H_
#define ATTENTION_KERNEL_PAGED_ATTENTION_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attention/base/dtype.h"
#include "attention/kernel/paged_attention_args.h"
#include "attention/planner/attention_metadata.h"

namespace paged_attention {

// What the planner needs to know about the kernel on the current GPU.
struct KernelGeometry {
  int32_t num_sms = 0;      // multiprocessors
  int32_t ctas_per_sm = 0;  // resident CTAs of the (dtype, head_dim) kernel per SM
};

// Unimplemented for an unsupported dtype or head_dim; Internal (naming the
// call) when no GPU is usable.
absl::StatusOr<KernelGeometry> QueryKernelGeometry(DType dtype, int32_t head_dim);

// Whether the kernel supports `args`. Unimplemented for a dtype other than
// bf16/fp16 or a head_dim other than 64/128/256; InvalidArgument (naming the
// field and its value) for bad head counts (num_q_heads % num_kv_heads != 0),
// page size, scalars, mask options, null / misaligned pointers, or a work plan
// made for other heads, another head_dim or a narrower mask than the call's.
// Host only; reads no device memory.
absl::Status CanImplement(const PagedAttentionArgs& args);

// Device workspace LaunchPagedAttention needs: the float32 partials of cut
// units, sized from the plan's capacity (metadata.plan.max_partials); 0 when
// the plan cuts nothing.
size_t WorkspaceBytes(const AttentionMetadata& metadata);

// Enqueues the attention kernel (and, when the plan can cut units of more
// than kFusedMergeMaxRows rows: MergedByAttentionKernel, the merge kernel) on `stream`. `args`
// holds device pointers; `workspace` must be 16-byte aligned device memory of at least
// WorkspaceBytes(args.metadata) (may be null when that is 0). Allocates
// nothing and never synchronizes the host: safe inside CUDA-graph capture.
// An empty plan is a no-op. The kernel counts finished pieces in the plan's
// merge tasks (MergeTask::arrivals, back at 0 when it ends): one plan must not
// run on two streams at once. Query tokens of padding rows get zeros and
// lse = -inf; rows of out/lse past cu_seqlens_q[batch_size] are untouched.
// Errors: those of CanImplement; ResourceExhausted if the workspace is too
// small; Internal for a CUDA launch failure.
absl::Status LaunchPagedAttention(const PagedAttentionArgs& args, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_H_
