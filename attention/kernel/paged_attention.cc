#include "attention/kernel/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention_kernel.h"

namespace paged_attention {
namespace {

constexpr size_t kWorkspaceAlignment = 256;
// Merge-step blocks per attention worker: the merge kernel's one wave (four
// blocks of 128 threads at 128 registers per SM, two workers per SM). A
// larger grid ran a b16 verify's 4096 rows in two waves; in one, each warp
// merges two rows of a few partials together (MergeTwoRowsInOnePass).
constexpr int64_t kMergeBlocksPerWorker = 2;
constexpr int64_t kMergeWarpsPerBlock = 4;  // a (task, row) item per warp at a time, or two

// Diagnostic switches (A/B timing, fault isolation), read once per process.
// PA_ATTENTION_NO_WGMMA=1 computes every Q K^T with mma.sync.
bool UseWgmma() {
  static const bool use = std::getenv("PA_ATTENTION_NO_WGMMA") == nullptr;
  return use;
}

// PA_ATTENTION_NO_TMA=1 streams every K/V tile with cp.async (A/B timing).
bool UseTma() {
  static const bool use = std::getenv("PA_ATTENTION_NO_TMA") == nullptr;
  return use;
}

// PA_ATTENTION_NO_MEMBER_PAIRS=1 runs co-read member pairs on CTAs of one
// consumer warpgroup each, as graph replays do (A/B timing).
bool UseMemberPairs() {
  static const bool use = std::getenv("PA_ATTENTION_NO_MEMBER_PAIRS") == nullptr;
  return use;
}

size_t AlignUp(size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

size_t PartialOutBytes(const WorkPlanView& plan) {
  return AlignUp(size_t(std::max(plan.max_partials, 0)) * kUnitRows *
                 size_t(std::max(plan.head_dim, 0)) * sizeof(float));
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
using OccupancyFn = cudaError_t (*)(int*);

struct KernelEntry {
  LaunchFn launch;
  OccupancyFn occupancy;
};

template <DType kDType, int kHeadDim>
constexpr KernelEntry EntryFor() {
  return {&LaunchPagedAttentionKernel<kDType, kHeadDim>,
          &PagedAttentionKernelOccupancy<kDType, kHeadDim>};
}

// The instantiation for (dtype, head_dim), or {nullptr, nullptr}.
KernelEntry SelectKernel(DType dtype, int32_t head_dim) {
  if (dtype == DType::kBFloat16) {
    switch (head_dim) {
      case 64:
        return EntryFor<DType::kBFloat16, 64>();
      case 128:
        return EntryFor<DType::kBFloat16, 128>();
      case 256:
        return EntryFor<DType::kBFloat16, 256>();
    }
  } else if (dtype == DType::kFloat16) {
    switch (head_dim) {
      case 64:
        return EntryFor<DType::kFloat16, 64>();
      case 128:
        return EntryFor<DType::kFloat16, 128>();
      case 256:
        return EntryFor<DType::kFloat16, 256>();
    }
  }
  return {nullptr, nullptr};
}

absl::Status CheckSupported(DType dtype, int32_t head_dim) {
  if (dtype != DType::kBFloat16 && dtype != DType::kFloat16) {
    return absl::UnimplementedError(
        absl::StrCat("dtype ", DTypeName(dtype), " is not supported (bfloat16 and float16 are)"));
  }
  if (!IsSupportedHeadDim(head_dim)) {
    return absl::UnimplementedError(
        absl::StrCat("head_dim ", head_dim, " is not supported (64, 128 and 256 are)"));
  }
  return absl::OkStatus();
}

// The plan's key ranges must hold every key the call's mask lets a query see.
absl::Status CheckPlanCoversMask(const WorkPlanView& plan, const AttentionOptions& options) {
  const bool call_causal = options.mask == MaskMode::kCausal;
  if (plan.causal != 0 && !call_causal) {
    return absl::InvalidArgumentError(
        "the work plan was made for a causal mask but the call is non-causal: plan with "
        "PlannerConfig.mask = kNonCausal");
  }
  const int32_t call_window = call_causal ? options.window_left : -1;
  if (plan.window_left >= 0 && (call_window < 0 || call_window > plan.window_left)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the work plan was cut to window_left ", plan.window_left,
        " but the call's window_left is ", call_window, ": plan with the call's window"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KernelGeometry> QueryKernelGeometry(DType dtype, int32_t head_dim) {
  RETURN_IF_ERROR(CheckSupported(dtype, head_dim));
  int device = 0;
  RETURN_IF_ERROR(CudaCall(cudaGetDevice(&device), "cudaGetDevice"));
  KernelGeometry geometry;
  RETURN_IF_ERROR(
      CudaCall(cudaDeviceGetAttribute(&geometry.num_sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(multiprocessors)"));
  int ctas = 0;
  RETURN_IF_ERROR(CudaCall(SelectKernel(dtype, head_dim).occupancy(&ctas),
                           "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
  if (ctas < 1) {
    return absl::InternalError(absl::StrCat("the ", DTypeName(dtype), " head_dim ", head_dim,
                                            " attention kernel fits no CTA on an SM"));
  }
  geometry.ctas_per_sm = ctas;
  return geometry;
}

absl::Status CanImplement(const PagedAttentionArgs& args) {
  RETURN_IF_ERROR(CheckSupported(args.dtype, args.head_dim));
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
  const WorkPlanView& plan = md.plan;
  if (md.page_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("page_size ", md.page_size, " must be >= 1"));
  }
  if (md.batch_size < 0 || md.total_q_tokens < 0 || md.max_seq_len_q < 0 || md.max_seq_len_k < 0 ||
      md.max_pages_per_request < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata scalars must be >= 0: batch_size ", md.batch_size, ", total_q_tokens ",
        md.total_q_tokens, ", max_seq_len_q ", md.max_seq_len_q, ", max_seq_len_k ",
        md.max_seq_len_k, ", max_pages_per_request ", md.max_pages_per_request));
  }
  if (plan.num_workers < 0 || plan.num_workers > (1 << 20) || plan.max_segments < 0 ||
      plan.max_merge_tasks < 0 || plan.max_partials < 0 || plan.max_zero_fill_tokens < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("work plan capacities must be >= 0 (and workers <= 2^20): num_workers ",
                     plan.num_workers, ", max_segments ", plan.max_segments, ", max_merge_tasks ",
                     plan.max_merge_tasks, ", max_partials ", plan.max_partials,
                     ", max_zero_fill_tokens ", plan.max_zero_fill_tokens));
  }
  // Any member pairs in these ranges give the plan's results: the launcher
  // pairs workers only when the offset covers them all (VariantFor), and
  // segments that do not pair run alone.
  if (plan.member_pair_offset < 0 || plan.member_pair_offset > plan.num_workers ||
      plan.member_pair_unit_offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("work plan member pairs: member_pair_offset ", plan.member_pair_offset,
                     " must be in [0, num_workers ", plan.num_workers,
                     "] and member_pair_unit_offset ", plan.member_pair_unit_offset, " >= 0"));
  }
  const int32_t group = args.num_q_heads / args.num_kv_heads;
  if (plan.num_kv_heads != args.num_kv_heads || plan.group != group ||
      plan.head_dim != args.head_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("the work plan was made for num_kv_heads ", plan.num_kv_heads, ", group ",
                     plan.group, ", head_dim ", plan.head_dim, "; the call has num_kv_heads ",
                     args.num_kv_heads, ", group ", group, ", head_dim ", args.head_dim));
  }
  if (plan.kv_heads_per_unit != 1 &&
      (plan.kv_heads_per_unit != 2 ||
       !CanPairKvHeads(args.head_dim, args.num_kv_heads, group, md.max_seq_len_q) ||
       md.tree_mask != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the work plan has kv_heads_per_unit ", plan.kv_heads_per_unit,
        "; pairs (2) are for head_dim 64, an even num_kv_heads, max_seq_len_q x group x 2 <= ",
        FusedMergeMaxRows(2), " and no tree_mask, and the call has head_dim ", args.head_dim,
        ", num_kv_heads ", args.num_kv_heads, ", group ", group, ", max_seq_len_q ",
        md.max_seq_len_q, ", tree_mask ", md.tree_mask != nullptr ? "set" : "null"));
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
  RETURN_IF_ERROR(CheckPlanCoversMask(plan, options));
  if (md.tree_mask != nullptr && (options.mask != MaskMode::kCausal || options.window_left >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata.tree_mask is set (a tree batch) but the call is ",
                     options.mask != MaskMode::kCausal
                         ? "non-causal"
                         : absl::StrCat("windowed (window_left ", options.window_left, ")"),
                     ": tree masks apply on top of the plain causal mask only"));
  }
  if (int64_t{md.total_q_tokens} * args.num_q_heads * args.head_dim >
      std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("total_q_tokens ", md.total_q_tokens, " x num_q_heads ", args.num_q_heads,
                     " x head_dim ", args.head_dim, " elements do not fit int32"));
  }
  if (plan.num_workers == 0 || md.batch_size == 0) return absl::OkStatus();  // nothing to run

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
  RETURN_IF_ERROR(CheckPointer(md.tree_mask, "metadata.tree_mask", false));
  RETURN_IF_ERROR(CheckPointer(plan.worker_begin, "metadata.plan.worker_begin", true));
  RETURN_IF_ERROR(CheckPointer(plan.segments, "metadata.plan.segments", true));
  RETURN_IF_ERROR(CheckPointer(plan.counters, "metadata.plan.counters", true));
  RETURN_IF_ERROR(
      CheckPointer(plan.merge_tasks, "metadata.plan.merge_tasks", plan.max_merge_tasks > 0));
  return absl::OkStatus();
}

size_t WorkspaceBytes(const AttentionMetadata& metadata) {
  const WorkPlanView& plan = metadata.plan;
  if (plan.max_partials <= 0) return 0;
  return PartialOutBytes(plan) + AlignUp(size_t(plan.max_partials) * kUnitRows * sizeof(float));
}

absl::Status LaunchPagedAttention(const PagedAttentionArgs& args, void* workspace,
                                  size_t workspace_bytes, cudaStream_t stream) {
  RETURN_IF_ERROR(CanImplement(args));
  const AttentionMetadata& md = args.metadata;
  const WorkPlanView& plan = md.plan;
  if (plan.num_workers == 0 || md.batch_size == 0) return absl::OkStatus();
  const size_t needed = WorkspaceBytes(md);
  if (workspace_bytes < needed || (needed > 0 && workspace == nullptr)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("workspace: ", workspace == nullptr ? 0 : workspace_bytes, " bytes, need ",
                     needed, " (", needed - std::min(needed, workspace_bytes), " short) for ",
                     plan.max_partials, " partials"));
  }
  if (needed > 0) RETURN_IF_ERROR(CheckPointer(workspace, "workspace", true));

  PagedAttentionParams params;
  params.q = args.q;
  params.k_cache = args.k_cache;
  params.v_cache = args.v_cache;
  params.out = args.out;
  params.lse = args.lse;
  if (needed > 0) {
    params.partial_out = static_cast<float*>(workspace);
    params.partial_lse =
        reinterpret_cast<float*>(static_cast<char*>(workspace) + PartialOutBytes(plan));
  }
  params.cache_seqlens = md.cache_seqlens;
  params.cu_seqlens_q = md.cu_seqlens_q;
  params.page_table = md.page_table;
  params.tree_mask = md.tree_mask;
  params.plan = plan;
  if (!UseMemberPairs()) params.plan.member_pair_offset = 0;
  params.total_q_tokens = md.total_q_tokens;
  params.num_q_heads = args.num_q_heads;
  // Units of KV head pairs run the head_dim 128 decode kernel over half as
  // many heads of twice the group (PagedAttentionParams::kv_heads_per_unit;
  // the head_dim 64 launcher picks it).
  const int32_t kv_heads_per_unit = plan.kv_heads_per_unit;
  const UnitGeometry unit = UnitGeometryOf(args.num_kv_heads, args.num_q_heads / args.num_kv_heads,
                                           args.head_dim, kv_heads_per_unit);
  params.kv_heads_per_unit = kv_heads_per_unit;
  params.num_kv_heads = unit.num_kv_heads;
  params.group = unit.group;
  params.page_size = md.page_size;
  params.max_pages_per_request = md.max_pages_per_request;
  params.num_pages = args.num_pages;
  params.use_wgmma = UseWgmma() ? 1 : 0;
  params.use_tma = UseTma() ? 1 : 0;
  params.causal = args.options.mask == MaskMode::kCausal ? 1 : 0;
  params.window_left = params.causal ? args.options.window_left : -1;
  constexpr float kLog2e = 1.4426950408889634f;
  params.scale_log2 = args.options.softmax_scale * kLog2e;
  if (args.options.softcap > 0.0f) {
    params.scale_over_softcap = args.options.softmax_scale / args.options.softcap;
    params.softcap_log2 = args.options.softcap * kLog2e;
  }

  // Rows of any unit: the query rows of the longest request, at most a unit's.
  // The attention kernel merges units of up to kFusedMergeMaxRows rows (twice
  // that for KV head pairs: MergedByAttentionKernel), so a plan of only those
  // (decode) launches no merge kernel.
  const int32_t rows_per_task =
      static_cast<int32_t>(std::min<int64_t>(kUnitRows, int64_t{md.max_seq_len_q} * params.group));
  params.max_unit_rows = rows_per_task;
  params.max_request_rows = static_cast<int32_t>(std::min<int64_t>(
      std::numeric_limits<int32_t>::max(), int64_t{md.max_seq_len_q} * params.group));
  const KernelEntry kernel = SelectKernel(args.dtype, args.head_dim);
  RETURN_IF_ERROR(CudaCall(kernel.launch(params, stream), "paged attention kernel launch"));
  if (plan.max_merge_tasks == 0 || MergedByAttentionKernel(rows_per_task, kv_heads_per_unit)) {
    return absl::OkStatus();
  }
  const int64_t merge_blocks =
      std::min<int64_t>(CeilDiv(int64_t{plan.max_merge_tasks} * rows_per_task, kMergeWarpsPerBlock),
                        int64_t{plan.num_workers} * kMergeBlocksPerWorker);
  // The two-row instantiation where this plan's capacity can hold more
  // (task, row) items than the grid has warps (a CUDA graph captured for a
  // b16 verify); plans that cannot (one request: a few hundred items) keep
  // the one-row kernel.
  const bool row_pairs =
      int64_t{plan.max_merge_tasks} * rows_per_task > merge_blocks * kMergeWarpsPerBlock &&
      rows_per_task % 2 == 0;
  return CudaCall(LaunchPagedAttentionMerge(args.dtype, args.head_dim, rows_per_task, params,
                                            static_cast<int32_t>(merge_blocks), row_pairs, stream),
                  "paged attention merge launch");
}

}  // namespace paged_attention
