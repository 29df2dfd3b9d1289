// One CUDA graph, captured once, replayed 10,000 times with random batches of
// random modes (lengths, padding rows, keys much longer than in the first
// replay) and checked against an eager launch of the same batch every time:
// bit-identical when both use the captured split count, and against the
// float64 reference every 500th replay.
#include <cuda_runtime_api.h>

#include <random>

#include "attention/base/device_buffer.h"
#include "attention/kernel/paged_attention.h"
#include "attention/kernel/random_fill.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/gpu_test.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "tools/batch_scenario.h"

namespace paged_attention {
namespace {

constexpr int32_t kCapacity = 8, kMaxQLen = 4, kPageSize = 16;
constexpr int32_t kNumQHeads = 8, kNumKvHeads = 2, kHeadDim = 64;
constexpr int32_t kMaxContext = 4096, kNumPages = 4096;
constexpr DType kDType = DType::kBFloat16;

class GraphReplayStressGpuTest : public GpuTest {};

template <typename T>
DeviceBuffer MustAllocate(int64_t count, const char* what) {
  return DeviceBuffer::Allocate(std::max<int64_t>(count, 1) * sizeof(T), what).value();
}

TEST_F(GraphReplayStressGpuTest, TenThousandRandomReplaysMatchEager) {
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  rng.seed(seed);
  const int iterations =
      std::getenv("STRESS_ITERATIONS") ? std::atoi(std::getenv("STRESS_ITERATIONS")) : 10000;

  // One pool layout for every batch; K/V random on the device, kept fixed.
  PagePoolConfig pool_config{kNumPages, kPageSize, kCapacity + 2, kMaxContext, kMaxQLen};
  const int32_t row_width = kMaxContext + kMaxQLen;
  KvCacheLayout layout{kNumPages, kPageSize, kNumKvHeads, kHeadDim, kDType};
  DeviceBuffer k_cache = MustAllocate<uint16_t>(layout.num_elements(), "k_cache");
  DeviceBuffer v_cache = MustAllocate<uint16_t>(layout.num_elements(), "v_cache");
  ASSERT_EQ(FillRandom16(k_cache.data(), layout.num_elements(), kDType, seed, nullptr),
            cudaSuccess);
  ASSERT_EQ(FillRandom16(v_cache.data(), layout.num_elements(), kDType, seed + 1, nullptr),
            cudaSuccess);
  HostKvCache host_kv = HostKvCache::Create(layout).value();
  ASSERT_TRUE(k_cache.CopyToHost(host_kv.k_data(), host_kv.size_bytes()).ok());
  ASSERT_TRUE(v_cache.CopyToHost(host_kv.v_data(), host_kv.size_bytes()).ok());

  DeviceBuffer req_to_token =
      MustAllocate<int32_t>(int64_t{pool_config.max_requests} * row_width, "req_to_token");
  GraphCaptureConfig capture{kCapacity,
                             kMaxQLen,
                             kPageSize,
                             row_width,
                             pool_config.max_requests,
                             PlannerConfig{kNumKvHeads, 132}};
  auto state = GraphMetadataState::CaptureOnDevice(capture, req_to_token.as<int32_t>()).value();
  const AttentionMetadata graph_md = state->metadata();
  const int64_t tokens = graph_md.total_q_tokens;
  const int64_t q_elements = tokens * kNumQHeads * kHeadDim;
  DeviceBuffer q = MustAllocate<uint16_t>(q_elements, "q");
  DeviceBuffer out_graph = MustAllocate<uint16_t>(q_elements, "out_graph");
  DeviceBuffer out_eager = MustAllocate<uint16_t>(q_elements, "out_eager");
  DeviceBuffer lse = MustAllocate<float>(tokens * kNumQHeads, "lse");
  // Eager metadata buffers, sized for the capacity.
  DeviceBuffer cache_seqlens = MustAllocate<int32_t>(kCapacity, "cache_seqlens");
  DeviceBuffer cu_q = MustAllocate<int32_t>(kCapacity + 1, "cu_seqlens_q");
  DeviceBuffer cu_k = MustAllocate<int32_t>(kCapacity + 1, "cu_seqlens_k");
  DeviceBuffer page_table =
      MustAllocate<int32_t>(int64_t{kCapacity} * graph_md.max_pages_per_request, "page_table");
  const size_t workspace_bytes = WorkspaceBytes(graph_md, kNumQHeads, kHeadDim);
  DeviceBuffer workspace = MustAllocate<uint8_t>(workspace_bytes, "workspace");

  PagedAttentionArgs args;
  args.dtype = kDType;
  args.num_q_heads = kNumQHeads;
  args.num_kv_heads = kNumKvHeads;
  args.head_dim = kHeadDim;
  args.num_pages = kNumPages;
  args.q = q.data();
  args.k_cache = k_cache.data();
  args.v_cache = v_cache.data();
  args.lse = lse.as<float>();
  args.options = DefaultOptions(kHeadDim);
  PagedAttentionArgs graph_args = args;
  graph_args.out = out_graph.data();
  graph_args.metadata = graph_md;
  ASSERT_TRUE(CanImplement(graph_args).ok());

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const absl::Status launched =
      LaunchPagedAttention(graph_args, workspace.data(), workspace_bytes, stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

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
  int checked_against_reference = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    // Short batches first, then up to ~4k keys: far longer than the first replays.
    limits.max_prefix = iteration < 100 ? 30 : std::uniform_int_distribution<int32_t>(30, 800)(rng);
    const ModeCase& mode_case = modes[rng() % modes.size()];
    ScenarioSpec spec = RandomScenarioSpec(mode_case, kPageSize, limits, rng);
    spec.max_context_len = kMaxContext;
    spec.num_pages = kNumPages;
    spec.max_requests = pool_config.max_requests;
    spec.draft_headroom = kMaxQLen;
    absl::StatusOr<Scenario> scenario = BuildScenario(spec);
    ASSERT_TRUE(scenario.ok()) << scenario.status();
    const KvPagePool& pool = *scenario->pool;
    const BatchDescriptor& batch = scenario->batch;
    for (uint16_t& value : host_q) value = FloatToBFloat16(std::normal_distribution<float>()(rng));
    ASSERT_TRUE(q.Upload(host_q).ok());
    ASSERT_TRUE(
        req_to_token.CopyFromHost(pool.req_to_token().data(), pool.req_to_token().size() * 4).ok());

    // Replay: update the fixed buffers, launch the captured graph.
    ASSERT_TRUE(state->Replay(batch, pool, stream).ok());
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    // Eager: the planner's metadata with the captured split count.
    HostMetadata plan = PlanEager(batch, pool, PlannerConfig{kNumKvHeads, 132}).value();
    plan.num_kv_splits = graph_md.num_kv_splits;
    ASSERT_TRUE(cache_seqlens.Upload(plan.cache_seqlens).ok());
    ASSERT_TRUE(cu_q.Upload(plan.cu_seqlens_q).ok());
    ASSERT_TRUE(cu_k.Upload(plan.cu_seqlens_k).ok());
    ASSERT_TRUE(page_table.Upload(plan.page_table).ok());
    PagedAttentionArgs eager_args = args;
    eager_args.out = out_eager.data();
    eager_args.lse = nullptr;
    eager_args.metadata = plan.View();
    eager_args.metadata.cache_seqlens = cache_seqlens.as<int32_t>();
    eager_args.metadata.cu_seqlens_q = cu_q.as<int32_t>();
    eager_args.metadata.cu_seqlens_k = cu_k.as<int32_t>();
    eager_args.metadata.page_table = page_table.as<int32_t>();
    ASSERT_TRUE(LaunchPagedAttention(eager_args, workspace.data(), workspace_bytes, stream).ok());
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const int64_t live = int64_t{batch.num_tokens()} * kNumQHeads * kHeadDim;
    ASSERT_TRUE(out_graph.CopyToHost(got_graph.data(), live * 2).ok());
    ASSERT_TRUE(out_eager.CopyToHost(got_eager.data(), live * 2).ok());
    for (int64_t i = 0; i < live; ++i) {
      ASSERT_EQ(got_graph[i], got_eager[i])
          << "iteration " << iteration << " (" << mode_case.Name() << ") element " << i;
    }
    if (iteration % 500 == 0 && batch.batch_size() > 0) {
      AttentionData data{kNumQHeads, kNumKvHeads, kHeadDim, kDType, host_kv, {}};
      data.q.resize(live * 2);
      std::memcpy(data.q.data(), host_q.data(), live * 2);
      const HostAttentionResult reference = AttendLogicalSequences(
          LogicalRequestsOf(pool, batch, data), kNumQHeads, kNumKvHeads, kHeadDim, args.options);
      std::vector<double> got(live);
      for (int64_t i = 0; i < live; ++i) got[i] = BFloat16ToFloat(got_graph[i]);
      ASSERT_LE(MaxAbsDiff(got, reference.out), 3e-2) << "iteration " << iteration;
      ++checked_against_reference;
    }
  }
  std::printf("%d replays matched eager bit for bit; %d checked against float64 (splits %d)\n",
              iterations, checked_against_reference, graph_md.num_kv_splits);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace paged_attention
