// Tree speculation (topk > 1) through the planner and the float64 executors:
// the plan's tree mask words, executed the way the kernels run the work plan,
// must equal the plain reference that reads visibility straight from the
// trees' parent links; a chain tree must equal the chain (topk = 1) path bit
// for bit; capture shapes carry the masks and replay equals eager.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "attention/planner/metadata_planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/batch_scenario.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "testing/test_seed.h"

namespace paged_attention {
namespace {

using ::testing::HasSubstr;

constexpr double kExactTolerance = 1e-9;  // float64 paged vs float64 logical
constexpr int32_t kHeads = 4, kKvHeads = 2, kHeadDim = 64;

Scenario MustBuild(const ScenarioSpec& spec) {
  absl::StatusOr<Scenario> scenario = BuildScenario(spec);
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return std::move(scenario).value();
}

// Few workers, so requests get cut into segments and merged too.
PlannerConfig SmallConfig(std::mt19937_64& rng) {
  PlannerConfig config = HostPlannerConfig(kHeads, kKvHeads, kHeadDim);
  config.num_sms = 1 + rng() % 5;
  return config;
}

// Plans `scenario` on `shape` and checks both float64 executors over the plan
// against the parent-link reference. Returns the planned result.
HostAttentionResult CheckAgainstReference(const Scenario& scenario, const PlannerConfig& config,
                                          const PlanShape& shape, uint64_t seed) {
  const ValidatedBatch& batch = scenario.batch;
  absl::StatusOr<HostMetadata> plan = PlanOnHost(batch, *scenario.pool, config, shape);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  AttentionData data =
      MakeAttentionData(*scenario.pool, batch, kHeads, kKvHeads, kHeadDim, DType::kBFloat16, seed)
          .value();
  const AttentionOptions options = DefaultOptions(kHeadDim);
  const HostAttentionResult logical = AttendLogicalSequences(
      LogicalRequestsOf(*scenario.pool, batch, data), kHeads, kKvHeads, kHeadDim, options);
  // A capture shape plans padding tokens after the live ones.
  data.q.resize(int64_t{plan->View().total_q_tokens} * kHeads * kHeadDim * 2, 0);
  const int64_t live_tokens = batch.descriptor().num_tokens();
  const absl::StatusOr<HostAttentionResult> paged =
      RunHostPagedAttention(HostArgs(data, plan->View(), options));
  EXPECT_TRUE(paged.ok()) << paged.status();
  const absl::StatusOr<HostAttentionResult> planned =
      RunHostPlannedAttention(HostArgs(data, plan->View(), options));
  EXPECT_TRUE(planned.ok()) << planned.status();
  if (!paged.ok() || !planned.ok()) return {};
  EXPECT_LE(MaxAbsDiff(paged->out, logical.out, live_tokens * kHeads * kHeadDim), kExactTolerance);
  EXPECT_LE(MaxAbsDiff(planned->out, logical.out, live_tokens * kHeads * kHeadDim),
            kExactTolerance);
  for (int32_t h = 0; h < kHeads; ++h) {
    const int64_t stride = plan->View().total_q_tokens;
    for (int64_t t = 0; t < live_tokens; ++t) {
      EXPECT_NEAR(planned->lse[h * stride + t], logical.lse[h * live_tokens + t], kExactTolerance)
          << "head " << h << " token " << t;
    }
  }
  return *planned;
}

class TreeVerifyPlannerTest
    : public ::testing::TestWithParam<std::tuple<int32_t /*page*/, int32_t /*nd*/>> {};

TEST_P(TreeVerifyPlannerTest, MixedTreesMatchTheParentLinkReference) {
  const auto& [page_size, nd] = GetParam();
  std::mt19937_64 rng(TestSeed() + page_size * 100 + nd);
  for (int32_t topk : {2, 4, 8}) {
    SCOPED_TRACE(::testing::Message() << "topk " << topk);
    // Every shape in one batch, in a rotating order.
    std::vector<TreeShape> shapes(std::begin(kAllTreeShapes), std::end(kAllTreeShapes));
    std::rotate(shapes.begin(), shapes.begin() + topk % shapes.size(), shapes.end());
    const Scenario scenario = MustBuild(TreeVerifySpec(shapes, nd, topk, page_size, 150, rng));
    ASSERT_TRUE(scenario.batch.has_tree());
    const PlannerConfig config = SmallConfig(rng);
    const PlanShape exact = ExactShape(scenario.batch);
    EXPECT_EQ(exact.tree_masks, TreeMasks::kPerQueryToken);
    const uint64_t data_seed = rng();
    const HostAttentionResult eager = CheckAgainstReference(scenario, config, exact, data_seed);
    // The host twin of a CUDA-graph replay: the same plan, bit for bit.
    const PlanShape capture = CaptureShape(*scenario.pool, 6, nd, TreeMasks::kPerQueryToken);
    const HostAttentionResult replay = CheckAgainstReference(scenario, config, capture, data_seed);
    const int64_t live = int64_t{scenario.batch.descriptor().num_tokens()} * kHeads * kHeadDim;
    EXPECT_EQ(FirstDifference(replay.out, eager.out, live), "");
  }
}

INSTANTIATE_TEST_SUITE_P(PagesAndDrafts, TreeVerifyPlannerTest,
                         ::testing::Combine(::testing::Values(1, 16, 64),
                                            ::testing::Values(4, 16, 64)),
                         [](const auto& info) {
                           return "P" + std::to_string(std::get<0>(info.param)) + "_nd" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(TreePlannerTest, DraftDecodeStepsMatchTheParentLinkReference) {
  std::mt19937_64 rng(TestSeed());
  for (int32_t page_size : {1, 16, 64}) {
    for (int32_t topk : {2, 4, 8}) {
      for (int32_t step : {0, 1, 3}) {
        SCOPED_TRACE(::testing::Message()
                     << "page " << page_size << " topk " << topk << " step " << step);
        const Scenario scenario =
            MustBuild(TreeDraftDecodeSpec(3, topk, step, page_size, 120, rng));
        ASSERT_TRUE(scenario.batch.has_tree());
        EXPECT_EQ(scenario.batch.tree_draft_keys(), (step + 1) * topk);
        CheckAgainstReference(scenario, SmallConfig(rng), ExactShape(scenario.batch), rng());
      }
    }
  }
}

// The plan's words: the draft-key masks moved to the top of the last 64 keys
// with the committed keys below them visible.
TEST(TreePlannerTest, MaskWordsPutTheDraftKeysAtTheTop) {
  std::mt19937_64 rng(TestSeed());
  ScenarioSpec spec = TreeVerifySpec({TreeShape::kBalanced}, 4, 2, 16, 100, rng);
  const Scenario scenario = MustBuild(spec);
  std::mt19937_64 config_rng(1);
  const HostMetadata plan =
      PlanEager(scenario.batch, *scenario.pool, SmallConfig(config_rng)).value();
  // Balanced, topk 2: nodes 0, 1 under the root, 2, 3 under node 0.
  const uint64_t committed = (uint64_t{1} << 60) - 1;
  EXPECT_EQ(plan.tree_mask,
            (std::vector<uint64_t>{
                committed | uint64_t{0b0001} << 60, committed | uint64_t{0b0010} << 60,
                committed | uint64_t{0b0101} << 60, committed | uint64_t{0b1001} << 60}));
  EXPECT_NE(plan.View().tree_mask, nullptr);
}

// A chain given as a tree is the causal chain: the same output bit for bit as
// the topk = 1 verify of the same pool and data (planned, like every tree,
// without KV head pairs: at nd = 1 the chain's shape would take them).
TEST(TreePlannerTest, ChainTreeEqualsChainVerifyBitForBit) {
  for (int32_t nd : {1, 5, 64}) {
    std::mt19937_64 rng(TestSeed() + nd);
    ScenarioSpec tree = TreeVerifySpec({TreeShape::kChain, TreeShape::kChain}, nd, 3, 16, 200, rng);
    ScenarioSpec chain = tree;
    chain.spec.topk = 1;
    chain.spec.tree_parents.clear();
    const Scenario tree_scenario = MustBuild(tree);
    const Scenario chain_scenario = MustBuild(chain);
    ASSERT_TRUE(tree_scenario.batch.has_tree());
    ASSERT_FALSE(chain_scenario.batch.has_tree());
    PlannerConfig config = HostPlannerConfig(kHeads, kKvHeads, kHeadDim);
    config.kv_head_pairs = false;
    const HostMetadata tree_plan =
        PlanEager(tree_scenario.batch, *tree_scenario.pool, config).value();
    const HostMetadata chain_plan =
        PlanEager(chain_scenario.batch, *chain_scenario.pool, config).value();
    const AttentionData data = MakeAttentionData(*tree_scenario.pool, tree_scenario.batch, kHeads,
                                                 kKvHeads, kHeadDim, DType::kFloat16, 5)
                                   .value();
    const AttentionOptions options = DefaultOptions(kHeadDim);
    const HostAttentionResult a =
        RunHostPlannedAttention(HostArgs(data, tree_plan.View(), options)).value();
    const HostAttentionResult b =
        RunHostPlannedAttention(HostArgs(data, chain_plan.View(), options)).value();
    EXPECT_EQ(FirstDifference(a.out, b.out, a.out.size()), "") << "nd " << nd;
    EXPECT_EQ(FirstDifference(a.lse, b.lse, a.lse.size()), "") << "nd " << nd;
  }
}

TEST(TreePlannerTest, ShapeWithoutTreeMasksRefusesATreeBatch) {
  std::mt19937_64 rng(TestSeed());
  const Scenario scenario = MustBuild(TreeVerifySpec({TreeShape::kRandom}, 8, 4, 16, 100, rng));
  const absl::StatusOr<HostMetadata> plan =
      PlanOnHost(scenario.batch, *scenario.pool, HostPlannerConfig(kHeads, kKvHeads, kHeadDim),
                 CaptureShape(*scenario.pool, 4, 8));
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("TARGET_VERIFY batch is a tree (spec.topk = 4) but the plan shape has no "
                        "tree masks"));
}

// A graph captured for trees also serves chain batches: every bit set is the
// causal mask, so the result equals the plan without masks (planned, like
// every tree, without KV head pairs: the 16 rows of this verify would take
// them without masks).
TEST(TreePlannerTest, TreeShapeServesChainBatchesUnchanged) {
  std::mt19937_64 rng(TestSeed());
  RandomBatchLimits limits;
  const ModeCase verify{ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly};
  const Scenario scenario = MustBuild(RandomScenarioSpec(verify, 16, limits, rng));
  PlannerConfig config = HostPlannerConfig(kHeads, kKvHeads, kHeadDim);
  config.kv_head_pairs = false;
  const HostMetadata with_masks =
      PlanOnHost(
          scenario.batch, *scenario.pool, config,
          CaptureShape(*scenario.pool, 8, limits.num_draft_tokens, TreeMasks::kPerQueryToken))
          .value();
  for (uint64_t word : with_masks.tree_mask) EXPECT_EQ(word, ~uint64_t{0});
  const HostMetadata without = PlanOnHost(scenario.batch, *scenario.pool, config,
                                          CaptureShape(*scenario.pool, 8, limits.num_draft_tokens))
                                   .value();
  EXPECT_TRUE(without.tree_mask.empty());
  EXPECT_EQ(without.View().tree_mask, nullptr);
  AttentionData data = MakeAttentionData(*scenario.pool, scenario.batch, kHeads, kKvHeads, kHeadDim,
                                         DType::kBFloat16, 9)
                           .value();
  data.q.resize(int64_t{with_masks.View().total_q_tokens} * kHeads * kHeadDim * 2, 0);
  const AttentionOptions options = DefaultOptions(kHeadDim);
  const HostAttentionResult a =
      RunHostPlannedAttention(HostArgs(data, with_masks.View(), options)).value();
  const HostAttentionResult b =
      RunHostPlannedAttention(HostArgs(data, without.View(), options)).value();
  EXPECT_EQ(FirstDifference(a.out, b.out, a.out.size()), "");
}

}  // namespace
}  // namespace paged_attention
