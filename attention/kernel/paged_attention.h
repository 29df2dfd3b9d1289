// Paged varlen attention on the GPU: the host API of the CUDA kernel.
//
// Computes, for every request of a batch described by AttentionMetadata, the
// attention of its query tokens over its keys/values in the paged K/V pool
// (layouts and masking in paged_attention_args.h). bf16 and fp16 inputs with
// float32 accumulation; head_dim 64, 128 or 256; any GQA ratio; any page size.
//
// The flow (CUTLASS-style):
//   RETURN_IF_ERROR(CanImplement(args));
//   size_t bytes = WorkspaceBytes(args.metadata, args.num_q_heads, args.head_dim);
//   ... allocate `bytes` of device memory once (sized for the capacity) ...
//   RETURN_IF_ERROR(LaunchPagedAttention(args, workspace, bytes, stream));
//
// Long keys with few queries are split into metadata.num_kv_splits key ranges
// (flash-decoding): the planner picks that number (attention/planner/split_plan.h). The
// kernel takes exact lengths from the device arrays and sizes its grid only
// from the metadata scalars, so a launch captured into a CUDA graph with
// capacity metadata replays correctly when the arrays change (longer keys too).
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_H_
#define ATTENTION_KERNEL_PAGED_ATTENTION_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "attention/kernel/paged_attention_args.h"
#include "attention/planner/attention_metadata.h"

namespace paged_attention {

// Whether the kernel supports `args`. Unimplemented for a dtype other than
// bf16/fp16 or a head_dim other than 64/128/256; InvalidArgument (naming the
// field and its value) for bad head counts (num_q_heads % num_kv_heads != 0),
// page size, split count, scalars, mask options, or null / misaligned
// pointers. Host only; reads no device memory.
absl::Status CanImplement(const PagedAttentionArgs& args);

// Device workspace LaunchPagedAttention needs: the split-KV partial outputs
// and LSEs, sized from the capacities in `metadata` (num_kv_splits,
// total_q_tokens); 0 when num_kv_splits <= 1.
size_t WorkspaceBytes(const AttentionMetadata& metadata, int32_t num_q_heads, int32_t head_dim);

// Enqueues the attention (and, with splits, the combine step) on `stream`.
// `args` holds device pointers; `workspace` must be 16-byte aligned device
// memory of at least WorkspaceBytes(...) (may be null when that is 0).
// Allocates nothing and never synchronizes the host: safe inside CUDA-graph
// capture. An empty batch (batch_size 0 or total_q_tokens 0) is a no-op.
// Rows of out/lse of tokens outside every request (graph padding past
// cu_seqlens_q[batch_size]) are left untouched. window_left applies with the
// causal mask only (as in the host executor).
// Errors: those of CanImplement; ResourceExhausted if the workspace is too
// small; Internal for a CUDA launch failure.
absl::Status LaunchPagedAttention(const PagedAttentionArgs& args, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_H_
