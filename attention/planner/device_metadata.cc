#include "attention/planner/device_metadata.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/planner/page_table_gather_kernel.h"

namespace paged_attention {
namespace {

constexpr int64_t kSegmentWords = sizeof(WorkSegment) / sizeof(int32_t);
constexpr int64_t kMergeTaskWords = sizeof(MergeTask) / sizeof(int32_t);
constexpr int64_t kTreeMaskWordWords = sizeof(uint64_t) / sizeof(int32_t);
static_assert(sizeof(WorkSegment) % 16 == 0 && sizeof(MergeTask) % 16 == 0,
              "plan structs keep the block's 16-byte alignment");

int64_t AlignWords(int64_t words) { return (words + 3) / 4 * 4; }  // 16 bytes

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceMetadata>> DeviceMetadata::Create(
    const PlanShape& shape, const PlannerConfig& config, const DeviceRequestTable& table) {
  ASSIGN_OR_RETURN(const PlanLayout layout, LayoutFor(shape, config));
  if (table.req_to_token == nullptr || table.num_rows < 1 || table.row_width < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DeviceRequestTable: req_to_token ", table.req_to_token == nullptr ? "null" : "set",
        ", num_rows ", table.num_rows, ", row_width ", table.row_width));
  }
  if (table.row_width < shape.max_kv_len) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeviceRequestTable.row_width = ", table.row_width,
                     " is narrower than PlanShape.max_kv_len = ", shape.max_kv_len));
  }
  std::unique_ptr<DeviceMetadata> metadata(new DeviceMetadata());
  metadata->shape_ = shape;
  metadata->config_ = config;
  metadata->layout_ = layout;
  metadata->table_ = table;
  BlockLayout& block = metadata->block_;
  int64_t offset = 0;
  auto place = [&offset](int64_t words) {
    const int64_t at = offset;
    offset += AlignWords(words);
    return at;
  };
  block.counters = place(kNumPlanCounters);
  block.worker_begin = place(layout.num_workers + 1);
  block.cache_seqlens = place(layout.requests);
  block.cu_seqlens_q = place(layout.requests + 1);
  block.rows = place(layout.requests);
  block.merge_tasks = place(layout.max_merge_tasks * kMergeTaskWords);
  block.tree_mask = place(layout.tree_mask_words * kTreeMaskWordWords);
  // Last: an upload copies the block only up to its used segments.
  block.segments = place(layout.max_segments * kSegmentWords);
  block.total = offset;
  const size_t block_bytes = static_cast<size_t>(block.total) * sizeof(int32_t);

  ASSIGN_OR_RETURN(metadata->device_block_, DeviceBuffer::Allocate(block_bytes, "work plan"));
  ASSIGN_OR_RETURN(
      metadata->device_page_table_,
      DeviceBuffer::Allocate(std::max<int64_t>(layout.page_table_entries, 1) * sizeof(int32_t),
                             "page table"));
  // The gather fills only each live request's used pages; the rest stays 0
  // (page 0), so the whole table is defined for anyone who reads it back.
  RETURN_IF_ERROR(CudaCall(
      cudaMemset(metadata->device_page_table_.data(), 0, metadata->device_page_table_.size_bytes()),
      "cudaMemset(page table)"));
  for (int b = 0; b < 2; ++b) {
    void* pinned = nullptr;
    RETURN_IF_ERROR(CudaCall(cudaMallocHost(&pinned, block_bytes), "cudaMallocHost(plan staging)"));
    metadata->staging_[b] = static_cast<int32_t*>(pinned);
    std::fill(metadata->staging_[b], metadata->staging_[b] + block.total, 0);
    RETURN_IF_ERROR(
        CudaCall(cudaEventCreateWithFlags(&metadata->copied_[b], cudaEventDisableTiming),
                 "cudaEventCreateWithFlags"));
  }
  // A plan of no work until the first upload: every worker's list empty.
  RETURN_IF_ERROR(metadata->device_block_.CopyFromHost(metadata->staging_[0], block_bytes));

  int32_t* words = metadata->device_block_.as<int32_t>();
  AttentionMetadata& view = metadata->metadata_;
  view = MetadataFrame(shape, layout, config);
  view.cache_seqlens = words + block.cache_seqlens;
  view.cu_seqlens_q = words + block.cu_seqlens_q;
  view.page_table = metadata->device_page_table_.as<int32_t>();
  if (layout.tree_mask_words > 0) {
    view.tree_mask = reinterpret_cast<const uint64_t*>(words + block.tree_mask);
  }
  WorkPlanView& plan = view.plan;
  plan.worker_begin = words + block.worker_begin;
  plan.segments = reinterpret_cast<const WorkSegment*>(words + block.segments);
  plan.merge_tasks = reinterpret_cast<const MergeTask*>(words + block.merge_tasks);
  plan.counters = words + block.counters;
  return metadata;
}

DeviceMetadata::~DeviceMetadata() {
  for (int b = 0; b < 2; ++b) {
    if (copied_[b] != nullptr) {
      cudaEventSynchronize(copied_[b]);  // the GPU may still be reading the staging buffer
      cudaEventDestroy(copied_[b]);
    }
    if (staging_[b] != nullptr) cudaFreeHost(staging_[b]);
  }
}

AttentionMetadata DeviceMetadata::metadata_for(const PlanSummary& plan) const {
  AttentionMetadata view = metadata_;
  // Planned tokens: the live ones, then max_q_len per padding row (none for
  // an exact shape). The lse row stride follows.
  const int64_t padding_tokens =
      int64_t{shape_.max_batch_size - plan.batch_size} * shape_.max_q_len;
  view.total_q_tokens = static_cast<int32_t>(plan.num_q_tokens + padding_tokens);
  view.plan.max_merge_tasks = plan.partition.num_merge_tasks;
  view.plan.num_workers = plan.partition.worker_span;  // idle workers past it need no CTA
  view.plan.member_pair_offset = plan.partition.member_pair_offset;
  view.plan.member_pair_unit_offset = plan.partition.member_pair_unit_offset;
  view.plan.max_zero_fill_tokens = static_cast<int32_t>(padding_tokens);
  return view;
}

PlanSpans DeviceMetadata::SpansInto(int32_t* words) const {
  PlanSpans spans;
  spans.rows = absl::MakeSpan(words + block_.rows, layout_.requests);
  spans.cache_seqlens = absl::MakeSpan(words + block_.cache_seqlens, layout_.requests);
  spans.cu_seqlens_q = absl::MakeSpan(words + block_.cu_seqlens_q, layout_.requests + 1);
  spans.counters = absl::MakeSpan(words + block_.counters, kNumPlanCounters);
  spans.worker_begin = absl::MakeSpan(words + block_.worker_begin, layout_.num_workers + 1);
  spans.segments =
      absl::MakeSpan(reinterpret_cast<WorkSegment*>(words + block_.segments), layout_.max_segments);
  spans.merge_tasks = absl::MakeSpan(reinterpret_cast<MergeTask*>(words + block_.merge_tasks),
                                     layout_.max_merge_tasks);
  spans.tree_mask = absl::MakeSpan(reinterpret_cast<uint64_t*>(words + block_.tree_mask),
                                   layout_.tree_mask_words);
  return spans;
}

absl::StatusOr<PlanSummary> DeviceMetadata::Upload(const ValidatedBatch& batch,
                                                   cudaStream_t stream) {
  if (batch.pool_rows() != table_.num_rows || batch.row_width() != table_.row_width) {
    return absl::FailedPreconditionError(
        absl::StrCat("batch was validated on a pool of ", batch.pool_rows(), " rows x ",
                     batch.row_width(), " slots; this DeviceMetadata gathers from a table of ",
                     table_.num_rows, " x ", table_.row_width));
  }
  const int b = next_staging_;
  if (staging_pending_[b]) {
    // The copy out of this buffer (two uploads ago) must have run before it is
    // overwritten; normally it has long finished and this returns at once.
    RETURN_IF_ERROR(CudaCall(cudaEventSynchronize(copied_[b]), "cudaEventSynchronize(staging)"));
    staging_pending_[b] = false;
  }
  ASSIGN_OR_RETURN(const PlanSummary summary,
                   WritePlan(batch, config_, shape_, SpansInto(staging_[b])));
  const int64_t used_words = block_.segments + summary.partition.num_segments * kSegmentWords;
  RETURN_IF_ERROR(
      CudaCall(cudaMemcpyAsync(device_block_.data(), staging_[b], used_words * sizeof(int32_t),
                               cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync(work plan)"));
  RETURN_IF_ERROR(CudaCall(cudaEventRecord(copied_[b], stream), "cudaEventRecord(staging)"));
  staging_pending_[b] = true;
  next_staging_ = 1 - b;
  // Live rows only: padding rows read no keys, and stale columns of earlier
  // batches are never read (the kernels stop at each row's own length).
  const int32_t* device_words = device_block_.as<int32_t>();
  RETURN_IF_ERROR(CudaCall(
      LaunchPageTableGather(table_.req_to_token, table_.row_width, device_words + block_.rows,
                            device_words + block_.cache_seqlens, summary.batch_size,
                            shape_.page_size, static_cast<int32_t>(layout_.max_pages_per_request),
                            device_page_table_.as<int32_t>(), stream),
      "page table gather launch"));
  return summary;
}

}  // namespace paged_attention
