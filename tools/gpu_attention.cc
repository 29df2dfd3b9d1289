#include "tools/gpu_attention.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/device_buffer.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention.h"
#include "kv_cache/kv_cache.h"

namespace paged_attention {
namespace {

// Q (padded with zeros to `tokens`), K/V pool, out/lse on the device.
struct DeviceInputs {
  DeviceKvCache kv;
  DeviceBuffer q, out, lse;
};

absl::StatusOr<DeviceInputs> Upload(const AttentionData& data, int64_t tokens) {
  ASSIGN_OR_RETURN(DeviceKvCache kv, DeviceKvCache::Create(data.kv.layout()));
  RETURN_IF_ERROR(kv.Upload(data.kv));
  const int64_t row_bytes = int64_t{data.num_q_heads} * data.head_dim * DTypeSize(data.dtype);
  std::vector<uint8_t> q(std::max<int64_t>(tokens * row_bytes, 1), 0);
  std::copy(data.q.begin(), data.q.begin() + std::min<int64_t>(data.q.size(), q.size()), q.begin());
  DeviceInputs inputs{std::move(kv), {}, {}, {}};
  ASSIGN_OR_RETURN(inputs.q, DeviceBuffer::Allocate(q.size(), "q"));
  RETURN_IF_ERROR(inputs.q.Upload(q));
  ASSIGN_OR_RETURN(inputs.out, DeviceBuffer::Allocate(q.size(), "out"));
  ASSIGN_OR_RETURN(inputs.lse,
                   DeviceBuffer::Allocate(
                       std::max<int64_t>(tokens * data.num_q_heads, 1) * sizeof(float), "lse"));
  return inputs;
}

PagedAttentionArgs DeviceArgs(const AttentionData& data, DeviceInputs& inputs,
                              const AttentionMetadata& metadata, const AttentionOptions& options) {
  return ArgsFor(data, inputs.q.data(), inputs.kv.k_data(), inputs.kv.v_data(), inputs.out.data(),
                 inputs.lse.as<float>(), metadata, options);
}

absl::StatusOr<AttentionOutputs> Download(const AttentionData& data, const DeviceInputs& inputs,
                                          int64_t tokens) {
  const int64_t elements = tokens * data.num_q_heads * data.head_dim;
  std::vector<uint8_t> out(elements * DTypeSize(data.dtype));
  RETURN_IF_ERROR(inputs.out.CopyToHost(out.data(), out.size()));
  ASSIGN_OR_RETURN(std::vector<float> lse, inputs.lse.Download<float>(tokens * data.num_q_heads));
  AttentionOutputs outputs;
  outputs.out.resize(elements);
  for (int64_t i = 0; i < elements; ++i) outputs.out[i] = DecodeElement(data.dtype, out.data(), i);
  outputs.lse.assign(lse.begin(), lse.end());
  return outputs;
}

// Host arrays of an eager plan, uploaded.
struct DeviceMetadata {
  DeviceBuffer cache_seqlens, cu_seqlens_q, cu_seqlens_k, page_table;
  AttentionMetadata view;
};

absl::StatusOr<DeviceMetadata> UploadMetadata(const HostMetadata& plan) {
  DeviceMetadata device;
  auto upload = [](const std::vector<int32_t>& host, const char* what,
                   DeviceBuffer& buffer) -> absl::Status {
    ASSIGN_OR_RETURN(buffer, DeviceBuffer::Allocate(std::max<size_t>(host.size(), 1) * 4, what));
    return buffer.Upload(host);
  };
  RETURN_IF_ERROR(upload(plan.cache_seqlens, "cache_seqlens", device.cache_seqlens));
  RETURN_IF_ERROR(upload(plan.cu_seqlens_q, "cu_seqlens_q", device.cu_seqlens_q));
  RETURN_IF_ERROR(upload(plan.cu_seqlens_k, "cu_seqlens_k", device.cu_seqlens_k));
  RETURN_IF_ERROR(upload(plan.page_table, "page_table", device.page_table));
  device.view = plan.View();
  device.view.cache_seqlens = device.cache_seqlens.as<int32_t>();
  device.view.cu_seqlens_q = device.cu_seqlens_q.as<int32_t>();
  device.view.cu_seqlens_k = device.cu_seqlens_k.as<int32_t>();
  device.view.page_table = device.page_table.as<int32_t>();
  return device;
}

}  // namespace

absl::StatusOr<AttentionOutputs> RunKernelEager(const AttentionData& data, const HostMetadata& plan,
                                                const AttentionOptions& options) {
  ASSIGN_OR_RETURN(DeviceInputs inputs, Upload(data, plan.total_q_tokens));
  ASSIGN_OR_RETURN(DeviceMetadata metadata, UploadMetadata(plan));
  const PagedAttentionArgs args = DeviceArgs(data, inputs, metadata.view, options);
  RETURN_IF_ERROR(CanImplement(args));
  const size_t workspace_bytes = WorkspaceBytes(args.metadata, args.num_q_heads, args.head_dim);
  ASSIGN_OR_RETURN(DeviceBuffer workspace, DeviceBuffer::Allocate(workspace_bytes, "workspace"));
  RETURN_IF_ERROR(LaunchPagedAttention(args, workspace.data(), workspace_bytes, nullptr));
  RETURN_IF_ERROR(CudaCall(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  return Download(data, inputs, plan.total_q_tokens);
}

absl::StatusOr<AttentionOutputs> RunKernelGraphReplay(const AttentionData& data,
                                                      const KvPagePool& pool,
                                                      const BatchDescriptor& batch,
                                                      const GraphCaptureConfig& capture,
                                                      const AttentionOptions& options) {
  ASSIGN_OR_RETURN(
      DeviceBuffer req_to_token,
      DeviceBuffer::Allocate(pool.req_to_token().size() * sizeof(int32_t), "req_to_token"));
  RETURN_IF_ERROR(req_to_token.CopyFromHost(pool.req_to_token().data(),
                                            pool.req_to_token().size() * sizeof(int32_t)));
  ASSIGN_OR_RETURN(std::unique_ptr<GraphMetadataState> state,
                   GraphMetadataState::CaptureOnDevice(capture, req_to_token.as<int32_t>()));
  const int64_t tokens = state->metadata().total_q_tokens;
  ASSIGN_OR_RETURN(DeviceInputs inputs, Upload(data, tokens));
  const PagedAttentionArgs args = DeviceArgs(data, inputs, state->metadata(), options);
  RETURN_IF_ERROR(CanImplement(args));
  const size_t workspace_bytes = WorkspaceBytes(args.metadata, args.num_q_heads, args.head_dim);
  ASSIGN_OR_RETURN(DeviceBuffer workspace, DeviceBuffer::Allocate(workspace_bytes, "workspace"));

  cudaStream_t stream;
  RETURN_IF_ERROR(CudaCall(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags"));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  absl::Status status = CudaCall(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                                 "cudaStreamBeginCapture");
  if (status.ok()) {
    const absl::Status launched =
        LaunchPagedAttention(args, workspace.data(), workspace_bytes, stream);
    status = CudaCall(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    if (!launched.ok()) status = launched;
  }
  if (status.ok()) {
    status = CudaCall(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  }
  // Capacity tokens past the replayed batch's are not written by the kernel:
  // clear them so the whole buffer downloads as defined values.
  if (status.ok()) {
    status = CudaCall(cudaMemsetAsync(inputs.out.data(), 0, inputs.out.size_bytes(), stream),
                      "cudaMemsetAsync(out)");
  }
  if (status.ok()) {
    status = CudaCall(cudaMemsetAsync(inputs.lse.data(), 0, inputs.lse.size_bytes(), stream),
                      "cudaMemsetAsync(lse)");
  }
  // Replay: update the fixed metadata buffers, then launch the captured graph.
  if (status.ok()) status = state->Replay(batch, pool, stream);
  if (status.ok()) status = CudaCall(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  if (status.ok()) status = CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  RETURN_IF_ERROR(status);
  return Download(data, inputs, tokens);
}

}  // namespace paged_attention
