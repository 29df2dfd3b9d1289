// GPU tests of the paged attention kernels against the float64 host executor
// (testing/host_executor.h) on random paged batches whose unused pool slots
// hold NaN, under several work plans (balanced, uncut, pinned splits).
// Criterion (FlashAttention-3): max abs error <= 2x that of PyTorch-style
// low-precision math on the same inputs, + 1e-5.
#include "attention/kernel/paged_attention.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "attention/base/device_buffer.h"
#include "gtest/gtest.h"
#include "testing/attention_check.h"
#include "testing/gpu_test.h"
#include "testing/host_executor.h"
#include "testing/kernel_batch.h"
#include "testing/test_seed.h"

namespace paged_attention {
namespace {

constexpr double kAbsSlack = 1e-5;

// Balanced plan (0), uncut units (1) and pinned splits.
const std::vector<int32_t> kPlans = {0, 1, 5, 64};

// `spec` with the workers of the current GPU for its kernel.
BatchSpec OnThisGpu(BatchSpec spec) {
  const absl::StatusOr<KernelGeometry> geometry = QueryKernelGeometry(spec.dtype, spec.head_dim);
  EXPECT_TRUE(geometry.ok()) << geometry.status();
  spec.num_workers = geometry.ok() ? geometry->num_sms * geometry->ctas_per_sm : 1;
  return spec;
}

std::string PlanName(int32_t pinned_splits) {
  return pinned_splits == 0 ? std::string("balanced") : absl::StrCat("pinned", pinned_splits);
}

std::string ModeName(const AttentionOptions& options) {
  if (options.mask == MaskMode::kNonCausal) return "non_causal";
  std::string name = "causal";
  if (options.window_left >= 0) absl::StrAppend(&name, "_window", options.window_left);
  if (options.softcap > 0) absl::StrAppend(&name, "_softcap", options.softcap);
  return name;
}

struct Reference {
  HostAttentionResult exact;
  std::vector<double> low_precision;
  ErrorStats low_precision_error;
  int64_t out_count = 0;     // elements of the live tokens
  double error_bound = 0.0;  // LowPrecisionErrorBound of this batch's outputs
};

Reference ComputeReference(const HostBatch& batch) {
  Reference ref;
  const PagedAttentionArgs args = batch.Args();
  absl::StatusOr<HostAttentionResult> exact = ParallelHostReference(args);
  EXPECT_TRUE(exact.ok()) << exact.status();
  if (exact.ok()) ref.exact = *std::move(exact);
  ref.low_precision = LowPrecisionReference(args);
  ref.out_count = int64_t{batch.cu_seqlens_q.back()} * args.num_q_heads * args.head_dim;
  ref.low_precision_error = CompareToReference(ref.low_precision, ref.exact.out, ref.out_count);
  ref.error_bound =
      LowPrecisionErrorBound(batch.spec.dtype, ref.low_precision_error.max_abs,
                             LargestMagnitude(ref.exact.out, ref.out_count), kAbsSlack);
  return ref;
}

// Checks one kernel result: the error criterion on out, exact zeros where no
// key is visible, LSE against the float64 one (-inf exactly where empty).
void ExpectMatchesReference(const HostBatch& batch, const Reference& ref,
                            const std::vector<float>& out, const std::vector<float>& lse,
                            const std::string& what) {
  SCOPED_TRACE(what);
  const ErrorStats error = CompareToReference(out, ref.exact.out, ref.out_count);
  EXPECT_EQ(error.non_finite, 0) << error.ToString();
  EXPECT_LE(error.max_abs, ref.error_bound) << "kernel " << error.ToString() << " vs low-precision "
                                            << ref.low_precision_error.ToString();
  // One line per check, for the notes: kernel error, low-precision error, ratio.
  std::printf(
      "ERRSTAT %s/%s kernel_max_abs %.3g kernel_rel_l2 %.3g lowp_max_abs %.3g "
      "lowp_rel_l2 %.3g ratio %.3f\n",
      ::testing::UnitTest::GetInstance()->current_test_info()->name(), what.c_str(), error.max_abs,
      error.rel_l2, ref.low_precision_error.max_abs, ref.low_precision_error.rel_l2,
      error.max_abs / (ref.low_precision_error.max_abs + kAbsSlack));
  const int32_t hq = batch.spec.num_q_heads, d = batch.spec.head_dim;
  const int32_t total_q = batch.metadata.total_q_tokens;
  const int32_t live_q = batch.cu_seqlens_q.back();
  int64_t lse_failures = 0, zero_failures = 0;
  for (int32_t h = 0; h < hq; ++h) {
    for (int32_t t = 0; t < live_q; ++t) {
      const double want = ref.exact.lse[int64_t{h} * total_q + t];
      const float got = lse[int64_t{h} * total_q + t];
      if (std::isinf(want)) {
        if (!(std::isinf(got) && got < 0)) ++lse_failures;
        for (int32_t c = 0; c < d; ++c) {
          if (out[(int64_t{t} * hq + h) * d + c] != 0.0f) ++zero_failures;
        }
      } else if (!(std::abs(got - want) <= 1e-3 + 1e-4 * std::abs(want))) {
        if (lse_failures < 5)
          ADD_FAILURE() << "lse head " << h << " token " << t << ": " << got << " vs " << want;
        ++lse_failures;
      }
    }
  }
  EXPECT_EQ(lse_failures, 0);
  EXPECT_EQ(zero_failures, 0) << "rows without visible keys must be exactly zero";
}

struct KernelOutput {
  std::vector<float> out, lse;
};

// `got` has `want`'s bits: the first `out_count` outputs and every LSE.
void ExpectSameBits(const KernelOutput& got, const KernelOutput& want, int64_t out_count) {
  EXPECT_EQ(FirstDifference(got.out, want.out, out_count), "") << "out";
  EXPECT_EQ(FirstDifference(got.lse, want.lse, want.lse.size()), "") << "lse";
}

KernelOutput RunOnDevice(DeviceBatch& device) {
  KernelOutput result;
  absl::Status status = device.PoisonOutputs();
  EXPECT_TRUE(status.ok()) << status;
  status = device.Run();
  EXPECT_TRUE(status.ok()) << status;
  absl::StatusOr<std::vector<float>> out = device.DownloadOut();
  absl::StatusOr<std::vector<float>> lse = device.DownloadLse();
  EXPECT_TRUE(out.ok() && lse.ok());
  if (out.ok()) result.out = *std::move(out);
  if (lse.ok()) result.lse = *std::move(lse);
  return result;
}

// Runs `spec` under each plan (kPlans: 0 = balanced, else pinned splits) and
// checks every result against the reference and the plans against each other.
// The plan has this GPU's workers unless `num_workers` > 0.
void CheckBatch(const BatchSpec& gpu_spec, const std::vector<int32_t>& plans = kPlans,
                int32_t num_workers = 0) {
  BatchSpec spec = OnThisGpu(gpu_spec);
  if (num_workers > 0) spec.num_workers = num_workers;
  HostBatch batch = MakeRandomBatch(spec);
  const Reference ref = ComputeReference(batch);
  absl::StatusOr<DeviceBatch> device = DeviceBatch::Create(batch);
  ASSERT_TRUE(device.ok()) << device.status();
  std::vector<KernelOutput> outputs;
  for (int32_t pinned : plans) {
    batch.Plan(pinned);
    ASSERT_TRUE(device->Update(batch).ok());
    outputs.push_back(RunOnDevice(*device));
    ExpectMatchesReference(batch, ref, outputs.back().out, outputs.back().lse, PlanName(pinned));
  }
  // Plans agree with each other to rounding (bf16/fp16 output ulps): the
  // same bound as each against the reference.
  const std::vector<double> first(outputs[0].out.begin(), outputs[0].out.end());
  for (size_t i = 1; i < outputs.size(); ++i) {
    const ErrorStats diff = CompareToReference(outputs[i].out, first, ref.out_count);
    EXPECT_LE(diff.max_abs, ref.error_bound)
        << PlanName(plans[i]) << " vs " << PlanName(plans[0]) << ": " << diff.ToString();
  }
}

// ---------------------------------------------------------------------------
// Sweep: dtype x head_dim x page size; GQA ratio and mode vary with the case.

using SweepParam = std::tuple<DType, int32_t, int32_t>;  // dtype, head_dim, page_size

class PagedAttentionSweepTest : public GpuTestWithParam<SweepParam> {};

TEST_P(PagedAttentionSweepTest, MatchesReferenceForEveryModeAndPlan) {
  const auto [dtype, head_dim, page_size] = GetParam();
  // (q heads, kv heads): MHA, GQA 4, GQA 8, MQA.
  const std::vector<std::pair<int32_t, int32_t>> head_configs = {{4, 4}, {8, 2}, {16, 2}, {8, 1}};
  std::vector<AttentionOptions> modes(4);
  modes[1].mask = MaskMode::kNonCausal;
  modes[2].window_left = 37;
  modes[3].softcap = 5.0f;
  const int32_t case_index = (dtype == DType::kFloat16 ? 1 : 0) + head_dim / 64 + page_size;
  std::mt19937_64 rng(TestSeed() + case_index);
  for (int variant = 0; variant < 3; ++variant) {
    BatchSpec spec;
    spec.dtype = dtype;
    spec.head_dim = head_dim;
    spec.page_size = page_size;
    std::tie(spec.num_q_heads, spec.num_kv_heads) = head_configs[(case_index + variant) % 4];
    // Always causal plus one other mode.
    spec.options = modes[variant == 0 ? 0 : 1 + case_index % 3];
    spec.seed = rng();
    if (variant == 2) {
      // Decode and two-token draft-extend only (at most 16 rows per unit):
      // the decode kernel where the head_dim has one (at head_dim 256 only
      // where a unit has at most 8 rows: MQA, GQA 4 at q = 1 and 2).
      for (int32_t i = 0; i < 9; ++i) {
        const int32_t q = 1 + i % 2;
        spec.q_lens.push_back(q);
        spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, i == 0 ? 3000 : 600)(rng));
      }
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " hd", head_dim, " page", page_size, " heads ",
                                spec.num_q_heads, "/", spec.num_kv_heads, " ",
                                ModeName(spec.options), " decode"));
      CheckBatch(spec);
      continue;
    }
    // Decode / verify / draft-extend lengths 1..8, one extend of 40 tokens,
    // one short request, one longer (skewed).
    for (int32_t q = 1; q <= 8; ++q) {
      spec.q_lens.push_back(q);
      spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, 600)(rng));
    }
    spec.q_lens.push_back(40);
    spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(40, 300)(rng));
    spec.q_lens.push_back(2);
    spec.k_lens.push_back(2);
    spec.q_lens.push_back(3);
    spec.k_lens.push_back(1500 + variant * 333);
    SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " hd", head_dim, " page", page_size, " heads ",
                              spec.num_q_heads, "/", spec.num_kv_heads, " ",
                              ModeName(spec.options)));
    CheckBatch(spec);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, PagedAttentionSweepTest,
                         ::testing::Combine(::testing::Values(DType::kBFloat16, DType::kFloat16),
                                            ::testing::Values(64, 128, 256),
                                            ::testing::Values(1, 3, 16, 64, 256)),
                         [](const ::testing::TestParamInfo<SweepParam>& info) {
                           return absl::StrCat(DTypeName(std::get<0>(info.param)), "_hd",
                                               std::get<1>(info.param), "_page",
                                               std::get<2>(info.param));
                         });

// ---------------------------------------------------------------------------
// Long prefill (EXTEND with hundreds of query tokens), tiled over query rows.

using PrefillParam = std::tuple<DType, int32_t>;

class PagedAttentionPrefillTest : public GpuTestWithParam<PrefillParam> {};

TEST_P(PagedAttentionPrefillTest, LongPrefillMatchesReference) {
  const auto [dtype, head_dim] = GetParam();
  BatchSpec spec;
  spec.dtype = dtype;
  spec.head_dim = head_dim;
  spec.num_q_heads = 4;
  spec.num_kv_heads = 1;
  spec.page_size = 16;
  spec.q_lens = {512, 300, 1};
  spec.k_lens = {512, 700, 900};
  spec.seed = 7 + head_dim;
  CheckBatch(spec, {0, 1});
  spec.options.window_left = 100;
  spec.seed += 1;
  CheckBatch(spec, {0, 3});
}

INSTANTIATE_TEST_SUITE_P(AllKernels, PagedAttentionPrefillTest,
                         ::testing::Combine(::testing::Values(DType::kBFloat16, DType::kFloat16),
                                            ::testing::Values(64, 128, 256)),
                         [](const ::testing::TestParamInfo<PrefillParam>& info) {
                           return absl::StrCat(DTypeName(std::get<0>(info.param)), "_hd",
                                               std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------

class PagedAttentionGpuTest : public GpuTest {};

TEST_F(PagedAttentionGpuTest, SkewedBatchOneLongManyShort) {
  BatchSpec spec;
  spec.num_q_heads = 32;
  spec.num_kv_heads = 4;
  spec.page_size = 16;
  std::mt19937_64 rng(TestSeed());
  spec.seed = rng();
  spec.q_lens.push_back(4);
  spec.k_lens.push_back(20000);
  for (int i = 0; i < 15; ++i) {
    const int32_t q = std::uniform_int_distribution<int32_t>(1, 4)(rng);
    spec.q_lens.push_back(q);
    spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, 200)(rng));
  }
  CheckBatch(spec, {0, 1});
}

// 16 query heads over 2 KV heads (units of 8 rows per query token), page 16,
// seeded from `rng`.
BatchSpec GroupOfEightSpec(int32_t head_dim, std::mt19937_64& rng) {
  BatchSpec spec;
  spec.head_dim = head_dim;
  spec.num_q_heads = 16;
  spec.num_kv_heads = 2;
  spec.page_size = 16;
  spec.seed = rng();
  return spec;
}

// Three workers, so each runs dozens of segments back to back whose units
// alternate between 8, 16, 32 and 64 rows (one, two and four row blocks):
// each segment's query tile is loaded while the segment before it runs, into
// the other of two tiles (one tile in the general kernel at head_dim 256),
// and a unit of more row blocks than the one before it must still get all of
// its rows.
TEST_F(PagedAttentionGpuTest, FewWorkersRunManySegmentsEach) {
  for (const int32_t head_dim : {64, 128, 256}) {
    std::mt19937_64 rng(TestSeed() + head_dim);
    BatchSpec spec = GroupOfEightSpec(head_dim, rng);
    for (const int32_t q : {1, 8, 2, 4, 1, 70, 3, 8, 1, 2}) {
      spec.q_lens.push_back(q);
      spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, 700)(rng));
    }
    SCOPED_TRACE(absl::StrCat("hd", head_dim));
    CheckBatch(spec, {0, 1, 5}, /*num_workers=*/3);
    // Units of 8 and 16 rows only: the decode kernel (16-row query tiles)
    // where the head_dim has one.
    spec.q_lens = {1, 2, 2, 1, 1, 2, 1, 2};
    spec.k_lens.resize(spec.q_lens.size());
    SCOPED_TRACE("decode");
    CheckBatch(spec, {0, 1, 5}, /*num_workers=*/3);
  }
}

// `a` and `b`, the same batch with other metadata capacities, run the same
// plan in two kernels (`a_kernel`, `b_kernel`): both match the reference, and
// give the same bits.
void ExpectSamePlanAndBits(const HostBatch& a, const char* a_kernel, const HostBatch& b,
                           const char* b_kernel) {
  ASSERT_EQ(a.worker_begin, b.worker_begin);
  ASSERT_EQ(std::memcmp(a.segments.data(), b.segments.data(),
                        a.worker_begin.back() * sizeof(WorkSegment)),
            0)
      << "the two launches must run the same plan";
  const Reference ref = ComputeReference(a);
  KernelOutput outputs[2];
  for (int k = 0; k < 2; ++k) {
    absl::StatusOr<DeviceBatch> device = DeviceBatch::Create(k == 0 ? a : b);
    ASSERT_TRUE(device.ok()) << device.status();
    outputs[k] = RunOnDevice(*device);
    ExpectMatchesReference(a, ref, outputs[k].out, outputs[k].lse, k == 0 ? a_kernel : b_kernel);
  }
  ExpectSameBits(outputs[1], outputs[0], ref.out_count);
}

// A plan whose units all have at most 16 rows runs the decode kernel; the
// same plan with a larger max_seq_len_q (a CUDA-graph capacity) runs the
// general kernel. Both must give the same bits: an engine's eager step and its
// graph replay may take different kernels.
TEST_F(PagedAttentionGpuTest, DecodeKernelMatchesGeneralKernelBitForBit) {
  for (const int32_t head_dim : {64, 128, 256}) {  // the head_dims with a decode kernel
    // -1: one decode request over every worker (q = 1: units of `group`
    // rows, no merge kernel, one segment per worker), which the decode kernel
    // runs cooperatively, spreading each unit's merge over its pieces
    // (MergeSlice): it must give the general kernel's MergeRow bits too.
    // Pinned 2 and 3: units of 8 rows in two and three pieces, each its
    // worker's last, so spread merges of slices of 128-256 outputs (more
    // than a thread each at head_dim 256, MergeSlice's kRounds).
    for (const int32_t pinned : {0, 1, 2, 3, 7, -1}) {
      std::mt19937_64 rng(TestSeed() + head_dim + pinned);
      BatchSpec spec = GroupOfEightSpec(head_dim, rng);
      spec.pinned_splits = std::max(pinned, 0);
      for (int32_t i = 0; i < (pinned < 0 ? 1 : 12); ++i) {
        // (The head_dim 256 decode kernel takes units of at most 8 rows.)
        spec.q_lens.push_back(pinned < 0 || head_dim == 256 ? 1 : 1 + i % 2);
        spec.k_lens.push_back(
            std::uniform_int_distribution<int32_t>(pinned < 0 ? 20000 : 2, pinned < 0 ? 40000
                                                                           : i < 2    ? 9000
                                                                                      : 900)(rng));
      }
      // Units of one KV head in both: at head_dim 64 the decode plan's 16
      // rows would pair (CanPairKvHeads), the general kernel's 64 never do.
      spec.kv_heads_per_unit = 1;
      SCOPED_TRACE(
          absl::StrCat("hd", head_dim, " ", pinned < 0 ? "one request" : PlanName(pinned)));
      const HostBatch decode = MakeRandomBatch(OnThisGpu(spec));
      spec.max_seq_len_q = 8;  // 64 rows: the general kernel
      const HostBatch general = MakeRandomBatch(OnThisGpu(spec));
      ExpectSamePlanAndBits(decode, "decode kernel", general, "general kernel");
    }
  }
}

// A plan of 64-row units runs a paired-tiles kernel (head_dim 128): with four
// stages and a query tile loaded a segment ahead while no request's units
// share K/V, with the deep ring (five stages, one query tile) once one may
// (max_seq_len_q x group > 64, here through a CUDA-graph-like capacity). Both
// must give the same bits for the same plan, with units of one to four row
// blocks and workers that run one segment or dozens back to back.
TEST_F(PagedAttentionGpuTest, PairedKernelsDeepAndShallowRingsMatchBitForBit) {
  for (const int32_t workers : {0, 3}) {  // 0: every worker of this GPU
    for (const int32_t pinned : {0, 1, 7}) {
      std::mt19937_64 rng(TestSeed() + workers + pinned);
      BatchSpec spec = GroupOfEightSpec(128, rng);
      spec.pinned_splits = pinned;
      for (const int32_t q : {8, 1, 4, 8, 2, 8, 3, 8}) {
        spec.q_lens.push_back(q);
        spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, 3000)(rng));
      }
      SCOPED_TRACE(absl::StrCat(PlanName(pinned), workers > 0 ? " 3 workers" : ""));
      BatchSpec shallow_spec = OnThisGpu(spec);
      if (workers > 0) shallow_spec.num_workers = workers;
      const HostBatch shallow = MakeRandomBatch(shallow_spec);
      shallow_spec.max_seq_len_q = 9;  // 72 rows: units may share K/V
      const HostBatch deep = MakeRandomBatch(shallow_spec);
      ExpectSamePlanAndBits(shallow, "four stages", deep, "deep ring");
    }
  }
}

// An eager plan of co-read groups (units of one request and KV head that
// share K/V) runs its member pairs as CTAs of two consumer warpgroups over one
// K/V stream (WorkPlanView::member_pair_offset); a CUDA-graph capacity runs
// every member on a CTA of its own. Both must give the same bits and match
// the reference: verify and prefill batches whose groups all have four
// members and mixed ones (groups without a fourth member, pieces one member
// lacks, last units of 8 and 32 rows with several key ways, 8-row pieces
// merged in the kernel), causal, non-causal and capped, one worker per SM
// pair or three workers running dozens of segments each.
TEST_F(PagedAttentionGpuTest, MemberPairsMatchOneGroupBitForBit) {
  struct Case {
    std::string name;
    std::vector<int32_t> q_lens;
    AttentionOptions options;
    int32_t workers;  // 0: every worker of this GPU
  };
  AttentionOptions non_causal, capped;
  non_causal.mask = MaskMode::kNonCausal;
  capped.softcap = 30.0f;
  const std::vector<int32_t> verify(12, 64), prefill = {512, 256, 512};
  const std::vector<int32_t> mixed = {300, 64, 50, 56, 512, 40};
  for (const Case& c : {Case{"verify q64", verify, {}, 0}, Case{"prefill", prefill, {}, 0},
                        Case{"mixed", mixed, {}, 0}, Case{"mixed, 12 workers", mixed, {}, 12},
                        Case{"mixed non-causal", mixed, non_causal, 0},
                        Case{"mixed softcap 30", mixed, capped, 0}}) {
    SCOPED_TRACE(c.name);
    std::mt19937_64 rng(TestSeed() + c.q_lens.size() + c.workers);
    BatchSpec spec;
    spec.num_q_heads = 16;
    spec.num_kv_heads = 4;  // group 4: a 64-row unit is 16 query tokens
    spec.head_dim = 128;
    spec.options = c.options;
    spec.seed = rng();
    spec.q_lens = c.q_lens;
    for (const int32_t q : c.q_lens) {
      spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, q + 3000)(rng));
    }
    spec = OnThisGpu(spec);
    if (c.workers > 0) spec.num_workers = c.workers;
    const HostBatch pairs = MakeRandomBatch(spec);
    const WorkPlanView& planned = pairs.metadata.plan;
    ASSERT_GT(planned.member_pair_offset, 0) << "a plan of member pairs";
    spec.eager_plan = false;  // a CUDA-graph capacity's plan: one group per CTA
    const HostBatch one_group = MakeRandomBatch(spec);
    ExpectSamePlanAndBits(pairs, "member pairs", one_group, "one group per CTA");

    // Member pairs the planner would not write (CanImplement lets a caller's
    // through): an offset below half the workers (the launcher then runs a
    // worker per CTA), one pairing each worker with the next member's
    // neighbour, and a unit offset that pairs no segment. Segments that do not
    // pair stream alone, so the bits stay.
    absl::StatusOr<DeviceBatch> device = DeviceBatch::Create(one_group);
    ASSERT_TRUE(device.ok()) << device.status();
    const KernelOutput expected = RunOnDevice(*device);
    struct Offsets {
      int32_t workers, units;
    };
    for (const Offsets offsets :
         {Offsets{planned.member_pair_offset / 2, planned.member_pair_unit_offset},
          Offsets{std::min(planned.member_pair_offset + 1, planned.num_workers),
                  planned.member_pair_unit_offset},
          Offsets{planned.member_pair_offset, 0}}) {
      SCOPED_TRACE(absl::StrCat("member_pair_offset ", offsets.workers,
                                ", member_pair_unit_offset ", offsets.units));
      HostBatch caller_made = pairs;
      caller_made.metadata.plan.member_pair_offset = offsets.workers;
      caller_made.metadata.plan.member_pair_unit_offset = offsets.units;
      device = DeviceBatch::Create(caller_made);
      ASSERT_TRUE(device.ok()) << device.status();
      const KernelOutput output = RunOnDevice(*device);
      ExpectSameBits(output, expected, expected.out.size());
    }
  }
}

TEST_F(PagedAttentionGpuTest, VerifyOver128kKeys) {
  BatchSpec spec;
  spec.num_q_heads = 8;
  spec.num_kv_heads = 1;
  spec.page_size = 64;
  spec.q_lens = {4};
  spec.k_lens = {131072};
  spec.q_stddev = 3.0f;  // sharper softmax over the long range
  spec.seed = TestSeed();
  CheckBatch(spec, {0, 1});
}

// Decode units cut into hundreds of pieces, merged inside the attention kernel
// (MergeIfLastPiece): 600 pieces take MergeRow past one weight table
// (kMergeWeights = 512) into a second round, whose LSEs it reads from global
// memory, where the first round's come from the copy it kept; 300 pieces of an
// 8-row unit give each warp two rows.
TEST_F(PagedAttentionGpuTest, FusedMergeOfHundredsOfPieces) {
  struct Shape {
    int32_t head_dim, num_q_heads, num_kv_heads, pieces;
  };
  for (const Shape& shape : {Shape{64, 8, 1, 300}, Shape{128, 2, 2, 600}}) {
    BatchSpec spec;
    spec.head_dim = shape.head_dim;
    spec.num_q_heads = shape.num_q_heads;
    spec.num_kv_heads = shape.num_kv_heads;
    spec.page_size = 16;
    spec.q_lens = {1, 1};
    // One key tile per piece, and a short second request.
    spec.k_lens = {shape.pieces * KeysPerTile(shape.head_dim), 77};
    spec.q_stddev = 3.0f;               // sharper softmax: weights far from uniform
    spec.pinned_splits = shape.pieces;  // sizes the plan buffers for the pinned plan
    spec.seed = TestSeed() + shape.head_dim;
    SCOPED_TRACE(absl::StrCat("hd", shape.head_dim, " heads ", shape.num_q_heads, "/",
                              shape.num_kv_heads, " ", shape.pieces, " pieces"));
    CheckBatch(spec, {shape.pieces, 0});
  }
}

// Units of more than kFusedMergeMaxRows rows are merged by the merge kernel:
// up to 64 pieces in one pass whose batches hold 16 loads per lane (32
// partials a batch at head_dim 64, 16 at 128, 8 at 256), more pieces by
// MergeRow. Piece counts on both sides of the 64 limit and past batch edges,
// at every head_dim.
TEST_F(PagedAttentionGpuTest, MergeKernelOnBothSidesOfItsOnePassLimit) {
  struct Shape {
    int32_t head_dim, pieces;
  };
  for (const Shape& shape : {Shape{64, 64}, Shape{64, 65}, Shape{128, 32}, Shape{128, 33},
                             Shape{128, 65}, Shape{256, 17}, Shape{256, 64}, Shape{256, 80}}) {
    BatchSpec spec;
    spec.head_dim = shape.head_dim;
    spec.num_q_heads = 8;
    spec.num_kv_heads = 2;
    spec.page_size = 16;
    spec.q_lens = {4, 3};  // 16 and 12 rows per unit (group 4): both go to the merge kernel
    // One key tile per piece, and a short second request.
    spec.k_lens = {shape.pieces * KeysPerTile(shape.head_dim), 77};
    spec.q_stddev = 3.0f;               // sharper softmax: weights far from uniform
    spec.pinned_splits = shape.pieces;  // sizes the plan buffers for the pinned plan
    spec.seed = TestSeed() + shape.head_dim + shape.pieces;
    SCOPED_TRACE(absl::StrCat("hd", shape.head_dim, " ", shape.pieces, " pieces"));
    CheckBatch(spec, {shape.pieces, 0});
  }
}

TEST_F(PagedAttentionGpuTest, RowsWithoutVisibleKeysAreZeroWithMinusInfLse) {
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    BatchSpec spec;
    spec.dtype = dtype;
    spec.num_q_heads = 8;
    spec.num_kv_heads = 2;
    spec.page_size = 16;
    // Graph padding rows: k length 1 with several queries (3 of 4 see nothing);
    // an empty KV; a padded row with no queries; a normal request.
    spec.q_lens = {4, 2, 0, 3};
    spec.k_lens = {1, 0, 1, 700};
    CheckBatch(spec, {0, 1, 4});
  }
}

TEST_F(PagedAttentionGpuTest, EmptyBatchIsANoOp) {
  BatchSpec spec;
  spec.q_lens = {0, 0};
  spec.k_lens = {5, 1};
  spec.total_q_tokens = 4;  // capacity only
  HostBatch batch = MakeRandomBatch(OnThisGpu(spec));
  absl::StatusOr<DeviceBatch> device = DeviceBatch::Create(batch);
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE(device->PoisonOutputs().ok());
  // No workers or no rows: nothing launched, nothing read.
  PagedAttentionArgs args = device->args;
  args.metadata.plan.num_workers = 0;
  EXPECT_TRUE(LaunchPagedAttention(args, nullptr, 0, nullptr).ok());
  args = device->args;
  args.metadata.batch_size = 0;
  args.q = args.k_cache = args.v_cache = nullptr;
  args.out = nullptr;
  EXPECT_TRUE(LaunchPagedAttention(args, nullptr, 0, nullptr).ok());
  // Live batch with no query tokens: the plan is empty and out stays untouched.
  EXPECT_TRUE(device->Run().ok());
  absl::StatusOr<std::vector<float>> out = device->DownloadOut();
  ASSERT_TRUE(out.ok());
  for (float value : *out) ASSERT_TRUE(std::isnan(value));
}

// One plan launched three times without re-planning (an engine's layers): the
// decode request's units (4 rows) are merged inside the attention kernel
// through the merge tasks' arrival counts, which each launch must leave at 0
// for the next; the others go to the merge kernel.
TEST_F(PagedAttentionGpuTest, RepeatedRunsAreBitIdentical) {
  BatchSpec spec;
  spec.q_lens = {1, 8, 5};
  spec.k_lens = {3000, 2000, 64};
  spec.pinned_splits = 16;
  HostBatch batch = MakeRandomBatch(OnThisGpu(spec));
  ASSERT_LE(spec.num_q_heads / spec.num_kv_heads, kFusedMergeMaxRows) << "request 0 merges fused";
  const Reference ref = ComputeReference(batch);
  absl::StatusOr<DeviceBatch> device = DeviceBatch::Create(batch);
  ASSERT_TRUE(device.ok()) << device.status();
  const KernelOutput first = RunOnDevice(*device);
  ExpectMatchesReference(batch, ref, first.out, first.lse, "first run");
  for (int run = 2; run <= 3; ++run) {
    const KernelOutput again = RunOnDevice(*device);
    SCOPED_TRACE(absl::StrCat("run ", run));
    ExpectSameBits(again, first, first.out.size());
  }
  absl::StatusOr<std::vector<MergeTask>> tasks =
      device->merge_tasks.Download<MergeTask>(batch.merge_tasks.size());
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_GT(batch.counters[kPlanNumMergeTasks], 0);
  for (int32_t m = 0; m < batch.counters[kPlanNumMergeTasks]; ++m) {
    EXPECT_EQ((*tasks)[m].arrivals, 0) << "merge task " << m << " left its arrival count";
  }
}

// Captures `spec`'s batch (capacity metadata, short keys) in a CUDA graph,
// then for each of `replays` rewrites the device arrays and the plan with its
// lengths (keys much longer than at capture) and replays: the result matches
// the reference and is bit-identical to an eager launch of the same plan. The
// plans are a CUDA-graph capacity's (BatchSpec::eager_plan false: every
// worker launched): an eager plan's grid ends at the capture batch's last
// busy worker, and a replay's longer keys then leave workers past it unrun.
struct Lengths {
  std::vector<int32_t> q_lens, k_lens;
};

void ExpectReplaysMatchEager(BatchSpec spec, const std::vector<Lengths>& replays) {
  spec.eager_plan = false;
  HostBatch batch = MakeRandomBatch(OnThisGpu(spec));
  absl::StatusOr<DeviceBatch> device = DeviceBatch::Create(batch);
  ASSERT_TRUE(device.ok()) << device.status();

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  PagedAttentionArgs capture_args = device->args;
  cudaGraph_t graph;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  const absl::Status launch = LaunchPagedAttention(capture_args, device->workspace.data(),
                                                   device->workspace.size_bytes(), stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_TRUE(launch.ok()) << launch;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  for (size_t replay = 0; replay < replays.size(); ++replay) {
    SCOPED_TRACE(absl::StrCat("replay ", replay));
    RefillBatch(replays[replay].q_lens, replays[replay].k_lens, 100 + replay, batch);
    ASSERT_TRUE(device->Update(batch).ok());
    const Reference ref = ComputeReference(batch);

    ASSERT_TRUE(device->PoisonOutputs().ok());
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    absl::StatusOr<std::vector<float>> replay_out = device->DownloadOut();
    absl::StatusOr<std::vector<float>> replay_lse = device->DownloadLse();
    ASSERT_TRUE(replay_out.ok() && replay_lse.ok());
    const KernelOutput replayed{*std::move(replay_out), *std::move(replay_lse)};
    ExpectMatchesReference(batch, ref, replayed.out, replayed.lse, "replay");

    const KernelOutput eager = RunOnDevice(*device);
    SCOPED_TRACE("eager and replay");
    ExpectSameBits(replayed, eager, ref.out_count);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(PagedAttentionGpuTest, GraphReplayWithLongerKeysMatchesEager) {
  constexpr int32_t kBatch = 6;
  BatchSpec spec;
  spec.num_q_heads = 16;
  spec.num_kv_heads = 2;
  spec.page_size = 16;
  spec.q_lens = {1, 2, 4, 1, 8, 1};
  spec.k_lens = {100, 30, 64, 1, 200, 17};
  spec.total_q_tokens = kBatch * 8;  // capacities
  spec.max_seq_len_q = 8;
  spec.max_pages_per_request = 8192 / 16;
  spec.seed = TestSeed();
  ExpectReplaysMatchEager(spec, {{{8, 1, 3, 0, 5, 2}, {8000, 5000, 3, 1, 300, 8192}},
                                 {{8, 1, 3, 0, 5, 2}, {8000, 6000, 3, 1, 300, 8192}},
                                 {{1, 1, 1, 1, 1, 1}, {8000, 7000, 3, 1, 300, 8192}}});
}

// Head_dim 64 decode plans units of KV head pairs (work_plan.h,
// CanPairKvHeads), which the head_dim 128 decode kernel runs: each query in
// its KV head's half of a 128-wide row, zeros in the other. Every GQA ratio
// that pairs (1, 2, 4 and 8 query heads per KV head, up to 16 rows per unit:
// 8-row units fold without a barrier, larger ones with), both dtypes, pages
// 1 / 16 / 64, every mask mode, balanced and pinned plans (fused merges of up
// to 64 pieces, by the last piece), against the reference with NaN in the
// pool slots no request owns; one request over every worker, whose pieces
// merge a slice each (8 and 16 rows); and graph replays bit for bit with
// eager.
TEST_F(PagedAttentionGpuTest, KvHeadPairsMatchReference) {
  struct Heads {
    int32_t num_q_heads, num_kv_heads, max_q;
  };
  const Heads heads[] = {{32, 8, 2}, {64, 8, 1}, {16, 8, 4}, {8, 8, 8}, {4, 2, 1}};
  std::vector<AttentionOptions> modes(4);
  modes[1].mask = MaskMode::kNonCausal;
  modes[2].window_left = 37;
  modes[3].softcap = 5.0f;
  std::mt19937_64 rng(TestSeed());
  int index = 0;
  for (const Heads& h : heads) {
    for (const DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      for (const int32_t page_size : {1, 16, 64}) {
        BatchSpec spec;
        spec.dtype = dtype;
        spec.head_dim = 64;
        spec.num_q_heads = h.num_q_heads;
        spec.num_kv_heads = h.num_kv_heads;
        spec.page_size = page_size;
        spec.options = modes[index++ % modes.size()];
        spec.seed = rng();
        for (int32_t i = 0; i < 7; ++i) {
          const int32_t q = 1 + i % h.max_q;
          spec.q_lens.push_back(q);
          spec.k_lens.push_back(
              std::uniform_int_distribution<int32_t>(q, i == 0 ? 5000 : 700)(rng));
        }
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " page", page_size, " heads ", h.num_q_heads,
                                  "/", h.num_kv_heads, " ", ModeName(spec.options)));
        ASSERT_EQ(MakeRandomBatch(OnThisGpu(spec)).metadata.plan.kv_heads_per_unit, 2);
        CheckBatch(spec, {0, 1, 5, 64});
      }
    }
  }
  BatchSpec one;
  one.head_dim = 64;
  one.num_kv_heads = 8;
  one.q_lens = {1};
  one.k_lens = {30000};
  for (const int32_t num_q_heads : {32, 64}) {
    one.num_q_heads = num_q_heads;
    one.seed = rng();
    SCOPED_TRACE(absl::StrCat("one request, ", num_q_heads, "/8"));
    CheckBatch(one, {0});
  }

  BatchSpec graph = one;
  graph.q_lens = {1, 1, 1, 1, 1};
  graph.k_lens = {100, 30, 64, 1, 200};
  graph.total_q_tokens = 8;  // capacities: padding tokens past the live ones
  graph.max_seq_len_q = 1;
  graph.max_pages_per_request = 8192 / 16;
  for (const int32_t num_q_heads : {32, 64}) {
    graph.num_q_heads = num_q_heads;
    SCOPED_TRACE(absl::StrCat("graph, ", num_q_heads, "/8"));
    ExpectReplaysMatchEager(graph, {{{1, 1, 1, 0, 1}, {8000, 5000, 3, 1, 8192}},
                                    {{1, 1, 1, 1, 1}, {7000, 6000, 300, 1, 8000}}});
  }
}

// GQA ratios that are not powers of two, as models ship them (Llama 3.2 3B:
// 24 / 8 = 3, Qwen2.5 32B: 40 / 8 = 5, Qwen2 1.5B: 12 / 2 = 6, Qwen2.5 7B:
// 28 / 4 = 7), and large groups (32 / 2 = 16, 48 query heads on one KV head).
// A unit's rows (q x group) then end inside a 16-row block, one block holds
// parts of two query tokens, and a 64-row unit of 48 query heads is less
// than two tokens: every row -> (token, head) mapping divides by the group.
// Each ratio at every head_dim, the dtype, pages 1 / 16 / 64 and the mask
// modes rotating, under every plan, in three batches:
// - mixed (q = 1..8, then a long request of 20 tokens): the general
//   and paired kernels;
// - draft (q = 1 and 2): the decode kernels up to 16 rows;
// - decode (q = 1): at head_dim 64 KV head pairs wherever CanPairKvHeads
//   allows them (even KV heads, up to 16 rows per pair: 24 / 8, 40 / 8,
//   12 / 2 and 28 / 4);
// then graph replays bit for bit with eager at 28 / 4 and 40 / 8.
TEST_F(PagedAttentionGpuTest, UnevenGqaRatiosMatchReference) {
  struct Heads {
    int32_t num_q_heads, num_kv_heads;
  };
  const Heads heads[] = {{24, 8}, {40, 8}, {12, 2}, {28, 4}, {32, 2}, {48, 1}};
  std::vector<AttentionOptions> modes(4);
  modes[1].mask = MaskMode::kNonCausal;
  modes[2].window_left = 37;
  modes[3].softcap = 5.0f;
  const int32_t page_sizes[] = {1, 16, 64};
  struct Kind {
    const char* name;
    int32_t max_q;   // requests of q = 1..max_q
    int32_t last_q;  // and one long request of last_q tokens
  };
  const Kind kinds[] = {{"mixed", 8, 20}, {"draft", 2, 2}, {"decode", 1, 1}};
  std::mt19937_64 rng(TestSeed());
  int index = 0, paired_batches = 0;
  for (const Heads& h : heads) {
    const int32_t group = h.num_q_heads / h.num_kv_heads;
    for (const int32_t head_dim : {64, 128, 256}) {
      for (const Kind& kind : kinds) {
        BatchSpec spec;
        spec.dtype = index % 2 ? DType::kFloat16 : DType::kBFloat16;
        spec.head_dim = head_dim;
        spec.num_q_heads = h.num_q_heads;
        spec.num_kv_heads = h.num_kv_heads;
        spec.page_size = page_sizes[index % 3];
        spec.options = modes[index % 4];
        ++index;
        spec.seed = rng();
        for (int32_t i = 0; i < 8; ++i) {
          const int32_t q = 1 + i % kind.max_q;
          spec.q_lens.push_back(q);
          spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(q, 300)(rng));
        }
        // Long enough to be cut into pieces and merged under the balanced plan.
        spec.q_lens.push_back(kind.last_q);
        spec.k_lens.push_back(std::uniform_int_distribution<int32_t>(1000, 2000)(rng));
        const int32_t kv_heads_per_unit =
            MakeRandomBatch(OnThisGpu(spec)).metadata.plan.kv_heads_per_unit;
        SCOPED_TRACE(absl::StrCat(DTypeName(spec.dtype), " hd", head_dim, " page", spec.page_size,
                                  " heads ", h.num_q_heads, "/", h.num_kv_heads, " (group ", group,
                                  ") ", ModeName(spec.options), " ", kind.name,
                                  ", KV heads per unit ", kv_heads_per_unit));
        const bool pairs = CanPairKvHeads(head_dim, h.num_kv_heads, group, kind.last_q);
        EXPECT_EQ(kv_heads_per_unit, pairs ? 2 : 1);
        paired_batches += pairs;
        CheckBatch(spec);
      }
    }
  }
  // Decode at head_dim 64 of 24 / 8, 40 / 8, 12 / 2 and 28 / 4 (and 24 / 8's
  // draft: 12 rows per pair).
  EXPECT_EQ(paired_batches, 5);

  for (const Heads& h : {Heads{28, 4}, Heads{40, 8}}) {
    BatchSpec graph;
    graph.num_q_heads = h.num_q_heads;
    graph.num_kv_heads = h.num_kv_heads;
    graph.q_lens = {1, 2, 8, 1, 4};
    graph.k_lens = {100, 30, 64, 1, 200};
    graph.total_q_tokens = 5 * 8;  // capacities: padding tokens past the live ones
    graph.max_seq_len_q = 8;
    graph.max_pages_per_request = 8192 / 16;
    graph.seed = rng();
    SCOPED_TRACE(absl::StrCat("graph, ", h.num_q_heads, "/", h.num_kv_heads));
    ExpectReplaysMatchEager(graph, {{{8, 1, 3, 0, 5}, {8000, 5000, 3, 1, 8192}},
                                    {{1, 1, 1, 1, 1}, {7000, 6000, 300, 1, 8000}}});
  }
}

}  // namespace
}  // namespace paged_attention
