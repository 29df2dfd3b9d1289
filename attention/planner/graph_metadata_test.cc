#include "attention/planner/graph_metadata.h"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "testing/batch_scenario.h"

// Counts heap allocations so a test can prove Replay makes none.
namespace {
std::atomic<int64_t> g_heap_allocations{0};
}  // namespace

void* operator new(size_t size) {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace paged_attention {
namespace {

// One pool layout shared by every batch a captured state replays.
constexpr int32_t kMaxBatch = 8;
constexpr int32_t kNumDraftTokens = 4;

ScenarioSpec FixedPoolSpec(ScenarioSpec spec) {
  spec.max_context_len = 2048;
  spec.num_pages = 4096;
  spec.max_requests = kMaxBatch + 4;
  return spec;
}

// Live rows of a replay equal the eager plan bit for bit; padding rows are
// the dummy row on the sink page.
void ExpectReplayMatchesEager(const HostMetadata& eager, const HostMetadata& replay,
                              int32_t max_q_len) {
  const int32_t live = eager.batch_size;
  for (int32_t i = 0; i < live; ++i) {
    ASSERT_EQ(replay.cache_seqlens[i], eager.cache_seqlens[i]) << "request " << i;
    ASSERT_EQ(replay.cu_seqlens_q[i + 1], eager.cu_seqlens_q[i + 1]) << "request " << i;
    ASSERT_EQ(replay.cu_seqlens_k[i + 1], eager.cu_seqlens_k[i + 1]) << "request " << i;
    for (int32_t j = 0; j < eager.max_pages_per_request; ++j) {
      ASSERT_EQ(replay.page_table[i * replay.max_pages_per_request + j],
                eager.page_table[i * eager.max_pages_per_request + j])
          << "request " << i << " column " << j;
    }
  }
  for (int32_t i = live; i < replay.batch_size; ++i) {
    ASSERT_EQ(replay.cache_seqlens[i], 1) << "padding row " << i;
    ASSERT_EQ(replay.cu_seqlens_q[i + 1] - replay.cu_seqlens_q[i], max_q_len);
    ASSERT_EQ(replay.page_table[i * replay.max_pages_per_request], 0) << "padding row " << i;
  }
  ASSERT_EQ(replay.max_seq_len_k, std::max(eager.max_seq_len_k, live < replay.batch_size ? 1 : 0));
}

class GraphReplaySweepTest : public ::testing::TestWithParam<std::tuple<ModeCase, int32_t>> {};

TEST_P(GraphReplaySweepTest, ReplayOfRandomBatchesMatchesEagerOnLiveRows) {
  const auto& [mode_case, page_size] = GetParam();
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  rng.seed(seed);
  RandomBatchLimits limits;
  limits.max_batch_size = kMaxBatch;
  limits.num_draft_tokens = kNumDraftTokens;
  const int32_t max_q_len = MaxQLenFor(mode_case, limits);
  std::unique_ptr<GraphMetadataState> state;
  // Alternate long and short batches on one captured state: stale page-table
  // columns from either direction would show.
  for (int trial = 0; trial < 12; ++trial) {
    limits.max_prefix = trial % 2 == 0 ? 400 : 20;
    const ScenarioSpec spec = FixedPoolSpec(RandomScenarioSpec(mode_case, page_size, limits, rng));
    const Scenario scenario = BuildScenario(spec).value();
    if (state == nullptr) {
      state = GraphMetadataState::CaptureOnHost(
                  CaptureConfigForPool(*scenario.pool, kMaxBatch, max_q_len))
                  .value();
    }
    const HostMetadata eager = PlanEager(scenario.batch, *scenario.pool, PlannerConfig{}).value();
    const absl::Status replayed = state->Replay(scenario.batch, *scenario.pool);
    ASSERT_TRUE(replayed.ok()) << replayed;
    const HostMetadata replay = state->ReadBack().value();
    ASSERT_NO_FATAL_FAILURE(ExpectReplayMatchesEager(eager, replay, max_q_len))
        << "trial " << trial;

    if (scenario.batch.batch_size() == 0) continue;
    // The executor over the replay metadata (padding included) gives the
    // reference on live rows and finite values on padding rows.
    AttentionData data =
        MakeAttentionData(*scenario.pool, scenario.batch, 4, 2, 8, DType::kFloat32, rng()).value();
    data.q.resize(int64_t{replay.total_q_tokens} * 4 * 8 * sizeof(float), 0);
    const AttentionOptions options = DefaultOptions(8);
    const HostAttentionResult paged =
        RunHostPagedAttention(HostArgs(data, state->metadata(), options)).value();
    const HostAttentionResult logical = AttendLogicalSequences(
        LogicalRequestsOf(*scenario.pool, scenario.batch, data), 4, 2, 8, options);
    ASSERT_LE(MaxAbsDiff(paged.out, logical.out, logical.out.size()), 1e-9);
    for (double value : paged.out) ASSERT_TRUE(std::isfinite(value));
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, GraphReplaySweepTest,
                         ::testing::Combine(::testing::ValuesIn(AllModeCases()),
                                            ::testing::Values(1, 3, 16, 64)),
                         [](const ::testing::TestParamInfo<std::tuple<ModeCase, int32_t>>& info) {
                           return std::get<0>(info.param).Name() + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

Scenario DraftExtendV2Scenario(std::vector<int32_t> prefixes, uint64_t seed) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDraftExtendV2;
  spec.convention = SeqLensConvention::kIncludesNewTokens;
  spec.page_size = 16;
  spec.prefix_lens = prefixes;
  spec.new_tokens.assign(prefixes.size(), kNumDraftTokens);
  spec.spec.num_draft_tokens = kNumDraftTokens;
  spec.seed = seed;
  return BuildScenario(FixedPoolSpec(spec)).value();
}

TEST(GraphMetadataTest, ReplayAllocatesNothing) {
  const Scenario first = DraftExtendV2Scenario({1000, 5, 77}, 1);
  const Scenario second = DraftExtendV2Scenario({3, 1900, 16, 31, 64}, 2);
  auto state = GraphMetadataState::CaptureOnHost(
                   CaptureConfigForPool(*first.pool, kMaxBatch, kNumDraftTokens))
                   .value();
  ASSERT_TRUE(state->Replay(first.batch, *first.pool).ok());
  const int64_t before = g_heap_allocations.load();
  for (int i = 0; i < 100; ++i) {
    const Scenario& scenario = i % 2 ? first : second;
    const absl::Status replayed = state->Replay(scenario.batch, *scenario.pool);
    if (!replayed.ok()) FAIL() << replayed;
  }
  EXPECT_EQ(g_heap_allocations.load() - before, 0);
}

TEST(GraphMetadataTest, BatchLargerThanCaptureIsFailedPreconditionAndKeepsTheLastReplay) {
  const Scenario small = DraftExtendV2Scenario({10, 20}, 3);
  std::vector<int32_t> many(kMaxBatch + 1, 8);
  const Scenario large = DraftExtendV2Scenario(many, 4);
  auto state = GraphMetadataState::CaptureOnHost(
                   CaptureConfigForPool(*small.pool, kMaxBatch, kNumDraftTokens))
                   .value();
  ASSERT_TRUE(state->Replay(small.batch, *small.pool).ok());
  const HostMetadata before = state->ReadBack().value();
  const absl::Status status = state->Replay(large.batch, *large.pool);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("9 requests exceeds the captured capacity of 8"),
            absl::string_view::npos)
      << status;
  const HostMetadata after = state->ReadBack().value();
  EXPECT_EQ(before.cache_seqlens, after.cache_seqlens);
  EXPECT_EQ(before.page_table, after.page_table);
}

TEST(GraphMetadataTest, MoreQueriesThanCapturedIsFailedPrecondition) {
  const Scenario scenario = DraftExtendV2Scenario({10, 20}, 5);
  auto state =
      GraphMetadataState::CaptureOnHost(CaptureConfigForPool(*scenario.pool, kMaxBatch, 1)).value();
  const absl::Status status = state->Replay(scenario.batch, *scenario.pool);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("request 0: 4 query tokens exceed the captured max_q_len of 1"),
            absl::string_view::npos)
      << status;
}

TEST(GraphMetadataTest, PoolWithAnotherLayoutIsFailedPrecondition) {
  const Scenario scenario = DraftExtendV2Scenario({10, 20}, 6);
  GraphCaptureConfig config = CaptureConfigForPool(*scenario.pool, kMaxBatch, kNumDraftTokens);
  config.page_size = 8;
  auto state = GraphMetadataState::CaptureOnHost(config).value();
  EXPECT_EQ(state->Replay(scenario.batch, *scenario.pool).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(GraphMetadataTest, BadCaptureConfigNamesTheField) {
  GraphCaptureConfig config;
  config.max_batch_size = 4;
  config.max_q_len = 1;
  config.page_size = 0;
  config.row_width = 64;
  config.num_rows = 8;
  const auto state = GraphMetadataState::CaptureOnHost(config);
  EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(state.status().message().find("page_size = 0"), absl::string_view::npos)
      << state.status();
}

TEST(GraphMetadataTest, MetadataHandedToTheKernelNeverChanges) {
  const Scenario first = DraftExtendV2Scenario({1000, 5, 77}, 7);
  const Scenario second = DraftExtendV2Scenario({3}, 8);
  auto state = GraphMetadataState::CaptureOnHost(
                   CaptureConfigForPool(*first.pool, kMaxBatch, kNumDraftTokens))
                   .value();
  const AttentionMetadata captured = state->metadata();
  ASSERT_TRUE(state->Replay(first.batch, *first.pool).ok());
  ASSERT_TRUE(state->Replay(second.batch, *second.pool).ok());
  const AttentionMetadata& now = state->metadata();
  EXPECT_EQ(now.cache_seqlens, captured.cache_seqlens);
  EXPECT_EQ(now.page_table, captured.page_table);
  EXPECT_EQ(now.batch_size, kMaxBatch);
  EXPECT_EQ(now.num_kv_splits, captured.num_kv_splits);
  EXPECT_EQ(state->live_batch_size(), 1);
  EXPECT_EQ(state->replay_max_seq_len_k(), 3 + kNumDraftTokens);
}

GraphCaptureConfig ValidCaptureConfig() {
  GraphCaptureConfig config;
  config.max_batch_size = 4;
  config.max_q_len = 2;
  config.page_size = 16;
  config.row_width = 64;
  config.num_rows = 8;
  return config;
}

void ExpectCaptureError(const GraphCaptureConfig& config, absl::string_view message) {
  for (const auto& state :
       {GraphMetadataState::CaptureOnHost(config),
        GraphMetadataState::CaptureOnDevice(config, reinterpret_cast<const int32_t*>(16))}) {
    EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument) << state.status();
    EXPECT_NE(state.status().message().find(message), absl::string_view::npos)
        << state.status() << "\nexpected: " << message;
  }
}

TEST(GraphMetadataTest, EveryNonPositiveCaptureFieldIsNamed) {
  for (int32_t GraphCaptureConfig::*field :
       {&GraphCaptureConfig::max_batch_size, &GraphCaptureConfig::max_q_len,
        &GraphCaptureConfig::page_size, &GraphCaptureConfig::row_width,
        &GraphCaptureConfig::num_rows}) {
    GraphCaptureConfig config = ValidCaptureConfig();
    config.*field = -2;
    ExpectCaptureError(config, " = -2 must be >= 1");
  }
  GraphCaptureConfig config = ValidCaptureConfig();
  config.num_rows = 0;
  ExpectCaptureError(config, "GraphCaptureConfig.num_rows = 0 must be >= 1");
}

TEST(GraphMetadataTest, CapacitiesWhoseMetadataOverflowsInt32AreRejected) {
  GraphCaptureConfig config = ValidCaptureConfig();
  config.max_batch_size = 1 << 20;
  config.max_q_len = 1 << 12;
  ExpectCaptureError(config,
                     "GraphCaptureConfig.max_batch_size = 1048576 * max_q_len = 4096 = 4294967296 "
                     "query tokens do not fit int32");
  config = ValidCaptureConfig();
  config.max_batch_size = 1 << 16;
  config.row_width = 1 << 16;
  ExpectCaptureError(config, "max_batch_size = 65536 * row_width = 65536 = 4294967296 key rows");
  config = ValidCaptureConfig();
  config.max_batch_size = 1;
  config.row_width = std::numeric_limits<int32_t>::max();
  ExpectCaptureError(config, "row_width = 2147483647 + page_size = 16 overflows int32");
}

// CaptureOnDevice checks its arguments before it touches the GPU.
TEST(GraphMetadataTest, CaptureOnDeviceFailsOnNullTable) {
  const auto state = GraphMetadataState::CaptureOnDevice(ValidCaptureConfig(), nullptr);
  EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(state.status().message().find("device_req_to_token is null"), absl::string_view::npos)
      << state.status();
}

TEST(GraphMetadataTest, PoolWithAnotherLayoutNamesBothLayouts) {
  const Scenario scenario = DraftExtendV2Scenario({10, 20}, 6);
  GraphCaptureConfig config = CaptureConfigForPool(*scenario.pool, kMaxBatch, kNumDraftTokens);
  config.page_size = 8;
  auto state = GraphMetadataState::CaptureOnHost(config).value();
  const absl::Status status = state->Replay(scenario.batch, *scenario.pool);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("differs from the capture (page_size 8"), absl::string_view::npos)
      << status;
}

// Replay checks only what keeps its buffers in bounds; each check names the
// request, and a rejected batch leaves the previous replay as it was.
TEST(GraphMetadataTest, ReplayRejectsRowsAndLengthsOutsideTheTable) {
  const Scenario scenario = DraftExtendV2Scenario({10, 20}, 9);
  auto state = GraphMetadataState::CaptureOnHost(
                   CaptureConfigForPool(*scenario.pool, kMaxBatch, kNumDraftTokens))
                   .value();
  ASSERT_TRUE(state->Replay(scenario.batch, *scenario.pool).ok());
  const HostMetadata before = state->ReadBack().value();
  const int32_t huge = std::numeric_limits<int32_t>::max();
  struct Case {
    RequestEntry request;
    absl::StatusCode code;
    std::string message;
  };
  const int32_t rows = scenario.pool->max_requests();
  for (const Case& c : std::vector<Case>{
           {{-1, 0, 1},
            absl::StatusCode::kInvalidArgument,
            "request 1: row -1 is outside the table"},
           {{rows, 0, 1},
            absl::StatusCode::kInvalidArgument,
            absl::StrCat("request 1: row ", rows, " is outside the table's ", rows, " rows")},
           {{1, 0, -1},
            absl::StatusCode::kInvalidArgument,
            "request 1: new_tokens = -1 is negative"},
           {{1, 0, 5},
            absl::StatusCode::kFailedPrecondition,
            "request 1: 5 query tokens exceed the captured max_q_len of 4"},
           {{1, -3, 1},
            absl::StatusCode::kInvalidArgument,
            "request 1: prefix -3 + new 1 = -2 rows"},
           {{1, 0, 0}, absl::StatusCode::kInvalidArgument, "request 1: prefix 0 + new 0 = 0 rows"},
           {{1, huge, 1},
            absl::StatusCode::kInvalidArgument,
            "request 1: prefix 2147483647 + new 1 = 2147483648 rows is outside [1, row width"},
       }) {
    BatchDescriptor batch = scenario.batch;
    batch.requests[1] = c.request;
    const absl::Status status = state->Replay(batch, *scenario.pool);
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_NE(status.message().find(c.message), absl::string_view::npos)
        << status << "\nexpected: " << c.message;
  }
  const HostMetadata after = state->ReadBack().value();
  EXPECT_EQ(before.cache_seqlens, after.cache_seqlens);
  EXPECT_EQ(before.page_table, after.page_table);
}

}  // namespace
}  // namespace paged_attention
