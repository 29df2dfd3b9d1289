// Does the ORDER in which the persistent CTAs read the paged K/V pool change
// the DRAM read bandwidth on the H200? Each case streams the same bytes (K and
// V of every key and KV head, no math) with KvReadNumCtas() = 2 x SMs CTAs:
//
//   head_major        items (request, one head, key chunk), ordered request ->
//                     head -> chunk, dealt in contiguous runs (CTA c gets items
//                     [c*n/C, (c+1)*n/C)): what our planner does, so the GPU
//                     reads 256-byte pieces of many different 2 KB token rows.
//   head_interleaved  the same per-CTA work (one head, contiguous chunks) but
//                     CTAs 8g..8g+7 read heads 0..7 of the same chunks in step.
//   all_heads         items (request, all 8 heads, key chunk / 8): each CTA
//                     reads whole 2 KB token rows.
//   head_pairs        items (request, 2 adjacent heads, key chunk / 2), dealt
//   head_quads        as head_major (4 heads, key chunk / 4): 512-byte and
//                     1 KB runs of each token row, what a decode CTA that
//                     owned 2 or 4 KV heads would read.
//   contiguous_bhsd   head_major's items over a contiguous [batch, heads, seq,
//                     128] copy of the same bytes: the layout cuDNN reads.
//   head_pages        head_major's items over a pool whose pages hold each
//                     head's 16 rows together ([pages, 8 heads, 16, 128],
//                     FlashInfer's HND), same random page order: 4 KB runs.
//
// Pool (but head_pages): [pages, 16, 8 heads, 128] bf16 with a random page
// order (as a long-running server's pool has). Chunks: every case has 8192 items (~31 per
// CTA on 264 CTAs, so the 8 CTAs that get 32 add a ~3% tail to every case
// alike): 512 keys x 1 head at batch 32 x 16k keys, 128 keys at batch 1 x 128k
// (all_heads: 64 and 16 keys x 8 heads; head_pairs and head_quads: a half
// and a quarter of head_major's keys x 2 and 4 heads).
//
// The same orders at head_dim 64 (/hd:64: a pool of [pages, 16, 8 heads, 64],
// 128-byte pieces of 1 KB token rows; head_pairs then reads 256-byte runs),
// loads only, batch 32 x 16k: is head_dim 64 decode's lower rate (4.15 TB/s
// against 4.40 at head_dim 128) the layout's or the kernel's?
//
// Each order is read two ways (copy:): 16-byte loads into registers by 256
// threads per CTA (16 in flight per thread), or bulk copies (cp.async.bulk,
// the TMA engine) of each contiguous run into a 4 x 16 KB shared-memory ring
// by one warp per CTA: whole 16 KB blocks of a page for all_heads and
// contiguous_bhsd, 4 KB pages for head_pages, a key's 2 or 4 heads (512
// bytes, 1 KB) for head_pairs and head_quads, 256-byte rows otherwise.
//
// Each repetition is the median of 31 launches timed with CUDA events, each
// after an L2 flush (reading 256 MiB); 3 repetitions, each on a fresh
// allocation. Counters: bytes (K+V read; the copy case counts read + write)
// and TB/s. BM_KvReadDeviceCopy (1 GiB cudaMemcpyAsync) is the reference rate.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/device_buffer.h"
#include "attention/base/device_info.h"
#include "attention/base/dtype.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/kv_read_pattern_kernels.h"
#include "benchmark/benchmark.h"
#include "testing/random_fill.h"

namespace paged_attention {
namespace {

constexpr int32_t kHeads = 8;
constexpr int64_t kItems = 8192;
constexpr int kTimed = 31;
constexpr size_t kFlushBytes = size_t{256} << 20;  // > the 60 MB L2

enum class Order {
  kHeadMajor,
  kHeadInterleaved,
  kAllHeads,
  kHeadPairs,
  kHeadQuads,
  kContiguousBhsd,
  kHeadPages
};

struct Plan {
  std::vector<int4> items;         // {request, head_begin, head_count, key_begin}
  std::vector<int32_t> cta_begin;  // [num_ctas + 1]
  int32_t keys_per_item = 0;
};

Plan MakePlan(Order order, int32_t batch, int32_t kv, int32_t num_ctas) {
  Plan plan;
  const int32_t heads_per_item = order == Order::kAllHeads    ? kHeads
                                 : order == Order::kHeadQuads ? 4
                                 : order == Order::kHeadPairs ? 2
                                                              : 1;
  plan.keys_per_item = static_cast<int32_t>(int64_t{batch} * kv * kHeads / kItems / heads_per_item);
  const int32_t chunks = kv / plan.keys_per_item;  // per request
  std::vector<int4>& items = plan.items;
  if (order == Order::kHeadInterleaved) {
    // Group g = CTAs 8g..8g+7 gets a contiguous run of (request, chunk)s;
    // CTA 8g+h reads head h of them. CTAs past the last full group idle.
    const int64_t groups = num_ctas / kHeads, key_chunks = int64_t{batch} * chunks;
    plan.cta_begin.push_back(0);
    for (int32_t c = 0; c < num_ctas; ++c) {
      const int64_t g = c / kHeads;
      for (int64_t j = g * key_chunks / groups; g < groups && j < (g + 1) * key_chunks / groups;
           ++j) {
        items.push_back(int4{static_cast<int>(j / chunks), c % kHeads, 1,
                             static_cast<int>(j % chunks) * plan.keys_per_item});
      }
      plan.cta_begin.push_back(static_cast<int32_t>(items.size()));
    }
    return plan;
  }
  for (int32_t r = 0; r < batch; ++r) {
    for (int32_t h = 0; h < kHeads; h += heads_per_item) {
      for (int32_t j = 0; j < chunks; ++j) {
        items.push_back(int4{r, h, heads_per_item, j * plan.keys_per_item});
      }
    }
  }
  for (int64_t c = 0; c <= num_ctas; ++c) {
    plan.cta_begin.push_back(static_cast<int32_t>(c * int64_t(items.size()) / num_ctas));
  }
  return plan;
}

template <typename T>
absl::Status Upload(DeviceBuffer& buffer, const std::vector<T>& host, const char* what) {
  ASSIGN_OR_RETURN(buffer, DeviceBuffer::Allocate(host.size() * sizeof(T), what));
  return buffer.Upload(host);
}

struct Setup {
  DeviceBuffer k, v, page_table, items, cta_begin, out, flush;
  KvReadArgs args;
};

absl::Status Prepare(Order order, int32_t batch, int32_t kv, int32_t head_dim, bool bulk,
                     Setup& s) {
  KvReadArgs& a = s.args;
  a.bulk = bulk ? 1 : 0;
  a.row_bytes = head_dim * 2;
  a.num_ctas = KvReadNumCtas();
  if (a.num_ctas < kHeads) return absl::InternalError("KvReadNumCtas() < 8");
  const Plan plan = MakePlan(order, batch, kv, a.num_ctas);
  if (int64_t{plan.keys_per_item} * plan.items[0].z * a.row_bytes % (32 << 10) != 0) {
    return absl::InvalidArgumentError(
        "keys_per_item * head_count * row_bytes must be a multiple of 32 KB");
  }
  const int64_t rows = int64_t{batch} * kv * kHeads;  // (key, head) rows per tensor
  ASSIGN_OR_RETURN(s.k, DeviceBuffer::Allocate(rows * a.row_bytes, "k"));
  ASSIGN_OR_RETURN(s.v, DeviceBuffer::Allocate(rows * a.row_bytes, "v"));
  ASSIGN_OR_RETURN(s.out, DeviceBuffer::Allocate(a.num_ctas * kKvReadThreads * 4, "out"));
  ASSIGN_OR_RETURN(s.flush, DeviceBuffer::Allocate(kFlushBytes, "l2 flush"));
  const int64_t elements = rows * a.row_bytes / 2;
  RETURN_IF_ERROR(CudaCall(FillRandom16(s.k.data(), elements, DType::kBFloat16, 1, nullptr), "k"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(s.v.data(), elements, DType::kBFloat16, 2, nullptr), "v"));
  if (order != Order::kContiguousBhsd) {
    std::vector<int32_t> table(batch * kv / kKvReadPageSize);  // [batch, kv / 16]
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(5));
    RETURN_IF_ERROR(Upload(s.page_table, table, "page_table"));
    a.page_table = s.page_table.as<int32_t>();
    a.max_pages_per_request = kv / kKvReadPageSize;
  }
  RETURN_IF_ERROR(Upload(s.items, plan.items, "items"));
  RETURN_IF_ERROR(Upload(s.cta_begin, plan.cta_begin, "cta_begin"));
  a.k = s.k.data();
  a.v = s.v.data();
  a.num_kv_heads = kHeads;
  a.seq_len = kv;
  a.items = s.items.as<int4>();
  a.cta_begin = s.cta_begin.as<int32_t>();
  a.keys_per_item = plan.keys_per_item;
  a.heads_outside_pages_rows = order == Order::kHeadPages ? 1 : 0;
  a.out = s.out.as<int32_t>();
  return CudaCall(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// Median seconds of kTimed calls of `launch`, each after an L2 flush; the
// first error any call returns goes to `error`.
template <typename Launch>
double MedianSeconds(const DeviceBuffer& flush, Launch launch, cudaError_t& error) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch();  // warm-up
  std::vector<float> ms(kTimed);
  for (float& t : ms) {
    FlushL2(flush.data(), kFlushBytes, nullptr);
    cudaEventRecord(start);
    const cudaError_t e = launch();
    if (error == cudaSuccess) error = e;
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&t, start, stop);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(ms.begin(), ms.begin() + kTimed / 2, ms.end());
  return ms[kTimed / 2] * 1e-3;
}

void Finish(benchmark::State& state, cudaError_t error, double bytes) {
  if (error == cudaSuccess) error = cudaDeviceSynchronize();
  if (error != cudaSuccess) state.SkipWithError(cudaGetErrorString(error));
  state.counters["bytes"] = bytes;
  state.counters["TB/s"] =
      benchmark::Counter(bytes * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_KvReadPattern(benchmark::State& state, Order order, int32_t batch, int32_t kv,
                      int32_t head_dim, bool bulk) {
  if (VisibleGpuCount() == 0) return state.SkipWithError(("no GPU: " + NoGpuReason()).c_str());
  Setup s;
  if (const absl::Status status = Prepare(order, batch, kv, head_dim, bulk, s); !status.ok()) {
    return state.SkipWithError(status.ToString().c_str());
  }
  cudaError_t error = cudaSuccess;
  for (auto _ : state) {
    state.SetIterationTime(MedianSeconds(
        s.flush, [&] { return LaunchKvRead(s.args, nullptr); }, error));
  }
  Finish(state, error, 2.0 * batch * kv * kHeads * head_dim * 2);
}

void BM_KvReadDeviceCopy(benchmark::State& state) {
  constexpr size_t kBytes = size_t{1} << 30;
  if (VisibleGpuCount() == 0) return state.SkipWithError(("no GPU: " + NoGpuReason()).c_str());
  absl::StatusOr<DeviceBuffer> src = DeviceBuffer::Allocate(kBytes, "src");
  absl::StatusOr<DeviceBuffer> dst = DeviceBuffer::Allocate(kBytes, "dst");
  absl::StatusOr<DeviceBuffer> flush = DeviceBuffer::Allocate(kFlushBytes, "l2 flush");
  for (const absl::Status& status : {src.status(), dst.status(), flush.status()}) {
    if (!status.ok()) return state.SkipWithError(status.ToString().c_str());
  }
  cudaError_t error = FillRandom16(src->data(), kBytes / 2, DType::kBFloat16, 1, nullptr);
  auto copy = [&] {
    return cudaMemcpyAsync(dst->data(), src->data(), kBytes, cudaMemcpyDeviceToDevice);
  };
  for (auto _ : state) state.SetIterationTime(MedianSeconds(*flush, copy, error));
  Finish(state, error, 2.0 * kBytes);
}

void RegisterAll() {
  const std::pair<Order, const char*> orders[] = {
      {Order::kHeadMajor, "head_major"}, {Order::kHeadInterleaved, "head_interleaved"},
      {Order::kAllHeads, "all_heads"},   {Order::kHeadPairs, "head_pairs"},
      {Order::kHeadQuads, "head_quads"}, {Order::kContiguousBhsd, "contiguous_bhsd"},
      {Order::kHeadPages, "head_pages"}};
  std::vector<benchmark::internal::Benchmark*> all = {
      benchmark::RegisterBenchmark("BM_KvReadDeviceCopy/bytes:1073741824", BM_KvReadDeviceCopy)};
  for (auto [batch, kv] : {std::pair{32, 16384}, std::pair{1, 131072}}) {
    for (const bool bulk : {false, true}) {
      for (auto [order, name] : orders) {
        const std::string full =
            absl::StrCat("BM_KvReadPattern/order:", name, "/copy:", bulk ? "bulk" : "loads",
                         "/batch:", batch, "/kv:", kv, "/page:16");
        all.push_back(benchmark::RegisterBenchmark(full.c_str(), BM_KvReadPattern, order, batch, kv,
                                                   128, bulk));
      }
    }
  }
  // Head_dim 64: 128-byte pieces of 1 KB token rows (loads only).
  for (auto [order, name] : orders) {
    if (order == Order::kHeadInterleaved || order == Order::kHeadPages) continue;
    const std::string full = absl::StrCat("BM_KvReadPattern/order:", name,
                                          "/copy:loads/batch:32/kv:16384/page:16/hd:64");
    all.push_back(
        benchmark::RegisterBenchmark(full.c_str(), BM_KvReadPattern, order, 32, 16384, 64, false));
  }
  for (benchmark::internal::Benchmark* b : all) {
    b->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(1)
        ->Repetitions(3)
        ->DisplayAggregatesOnly(true);
  }
}

const bool registered = (RegisterAll(), true);

}  // namespace
}  // namespace paged_attention
