#include "attention/planner/metadata_planner.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "tools/batch_scenario.h"

namespace paged_attention {
namespace {

constexpr double kExactTolerance = 1e-9;  // float64 paged vs float64 logical

Scenario MustBuild(const ScenarioSpec& spec) {
  absl::StatusOr<Scenario> scenario = BuildScenario(spec);
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return std::move(scenario).value();
}

HostMetadata MustPlan(const Scenario& scenario) {
  absl::StatusOr<HostMetadata> plan = PlanEager(scenario.batch, *scenario.pool, PlannerConfig{});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return std::move(plan).value();
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
  const Scenario scenario = MustBuild(spec);
  const HostMetadata plan = MustPlan(scenario);
  EXPECT_EQ(plan.cache_seqlens, (std::vector<int32_t>{101, 13}));
  EXPECT_EQ(plan.cu_seqlens_k, (std::vector<int32_t>{0, 101, 114}));
  EXPECT_EQ(plan.cu_seqlens_q, (std::vector<int32_t>{0, 1, 9}));
  EXPECT_EQ(plan.max_seq_len_k, 101);
  EXPECT_EQ(plan.max_seq_len_q, 8);
  EXPECT_EQ(plan.total_q_tokens, 9);
  EXPECT_EQ(plan.num_pages_per_request, (std::vector<int32_t>{26, 4}));
  EXPECT_EQ(plan.max_pages_per_request, 26);
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
    EXPECT_EQ(plan.cu_seqlens_k, (std::vector<int32_t>{0, 104, 113, 154}));
    EXPECT_EQ(plan.cu_seqlens_q, (std::vector<int32_t>{0, 4, 8, 12}));
    EXPECT_EQ(plan.max_seq_len_k, 104);
    EXPECT_EQ(plan.max_pages_per_request, 26);
  }
}

TEST(MetadataPlannerTest, IdleBatchPlansToNothing) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kIdle;
  const HostMetadata plan = MustPlan(MustBuild(spec));
  EXPECT_EQ(plan.batch_size, 0);
  EXPECT_EQ(plan.total_q_tokens, 0);
  EXPECT_EQ(plan.cu_seqlens_q, (std::vector<int32_t>{0}));
  EXPECT_TRUE(plan.page_table.empty());
}

TEST(MetadataPlannerTest, MalformedBatchIsRejectedByValidation) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDecode;
  spec.prefix_lens = {10, 20};
  spec.new_tokens = {1, 1};
  Scenario scenario = MustBuild(spec);
  scenario.batch.requests[1].prefix_len += 1;  // now the written slot is not at the prefix
  const absl::StatusOr<HostMetadata> plan =
      PlanEager(scenario.batch, *scenario.pool, PlannerConfig{});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("request 1"), absl::string_view::npos) << plan.status();
}

// Every mode x convention x page size: the metadata matches the pool's own
// slot mapping, and the float64 executor over it equals the logical reference.
class PlannerSweepTest : public ::testing::TestWithParam<std::tuple<ModeCase, int32_t>> {};

TEST_P(PlannerSweepTest, MetadataAndHostExecutorMatchTheLogicalReference) {
  const auto& [mode_case, page_size] = GetParam();
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  rng.seed(seed);
  for (int trial = 0; trial < 8; ++trial) {
    const Scenario scenario = MustBuild(RandomScenarioSpec(mode_case, page_size, {}, rng));
    const HostMetadata plan = MustPlan(scenario);
    const BatchDescriptor& batch = scenario.batch;
    ASSERT_EQ(plan.batch_size, batch.batch_size());
    int32_t max_k = 0;
    for (int32_t i = 0; i < batch.batch_size(); ++i) {
      const RequestEntry& request = batch.requests[i];
      const int32_t k_len = request.prefix_len + request.new_tokens;
      max_k = std::max(max_k, k_len);
      ASSERT_EQ(plan.cache_seqlens[i], k_len) << "request " << i;
      ASSERT_EQ(plan.cu_seqlens_k[i + 1] - plan.cu_seqlens_k[i], k_len);
      ASSERT_EQ(plan.cu_seqlens_q[i + 1] - plan.cu_seqlens_q[i], request.new_tokens);
      for (int32_t t = 0; t < k_len; t += 1) {
        const int32_t page = plan.page_table[i * plan.max_pages_per_request + t / page_size];
        ASSERT_EQ(page * page_size + t % page_size, scenario.pool->Slot(request.row, t).value())
            << "request " << i << " token " << t;
      }
    }
    ASSERT_EQ(plan.max_seq_len_k, max_k);
    if (batch.batch_size() == 0) continue;

    const AttentionData data =
        MakeAttentionData(*scenario.pool, batch, 4, 2, 8, DType::kBFloat16, rng()).value();
    const AttentionOptions options = DefaultOptions(8);
    const absl::StatusOr<HostAttentionResult> paged =
        RunHostPagedAttention(HostArgs(data, plan.View(), options));
    ASSERT_TRUE(paged.ok()) << paged.status();
    const HostAttentionResult logical =
        AttendLogicalSequences(LogicalRequestsOf(*scenario.pool, batch, data), 4, 2, 8, options);
    EXPECT_LE(MaxAbsDiff(paged->out, logical.out), kExactTolerance);
    EXPECT_LE(MaxAbsDiff(paged->lse, logical.lse), kExactTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, PlannerSweepTest,
                         ::testing::Combine(::testing::ValuesIn(AllModeCases()),
                                            ::testing::Values(1, 3, 16, 64)),
                         [](const ::testing::TestParamInfo<std::tuple<ModeCase, int32_t>>& info) {
                           return std::get<0>(info.param).Name() + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

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
  spec.seed = std::random_device{}();
  const Scenario scenario = MustBuild(spec);
  const HostMetadata plan = MustPlan(scenario);
  const AttentionData data =
      MakeAttentionData(*scenario.pool, scenario.batch, 8, 2, 32, DType::kBFloat16, spec.seed)
          .value();
  const AttentionOptions options = DefaultOptions(32);
  const HostAttentionResult logical = AttendLogicalSequences(
      LogicalRequestsOf(*scenario.pool, scenario.batch, data), 8, 2, 32, options);

  const HostAttentionResult ours =
      RunHostPagedAttention(HostArgs(data, plan.View(), options)).value();
  EXPECT_LE(MaxAbsDiff(ours.out, logical.out), kExactTolerance);

  HostMetadata buggy = plan;  // cache_seqlens = prefix only, as upstream's fixture had it
  for (int32_t i = 0; i < buggy.batch_size; ++i) {
    buggy.cache_seqlens[i] = scenario.batch.requests[i].prefix_len;
  }
  const HostAttentionResult prefix_only =
      RunHostPagedAttention(HostArgs(data, buggy.View(), options)).value();
  EXPECT_GT(MaxAbsDiff(prefix_only.out, logical.out), 0.2);
}

}  // namespace
}  // namespace paged_attention
