#include "attention/kernel/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention_kernel.h"

namespace paged_attention {
namespace {

constexpr size_t kWorkspaceAlignment = 256;

size_t AlignUp(size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

bool IsEmptyBatch(const AttentionMetadata& md) {
  return md.batch_size == 0 || md.total_q_tokens == 0;
}

int64_t NumMTiles(const AttentionMetadata& md, int32_t group) {
  const int64_t rows = int64_t{std::max(md.max_seq_len_q, 0)} * group;
  return (rows + kAttentionBlockM - 1) / kAttentionBlockM;
}

absl::Status CheckPointer(const void* pointer, const char* name, bool required) {
  if (pointer == nullptr) {
    if (!required) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(name, " is null"));
  }
  if (reinterpret_cast<uintptr_t>(pointer) % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be 16-byte aligned, got ", reinterpret_cast<uintptr_t>(pointer)));
  }
  return absl::OkStatus();
}

using LaunchFn = cudaError_t (*)(const PagedAttentionParams&, cudaStream_t);

LaunchFn SelectKernel(DType dtype, int32_t head_dim) {
  if (dtype == DType::kBFloat16) {
    switch (head_dim) {
      case 64:
        return &LaunchPagedAttentionKernel<DType::kBFloat16, 64>;
      case 128:
        return &LaunchPagedAttentionKernel<DType::kBFloat16, 128>;
      case 256:
        return &LaunchPagedAttentionKernel<DType::kBFloat16, 256>;
    }
  } else if (dtype == DType::kFloat16) {
    switch (head_dim) {
      case 64:
        return &LaunchPagedAttentionKernel<DType::kFloat16, 64>;
      case 128:
        return &LaunchPagedAttentionKernel<DType::kFloat16, 128>;
      case 256:
        return &LaunchPagedAttentionKernel<DType::kFloat16, 256>;
    }
  }
  return nullptr;
}

}  // namespace

absl::Status CanImplement(const PagedAttentionArgs& args) {
  if (args.dtype != DType::kBFloat16 && args.dtype != DType::kFloat16) {
    return absl::UnimplementedError(absl::StrCat("dtype ", DTypeName(args.dtype),
                                                 " is not supported (bfloat16 and float16 are)"));
  }
  if (args.head_dim != 64 && args.head_dim != 128 && args.head_dim != 256) {
    return absl::UnimplementedError(
        absl::StrCat("head_dim ", args.head_dim, " is not supported (64, 128 and 256 are)"));
  }
  if (args.num_q_heads <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_q_heads ", args.num_q_heads, " must be >= 1"));
  }
  if (args.num_kv_heads <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_kv_heads ", args.num_kv_heads, " must be >= 1"));
  }
  if (args.num_q_heads % args.num_kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_q_heads ", args.num_q_heads,
                                                   " is not a multiple of num_kv_heads ",
                                                   args.num_kv_heads));
  }
  const AttentionMetadata& md = args.metadata;
  if (md.page_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("page_size ", md.page_size, " must be >= 1"));
  }
  if (md.batch_size < 0 || md.total_q_tokens < 0 || md.max_seq_len_q < 0 || md.max_seq_len_k < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata scalars must be >= 0: batch_size ", md.batch_size,
                     ", total_q_tokens ", md.total_q_tokens, ", max_seq_len_q ", md.max_seq_len_q,
                     ", max_seq_len_k ", md.max_seq_len_k));
  }
  if (md.num_kv_splits < 1 || md.num_kv_splits > kMaxSupportedKvSplits) {
    return absl::InvalidArgumentError(absl::StrCat("num_kv_splits ", md.num_kv_splits,
                                                   " must be in [1, ", kMaxSupportedKvSplits, "]"));
  }
  const AttentionOptions& options = args.options;
  if (!std::isfinite(options.softmax_scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("softmax_scale ", options.softmax_scale, " must be finite"));
  }
  if (!(options.softcap >= 0.0f) || !std::isfinite(options.softcap)) {
    return absl::InvalidArgumentError(
        absl::StrCat("softcap ", options.softcap, " must be finite and >= 0 (0 = off)"));
  }
  if (options.mask != MaskMode::kCausal && options.mask != MaskMode::kNonCausal) {
    return absl::InvalidArgumentError(
        absl::StrCat("mask ", static_cast<int32_t>(options.mask), " is not a MaskMode"));
  }
  if (options.window_left < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("window_left ", options.window_left, " must be >= 0, or -1 for none"));
  }
  if (IsEmptyBatch(md)) return absl::OkStatus();

  if (md.max_pages_per_request < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_pages_per_request ", md.max_pages_per_request, " must be >= 1"));
  }
  if (args.num_pages < 1) {
    return absl::InvalidArgumentError(absl::StrCat("num_pages ", args.num_pages, " must be >= 1"));
  }
  RETURN_IF_ERROR(CheckPointer(args.q, "q", true));
  RETURN_IF_ERROR(CheckPointer(args.k_cache, "k_cache", true));
  RETURN_IF_ERROR(CheckPointer(args.v_cache, "v_cache", true));
  RETURN_IF_ERROR(CheckPointer(args.out, "out", true));
  RETURN_IF_ERROR(CheckPointer(args.lse, "lse", false));
  RETURN_IF_ERROR(CheckPointer(md.cache_seqlens, "metadata.cache_seqlens", true));
  RETURN_IF_ERROR(CheckPointer(md.cu_seqlens_q, "metadata.cu_seqlens_q", true));
  RETURN_IF_ERROR(CheckPointer(md.page_table, "metadata.page_table", true));
  const int64_t blocks =
      NumMTiles(md, args.num_q_heads / args.num_kv_heads) * md.batch_size * args.num_kv_heads;
  if (blocks > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grid too large: max_seq_len_q ", md.max_seq_len_q, " x batch_size ", md.batch_size,
        " x num_q_heads ", args.num_q_heads, " needs ", blocks, " blocks"));
  }
  return absl::OkStatus();
}

size_t WorkspaceBytes(const AttentionMetadata& metadata, int32_t num_q_heads, int32_t head_dim) {
  if (metadata.num_kv_splits <= 1 || IsEmptyBatch(metadata)) return 0;
  const size_t rows = size_t(metadata.num_kv_splits) *
                      size_t(std::max(metadata.total_q_tokens, 0)) *
                      size_t(std::max(num_q_heads, 0));
  return AlignUp(rows * size_t(std::max(head_dim, 0)) * sizeof(float)) +
         AlignUp(rows * sizeof(float));
}

absl::Status LaunchPagedAttention(const PagedAttentionArgs& args, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
  RETURN_IF_ERROR(CanImplement(args));
  const AttentionMetadata& md = args.metadata;
  if (IsEmptyBatch(md)) return absl::OkStatus();
  const size_t needed = WorkspaceBytes(md, args.num_q_heads, args.head_dim);
  if (workspace_bytes < needed || (needed > 0 && workspace == nullptr)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("workspace: ", workspace == nullptr ? 0 : workspace_bytes, " bytes, need ",
                     needed, " (", needed - std::min(needed, workspace_bytes), " short) for ",
                     md.num_kv_splits, " KV splits"));
  }
  if (needed > 0) RETURN_IF_ERROR(CheckPointer(workspace, "workspace", true));

  const int32_t group = args.num_q_heads / args.num_kv_heads;
  PagedAttentionParams params;
  params.q = args.q;
  params.k_cache = args.k_cache;
  params.v_cache = args.v_cache;
  params.out = args.out;
  params.lse = args.lse;
  if (needed > 0) {
    const size_t rows = size_t(md.num_kv_splits) * md.total_q_tokens * args.num_q_heads;
    params.partial_out = static_cast<float*>(workspace);
    params.partial_lse = reinterpret_cast<float*>(static_cast<char*>(workspace) +
                                                  AlignUp(rows * args.head_dim * sizeof(float)));
  }
  params.cache_seqlens = md.cache_seqlens;
  params.cu_seqlens_q = md.cu_seqlens_q;
  params.page_table = md.page_table;
  params.batch_size = md.batch_size;
  params.total_q_tokens = md.total_q_tokens;
  params.num_q_heads = args.num_q_heads;
  params.num_kv_heads = args.num_kv_heads;
  params.group = group;
  params.head_dim = args.head_dim;
  params.page_size = md.page_size;
  params.max_pages_per_request = md.max_pages_per_request;
  params.num_kv_splits = md.num_kv_splits;
  params.num_m_tiles = static_cast<int32_t>(NumMTiles(md, group));
  if (params.num_m_tiles == 0) return absl::OkStatus();  // max_seq_len_q == 0: no query rows
  params.causal = args.options.mask == MaskMode::kCausal ? 1 : 0;
  params.window_left = args.options.window_left;
  constexpr float kLog2e = 1.4426950408889634f;
  params.scale_log2 = args.options.softmax_scale * kLog2e;
  if (args.options.softcap > 0.0f) {
    params.scale_over_softcap = args.options.softmax_scale / args.options.softcap;
    params.softcap_log2 = args.options.softcap * kLog2e;
  }

  const LaunchFn launch = SelectKernel(args.dtype, args.head_dim);
  RETURN_IF_ERROR(CudaCall(launch(params, stream), "paged attention kernel launch"));
  if (md.num_kv_splits > 1) {
    RETURN_IF_ERROR(CudaCall(LaunchPagedAttentionCombine(args.dtype, params, stream),
                             "paged attention combine launch"));
  }
  return absl::OkStatus();
}

}  // namespace paged_attention
