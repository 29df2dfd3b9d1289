#include "attention/planner/metadata_planner.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/batch_scenario.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "testing/test_seed.h"

namespace paged_attention {
namespace {

constexpr double kExactTolerance = 1e-9;  // float64 paged vs float64 logical

// An H200-like geometry; planning is host-only, so any valid one works.
PlannerConfig Config(int32_t num_q_heads = 32, int32_t num_kv_heads = 8, int32_t head_dim = 128) {
  return HostPlannerConfig(num_q_heads, num_kv_heads, head_dim, AttentionOptions{});
}

Scenario MustBuild(const ScenarioSpec& spec) {
  absl::StatusOr<Scenario> scenario = BuildScenario(spec);
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return std::move(scenario).value();
}

HostMetadata MustPlan(const Scenario& scenario, const PlannerConfig& config = Config()) {
  absl::StatusOr<HostMetadata> plan = PlanEager(scenario.batch, *scenario.pool, config);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return std::move(plan).value();
}

std::vector<int32_t> Live(const std::vector<int32_t>& values, size_t count) {
  return std::vector<int32_t>(values.begin(), values.begin() + count);
}

TEST(MetadataPlannerTest, SkewedBatchUsesPerRequestSumsNotMaxPlusMax) {
  // Prefixes [100, 5], new [1, 8], P = 4: cache [101, 13], max 101 (not 108).
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDraftExtend;
  spec.convention = SeqLensConvention::kIncludesNewTokens;
  spec.page_size = 4;
  spec.prefix_lens = {100, 5};
  spec.new_tokens = {1, 8};
  spec.spec.num_draft_tokens = 8;
  spec.spec.accept_lengths = {0, 7};
  spec.seed = 7;
  const HostMetadata plan = MustPlan(MustBuild(spec));
  EXPECT_EQ(plan.cache_seqlens, (std::vector<int32_t>{101, 13}));
  EXPECT_EQ(plan.cu_seqlens_q, (std::vector<int32_t>{0, 1, 9}));
  EXPECT_EQ(plan.summary.max_seq_len_k, 101);
  EXPECT_EQ(plan.summary.max_seq_len_q, 8);
  EXPECT_EQ(plan.summary.num_q_tokens, 9);
  EXPECT_EQ(plan.NumPages(0), 26);
  EXPECT_EQ(plan.NumPages(1), 4);
  EXPECT_EQ(plan.layout.max_pages_per_request, 26);
  EXPECT_EQ(plan.View().max_seq_len_k, 101);
}

TEST(MetadataPlannerTest, DraftExtendV2ReadsPrefixPlusNewInBothConventions) {
  for (SeqLensConvention convention :
       {SeqLensConvention::kPrefixOnly, SeqLensConvention::kIncludesNewTokens}) {
    ScenarioSpec spec;
    spec.mode = ForwardMode::kDraftExtendV2;
    spec.convention = convention;
    spec.page_size = 4;
    spec.prefix_lens = {100, 5, 37};
    spec.new_tokens = {4, 4, 4};
    spec.spec.num_draft_tokens = 4;
    const HostMetadata plan = MustPlan(MustBuild(spec));
    EXPECT_EQ(plan.cache_seqlens, (std::vector<int32_t>{104, 9, 41}));
    EXPECT_EQ(plan.cu_seqlens_q, (std::vector<int32_t>{0, 4, 8, 12}));
    EXPECT_EQ(plan.summary.max_seq_len_k, 104);
    EXPECT_EQ(plan.layout.max_pages_per_request, 26);
  }
}

TEST(MetadataPlannerTest, IdleBatchPlansToNothing) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kIdle;
  const HostMetadata plan = MustPlan(MustBuild(spec));
  EXPECT_EQ(plan.View().batch_size, 0);
  EXPECT_EQ(plan.summary.num_q_tokens, 0);
  EXPECT_EQ(plan.cu_seqlens_q, (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.summary.partition.num_segments, 0);
}

TEST(MetadataPlannerTest, ConfigWithoutGeometryIsRejectedByField) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDecode;
  spec.prefix_lens = {10};
  spec.new_tokens = {1};
  const Scenario scenario = MustBuild(spec);
  const struct {
    PlannerConfig config;
    const char* field;
  } cases[] = {
      {PlannerConfig{}, "num_q_heads = 0"},
      {[] {
         PlannerConfig c = Config();
         c.num_sms = 0;
         return c;
       }(),
       "num_sms = 0"},
      {[] {
         PlannerConfig c = Config();
         c.ctas_per_sm = 0;
         return c;
       }(),
       "ctas_per_sm = 0"},
      {[] {
         PlannerConfig c = Config();
         c.head_dim = 100;
         return c;
       }(),
       "head_dim = 100"},
      {Config(30, 8), "not a multiple"},
  };
  for (const auto& c : cases) {
    const absl::Status status = PlanEager(scenario.batch, *scenario.pool, c.config).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(std::string(status.message()).find(c.field), std::string::npos) << status;
  }
}

TEST(MetadataPlannerTest, APoolOtherThanTheValidatingOneIsRejected) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDecode;
  spec.prefix_lens = {10, 20};
  spec.new_tokens = {1, 1};
  const Scenario scenario = MustBuild(spec);
  spec.max_context_len = 4096;  // another row width
  const Scenario other = MustBuild(spec);
  EXPECT_EQ(PlanEager(scenario.batch, *other.pool, Config()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Every mode x convention x page size: the metadata matches the pool's own
// slot mapping, and the float64 executors over it (plain, and following the
// work plan) equal the logical reference.
class PlannerSweepTest : public ::testing::TestWithParam<std::tuple<ModeCase, int32_t>> {};

TEST_P(PlannerSweepTest, MetadataAndPlannedExecutionMatchTheLogicalReference) {
  const auto& [mode_case, page_size] = GetParam();
  std::mt19937_64 rng(TestSeed() + page_size);
  for (int trial = 0; trial < 6; ++trial) {
    const Scenario scenario = MustBuild(RandomScenarioSpec(mode_case, page_size, {}, rng));
    // Few workers, so small batches get cut and merged too.
    PlannerConfig config = Config(4, 2, 64);
    config.num_sms = 1 + rng() % 6;
    config.pinned_splits = trial % 3 == 2 ? 3 : 0;
    const HostMetadata plan = MustPlan(scenario, config);
    const ValidatedBatch& batch = scenario.batch;
    ASSERT_EQ(plan.View().batch_size, batch.batch_size());
    int32_t max_k = 0;
    for (int32_t i = 0; i < batch.batch_size(); ++i) {
      const RequestEntry& request = batch.requests()[i];
      const int32_t k_len = request.prefix_len + request.new_tokens;
      max_k = std::max(max_k, k_len);
      ASSERT_EQ(plan.cache_seqlens[i], k_len) << "request " << i;
      ASSERT_EQ(plan.cu_seqlens_q[i + 1] - plan.cu_seqlens_q[i], request.new_tokens);
      for (int32_t t = 0; t < k_len; t += 1) {
        const int32_t page = plan.page_table[i * plan.layout.max_pages_per_request + t / page_size];
        ASSERT_EQ(page * page_size + t % page_size, scenario.pool->Slot(request.row, t).value())
            << "request " << i << " token " << t;
      }
    }
    ASSERT_EQ(plan.summary.max_seq_len_k, max_k);
    if (batch.batch_size() == 0) continue;

    const AttentionData data =
        MakeAttentionData(*scenario.pool, batch, 4, 2, 64, DType::kBFloat16, rng()).value();
    const AttentionOptions options = DefaultOptions(64);
    const HostAttentionResult logical =
        AttendLogicalSequences(LogicalRequestsOf(*scenario.pool, batch, data), 4, 2, 64, options);
    const absl::StatusOr<HostAttentionResult> paged =
        RunHostPagedAttention(HostArgs(data, plan.View(), options));
    ASSERT_TRUE(paged.ok()) << paged.status();
    EXPECT_LE(MaxAbsDiff(paged->out, logical.out), kExactTolerance);
    EXPECT_LE(MaxAbsDiff(paged->lse, logical.lse), kExactTolerance);
    const absl::StatusOr<HostAttentionResult> planned =
        RunHostPlannedAttention(HostArgs(data, plan.View(), options));
    ASSERT_TRUE(planned.ok()) << planned.status();
    EXPECT_LE(MaxAbsDiff(planned->out, logical.out), kExactTolerance);
    EXPECT_LE(MaxAbsDiff(planned->lse, logical.lse), kExactTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, PlannerSweepTest,
                         ::testing::Combine(::testing::ValuesIn(AllModeCases()),
                                            ::testing::Values(1, 3, 16, 64)),
                         [](const ::testing::TestParamInfo<std::tuple<ModeCase, int32_t>>& info) {
                           return std::get<0>(info.param).Name() + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

// A capture shape (CUDA-graph capacity) plans the live rows exactly as the
// eager plan does, pads the rest with keyless rows whose tokens are zero-filled,
// and a sequence of batches on one shape never sees stale state. With KV head
// pairs (head_dim 64 here) the two shapes must pair alike for that: trial 0
// turns pairs off, trial 1 keeps them where both shapes take them (decode).
TEST(MetadataPlannerTest, CaptureShapePlansLiveRowsLikeEagerAndPadsTheRest) {
  std::mt19937_64 rng(TestSeed());
  RandomBatchLimits limits;
  limits.max_batch_size = 6;
  for (const ModeCase& mode_case : AllModeCases()) {
    SCOPED_TRACE(mode_case.Name());
    for (int trial = 0; trial < 2; ++trial) {
      limits.max_prefix = trial % 2 == 0 ? 300 : 20;
      ScenarioSpec spec = RandomScenarioSpec(mode_case, 16, limits, rng);
      spec.max_context_len = 8192;
      spec.max_requests = 10;
      const Scenario scenario = MustBuild(spec);
      const int32_t max_q = MaxQLenFor(mode_case, limits);
      const PlanShape capture = CaptureShape(*scenario.pool, /*max_batch_size=*/8, max_q);
      PlannerConfig config = Config(4, 2, 64);
      config.num_sms = 3;
      config.kv_head_pairs = trial == 1 && KvHeadsPerUnit(config, capture) ==
                                               KvHeadsPerUnit(config, ExactShape(scenario.batch));
      const HostMetadata eager = MustPlan(scenario, config);
      absl::StatusOr<HostMetadata> padded =
          PlanOnHost(scenario.batch, *scenario.pool, config, capture);
      ASSERT_TRUE(padded.ok()) << padded.status();
      const int32_t live = scenario.batch.batch_size();
      // The same work plan, bit for bit.
      EXPECT_EQ(eager.worker_begin, padded->worker_begin);
      const PartitionCounts& counts = eager.summary.partition;
      ASSERT_EQ(counts.num_segments, padded->summary.partition.num_segments);
      for (int32_t s = 0; s < counts.num_segments; ++s) {
        EXPECT_EQ(std::memcmp(&eager.segments[s], &padded->segments[s], sizeof(WorkSegment)), 0);
      }
      EXPECT_EQ(Live(padded->cache_seqlens, live), eager.cache_seqlens);
      // Padding rows: the dummy row, no keys, max_q queries, zero-filled.
      for (int32_t i = live; i < 8; ++i) {
        EXPECT_EQ(padded->rows[i], 0);
        EXPECT_EQ(padded->cache_seqlens[i], 0);
        EXPECT_EQ(padded->cu_seqlens_q[i + 1] - padded->cu_seqlens_q[i], max_q);
      }
      EXPECT_EQ(padded->counters[kPlanZeroFillBegin], eager.summary.num_q_tokens);
      EXPECT_EQ(padded->counters[kPlanZeroFillEnd], padded->cu_seqlens_q[8]);
      if (live == 0) continue;
      const AttentionData data =
          MakeAttentionData(*scenario.pool, scenario.batch, 4, 2, 64, DType::kFloat16, rng())
              .value();
      const AttentionOptions options = DefaultOptions(64);
      const HostAttentionResult a =
          RunHostPlannedAttention(HostArgs(data, eager.View(), options)).value();
      AttentionData padded_data = data;
      padded_data.q.resize(int64_t{padded->View().total_q_tokens} * 4 * 64 * 2, 0);
      const absl::StatusOr<HostAttentionResult> b =
          RunHostPlannedAttention(HostArgs(padded_data, padded->View(), options));
      ASSERT_TRUE(b.ok()) << b.status();
      const int64_t live_tokens = eager.summary.num_q_tokens;
      EXPECT_EQ(MaxAbsDiff(a.out, b->out, live_tokens * 4 * 64), 0.0);
    }
  }
}

// Units of KV head pairs: head_dim 64, an even KV head count, at most
// 2 x kFusedMergeMaxRows packed rows of two heads' queries (what the decode
// kernel merges by itself for pairs), no tree masks, and the config's consent.
TEST(MetadataPlannerTest, KvHeadPairsFollowTheShape) {
  auto pairs = [](int32_t hq, int32_t hkv, int32_t head_dim, int32_t max_q,
                  TreeMasks tree = TreeMasks::kNone, bool allowed = true) {
    PlannerConfig config = Config(hq, hkv, head_dim);
    config.kv_head_pairs = allowed;
    PlanShape shape;
    shape.max_batch_size = 4;
    shape.max_q_len = max_q;
    shape.max_kv_len = 100;
    shape.page_size = 16;
    shape.tree_masks = tree;
    return KvHeadsPerUnit(config, shape);
  };
  EXPECT_EQ(pairs(32, 8, 64, 1), 2);   // decode at group 4: 8 rows
  EXPECT_EQ(pairs(32, 8, 64, 2), 2);   // 16 rows
  EXPECT_EQ(pairs(32, 8, 64, 3), 1);   // 24 rows
  EXPECT_EQ(pairs(16, 8, 64, 4), 2);   // group 2
  EXPECT_EQ(pairs(16, 8, 64, 5), 1);   // 20 rows
  EXPECT_EQ(pairs(8, 8, 64, 8), 2);    // MHA, q = 8
  EXPECT_EQ(pairs(8, 8, 64, 9), 1);    // 18 rows
  EXPECT_EQ(pairs(64, 8, 64, 1), 2);   // group 8: 16 rows
  EXPECT_EQ(pairs(64, 8, 64, 2), 1);   // 32 rows
  EXPECT_EQ(pairs(12, 3, 64, 1), 1);   // an odd KV head count
  EXPECT_EQ(pairs(32, 8, 128, 1), 1);  // head_dim 128 rows are 256 bytes already
  EXPECT_EQ(pairs(32, 8, 64, 0), 1);   // nothing to plan
  EXPECT_EQ(pairs(32, 8, 64, 1, TreeMasks::kPerQueryToken), 1);
  EXPECT_EQ(pairs(32, 8, 64, 1, TreeMasks::kNone, /*allowed=*/false), 1);
}

// A head_dim 64 decode plan of KV head pairs names each pair by its first KV
// head / 2, with two groups' rows per unit (8 at 32/8, 16 at 64/8), and the
// float64 executor following it equals the logical reference, as does the
// plan of single heads.
TEST(MetadataPlannerTest, KvHeadPairsPlanTwoHeadsPerUnit) {
  std::mt19937_64 rng(TestSeed());
  RandomBatchLimits limits;
  limits.max_batch_size = 5;
  limits.max_prefix = 900;
  const ModeCase decode{ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens};
  for (int trial = 0; trial < 8; ++trial) {
    const int32_t hq = trial % 2 == 0 ? 32 : 64;
    const Scenario scenario = MustBuild(RandomScenarioSpec(decode, 16, limits, rng));
    if (scenario.batch.batch_size() == 0) continue;
    const AttentionData data =
        MakeAttentionData(*scenario.pool, scenario.batch, hq, 8, 64, DType::kBFloat16, rng())
            .value();
    const AttentionOptions options = DefaultOptions(64);
    const HostAttentionResult logical = AttendLogicalSequences(
        LogicalRequestsOf(*scenario.pool, scenario.batch, data), hq, 8, 64, options);
    for (const bool allowed : {true, false}) {
      SCOPED_TRACE(
          absl::StrCat("trial ", trial, " heads ", hq, "/8", allowed ? " pairs" : " single heads"));
      PlannerConfig config = Config(hq, 8, 64);
      config.num_sms = 1 + trial / 2;  // few workers: units get cut and merged too
      config.kv_head_pairs = allowed;
      const HostMetadata plan = MustPlan(scenario, config);
      const int32_t per_unit = allowed ? 2 : 1;
      EXPECT_EQ(plan.View().plan.kv_heads_per_unit, per_unit);
      EXPECT_EQ(plan.View().plan.num_kv_heads, 8);
      EXPECT_EQ(plan.View().plan.group, hq / 8);
      EXPECT_EQ(plan.View().plan.head_dim, 64);
      for (int32_t s = 0; s < plan.summary.partition.num_segments; ++s) {
        ASSERT_GE(plan.segments[s].kv_head, 0);
        ASSERT_LT(plan.segments[s].kv_head, 8 / per_unit);
      }
      // (The executor also checks that every query row is written once.)
      const absl::StatusOr<HostAttentionResult> planned =
          RunHostPlannedAttention(HostArgs(data, plan.View(), options));
      ASSERT_TRUE(planned.ok()) << planned.status();
      EXPECT_LE(MaxAbsDiff(planned->out, logical.out), kExactTolerance);
      EXPECT_LE(MaxAbsDiff(planned->lse, logical.lse), kExactTolerance);
    }
  }
}

TEST(MetadataPlannerTest, WritePlanRejectsABatchLargerThanTheShapeAndWritesNothing) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kTargetVerify;
  spec.convention = SeqLensConvention::kPrefixOnly;
  spec.prefix_lens = {30, 40, 50};
  spec.new_tokens = {4, 4, 4};
  spec.spec.num_draft_tokens = 4;
  const Scenario scenario = MustBuild(spec);
  const PlannerConfig config = Config();
  auto try_shape = [&](const PlanShape& shape) {
    return PlanOnHost(scenario.batch, *scenario.pool, config, shape).status();
  };
  PlanShape shape = CaptureShape(*scenario.pool, 2, 4);
  EXPECT_EQ(try_shape(shape).code(), absl::StatusCode::kFailedPrecondition);
  shape = CaptureShape(*scenario.pool, 4, 3);  // 4 queries per request do not fit 3
  const absl::Status q_status = try_shape(shape);
  EXPECT_EQ(q_status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(q_status.message()).find("request 0"), std::string::npos) << q_status;
  shape = CaptureShape(*scenario.pool, 4, 4);
  shape.max_kv_len = 40;  // request 1 reads 44 keys
  EXPECT_EQ(try_shape(shape).code(), absl::StatusCode::kFailedPrecondition);

  // Spans keep their contents when the batch is rejected.
  shape = CaptureShape(*scenario.pool, 2, 4);
  std::vector<int32_t> rows(2, -7), lens(2, -7), cu(3, -7), counters(kNumPlanCounters, -7),
      begin(265, -7);
  std::vector<WorkSegment> segments(300);
  std::vector<MergeTask> merges(300);
  const absl::Status status =
      WritePlan(scenario.batch, config, shape,
                PlanSpans{absl::MakeSpan(rows), absl::MakeSpan(lens), absl::MakeSpan(cu),
                          absl::MakeSpan(counters), absl::MakeSpan(begin), absl::MakeSpan(segments),
                          absl::MakeSpan(merges)})
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rows, std::vector<int32_t>(2, -7));
  EXPECT_EQ(cu, std::vector<int32_t>(3, -7));
}

TEST(MetadataPlannerTest, LayoutRejectsShapesWhoseCountsOverflowInt32) {
  PlanShape shape;
  shape.max_batch_size = 1 << 20;
  shape.max_q_len = 1 << 12;
  shape.max_kv_len = 1024;
  shape.page_size = 16;
  const absl::Status status = LayoutFor(shape, Config()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(std::string(status.message()).find("do not fit int32"), std::string::npos);
  shape.max_q_len = 0;
  shape.page_size = 0;
  EXPECT_NE(std::string(LayoutFor(shape, Config()).status().message()).find("page_size = 0"),
            std::string::npos);
}

TEST(MetadataPlannerTest, HostGatherChecksItsSpans) {
  const std::vector<int32_t> table = {0, 1, 2, 3, 4, 5, 6, 7};  // 2 rows of width 4
  std::vector<int32_t> page_table(4, -1);
  const std::vector<int32_t> rows = {1, 0}, lens = {4, 2};
  EXPECT_TRUE(GatherPageTableOnHost(table, 4, rows, lens, 2, 2, absl::MakeSpan(page_table)).ok());
  EXPECT_EQ(page_table, (std::vector<int32_t>{2, 3, 0, -1}));
  const std::vector<int32_t> bad_row = {2, 0};
  EXPECT_EQ(GatherPageTableOnHost(table, 4, bad_row, lens, 2, 2, absl::MakeSpan(page_table)).code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<int32_t> long_len = {5, 2};
  EXPECT_EQ(
      GatherPageTableOnHost(table, 4, rows, long_len, 2, 2, absl::MakeSpan(page_table)).code(),
      absl::StatusCode::kInvalidArgument);
  std::vector<int32_t> short_table(2);  // request 1 needs entries 2 and 3
  EXPECT_EQ(GatherPageTableOnHost(table, 4, rows, lens, 2, 2, absl::MakeSpan(short_table)).code(),
            absl::StatusCode::kInvalidArgument);
}

// The upstream bug: on a DRAFT_EXTEND_V2 batch, a kernel that reads only the
// prefix rows drops the new ones. Our plan reads prefix + new.
TEST(MetadataPlannerTest, PrefixOnlyRangeIsFarOffOnDraftExtendV2AndOurPlanIsNot) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDraftExtendV2;
  spec.convention = SeqLensConvention::kPrefixOnly;
  spec.page_size = 4;
  spec.prefix_lens = {100, 5, 37, 2};
  spec.new_tokens = {4, 4, 4, 4};
  spec.spec.num_draft_tokens = 4;
  spec.seed = TestSeed();
  const Scenario scenario = MustBuild(spec);
  const HostMetadata plan = MustPlan(scenario, Config(8, 2, 64));
  const AttentionData data =
      MakeAttentionData(*scenario.pool, scenario.batch, 8, 2, 64, DType::kBFloat16, spec.seed)
          .value();
  const AttentionOptions options = DefaultOptions(64);
  const HostAttentionResult logical = AttendLogicalSequences(
      LogicalRequestsOf(*scenario.pool, scenario.batch, data), 8, 2, 64, options);

  const HostAttentionResult ours =
      RunHostPlannedAttention(HostArgs(data, plan.View(), options)).value();
  EXPECT_LE(MaxAbsDiff(ours.out, logical.out), kExactTolerance);

  HostMetadata buggy = plan;  // cache_seqlens = prefix only, as upstream's fixture had it
  for (int32_t i = 0; i < scenario.batch.batch_size(); ++i) {
    buggy.cache_seqlens[i] = scenario.batch.requests()[i].prefix_len;
  }
  const HostAttentionResult prefix_only =
      RunHostPagedAttention(HostArgs(data, buggy.View(), options)).value();
  EXPECT_GT(MaxAbsDiff(prefix_only.out, logical.out), 0.2);
}

}  // namespace
}  // namespace paged_attention
