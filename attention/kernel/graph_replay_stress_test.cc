// One CUDA graph, captured once, replayed 10,000 times with random batches of
// random modes (lengths, padding rows, keys much longer than in the first
// replays), each checked bit for bit against an eager launch of the same batch
// planned by a second DeviceMetadata, and against the float64 reference every
// 500th replay. STRESS_ITERATIONS=N shortens it (e.g. under compute-sanitizer).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "attention/base/device_buffer.h"
#include "attention/kernel/paged_attention.h"
#include "attention/planner/device_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"
#include "testing/gpu_test.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "testing/random_fill.h"
#include "testing/test_seed.h"

namespace paged_attention {
namespace {

constexpr int32_t kCapacity = 8, kMaxQLen = 4, kPageSize = 16;
constexpr int32_t kNumQHeads = 8, kNumKvHeads = 2, kHeadDim = 64;
constexpr int32_t kMaxContext = 4096, kNumPages = 4096;
constexpr DType kDType = DType::kBFloat16;

class GraphReplayStressGpuTest : public GpuTest {};

DeviceBuffer MustAllocate(int64_t bytes, const char* what) {
  return DeviceBuffer::Allocate(std::max<int64_t>(bytes, 16), what).value();
}

TEST_F(GraphReplayStressGpuTest, TenThousandRandomReplaysMatchEager) {
  std::mt19937_64 rng(TestSeed());
  const int iterations =
      std::getenv("STRESS_ITERATIONS") ? std::atoi(std::getenv("STRESS_ITERATIONS")) : 10000;
  const AttentionOptions options = DefaultOptions(kHeadDim);
  const PlannerConfig config =
      GpuPlannerConfig(kDType, kNumQHeads, kNumKvHeads, kHeadDim, options).value();

  // One pool geometry for every batch; each batch's table and data are uploaded.
  const int32_t max_requests = kCapacity + 2;
  const int32_t row_width = kMaxContext + kMaxQLen;
  KvCacheLayout layout{kNumPages, kPageSize, kNumKvHeads, kHeadDim, kDType};
  DeviceBuffer req_to_token = MustAllocate(int64_t{max_requests} * row_width * 4, "req_to_token");
  DeviceKvCache kv = DeviceKvCache::Create(layout).value();
  const DeviceRequestTable table{req_to_token.as<int32_t>(), max_requests, row_width};
  PlanShape shape;
  shape.max_batch_size = kCapacity;
  shape.max_q_len = kMaxQLen;
  shape.max_kv_len = row_width;
  shape.page_size = kPageSize;
  auto graph_metadata = DeviceMetadata::Create(shape, config, table).value();
  auto eager_metadata = DeviceMetadata::Create(shape, config, table).value();
  const AttentionMetadata& graph_md = graph_metadata->metadata();
  const int64_t tokens = graph_md.total_q_tokens;
  const int64_t q_elements = tokens * kNumQHeads * kHeadDim;
  DeviceBuffer q = MustAllocate(q_elements * 2, "q");
  DeviceBuffer out_graph = MustAllocate(q_elements * 2, "out_graph");
  DeviceBuffer out_eager = MustAllocate(q_elements * 2, "out_eager");
  DeviceBuffer lse = MustAllocate(tokens * kNumQHeads * 4, "lse");
  const size_t workspace_bytes = WorkspaceBytes(graph_md);
  DeviceBuffer workspace_graph = MustAllocate(workspace_bytes, "workspace (graph)");
  DeviceBuffer workspace_eager = MustAllocate(workspace_bytes, "workspace (eager)");

  PagedAttentionArgs args;
  args.dtype = kDType;
  args.num_q_heads = kNumQHeads;
  args.num_kv_heads = kNumKvHeads;
  args.head_dim = kHeadDim;
  args.num_pages = kNumPages;
  args.q = q.data();
  args.k_cache = kv.k_data();
  args.v_cache = kv.v_data();
  args.lse = lse.as<float>();
  args.options = options;
  PagedAttentionArgs graph_args = args;
  graph_args.out = out_graph.data();
  graph_args.metadata = graph_md;

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto graph =
      CapturedAttention::Capture(graph_args, workspace_graph.data(), workspace_bytes, stream)
          .value();

  const std::vector<ModeCase> modes = {
      {ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens},
      {ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly},
      {ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens},
      {ForwardMode::kDraftExtendV2, SeqLensConvention::kPrefixOnly},
      {ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens}};
  RandomBatchLimits limits;
  limits.max_batch_size = kCapacity;
  limits.num_draft_tokens = kMaxQLen;
  std::vector<uint16_t> host_q(q_elements), got_graph(q_elements), got_eager(q_elements);
  int checked_against_reference = 0, merged = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    // Short batches first, then up to ~4k keys: far longer than the first replays.
    limits.max_prefix = iteration < 100 ? 30 : std::uniform_int_distribution<int32_t>(30, 800)(rng);
    const ModeCase& mode_case = modes[rng() % modes.size()];
    ScenarioSpec spec = RandomScenarioSpec(mode_case, kPageSize, limits, rng);
    spec.max_context_len = kMaxContext;
    spec.num_pages = kNumPages;
    spec.max_requests = max_requests;
    spec.draft_headroom = kMaxQLen;
    spec.seed = rng();
    absl::StatusOr<Scenario> scenario = BuildScenario(spec);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    const KvPagePool& pool = *scenario->pool;
    const ValidatedBatch& batch = scenario->batch;
    // K/V: random on the device (finite everywhere), except every 500th
    // replay, which uploads the scenario's NaN-poisoned pool and is checked
    // against float64 too.
    const bool reference_check = iteration % 500 == 0 && batch.batch_size() > 0;
    AttentionData data{kNumQHeads,
                       kNumKvHeads,
                       kHeadDim,
                       kDType,
                       HostKvCache::Create(KvCacheLayout{1, 1, 1, kHeadDim, kDType}).value(),
                       {}};
    if (reference_check) {
      data =
          MakeAttentionData(pool, batch, kNumQHeads, kNumKvHeads, kHeadDim, kDType, rng()).value();
      ASSERT_TRUE(kv.Upload(data.kv).ok());
    } else if (iteration % 500 == 1 || iteration == 0) {
      ASSERT_EQ(FillRandom16(kv.k_data(), layout.num_elements(), kDType, rng(), stream),
                cudaSuccess);
      ASSERT_EQ(FillRandom16(kv.v_data(), layout.num_elements(), kDType, rng(), stream),
                cudaSuccess);
    }
    for (uint16_t& value : host_q) value = FloatToBFloat16(std::normal_distribution<float>()(rng));
    ASSERT_TRUE(q.Upload(host_q).ok());
    ASSERT_TRUE(
        req_to_token.CopyFromHost(pool.req_to_token().data(), pool.req_to_token().size() * 4).ok());

    // Replay: upload the plan into the captured buffers, launch the graph.
    ASSERT_TRUE(graph_metadata->Upload(batch, stream).ok());
    ASSERT_TRUE(graph->Launch(stream).ok());
    // Eager: the same batch through the other object, launched with its exact view.
    const PlanSummary plan = eager_metadata->Upload(batch, stream).value();
    merged += plan.partition.num_merge_tasks > 0;
    PagedAttentionArgs eager_args = args;
    eager_args.out = out_eager.data();
    eager_args.lse = nullptr;
    eager_args.metadata = eager_metadata->metadata_for(plan);
    ASSERT_TRUE(
        LaunchPagedAttention(eager_args, workspace_eager.data(), workspace_bytes, stream).ok());
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const int64_t live = int64_t{batch.descriptor().num_tokens()} * kNumQHeads * kHeadDim;
    ASSERT_TRUE(out_graph.CopyToHost(got_graph.data(), live * 2).ok());
    ASSERT_TRUE(out_eager.CopyToHost(got_eager.data(), live * 2).ok());
    ASSERT_EQ(std::memcmp(got_graph.data(), got_eager.data(), live * 2), 0)
        << "iteration " << iteration << " (" << mode_case.Name() << ")";
    if (reference_check) {
      data.q.resize(live * 2);
      std::memcpy(data.q.data(), host_q.data(), live * 2);
      const HostAttentionResult reference = AttendLogicalSequences(
          LogicalRequestsOf(pool, batch, data), kNumQHeads, kNumKvHeads, kHeadDim, options);
      std::vector<double> got(live);
      for (int64_t i = 0; i < live; ++i) got[i] = BFloat16ToFloat(got_graph[i]);
      ASSERT_LE(MaxAbsDiff(got, reference.out), 3e-2) << "iteration " << iteration;
      ++checked_against_reference;
    }
  }
  std::printf(
      "%d replays matched eager bit for bit (%d with merged units); %d checked against "
      "float64\n",
      iterations, merged, checked_against_reference);
  graph.reset();
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace paged_attention
