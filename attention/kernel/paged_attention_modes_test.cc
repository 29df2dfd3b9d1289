// The kernel on what the planner makes: every forward mode, both seq_lens
// conventions, eager and CUDA-graph replay (with padding rows and one state
// replayed long-after-short), page sizes 1..256, head dims 64/128/256, bf16
// and fp16, skewed batches, and a 128k-token KV. Pools are NaN-poisoned
// outside the rows a request may read. Criterion (as FlashAttention-3): max
// abs error against the float64 reference <= 2x that of the same computation
// in PyTorch-style low-precision math, + 1e-5. Eager and replay agree bit for
// bit.
#include <random>

#include "attention/kernel/paged_attention_testing.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/gpu_test.h"
#include "testing/host_executor.h"
#include "testing/random_batch.h"
#include "tools/batch_scenario.h"
#include "tools/gpu_attention.h"

namespace paged_attention {
namespace {

constexpr int32_t kGraphCapacity = 8;

struct Errors {
  double kernel = 0;         // max abs error of the kernel vs float64
  double low_precision = 0;  // max abs error of low-precision math vs float64
  double rel_l2 = 0;
};

// Checks one scenario eagerly and through graph replay.
void CheckScenario(const Scenario& scenario, int32_t num_q_heads, int32_t num_kv_heads,
                   int32_t head_dim, DType dtype, int32_t max_q_len, uint64_t seed,
                   const AttentionOptions& options) {
  const KvPagePool& pool = *scenario.pool;
  const BatchDescriptor& batch = scenario.batch;
  const AttentionData data =
      MakeAttentionData(pool, batch, num_q_heads, num_kv_heads, head_dim, dtype, seed).value();
  const HostMetadata plan = PlanEager(batch, pool, PlannerConfig{num_kv_heads, 132}).value();
  const HostAttentionResult reference = AttendLogicalSequences(
      LogicalRequestsOf(pool, batch, data), num_q_heads, num_kv_heads, head_dim, options);
  const std::vector<double> low_precision =
      LowPrecisionReference(HostArgs(data, plan.View(), options));
  const int64_t live = reference.out.size();
  const double low_precision_error = MaxAbsDiff(low_precision, reference.out, live);

  absl::StatusOr<AttentionOutputs> eager = RunKernelEager(data, plan, options);
  ASSERT_TRUE(eager.ok()) << eager.status();
  const ErrorStats eager_stats = CompareToReference(eager->out, reference.out, live);
  EXPECT_EQ(eager_stats.non_finite, 0);
  EXPECT_LE(eager_stats.max_abs, 2 * low_precision_error + 1e-5)
      << "eager: " << eager_stats.ToString() << ", low-precision max abs " << low_precision_error;
  // LSE of every live token (natural log, -inf where nothing is visible).
  const int64_t tokens = batch.num_tokens();
  for (int32_t h = 0; h < num_q_heads; ++h) {
    for (int64_t t = 0; t < tokens; ++t) {
      const double want = reference.lse[h * tokens + t];
      const double got = eager->lse[h * int64_t{plan.total_q_tokens} + t];
      if (std::isinf(want)) {
        ASSERT_EQ(got, want) << "lse head " << h << " token " << t;
      } else {
        ASSERT_NEAR(got, want, 1e-3 + 1e-4 * std::fabs(want)) << "lse head " << h << " token " << t;
      }
    }
  }

  const GraphCaptureConfig capture =
      CaptureConfigForPool(pool, kGraphCapacity, max_q_len, PlannerConfig{num_kv_heads, 132});
  absl::StatusOr<AttentionOutputs> replay =
      RunKernelGraphReplay(data, pool, batch, capture, options);
  ASSERT_TRUE(replay.ok()) << replay.status();
  for (double value : replay->out) ASSERT_TRUE(std::isfinite(value)) << "padding row not finite";
  // Same split count: bit-identical; otherwise the same result to rounding.
  const bool same_splits =
      GraphMetadataState::CaptureOnHost(capture).value()->metadata().num_kv_splits ==
      plan.num_kv_splits;
  for (int64_t i = 0; i < live; ++i) {
    if (same_splits) {
      ASSERT_EQ(replay->out[i], eager->out[i]) << "eager and replay differ at " << i;
    } else {
      ASSERT_NEAR(replay->out[i], eager->out[i], 2 * low_precision_error + 1e-5) << i;
    }
  }
}

// Every mode case x page size; the head dim and dtype rotate with the case so
// each mode meets every head dim and both dtypes across page sizes (the full
// dtype x head dim x page size product runs in paged_attention_test).
class KernelModesGpuTest : public GpuTestWithParam<std::tuple<ModeCase, int32_t /*page*/>> {};

TEST_P(KernelModesGpuTest, MatchesFloat64ReferenceEagerAndReplay) {
  const auto& [mode_case, page_size] = GetParam();
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  rng.seed(seed);
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
  spec.seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << spec.seed);
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
  spec.seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << spec.seed);
  const Scenario scenario = BuildScenario(spec).value();
  AttentionOptions options = DefaultOptions(128);
  options.window_left = 100;
  options.softcap = 30.0f;
  CheckScenario(scenario, 16, 4, 128, DType::kBFloat16, 6, spec.seed, options);
}

}  // namespace
}  // namespace paged_attention
