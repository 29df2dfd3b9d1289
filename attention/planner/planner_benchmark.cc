// Host cost of planning, per step. BM_PlanEager and BM_PlanReplay both run
// DeviceMetadata::Upload (the host plan, one async copy, the device page-table
// gather): an exact shape for an eager launch, a CUDA-graph capacity for a
// replay. Neither builds a page table on the host, so both stay flat in
// context length. BM_PlanOnHost is the host-array plan the CPU executor and
// the tools use (host gather: O(batch x pages)). The two Upload benchmarks
// need a GPU; without one they report an error. BM_PartitionWork times the
// work partition alone (host only) on decode, verify and prefill batches,
// including the co-read groups of q64 verify.
#include <chrono>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "attention/base/device_info.h"
#include "attention/planner/device_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "attention/planner/partition_benchmark_shapes.h"
#include "attention/planner/work_partition.h"
#include "benchmark/benchmark.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"

namespace paged_attention {
namespace {

// A DECODE batch of `batch` requests with `context` tokens each (kept per
// argument set, so the pool is built once).
const Scenario& DecodeScenario(int32_t batch, int32_t context, int32_t page_size) {
  static auto* cache = new std::map<std::tuple<int32_t, int32_t, int32_t>, Scenario>();
  const auto key = std::make_tuple(batch, context, page_size);
  auto it = cache->find(key);
  if (it == cache->end()) {
    cache->clear();  // one pool at a time: the largest are gigabytes
    ScenarioSpec spec;
    spec.mode = ForwardMode::kDecode;
    spec.convention = SeqLensConvention::kIncludesNewTokens;
    spec.page_size = page_size;
    spec.prefix_lens.assign(batch, context - 1);
    spec.new_tokens.assign(batch, 1);
    spec.seed = 1;
    it = cache->emplace(key, BuildScenario(spec).value()).first;
  }
  return it->second;
}

void SetCounters(benchmark::State& state, int32_t batch, int32_t context, int32_t page_size) {
  state.counters["page_table_entries"] =
      static_cast<double>(batch) * ((context + page_size - 1) / page_size);
}

// 32 query heads over 8 KV heads at head_dim 128 on an H200-sized GPU.
PlannerConfig Config() { return HostPlannerConfig(32, 8, 128, AttentionOptions{}); }

void BM_PlanOnHost(benchmark::State& state) {
  const int32_t batch = state.range(0), context = state.range(1), page_size = state.range(2);
  const Scenario& scenario = DecodeScenario(batch, context, page_size);
  for (auto _ : state) {
    absl::StatusOr<HostMetadata> plan = PlanEager(scenario.batch, *scenario.pool, Config());
    if (!plan.ok()) state.SkipWithError(std::string(plan.status().message()).c_str());
    benchmark::DoNotOptimize(plan);
  }
  SetCounters(state, batch, context, page_size);
}

// Host time of DeviceMetadata::Upload for `shape` (manual time: the host side
// only; the stream is drained outside the timed region).
void TimeUploads(benchmark::State& state, const PlanShape& shape, const Scenario& scenario) {
  if (VisibleGpuCount() == 0) {
    state.SkipWithError("needs a GPU (device page-table gather)");
    return;
  }
  absl::StatusOr<DeviceTableCopy> table = DeviceTableCopy::Create(*scenario.pool);
  if (!table.ok()) {
    state.SkipWithError(std::string(table.status().message()).c_str());
    return;
  }
  absl::StatusOr<std::unique_ptr<DeviceMetadata>> metadata =
      DeviceMetadata::Create(shape, Config(), table->table());
  if (!metadata.ok()) {
    state.SkipWithError(std::string(metadata.status().message()).c_str());
    return;
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const absl::StatusOr<PlanSummary> uploaded = (*metadata)->Upload(scenario.batch, stream);
    const auto stop = std::chrono::steady_clock::now();
    if (!uploaded.ok()) state.SkipWithError(std::string(uploaded.status().message()).c_str());
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    cudaStreamSynchronize(stream);  // keep the queue short; outside the timed region
  }
  metadata->reset();
  cudaStreamDestroy(stream);
}

void BM_PlanEager(benchmark::State& state) {
  const int32_t batch = state.range(0), context = state.range(1), page_size = state.range(2);
  const Scenario& scenario = DecodeScenario(batch, context, page_size);
  TimeUploads(state, ExactShape(scenario.batch), scenario);
  SetCounters(state, batch, context, page_size);
}

void BM_PlanReplay(benchmark::State& state) {
  const int32_t batch = state.range(0), context = state.range(1), page_size = state.range(2);
  const Scenario& scenario = DecodeScenario(batch, context, page_size);
  TimeUploads(state, CaptureShape(*scenario.pool, batch, 1), scenario);
  SetCounters(state, batch, context, page_size);
}

// Context 4k against 128k at the same batch shows whether a path's host cost
// grows with context; page 1 is the page table's worst case.
void PlannerArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "context", "page_size"});
  for (int64_t page_size : {1, 16}) {
    for (int64_t context : {4096, 131072}) {
      for (int64_t batch : {1, 8, 64, 256, 1024}) {
        // Past 2^27 token slots the pool alone needs gigabytes of host memory.
        if (batch * context > (int64_t{1} << 27)) continue;
        b->Args({batch, context, page_size});
      }
    }
  }
}

// The partition alone for `batch` requests of `q_len` new tokens and `context`
// keys each, at 32/8 heads, head_dim 128 and 264 workers (an H200 at two CTAs
// per SM): the part of planning whose cost depends on the plan's shape. Units
// of more than 64 rows per KV head (q_len x 4 > 64) are dealt in co-read
// groups, which scores up to four candidate plans and writes one in up to four
// passes.
void BM_PartitionWork(benchmark::State& state) {
  const int32_t batch = state.range(0), q_len = state.range(1), context = state.range(2);
  PartitionConfig config;
  config.num_kv_heads = 8;
  config.group = 4;
  config.head_dim = 128;
  config.num_workers = 264;
  std::vector<int32_t> cu_seqlens_q(batch + 1), cache_seqlens(batch, context);
  for (int32_t i = 0; i <= batch; ++i) cu_seqlens_q[i] = i * q_len;
  const int64_t units = MaxUnits(config, batch, q_len);
  std::vector<int32_t> worker_begin(config.num_workers + 1);
  std::vector<WorkSegment> segments(MaxSegments(config, units));
  std::vector<MergeTask> merge_tasks(MaxMergeTasks(config, units));
  const PartitionBuffers buffers{absl::MakeSpan(worker_begin), absl::MakeSpan(segments),
                                 absl::MakeSpan(merge_tasks)};
  PartitionCounts counts;
  for (auto _ : state) {
    absl::StatusOr<PartitionCounts> partition =
        PartitionWork(cu_seqlens_q, cache_seqlens, config, buffers);
    if (!partition.ok()) {
      state.SkipWithError(std::string(partition.status().message()).c_str());
      return;
    }
    counts = *partition;
    benchmark::DoNotOptimize(counts);
  }
  state.counters["units"] = counts.num_units;
  state.counters["segments"] = counts.num_segments;
  state.counters["merge_tasks"] = counts.num_merge_tasks;
}

void PartitionArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "q_len", "context"});
  for (const PartitionBenchmarkShape& shape : kPartitionBenchmarkShapes) {
    b->Args({shape.batch, shape.q_len, shape.context});
  }
}

BENCHMARK(BM_PartitionWork)->Apply(PartitionArgs)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_PlanEager)->Apply(PlannerArgs)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanReplay)->Apply(PlannerArgs)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanOnHost)->Apply(PlannerArgs)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace paged_attention
