// Benchmarks of the paged attention kernel on decode / verify / draft-extend
// shapes (bf16, head_dim 128, long KV), timed with CUDA events.
//
// Counters: TB/s = K and V bytes read once per (request, KV head) over the
// kernel time (the quantity held to >= 85% of the 4.17 TB/s copy rate);
// TFLOP/s = 4 * q * num_q_heads * kv_len * head_dim per request. Run with
// --benchmark_out=FILE --benchmark_out_format=json for the dashboard.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "attention/base/device_buffer.h"
#include "attention/base/device_info.h"
#include "attention/kernel/paged_attention.h"
#include "attention/kernel/random_fill.h"
#include "attention/planner/split_plan.h"
#include "benchmark/benchmark.h"

namespace paged_attention {
namespace {

struct Shape {
  int32_t num_q_heads;
  int32_t num_kv_heads;
  int32_t batch;
  int32_t q_len;
  int32_t kv_len;
  int32_t page_size;
};

constexpr int32_t kHeadDim = 128;
constexpr DType kDType = DType::kBFloat16;

void BM_PagedAttention(benchmark::State& state, Shape shape) {
  if (VisibleGpuCount() == 0) {
    state.SkipWithError(("no GPU: " + NoGpuReason()).c_str());
    return;
  }
  absl::StatusOr<DeviceInfo> device = QueryDevice(0);
  const int32_t num_sms = device.ok() ? device->multiprocessor_count : 132;
  const int32_t pages_per_request = (shape.kv_len + shape.page_size - 1) / shape.page_size;
  const int64_t num_pages = int64_t{pages_per_request} * shape.batch;
  const int64_t pool_elems = num_pages * shape.page_size * shape.num_kv_heads * kHeadDim;
  const int32_t total_q = shape.batch * shape.q_len;
  const int64_t q_elems = int64_t{total_q} * shape.num_q_heads * kHeadDim;

  auto k = DeviceBuffer::Allocate(pool_elems * 2, "k_cache");
  auto v = DeviceBuffer::Allocate(pool_elems * 2, "v_cache");
  auto q = DeviceBuffer::Allocate(q_elems * 2, "q");
  auto out = DeviceBuffer::Allocate(q_elems * 2, "out");
  auto lse = DeviceBuffer::Allocate(int64_t{total_q} * shape.num_q_heads * 4, "lse");
  auto seqlens = DeviceBuffer::Allocate(shape.batch * 4, "cache_seqlens");
  auto cu_q = DeviceBuffer::Allocate((shape.batch + 1) * 4, "cu_seqlens_q");
  auto cu_k = DeviceBuffer::Allocate((shape.batch + 1) * 4, "cu_seqlens_k");
  auto table = DeviceBuffer::Allocate(num_pages * 4, "page_table");
  for (auto* buffer : {&k, &v, &q, &out, &lse, &seqlens, &cu_q, &cu_k, &table}) {
    if (!buffer->ok()) {
      state.SkipWithError(buffer->status().ToString().c_str());
      return;
    }
  }
  if (FillRandom16(k->data(), pool_elems, kDType, 1, nullptr) != cudaSuccess ||
      FillRandom16(v->data(), pool_elems, kDType, 2, nullptr) != cudaSuccess ||
      FillRandom16(q->data(), q_elems, kDType, 3, nullptr) != cudaSuccess) {
    state.SkipWithError("random fill failed");
    return;
  }
  // Random page order, as a long-running server's pool would have.
  std::vector<int32_t> pages(num_pages);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), std::mt19937(5));
  std::vector<int32_t> host_seqlens(shape.batch, shape.kv_len), host_cu_q(shape.batch + 1),
      host_cu_k(shape.batch + 1);
  for (int32_t i = 0; i <= shape.batch; ++i) {
    host_cu_q[i] = i * shape.q_len;
    host_cu_k[i] = i * shape.kv_len;
  }
  if (!seqlens->Upload(host_seqlens).ok() || !cu_q->Upload(host_cu_q).ok() ||
      !cu_k->Upload(host_cu_k).ok() || !table->Upload(pages).ok()) {
    state.SkipWithError("upload failed");
    return;
  }

  PagedAttentionArgs args;
  args.dtype = kDType;
  args.num_q_heads = shape.num_q_heads;
  args.num_kv_heads = shape.num_kv_heads;
  args.head_dim = kHeadDim;
  args.num_pages = static_cast<int32_t>(num_pages);
  args.q = q->data();
  args.k_cache = k->data();
  args.v_cache = v->data();
  args.out = out->data();
  args.lse = lse->as<float>();
  AttentionMetadata& md = args.metadata;
  md.batch_size = shape.batch;
  md.total_q_tokens = total_q;
  md.max_seq_len_q = shape.q_len;
  md.max_seq_len_k = shape.kv_len;
  md.page_size = shape.page_size;
  md.max_pages_per_request = pages_per_request;
  md.num_kv_splits =
      ChooseNumKvSplits(shape.batch, shape.num_kv_heads, shape.q_len, shape.kv_len, num_sms);
  md.cache_seqlens = seqlens->as<int32_t>();
  md.cu_seqlens_q = cu_q->as<int32_t>();
  md.cu_seqlens_k = cu_k->as<int32_t>();
  md.page_table = table->as<int32_t>();
  args.options.softmax_scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  args.options.mask = MaskMode::kCausal;

  const size_t workspace_bytes = WorkspaceBytes(md, shape.num_q_heads, kHeadDim);
  auto workspace = DeviceBuffer::Allocate(std::max<size_t>(workspace_bytes, 16), "workspace");
  if (!workspace.ok()) {
    state.SkipWithError(workspace.status().ToString().c_str());
    return;
  }
  cudaStream_t stream;
  cudaEvent_t start, stop;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  // Warm-up (module load, first-touch).
  for (int i = 0; i < 3; ++i) {
    const absl::Status status =
        LaunchPagedAttention(args, workspace->data(), workspace_bytes, stream);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      return;
    }
  }
  cudaStreamSynchronize(stream);
  for (auto _ : state) {
    cudaEventRecord(start, stream);
    const absl::Status status =
        LaunchPagedAttention(args, workspace->data(), workspace_bytes, stream);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms * 1e-3);
  }
  const cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess) state.SkipWithError(cudaGetErrorString(error));

  const double kv_bytes =
      2.0 * shape.batch * double(shape.kv_len) * shape.num_kv_heads * kHeadDim * 2;
  const double flops =
      4.0 * shape.batch * shape.q_len * double(shape.num_q_heads) * shape.kv_len * kHeadDim;
  state.counters["TB/s"] =
      benchmark::Counter(kv_bytes * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["TFLOP/s"] =
      benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["splits"] = md.num_kv_splits;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
}

void RegisterAll() {
  struct Case {
    const char* op;
    int32_t batch, q_len, kv_len;
  };
  // Decode (q 1), draft-extend / verify (q 4, 8); the ENVIRONMENT.md table.
  const Case cases[] = {
      {"Decode", 1, 1, 32768},  {"Decode", 16, 1, 32768}, {"Decode", 32, 1, 4096},
      {"Decode", 64, 1, 4096},  {"Decode", 1, 1, 131072}, {"Verify", 1, 8, 32768},
      {"Verify", 32, 4, 4096},  {"Verify", 8, 4, 32768},  {"Verify", 64, 8, 2048},
      {"Verify", 16, 8, 8192},  {"Verify", 64, 8, 4096},  {"Verify", 16, 8, 32768},
      {"Verify", 1, 8, 131072},
  };
  for (const auto& [num_q_heads, num_kv_heads] : {std::pair{32, 8}, std::pair{64, 8}}) {
    for (const Case& c : cases) {
      for (int32_t page_size : {16, 64}) {
        if (page_size == 64 && num_q_heads == 64) continue;  // page 64 on 32/8 only
        const Shape shape{num_q_heads, num_kv_heads, c.batch, c.q_len, c.kv_len, page_size};
        const std::string name = absl::StrCat("BM_PagedAttention", c.op, "/heads:", num_q_heads,
                                              "_", num_kv_heads, "/batch:", c.batch, "/q:", c.q_len,
                                              "/kv_len:", c.kv_len, "/page:", page_size);
        benchmark::RegisterBenchmark(name.c_str(), BM_PagedAttention, shape)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.05)
            ->Repetitions(3)
            ->ReportAggregatesOnly(true);
      }
    }
  }
}

const bool registered = (RegisterAll(), true);

}  // namespace
}  // namespace paged_attention
