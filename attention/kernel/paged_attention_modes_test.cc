// The kernel on what the planner makes: every forward mode, both seq_lens
// conventions, eager and CUDA-graph replay (with padding rows and one state
// replayed long-after-short), page sizes 1..256, head dims 64/128/256, bf16
// and fp16, skewed batches, and a 128k-token KV. Pools are NaN-poisoned
// outside the rows a request may read. Criterion (as FlashAttention-3): max
// abs error against the float64 reference <= 2x that of the same computation
// in PyTorch-style low-precision math and at least one output rounding step
// (LowPrecisionErrorBound), + 1e-5. Eager and replay agree bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention/planner/metadata_planner.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"
#include "testing/gpu_test.h"
#include "testing/host_executor.h"
#include "testing/kernel_batch.h"
#include "testing/random_batch.h"
#include "testing/test_seed.h"

namespace paged_attention {
namespace {

constexpr int32_t kGraphCapacity = 8;

PlannerConfig MustConfig(DType dtype, int32_t hq, int32_t hkv, int32_t head_dim,
                         const AttentionOptions& options) {
  absl::StatusOr<PlannerConfig> config = GpuPlannerConfig(dtype, hq, hkv, head_dim, options);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.value_or(PlannerConfig{});
}

// Live rows of `lse` ([heads, stride]) as [heads, live] for comparisons.
std::vector<double> LiveLse(const std::vector<double>& lse, int32_t heads, int64_t stride,
                            int64_t live) {
  std::vector<double> out;
  for (int32_t h = 0; h < heads; ++h) {
    out.insert(out.end(), lse.begin() + h * stride, lse.begin() + h * stride + live);
  }
  return out;
}

// Checks one scenario eagerly (against float64) and through CUDA-graph replay
// on a capacity with padding rows (bit-identical to eager on the live rows,
// zeros and lse -inf on the padding tokens).
void CheckScenario(const Scenario& scenario, int32_t num_q_heads, int32_t num_kv_heads,
                   int32_t head_dim, DType dtype, int32_t max_q_len, uint64_t seed,
                   const AttentionOptions& options) {
  const KvPagePool& pool = *scenario.pool;
  const ValidatedBatch& batch = scenario.batch;
  const AttentionData data =
      MakeAttentionData(pool, batch, num_q_heads, num_kv_heads, head_dim, dtype, seed).value();
  const PlannerConfig config = MustConfig(dtype, num_q_heads, num_kv_heads, head_dim, options);
  const HostMetadata plan = PlanEager(batch, pool, config).value();
  const HostAttentionResult reference = AttendLogicalSequences(
      LogicalRequestsOf(pool, batch, data), num_q_heads, num_kv_heads, head_dim, options);
  const std::vector<double> low_precision =
      LowPrecisionReference(HostArgs(data, plan.View(), options));
  const int64_t live = reference.out.size();
  const int64_t tokens = batch.descriptor().num_tokens();
  const double low_precision_error = MaxAbsDiff(low_precision, reference.out, live);

  // Eager launches, checked against the reference: the batch's own (its exact
  // shape), and, where the capture shape pairs KV heads differently (a
  // head_dim 64 batch of single-token requests in a graph captured for
  // longer ones: KvHeadsPerUnit), the same batch planned with the capture's
  // pairing, which the replay must equal bit for bit.
  auto run_eager = [&](const PlannerConfig& planner) -> absl::StatusOr<AttentionOutputs> {
    absl::StatusOr<AttentionOutputs> eager = RunKernelEager(data, pool, batch, planner, options);
    if (!eager.ok()) return eager;
    const ErrorStats eager_stats = CompareToReference(eager->out, reference.out, live);
    EXPECT_EQ(eager_stats.non_finite, 0);
    const double bound = LowPrecisionErrorBound(dtype, low_precision_error,
                                                LargestMagnitude(reference.out, live), 1e-5);
    EXPECT_LE(eager_stats.max_abs, bound)
        << "eager: " << eager_stats.ToString() << ", low-precision max abs " << low_precision_error;
    // One line per check, for the notes: how much of its bound the kernel's
    // error uses (the bound has a floor of one output rounding step, so this
    // is not the kernel test's ERRSTAT ratio to the low-precision error).
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::printf("BOUNDSTAT %s.%s kernel_max_abs %.3g lowp_max_abs %.3g bound %.3g use %.3f\n",
                test->test_suite_name(), test->name(), eager_stats.max_abs, low_precision_error,
                bound, eager_stats.max_abs / bound);
    // LSE of every live token (natural log, -inf where nothing is visible).
    for (int32_t h = 0; h < num_q_heads; ++h) {
      for (int64_t t = 0; t < tokens; ++t) {
        const double want = reference.lse[h * tokens + t];
        const double got = eager->lse[h * tokens + t];
        if (std::isinf(want)) {
          EXPECT_EQ(got, want) << "lse head " << h << " token " << t;
        } else {
          EXPECT_NEAR(got, want, 1e-3 + 1e-4 * std::fabs(want))
              << "lse head " << h << " token " << t;
        }
      }
    }
    return eager;
  };
  absl::StatusOr<AttentionOutputs> eager = run_eager(config);
  ASSERT_TRUE(eager.ok()) << eager.status();

  const PlanShape capture =
      CaptureShape(pool, kGraphCapacity, max_q_len,
                   batch.has_tree() ? TreeMasks::kPerQueryToken : TreeMasks::kNone);
  if (KvHeadsPerUnit(config, capture) != KvHeadsPerUnit(config, ExactShape(batch))) {
    PlannerConfig single_heads = config;  // the capture's pairing (a smaller max_q_len pairs)
    single_heads.kv_head_pairs = false;
    eager = run_eager(single_heads);
    ASSERT_TRUE(eager.ok()) << eager.status();
  }
  absl::StatusOr<AttentionOutputs> replay =
      RunKernelGraphReplay(data, pool, batch, capture, config, options);
  ASSERT_TRUE(replay.ok()) << replay.status();
  // Same plan: bit-identical live rows, out and lse.
  EXPECT_EQ(FirstDifference(replay->out, eager->out, live), "") << "eager and replay out differ";
  const int64_t capacity_tokens = int64_t{kGraphCapacity} * max_q_len;
  EXPECT_EQ(FirstDifference(LiveLse(replay->lse, num_q_heads, capacity_tokens, tokens),
                            LiveLse(eager->lse, num_q_heads, tokens, tokens),
                            int64_t{num_q_heads} * tokens),
            "")
      << "eager and replay lse differ";
  // Padding tokens: zeros and lse -inf (the capacity's tail past the live ones).
  const int64_t padded_tokens = tokens + int64_t{kGraphCapacity - batch.batch_size()} * max_q_len;
  for (int64_t i = live; i < padded_tokens * num_q_heads * head_dim; ++i) {
    ASSERT_EQ(replay->out[i], 0.0) << "padding output " << i;
  }
  for (int32_t h = 0; h < num_q_heads; ++h) {
    for (int64_t t = tokens; t < padded_tokens; ++t) {
      ASSERT_EQ(replay->lse[h * capacity_tokens + t], -std::numeric_limits<double>::infinity());
    }
  }
}

// Every mode case x page size; the head dim and dtype rotate with the case so
// each mode meets every head dim and both dtypes across page sizes (the full
// dtype x head dim x page size product runs in paged_attention_test).
class KernelModesGpuTest : public GpuTestWithParam<std::tuple<ModeCase, int32_t /*page*/>> {};

TEST_P(KernelModesGpuTest, MatchesFloat64ReferenceEagerAndReplay) {
  const auto& [mode_case, page_size] = GetParam();
  std::mt19937_64 rng(TestSeed() + page_size + 1000 * static_cast<int>(mode_case.mode));
  RandomBatchLimits limits;
  limits.max_batch_size = kGraphCapacity - 2;  // leave padding rows on replay
  limits.max_prefix = 200;
  limits.max_extend = 12;
  const int32_t rotation = static_cast<int32_t>(mode_case.mode) + page_size;
  for (int32_t head_dim : {64, 128, 256}) {
    const DType dtype = (rotation + head_dim / 64) % 2 ? DType::kBFloat16 : DType::kFloat16;
    const int32_t gqa = (rotation + head_dim / 64) % 3 == 0 ? 1 : 4;
    SCOPED_TRACE(::testing::Message()
                 << "head_dim " << head_dim << " " << DTypeName(dtype) << " gqa " << gqa);
    ScenarioSpec spec = RandomScenarioSpec(mode_case, page_size, limits, rng);
    spec.max_requests = kGraphCapacity + 2;
    const Scenario scenario = BuildScenario(spec).value();
    if (scenario.batch.batch_size() == 0) continue;
    CheckScenario(scenario, 2 * gqa, 2, head_dim, dtype, MaxQLenFor(mode_case, limits), rng(),
                  DefaultOptions(head_dim));
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, KernelModesGpuTest,
                         ::testing::Combine(::testing::ValuesIn(AllModeCases()),
                                            ::testing::Values(1, 3, 16, 64, 256)),
                         [](const auto& info) {
                           return std::get<0>(info.param).Name() + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

class KernelLongContextGpuTest : public GpuTest {};

TEST_F(KernelLongContextGpuTest, DraftExtendV2With128kKeysAndASkewedBatch) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDraftExtendV2;
  spec.convention = SeqLensConvention::kIncludesNewTokens;
  spec.page_size = 64;
  spec.prefix_lens = {131072 - 4, 5, 300, 17};
  spec.new_tokens = {4, 4, 4, 4};
  spec.spec.num_draft_tokens = 4;
  spec.max_requests = kGraphCapacity + 2;
  spec.seed = TestSeed();
  const Scenario scenario = BuildScenario(spec).value();
  CheckScenario(scenario, 32, 8, 128, DType::kBFloat16, 4, spec.seed, DefaultOptions(128));
}

TEST_F(KernelLongContextGpuTest, WindowAndSoftcapOnTargetVerify) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kTargetVerify;
  spec.convention = SeqLensConvention::kPrefixOnly;
  spec.page_size = 16;
  spec.prefix_lens = {5000, 3, 700};
  spec.new_tokens = {6, 6, 6};
  spec.spec.num_draft_tokens = 6;
  spec.max_requests = kGraphCapacity + 2;
  spec.seed = TestSeed();
  const Scenario scenario = BuildScenario(spec).value();
  AttentionOptions options = DefaultOptions(128);
  options.window_left = 100;
  options.softcap = 30.0f;
  CheckScenario(scenario, 16, 4, 128, DType::kBFloat16, 6, spec.seed, options);
}

// Logit caps that the logits reach and pass (Gemma 2 caps at 50, and its
// logits go past the cap), so |s / softcap| runs up to ~3 and the cap's tanh
// is checked where it bends and where it is flat. A tanh's error there is
// absolute: a capped logit is off by softcap x that error (tanh.approx.f32,
// relative error ~2^-11, would be ~0.02 of a logit at a cap of 50).
// Queries and keys are N(0, 1), so logit_std sets the logits' spread through
// the softmax scale. Decode units (q = 1), 32-row units (verify q = 8) and
// 64-row wgmma units (verify q = 16) at 32 / 8 heads, every head_dim.
TEST_F(KernelLongContextGpuTest, SoftcapWhereTanhSaturates) {
  struct Cap {
    float softcap, logit_std;
  };
  const Cap caps[] = {{50.0f, 40.0f}, {5.0f, 6.0f}, {1.0f, 2.0f}};
  int index = 0;
  for (const int32_t head_dim : {64, 128, 256}) {
    for (const Cap& cap : caps) {
      for (const int32_t q : {1, 8, 16}) {
        const DType dtype = index++ % 2 ? DType::kFloat16 : DType::kBFloat16;
        // One description for a failure's trace and the CASE line, which
        // names the case of the BOUNDSTAT lines after it in the log.
        const std::string description =
            (::testing::Message() << "head_dim " << head_dim << " " << DTypeName(dtype)
                                  << " softcap " << cap.softcap << " logit_std " << cap.logit_std
                                  << " q " << q)
                .GetString();
        SCOPED_TRACE(description);
        ScenarioSpec spec;
        spec.mode = q == 1 ? ForwardMode::kDecode : ForwardMode::kTargetVerify;
        spec.convention =
            q == 1 ? SeqLensConvention::kIncludesNewTokens : SeqLensConvention::kPrefixOnly;
        spec.page_size = 16;
        spec.prefix_lens = {1500, 37, 700};
        spec.new_tokens = {q, q, q};
        if (q > 1) spec.spec.num_draft_tokens = q;
        spec.max_requests = kGraphCapacity + 2;
        spec.seed = TestSeed() + index;
        const Scenario scenario = BuildScenario(spec).value();
        AttentionOptions options = DefaultOptions(head_dim);
        options.softmax_scale = cap.logit_std / std::sqrt(static_cast<float>(head_dim));
        options.softcap = cap.softcap;
        std::printf("CASE %s\n", description.c_str());
        CheckScenario(scenario, 32, 8, head_dim, dtype, q, spec.seed, options);
      }
    }
  }
}

// What a sequence of batches replayed on one captured graph is made of.
struct GraphSequence {
  int steps = 0;
  DType dtype = DType::kBFloat16;
  int32_t num_q_heads = 0, num_kv_heads = 0, head_dim = 0;
  int32_t max_q_len = 0;  // the capture's query tokens per request
  TreeMasks tree_masks = TreeMasks::kNone;
  std::function<ScenarioSpec(int step)> make_spec;
  std::function<bool(int step)> check_reference;  // also against float64 at this step
};

// Captures one graph (from the first batch's pool) and replays every batch of
// `sequence` on it: each equal bit for bit to an eager launch of the same
// batch on the same shape, and, where asked, close to the float64 reference.
void CheckGraphSequence(const GraphSequence& sequence, std::mt19937_64& rng) {
  const AttentionOptions options = DefaultOptions(sequence.head_dim);
  const PlannerConfig config = MustConfig(sequence.dtype, sequence.num_q_heads,
                                          sequence.num_kv_heads, sequence.head_dim, options);
  std::unique_ptr<GpuAttentionRunner> graph, eager;
  for (int step = 0; step < sequence.steps; ++step) {
    ScenarioSpec spec = sequence.make_spec(step);
    spec.max_context_len = 8192;
    spec.num_pages = 8192;
    spec.max_requests = kGraphCapacity + 2;
    spec.draft_headroom = sequence.max_q_len;
    const Scenario scenario = BuildScenario(spec).value();
    const KvPagePool& pool = *scenario.pool;
    if (graph == nullptr) {
      const PlanShape shape =
          CaptureShape(pool, kGraphCapacity, sequence.max_q_len, sequence.tree_masks);
      graph = GpuAttentionRunner::Create(pool, shape, config, sequence.dtype, LaunchKind::kGraph)
                  .value();
      eager = GpuAttentionRunner::Create(pool, shape, config, sequence.dtype, LaunchKind::kEager)
                  .value();
    }
    const AttentionData data =
        MakeAttentionData(pool, scenario.batch, sequence.num_q_heads, sequence.num_kv_heads,
                          sequence.head_dim, sequence.dtype, rng())
            .value();
    const AttentionOutputs replayed = graph->Run(data, pool, scenario.batch, options).value();
    const AttentionOutputs launched = eager->Run(data, pool, scenario.batch, options).value();
    const int64_t live = int64_t{scenario.batch.descriptor().num_tokens()} * sequence.num_q_heads *
                         sequence.head_dim;
    ASSERT_EQ(FirstDifference(replayed.out, launched.out, live), "") << "step " << step;
    if (sequence.check_reference(step) && scenario.batch.batch_size() > 0) {
      const HostAttentionResult reference = AttendLogicalSequences(
          LogicalRequestsOf(pool, scenario.batch, data), sequence.num_q_heads,
          sequence.num_kv_heads, sequence.head_dim, options);
      EXPECT_LE(MaxAbsDiff(replayed.out, reference.out), 3e-2) << "step " << step;
    }
  }
}

// One captured graph replayed over a sequence of batches of every mode, short
// and long (keys far longer than at capture), each equal bit for bit to an
// eager launch of the same batch.
TEST_F(KernelLongContextGpuTest, ASequenceOfBatchesOnOneCapturedGraphEqualsEager) {
  std::mt19937_64 rng(TestSeed());
  RandomBatchLimits limits;
  limits.max_batch_size = kGraphCapacity;
  limits.num_draft_tokens = 4;
  const std::vector<ModeCase> modes = {
      {ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens},
      {ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly},
      {ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens},
      {ForwardMode::kDraftExtendV2, SeqLensConvention::kPrefixOnly}};
  GraphSequence sequence;
  sequence.steps = 24;
  sequence.dtype = DType::kBFloat16;
  sequence.num_q_heads = 8;
  sequence.num_kv_heads = 2;
  sequence.head_dim = 128;
  sequence.max_q_len = limits.num_draft_tokens;
  sequence.make_spec = [&](int step) {
    limits.max_prefix = step % 3 == 0 ? 20 : 2000;  // short, long, long, short, ...
    return RandomScenarioSpec(modes[step % modes.size()], 16, limits, rng);
  };
  sequence.check_reference = [](int step) { return step % 8 == 0; };
  CheckGraphSequence(sequence, rng);
}

// ----- Tree speculation (topk > 1): the reference reads visibility straight
// from each tree's parent links.

class TreeVerifyGpuTest : public GpuTestWithParam<std::tuple<int32_t /*page*/, int32_t /*nd*/>> {};

TEST_P(TreeVerifyGpuTest, MixedTreesMatchFloat64ReferenceEagerAndReplay) {
  const auto& [page_size, nd] = GetParam();
  std::mt19937_64 rng(TestSeed() + page_size * 100 + nd);
  int32_t rotation = page_size + nd;
  for (int32_t head_dim : {64, 128, 256}) {
    for (int32_t topk : {2, 4, 8}) {
      ++rotation;
      const DType dtype = rotation % 2 ? DType::kBFloat16 : DType::kFloat16;
      const int32_t gqa = rotation % 3 == 0 ? 1 : rotation % 3 == 1 ? 4 : 8;
      SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << " " << DTypeName(dtype)
                                        << " gqa " << gqa << " topk " << topk);
      // Every shape in one batch, in a rotating order.
      std::vector<TreeShape> shapes(std::begin(kAllTreeShapes), std::end(kAllTreeShapes));
      std::rotate(shapes.begin(), shapes.begin() + rotation % shapes.size(), shapes.end());
      ScenarioSpec spec = TreeVerifySpec(shapes, nd, topk, page_size, 300, rng);
      spec.max_requests = kGraphCapacity + 2;
      const Scenario scenario = BuildScenario(spec).value();
      ASSERT_TRUE(scenario.batch.has_tree());
      CheckScenario(scenario, 2 * gqa, 2, head_dim, dtype, nd, rng(), DefaultOptions(head_dim));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PagesAndDrafts, TreeVerifyGpuTest,
                         ::testing::Combine(::testing::Values(1, 16, 64),
                                            ::testing::Values(4, 16, 64)),
                         [](const auto& info) {
                           return "P" + std::to_string(std::get<0>(info.param)) + "_nd" +
                                  std::to_string(std::get<1>(info.param));
                         });

class TreeGpuTest : public GpuTest {};

TEST_F(TreeGpuTest, DraftDecodeStepsMatchFloat64ReferenceEagerAndReplay) {
  std::mt19937_64 rng(TestSeed());
  for (int32_t page_size : {1, 16, 64}) {
    for (int32_t topk : {2, 4, 8}) {
      for (int32_t step : {0, 2}) {
        const int32_t head_dim = (topk + step) % 3 == 0 ? 64 : (topk + step) % 3 == 1 ? 128 : 256;
        const DType dtype = (page_size + step) % 2 ? DType::kBFloat16 : DType::kFloat16;
        SCOPED_TRACE(::testing::Message() << "page " << page_size << " topk " << topk << " step "
                                          << step << " head_dim " << head_dim);
        ScenarioSpec spec = TreeDraftDecodeSpec(4, topk, step, page_size, 400, rng);
        spec.max_requests = kGraphCapacity + 2;
        const Scenario scenario = BuildScenario(spec).value();
        CheckScenario(scenario, 16, 2, head_dim, dtype, topk, rng(), DefaultOptions(head_dim));
      }
    }
  }
}

// A chain given as a tree takes the mask path in the kernel; it must give the
// chain (topk = 1, plain causal) verify's output bit for bit.
TEST_F(TreeGpuTest, ChainTreeEqualsChainVerifyBitForBit) {
  for (int32_t nd : {3, 16, 64}) {
    for (int32_t head_dim : {64, 128, 256}) {
      SCOPED_TRACE(::testing::Message() << "nd " << nd << " head_dim " << head_dim);
      std::mt19937_64 rng(TestSeed() + nd + head_dim);
      ScenarioSpec tree = TreeVerifySpec({TreeShape::kChain, TreeShape::kChain, TreeShape::kChain},
                                         nd, 2, 16, 3000, rng);
      ScenarioSpec chain = tree;
      chain.spec.topk = 1;
      chain.spec.tree_parents.clear();
      const Scenario tree_scenario = BuildScenario(tree).value();
      const Scenario chain_scenario = BuildScenario(chain).value();
      ASSERT_TRUE(tree_scenario.batch.has_tree());
      ASSERT_FALSE(chain_scenario.batch.has_tree());
      const DType dtype = DType::kBFloat16;
      const AttentionOptions options = DefaultOptions(head_dim);
      const PlannerConfig config = MustConfig(dtype, 32, 8, head_dim, options);
      const AttentionData data =
          MakeAttentionData(*tree_scenario.pool, tree_scenario.batch, 32, 8, head_dim, dtype, rng())
              .value();
      const AttentionOutputs a =
          RunKernelEager(data, *tree_scenario.pool, tree_scenario.batch, config, options).value();
      const AttentionOutputs b =
          RunKernelEager(data, *chain_scenario.pool, chain_scenario.batch, config, options).value();
      EXPECT_EQ(FirstDifference(a.out, b.out, a.out.size()), "");
      EXPECT_EQ(FirstDifference(a.lse, b.lse, a.lse.size()), "");
    }
  }
}

// One graph captured for trees replays a sequence of changing trees (and
// chain batches, whose words are all set), each bit for bit equal to an
// eager launch and close to the parent-link reference.
TEST_F(TreeGpuTest, ASequenceOfChangingTreesOnOneCapturedGraphEqualsEager) {
  std::mt19937_64 rng(TestSeed());
  GraphSequence sequence;
  sequence.steps = 16;
  sequence.dtype = DType::kFloat16;
  sequence.num_q_heads = 16;
  sequence.num_kv_heads = 2;
  sequence.head_dim = 128;
  sequence.max_q_len = 8;  // num_draft_tokens
  sequence.tree_masks = TreeMasks::kPerQueryToken;
  sequence.make_spec = [&](int step) {
    std::vector<TreeShape> shapes(1 + rng() % kGraphCapacity);
    for (TreeShape& shape : shapes) shape = kAllTreeShapes[rng() % 4];
    ScenarioSpec spec =
        TreeVerifySpec(shapes, sequence.max_q_len, 2 + static_cast<int32_t>(rng() % 3), 16,
                       step % 3 == 0 ? 20 : 2000, rng);
    if (step % 5 == 4) {  // a chain batch on the same graph
      spec.spec.topk = 1;
      spec.spec.tree_parents.clear();
    }
    return spec;
  };
  sequence.check_reference = [](int) { return true; };
  CheckGraphSequence(sequence, rng);
}

}  // namespace
}  // namespace paged_attention
