#include "testing/gpu_attention.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention.h"

namespace paged_attention {

absl::StatusOr<PlannerConfig> GpuPlannerConfig(DType dtype, int32_t num_q_heads,
                                               int32_t num_kv_heads, int32_t head_dim,
                                               const AttentionOptions& options) {
  ASSIGN_OR_RETURN(const KernelGeometry geometry, QueryKernelGeometry(dtype, head_dim));
  PlannerConfig config = HostPlannerConfig(num_q_heads, num_kv_heads, head_dim, options);
  config.num_sms = geometry.num_sms;
  config.ctas_per_sm = geometry.ctas_per_sm;
  return config;
}

absl::StatusOr<std::unique_ptr<CapturedAttention>> CapturedAttention::Capture(
    const PagedAttentionArgs& args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
    int calls) {
  if (calls < 1) return absl::InvalidArgumentError(absl::StrCat("calls = ", calls, ": need >= 1"));
  std::unique_ptr<CapturedAttention> captured(new CapturedAttention());
  RETURN_IF_ERROR(CudaCall(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                           "cudaStreamBeginCapture"));
  absl::Status launched;
  for (int call = 0; call < calls && launched.ok(); ++call) {
    launched = LaunchPagedAttention(args, workspace, workspace_bytes, stream);
  }
  const absl::Status ended =
      CudaCall(cudaStreamEndCapture(stream, &captured->graph_), "cudaStreamEndCapture");
  RETURN_IF_ERROR(launched);
  RETURN_IF_ERROR(ended);
  RETURN_IF_ERROR(CudaCall(cudaGraphInstantiate(&captured->exec_, captured->graph_, 0),
                           "cudaGraphInstantiate"));
  return captured;
}

CapturedAttention::~CapturedAttention() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

absl::Status CapturedAttention::Launch(cudaStream_t stream) {
  return CudaCall(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch");
}

absl::StatusOr<DeviceTableCopy> DeviceTableCopy::Create(const KvPagePool& pool) {
  DeviceTableCopy copy;
  ASSIGN_OR_RETURN(copy.buffer_, DeviceBuffer::Allocate(
                                     pool.req_to_token().size() * sizeof(int32_t), "req_to_token"));
  copy.rows_ = pool.max_requests();
  copy.row_width_ = pool.row_width();
  RETURN_IF_ERROR(copy.Upload(pool));
  return copy;
}

absl::Status DeviceTableCopy::Upload(const KvPagePool& pool) {
  const size_t bytes = pool.req_to_token().size() * sizeof(int32_t);
  if (pool.max_requests() != rows_ || pool.row_width() != row_width_) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeviceTableCopy: pool table of ", pool.max_requests(), " x ",
                     pool.row_width(), " differs from the copy's ", rows_, " x ", row_width_));
  }
  return buffer_.CopyFromHost(pool.req_to_token().data(), bytes);
}

absl::StatusOr<std::unique_ptr<GpuAttentionRunner>> GpuAttentionRunner::Create(
    const KvPagePool& pool, const PlanShape& shape, const PlannerConfig& config, DType dtype,
    LaunchKind launch) {
  std::unique_ptr<GpuAttentionRunner> runner(new GpuAttentionRunner());
  runner->launch_ = launch;
  runner->dtype_ = dtype;
  runner->config_ = config;
  ASSIGN_OR_RETURN(runner->req_to_token_, DeviceTableCopy::Create(pool));
  ASSIGN_OR_RETURN(runner->metadata_,
                   DeviceMetadata::Create(shape, config, runner->req_to_token_.table()));
  KvCacheLayout layout;
  layout.num_pages = pool.num_pages();
  layout.page_size = pool.page_size();
  layout.num_kv_heads = config.num_kv_heads;
  layout.head_dim = config.head_dim;
  layout.dtype = dtype;
  ASSIGN_OR_RETURN(DeviceKvCache kv, DeviceKvCache::Create(layout));
  runner->kv_ = std::make_unique<DeviceKvCache>(std::move(kv));
  const AttentionMetadata& md = runner->metadata_->metadata();
  const int64_t elements =
      std::max<int64_t>(int64_t{md.total_q_tokens} * config.num_q_heads * config.head_dim, 8);
  ASSIGN_OR_RETURN(runner->q_, DeviceBuffer::Allocate(elements * DTypeSize(dtype), "q"));
  ASSIGN_OR_RETURN(runner->out_, DeviceBuffer::Allocate(elements * DTypeSize(dtype), "out"));
  ASSIGN_OR_RETURN(
      runner->lse_,
      DeviceBuffer::Allocate(
          std::max<int64_t>(int64_t{md.total_q_tokens} * config.num_q_heads, 4) * sizeof(float),
          "lse"));
  ASSIGN_OR_RETURN(runner->workspace_, DeviceBuffer::Allocate(WorkspaceBytes(md), "workspace"));
  RETURN_IF_ERROR(CudaCall(cudaStreamCreateWithFlags(&runner->stream_, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags"));
  return runner;
}

GpuAttentionRunner::~GpuAttentionRunner() {
  graph_.reset();
  if (stream_ != nullptr) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

absl::StatusOr<AttentionOutputs> GpuAttentionRunner::Run(const AttentionData& data,
                                                         const KvPagePool& pool,
                                                         const ValidatedBatch& batch,
                                                         const AttentionOptions& options) {
  if (data.num_q_heads != config_.num_q_heads || data.num_kv_heads != config_.num_kv_heads ||
      data.head_dim != config_.head_dim || data.dtype != dtype_) {
    return absl::InvalidArgumentError("attention data shaped unlike the runner's config");
  }
  // The device table and K/V were sized for the creating pool's geometry.
  if (pool.max_requests() != req_to_token_.table().num_rows ||
      pool.row_width() != req_to_token_.table().row_width ||
      pool.num_pages() != kv_->layout().num_pages || pool.page_size() != kv_->layout().page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("GpuAttentionRunner::Run: pool of ", pool.num_pages(), " pages of ",
                     pool.page_size(), " slots and ", pool.req_to_token().size(),
                     " table entries differs from the pool the runner was created for"));
  }
  // Synchronous uploads: the pool's table, K/V and Q (zero-padded to the shape).
  RETURN_IF_ERROR(req_to_token_.Upload(pool));
  RETURN_IF_ERROR(kv_->Upload(data.kv));
  std::vector<uint8_t> q(q_.size_bytes(), 0);
  std::copy(data.q.begin(), data.q.begin() + std::min(data.q.size(), q.size()), q.begin());
  RETURN_IF_ERROR(q_.CopyFromHost(q.data(), q.size()));
  RETURN_IF_ERROR(CudaCall(cudaMemsetAsync(out_.data(), 0, out_.size_bytes(), stream_),
                           "cudaMemsetAsync(out)"));
  RETURN_IF_ERROR(CudaCall(cudaMemsetAsync(lse_.data(), 0, lse_.size_bytes(), stream_),
                           "cudaMemsetAsync(lse)"));

  ASSIGN_OR_RETURN(last_plan_, metadata_->Upload(batch, stream_));
  PagedAttentionArgs args;
  args.dtype = dtype_;
  args.num_q_heads = config_.num_q_heads;
  args.num_kv_heads = config_.num_kv_heads;
  args.head_dim = config_.head_dim;
  args.num_pages = pool.num_pages();
  args.q = q_.data();
  args.k_cache = kv_->k_data();
  args.v_cache = kv_->v_data();
  args.out = out_.data();
  args.lse = lse_.as<float>();
  args.options = options;
  if (launch_ == LaunchKind::kEager) {
    args.metadata = metadata_->metadata_for(last_plan_);
    RETURN_IF_ERROR(
        LaunchPagedAttention(args, workspace_.data(), workspace_.size_bytes(), stream_));
  } else {
    // The captured graph reads the capacity-shaped buffers; so does the
    // download below (its lse row stride is the capacity's token count).
    args.metadata = metadata_->metadata();
    if (graph_ == nullptr) {
      ASSIGN_OR_RETURN(graph_, CapturedAttention::Capture(args, workspace_.data(),
                                                          workspace_.size_bytes(), stream_));
      captured_options_ = options;
    } else if (std::memcmp(&captured_options_, &options, sizeof(options)) != 0) {
      return absl::FailedPreconditionError(
          "a replay needs the options the graph was captured with");
    }
    RETURN_IF_ERROR(graph_->Launch(stream_));
  }
  RETURN_IF_ERROR(CudaCall(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"));

  const int64_t tokens = args.metadata.total_q_tokens;  // the lse row stride of this launch
  const int64_t elements = tokens * config_.num_q_heads * config_.head_dim;
  std::vector<uint8_t> out(elements * DTypeSize(dtype_));
  RETURN_IF_ERROR(out_.CopyToHost(out.data(), out.size()));
  ASSIGN_OR_RETURN(std::vector<float> lse, lse_.Download<float>(tokens * config_.num_q_heads));
  AttentionOutputs outputs;
  outputs.out.resize(elements);
  for (int64_t i = 0; i < elements; ++i) outputs.out[i] = DecodeElement(dtype_, out.data(), i);
  outputs.lse.assign(lse.begin(), lse.end());
  return outputs;
}

absl::StatusOr<HostMetadata> DownloadMetadata(const DeviceMetadata& metadata) {
  RETURN_IF_ERROR(CudaCall(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  const AttentionMetadata& view = metadata.metadata();
  const PlanLayout& layout = metadata.layout();
  HostMetadata host;
  host.shape = metadata.shape();
  host.layout = layout;
  host.config = metadata.config();
  auto copy = [](auto& vector, int64_t count, const void* device) -> absl::Status {
    vector.resize(std::max<int64_t>(count, 1));
    return CudaCall(
        cudaMemcpy(vector.data(), device, count * sizeof(vector[0]), cudaMemcpyDeviceToHost),
        "cudaMemcpy(download metadata)");
  };
  RETURN_IF_ERROR(copy(host.cache_seqlens, layout.requests, view.cache_seqlens));
  RETURN_IF_ERROR(copy(host.cu_seqlens_q, layout.requests + 1, view.cu_seqlens_q));
  RETURN_IF_ERROR(copy(host.page_table, layout.page_table_entries, view.page_table));
  RETURN_IF_ERROR(copy(host.counters, kNumPlanCounters, view.plan.counters));
  RETURN_IF_ERROR(copy(host.worker_begin, layout.num_workers + 1, view.plan.worker_begin));
  RETURN_IF_ERROR(copy(host.segments, layout.max_segments, view.plan.segments));
  RETURN_IF_ERROR(copy(host.merge_tasks, layout.max_merge_tasks, view.plan.merge_tasks));
  if (layout.tree_mask_words > 0) {
    RETURN_IF_ERROR(copy(host.tree_mask, layout.tree_mask_words, view.tree_mask));
  }
  host.cache_seqlens.resize(layout.requests);
  host.cu_seqlens_q.resize(layout.requests + 1);
  return host;
}

absl::StatusOr<AttentionOutputs> RunKernelEager(const AttentionData& data, const KvPagePool& pool,
                                                const ValidatedBatch& batch,
                                                const PlannerConfig& config,
                                                const AttentionOptions& options) {
  ASSIGN_OR_RETURN(auto runner, GpuAttentionRunner::Create(pool, ExactShape(batch), config,
                                                           data.dtype, LaunchKind::kEager));
  return runner->Run(data, pool, batch, options);
}

absl::StatusOr<AttentionOutputs> RunKernelGraphReplay(
    const AttentionData& data, const KvPagePool& pool, const ValidatedBatch& batch,
    const PlanShape& capture, const PlannerConfig& config, const AttentionOptions& options) {
  ASSIGN_OR_RETURN(auto runner, GpuAttentionRunner::Create(pool, capture, config, data.dtype,
                                                           LaunchKind::kGraph));
  return runner->Run(data, pool, batch, options);
}

}  // namespace paged_attention
