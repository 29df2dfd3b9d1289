// The metadata planner, eager path: a validated batch descriptor in, the
// attention metadata the paged kernel reads out, in freshly sized host arrays.
//
//   ASSIGN_OR_RETURN(BatchDescriptor batch, BuildBatchDescriptor(inputs, pool));
//   ASSIGN_OR_RETURN(HostMetadata plan, PlanEager(batch, pool, config));
//   AttentionMetadata host_view = plan.View();  // or upload it for the GPU
//
// One formula for every mode, shared with the CUDA-graph path
// (graph_metadata.h): the descriptor already states each request's prefix and
// new tokens, so the kernel reads k = prefix + new rows and q = new queries:
//   DECODE                  prefix = length - 1, new = 1   -> k = full length
//   DECODE, draft step s    prefix = committed + s, new = 1 -> committed + s + 1
//   TARGET_VERIFY           prefix = committed, new = nd   -> committed + nd
//   EXTEND / MIXED / DRAFT_EXTEND / DRAFT_EXTEND_V2: k = prefix + extend
// max_seq_len_k is max_i(prefix_i + new_i), never max(prefix) + max(new); the
// page table covers ceil(max_seq_len_k / page_size) columns of every row.
#ifndef ATTENTION_PLANNER_METADATA_PLANNER_H_
#define ATTENTION_PLANNER_METADATA_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attention/planner/attention_metadata.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {

// What the split-KV plan depends on besides the batch.
struct PlannerConfig {
  int32_t num_kv_heads = 8;
  int32_t num_sms = 132;  // H200
};

// Metadata as host arrays: the source of truth for tests, the plan CLI and
// uploads. Field meanings are AttentionMetadata's.
struct HostMetadata {
  ForwardMode mode = ForwardMode::kIdle;
  int32_t batch_size = 0;
  int32_t total_q_tokens = 0;
  int32_t max_seq_len_q = 0;
  int32_t max_seq_len_k = 0;
  int32_t page_size = 0;
  int32_t max_pages_per_request = 0;
  int32_t num_kv_splits = 1;
  std::vector<int32_t> cache_seqlens;          // [batch_size]
  std::vector<int32_t> cu_seqlens_q;           // [batch_size + 1]
  std::vector<int32_t> cu_seqlens_k;           // [batch_size + 1]
  std::vector<int32_t> page_table;             // [batch_size, max_pages_per_request]
  std::vector<int32_t> num_pages_per_request;  // [batch_size] ceil(cache_seqlens / page_size)

  // A view with host pointers into this object (valid while it lives).
  AttentionMetadata View() const;
};

// Query tokens and K/V rows of one request: the one per-mode formula.
struct RequestExtent {
  int32_t q_len;
  int32_t k_len;
};
inline RequestExtent ExtentOf(const RequestEntry& request) {
  return {request.new_tokens, request.prefix_len + request.new_tokens};
}

// Plans any valid batch of any mode. InvalidArgument (from the descriptor's
// validation) for a malformed batch; never CUDA, never allocates on the device.
absl::StatusOr<HostMetadata> PlanEager(const BatchDescriptor& batch, const KvPagePool& pool,
                                       const PlannerConfig& config);

// page_table[i][j] = req_to_token[rows[i]][j * page_size] / page_size for
// j < num_columns: the host twin of the device gather on the graph path.
void GatherPageTableOnHost(absl::Span<const int32_t> req_to_token, int32_t row_width,
                           absl::Span<const int32_t> rows, int32_t page_size, int32_t num_columns,
                           int32_t page_table_stride, int32_t* page_table);

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_METADATA_PLANNER_H_
