#include "attention/planner/graph_metadata.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/planner/page_table_gather_kernel.h"
#include "attention/planner/split_plan.h"

namespace paged_attention {
namespace {

// Offsets of the arrays inside the lengths staging buffer.
struct LengthsLayout {
  explicit LengthsLayout(int32_t bs)
      : rows(0),
        cache_seqlens(bs),
        cu_seqlens_q(2 * bs),
        cu_seqlens_k(3 * bs + 1),
        total(4 * bs + 2) {}
  int32_t rows, cache_seqlens, cu_seqlens_q, cu_seqlens_k, total;
};

absl::Status CheckConfig(const GraphCaptureConfig& config) {
  auto positive = [](const char* field, int32_t value) -> absl::Status {
    if (value >= 1) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("GraphCaptureConfig.", field, " = ", value, " must be >= 1"));
  };
  RETURN_IF_ERROR(positive("max_batch_size", config.max_batch_size));
  RETURN_IF_ERROR(positive("max_q_len", config.max_q_len));
  RETURN_IF_ERROR(positive("page_size", config.page_size));
  RETURN_IF_ERROR(positive("row_width", config.row_width));
  RETURN_IF_ERROR(positive("num_rows", config.num_rows));
  // The metadata is int32: cu_seqlens_q / cu_seqlens_k sum up to capacity *
  // max_q_len / capacity * row_width, and the page table has capacity *
  // ceil(row_width / page_size) entries.
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  auto product_fits = [&](const char* a, int64_t a_value, const char* b, int64_t b_value,
                          const char* what) -> absl::Status {
    if (a_value * b_value <= kInt32Max) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("GraphCaptureConfig.", a, " = ", a_value, " * ",
                                                   b, " = ", b_value, " = ", a_value * b_value, " ",
                                                   what, " do not fit int32"));
  };
  RETURN_IF_ERROR(product_fits("max_batch_size", config.max_batch_size, "max_q_len",
                               config.max_q_len, "query tokens"));
  RETURN_IF_ERROR(product_fits("max_batch_size", config.max_batch_size, "row_width",
                               config.row_width, "key rows"));
  if (int64_t{config.row_width} + config.page_size > kInt32Max) {
    return absl::InvalidArgumentError(
        absl::StrCat("GraphCaptureConfig.row_width = ", config.row_width,
                     " + page_size = ", config.page_size, " overflows int32"));
  }
  return absl::OkStatus();
}

int32_t CeilDiv(int32_t a, int32_t b) { return (a + b - 1) / b; }

}  // namespace

GraphCaptureConfig CaptureConfigForPool(const KvPagePool& pool, int32_t max_batch_size,
                                        int32_t max_q_len, const PlannerConfig& planner) {
  GraphCaptureConfig config;
  config.max_batch_size = max_batch_size;
  config.max_q_len = max_q_len;
  config.page_size = pool.page_size();
  config.row_width = pool.row_width();
  config.num_rows = pool.max_requests();
  config.planner = planner;
  return config;
}

GraphMetadataState::GraphMetadataState(const GraphCaptureConfig& config)
    : config_(config), staging_(LengthsLayout(config.max_batch_size).total, 0) {}

void GraphMetadataState::PointMetadataAt(int32_t* lengths_base, int32_t* page_table) {
  const LengthsLayout layout(config_.max_batch_size);
  metadata_.batch_size = config_.max_batch_size;
  metadata_.total_q_tokens = config_.max_batch_size * config_.max_q_len;
  metadata_.max_seq_len_q = config_.max_q_len;
  metadata_.max_seq_len_k = config_.row_width;
  metadata_.page_size = config_.page_size;
  metadata_.max_pages_per_request = CeilDiv(config_.row_width, config_.page_size);
  metadata_.num_kv_splits =
      ChooseNumKvSplits(config_.max_batch_size, config_.planner.num_kv_heads, config_.max_q_len,
                        config_.row_width, config_.planner.num_sms);
  metadata_.cache_seqlens = lengths_base + layout.cache_seqlens;
  metadata_.cu_seqlens_q = lengths_base + layout.cu_seqlens_q;
  metadata_.cu_seqlens_k = lengths_base + layout.cu_seqlens_k;
  metadata_.page_table = page_table;
}

absl::StatusOr<std::unique_ptr<GraphMetadataState>> GraphMetadataState::CaptureOnDevice(
    const GraphCaptureConfig& config, const int32_t* device_req_to_token) {
  RETURN_IF_ERROR(CheckConfig(config));
  if (device_req_to_token == nullptr) {
    return absl::InvalidArgumentError("device_req_to_token is null");
  }
  std::unique_ptr<GraphMetadataState> state(new GraphMetadataState(config));
  state->on_device_ = true;
  state->device_req_to_token_ = device_req_to_token;
  const int64_t columns = CeilDiv(config.row_width, config.page_size);
  ASSIGN_OR_RETURN(
      state->device_lengths_,
      DeviceBuffer::Allocate(state->staging_.size() * sizeof(int32_t), "graph metadata lengths"));
  ASSIGN_OR_RETURN(state->device_page_table_,
                   DeviceBuffer::Allocate(config.max_batch_size * columns * sizeof(int32_t),
                                          "graph metadata page table"));
  // Start from a harmless state: every row padding on the sink page.
  state->PointMetadataAt(state->device_lengths_.as<int32_t>(),
                         state->device_page_table_.as<int32_t>());
  RETURN_IF_ERROR(CudaCall(
      cudaMemset(state->device_page_table_.data(), 0, state->device_page_table_.size_bytes()),
      "cudaMemset(graph page table)"));
  return state;
}

absl::StatusOr<std::unique_ptr<GraphMetadataState>> GraphMetadataState::CaptureOnHost(
    const GraphCaptureConfig& config) {
  RETURN_IF_ERROR(CheckConfig(config));
  std::unique_ptr<GraphMetadataState> state(new GraphMetadataState(config));
  state->host_page_table_.assign(
      int64_t{config.max_batch_size} * CeilDiv(config.row_width, config.page_size), 0);
  state->PointMetadataAt(state->staging_.data(), state->host_page_table_.data());
  return state;
}

absl::Status GraphMetadataState::Replay(const BatchDescriptor& batch, const KvPagePool& pool,
                                        cudaStream_t stream) {
  const int32_t capacity = config_.max_batch_size;
  const int32_t live = batch.batch_size();
  if (live > capacity) {
    return absl::FailedPreconditionError(absl::StrCat(
        "replay batch of ", live, " requests exceeds the captured capacity of ", capacity));
  }
  if (pool.page_size() != config_.page_size || pool.row_width() != config_.row_width ||
      pool.max_requests() != config_.num_rows) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pool (page_size ", pool.page_size(), ", row_width ", pool.row_width(), ", rows ",
        pool.max_requests(), ") differs from the capture (page_size ", config_.page_size,
        ", row_width ", config_.row_width, ", rows ", config_.num_rows, ")"));
  }
  // Check everything before touching the buffers, so a rejected batch leaves
  // the previous replay intact.
  for (int32_t i = 0; i < live; ++i) {
    const RequestEntry& request = batch.requests[i];
    if (request.row < 0 || request.row >= config_.num_rows) {
      return absl::InvalidArgumentError(absl::StrCat("request ", i, ": row ", request.row,
                                                     " is outside the table's ", config_.num_rows,
                                                     " rows"));
    }
    if (request.new_tokens < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": new_tokens = ", request.new_tokens, " is negative"));
    }
    if (request.new_tokens > config_.max_q_len) {
      return absl::FailedPreconditionError(
          absl::StrCat("request ", i, ": ", request.new_tokens,
                       " query tokens exceed the captured max_q_len of ", config_.max_q_len));
    }
    // int64: ExtentOf's int32 sum is only safe once this holds.
    const int64_t k_len = int64_t{request.prefix_len} + request.new_tokens;
    if (request.prefix_len < 0 || k_len < 1 || k_len > config_.row_width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": prefix ", request.prefix_len, " + new ", request.new_tokens, " = ",
          k_len, " rows is outside [1, row width ", config_.row_width, "]"));
    }
  }

  const LengthsLayout layout(capacity);
  int32_t* rows = staging_.data() + layout.rows;
  int32_t* cache_seqlens = staging_.data() + layout.cache_seqlens;
  int32_t* cu_q = staging_.data() + layout.cu_seqlens_q;
  int32_t* cu_k = staging_.data() + layout.cu_seqlens_k;
  cu_q[0] = 0;
  cu_k[0] = 0;
  int32_t max_k = 0;
  for (int32_t i = 0; i < capacity; ++i) {
    RequestExtent extent{config_.max_q_len, 1};  // padding: dummy row 0, sink page 0
    rows[i] = 0;
    if (i < live) {
      extent = ExtentOf(batch.requests[i]);
      rows[i] = batch.requests[i].row;
    }
    cache_seqlens[i] = extent.k_len;
    cu_q[i + 1] = cu_q[i] + extent.q_len;
    cu_k[i + 1] = cu_k[i] + extent.k_len;
    max_k = std::max(max_k, extent.k_len);
  }
  live_batch_size_ = live;
  replay_max_seq_len_k_ = max_k;
  const int32_t columns = CeilDiv(max_k, config_.page_size);

  if (!on_device_) {
    GatherPageTableOnHost(pool.req_to_token(), config_.row_width,
                          absl::MakeConstSpan(rows, capacity), config_.page_size, columns,
                          metadata_.max_pages_per_request, host_page_table_.data());
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(
      CudaCall(cudaMemcpyAsync(device_lengths_.data(), staging_.data(),
                               staging_.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync(graph metadata lengths)"));
  return CudaCall(LaunchPageTableGather(device_req_to_token_, config_.row_width,
                                        device_lengths_.as<int32_t>() + layout.rows, capacity,
                                        config_.page_size, columns, metadata_.max_pages_per_request,
                                        device_page_table_.as<int32_t>(), stream),
                  "PageTableGatherKernel");
}

absl::StatusOr<HostMetadata> GraphMetadataState::ReadBack() const {
  const int32_t capacity = config_.max_batch_size;
  const LengthsLayout layout(capacity);
  std::vector<int32_t> lengths = staging_;
  std::vector<int32_t> page_table = host_page_table_;
  if (on_device_) {
    RETURN_IF_ERROR(CudaCall(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    ASSIGN_OR_RETURN(lengths, device_lengths_.Download<int32_t>(staging_.size()));
    ASSIGN_OR_RETURN(page_table, device_page_table_.Download<int32_t>(
                                     device_page_table_.size_bytes() / sizeof(int32_t)));
  }
  HostMetadata plan;
  plan.batch_size = capacity;
  plan.total_q_tokens = metadata_.total_q_tokens;
  plan.max_seq_len_q = metadata_.max_seq_len_q;
  plan.max_seq_len_k = replay_max_seq_len_k_;
  plan.page_size = config_.page_size;
  plan.max_pages_per_request = metadata_.max_pages_per_request;
  plan.num_kv_splits = metadata_.num_kv_splits;
  auto slice = [&lengths](int32_t offset, int32_t count) {
    return std::vector<int32_t>(lengths.begin() + offset, lengths.begin() + offset + count);
  };
  plan.cache_seqlens = slice(layout.cache_seqlens, capacity);
  plan.cu_seqlens_q = slice(layout.cu_seqlens_q, capacity + 1);
  plan.cu_seqlens_k = slice(layout.cu_seqlens_k, capacity + 1);
  plan.page_table = std::move(page_table);
  plan.num_pages_per_request.resize(capacity);
  for (int32_t i = 0; i < capacity; ++i) {
    plan.num_pages_per_request[i] = CeilDiv(plan.cache_seqlens[i], config_.page_size);
  }
  return plan;
}

}  // namespace paged_attention
