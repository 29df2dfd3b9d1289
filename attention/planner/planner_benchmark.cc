// Host cost of planning: BM_PlanEager (fresh buffers, host page-table gather)
// and BM_PlanReplay (CUDA-graph replay: lengths copied, page table gathered on
// the device) over batch size, context length and page size. Replay's host
// time must not grow with the context length. BM_PlanReplay needs a GPU; on a
// machine without one it reports an error and BM_PlanReplayHostGather shows
// the host twin instead.
#include <chrono>
#include <map>
#include <memory>
#include <tuple>

#include "attention/base/device_buffer.h"
#include "attention/base/device_info.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "benchmark/benchmark.h"
#include "tools/batch_scenario.h"

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

void BM_PlanEager(benchmark::State& state) {
  const int32_t batch = state.range(0), context = state.range(1), page_size = state.range(2);
  const Scenario& scenario = DecodeScenario(batch, context, page_size);
  for (auto _ : state) {
    absl::StatusOr<HostMetadata> plan = PlanEager(scenario.batch, *scenario.pool, PlannerConfig{});
    if (!plan.ok()) state.SkipWithError(std::string(plan.status().message()).c_str());
    benchmark::DoNotOptimize(plan);
  }
  SetCounters(state, batch, context, page_size);
}

GraphCaptureConfig CaptureFor(const KvPagePool& pool, int32_t batch) {
  GraphCaptureConfig config;
  config.max_batch_size = batch;
  config.max_q_len = 1;
  config.page_size = pool.page_size();
  config.row_width = pool.row_width();
  config.num_rows = pool.max_requests();
  return config;
}

void BM_PlanReplay(benchmark::State& state) {
  if (VisibleGpuCount() == 0) {
    state.SkipWithError("BM_PlanReplay needs a GPU (device page-table gather)");
    return;
  }
  const int32_t batch = state.range(0), context = state.range(1), page_size = state.range(2);
  const Scenario& scenario = DecodeScenario(batch, context, page_size);
  const KvPagePool& pool = *scenario.pool;
  DeviceBuffer table =
      DeviceBuffer::Allocate(pool.req_to_token().size() * sizeof(int32_t), "req_to_token").value();
  if (!table.CopyFromHost(pool.req_to_token().data(), table.size_bytes()).ok()) {
    state.SkipWithError("upload of req_to_token failed");
    return;
  }
  auto graph = GraphMetadataState::CaptureOnDevice(CaptureFor(pool, batch), table.as<int32_t>());
  if (!graph.ok()) {
    state.SkipWithError(std::string(graph.status().message()).c_str());
    return;
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const absl::Status replayed = (*graph)->Replay(scenario.batch, pool, stream);
    const auto stop = std::chrono::steady_clock::now();
    if (!replayed.ok()) state.SkipWithError(std::string(replayed.message()).c_str());
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    cudaStreamSynchronize(stream);  // keep the queue short; outside the timed region
  }
  cudaStreamDestroy(stream);
  SetCounters(state, batch, context, page_size);
}

void BM_PlanReplayHostGather(benchmark::State& state) {
  const int32_t batch = state.range(0), context = state.range(1), page_size = state.range(2);
  const Scenario& scenario = DecodeScenario(batch, context, page_size);
  auto graph = GraphMetadataState::CaptureOnHost(CaptureFor(*scenario.pool, batch)).value();
  for (auto _ : state) {
    const absl::Status replayed = graph->Replay(scenario.batch, *scenario.pool);
    if (!replayed.ok()) state.SkipWithError(std::string(replayed.message()).c_str());
  }
  SetCounters(state, batch, context, page_size);
}

void PlannerArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "context", "page_size"});
  for (int64_t page_size : {1, 16, 64}) {
    for (int64_t context : {4096, 32768, 131072}) {
      for (int64_t batch : {1, 8, 64, 256, 1024}) {
        // Past 2^27 token slots the pool alone needs gigabytes of host memory.
        if (batch * context > (int64_t{1} << 27)) continue;
        b->Args({batch, context, page_size});
      }
    }
  }
}

BENCHMARK(BM_PlanEager)->Apply(PlannerArgs)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanReplay)->Apply(PlannerArgs)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanReplayHostGather)->Apply(PlannerArgs)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace paged_attention
