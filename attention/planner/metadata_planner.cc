#include "attention/planner/metadata_planner.h"

#include <algorithm>

#include "attention/base/status_macros.h"
#include "attention/planner/split_plan.h"

namespace paged_attention {

AttentionMetadata HostMetadata::View() const {
  AttentionMetadata view;
  view.batch_size = batch_size;
  view.total_q_tokens = total_q_tokens;
  view.max_seq_len_q = max_seq_len_q;
  view.max_seq_len_k = max_seq_len_k;
  view.page_size = page_size;
  view.max_pages_per_request = max_pages_per_request;
  view.num_kv_splits = num_kv_splits;
  view.cache_seqlens = cache_seqlens.data();
  view.cu_seqlens_q = cu_seqlens_q.data();
  view.cu_seqlens_k = cu_seqlens_k.data();
  view.page_table = page_table.data();
  return view;
}

void GatherPageTableOnHost(absl::Span<const int32_t> req_to_token, int32_t row_width,
                           absl::Span<const int32_t> rows, int32_t page_size, int32_t num_columns,
                           int32_t page_table_stride, int32_t* page_table) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const int32_t* slots = req_to_token.data() + int64_t{rows[i]} * row_width;
    int32_t* out = page_table + i * int64_t{page_table_stride};
    for (int32_t j = 0; j < num_columns; ++j) out[j] = slots[int64_t{j} * page_size] / page_size;
  }
}

absl::StatusOr<HostMetadata> PlanEager(const BatchDescriptor& batch, const KvPagePool& pool,
                                       const PlannerConfig& config) {
  RETURN_IF_ERROR(ValidateBatchDescriptor(batch, pool));
  const int32_t bs = batch.batch_size();
  const int32_t page_size = pool.page_size();
  HostMetadata plan;
  plan.mode = batch.mode;
  plan.batch_size = bs;
  plan.page_size = page_size;
  plan.cache_seqlens.resize(bs);
  plan.cu_seqlens_q.assign(bs + 1, 0);
  plan.cu_seqlens_k.assign(bs + 1, 0);
  plan.num_pages_per_request.resize(bs);
  std::vector<int32_t> rows(bs);
  for (int32_t i = 0; i < bs; ++i) {
    const RequestExtent extent = ExtentOf(batch.requests[i]);
    rows[i] = batch.requests[i].row;
    plan.cache_seqlens[i] = extent.k_len;
    plan.cu_seqlens_q[i + 1] = plan.cu_seqlens_q[i] + extent.q_len;
    plan.cu_seqlens_k[i + 1] = plan.cu_seqlens_k[i] + extent.k_len;
    plan.num_pages_per_request[i] = (extent.k_len + page_size - 1) / page_size;
    plan.max_seq_len_q = std::max(plan.max_seq_len_q, extent.q_len);
    plan.max_seq_len_k = std::max(plan.max_seq_len_k, extent.k_len);
  }
  plan.total_q_tokens = plan.cu_seqlens_q[bs];
  plan.max_pages_per_request = (plan.max_seq_len_k + page_size - 1) / page_size;
  plan.page_table.assign(int64_t{bs} * plan.max_pages_per_request, 0);
  GatherPageTableOnHost(pool.req_to_token(), pool.row_width(), rows, page_size,
                        plan.max_pages_per_request, plan.max_pages_per_request,
                        plan.page_table.data());
  plan.num_kv_splits = ChooseNumKvSplits(bs, config.num_kv_heads, plan.max_seq_len_q,
                                         plan.max_seq_len_k, config.num_sms);
  return plan;
}

}  // namespace paged_attention
