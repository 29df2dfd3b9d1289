#include "spec_decode/engine_batch.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {
namespace {

// The descriptor of a successful build (tests inspect its plain fields).
absl::StatusOr<BatchDescriptor> Descriptor(absl::StatusOr<ValidatedBatch> batch) {
  if (!batch.ok()) return batch.status();
  return batch->descriptor();
}

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int32_t kNumDraftTokens = 4;

// One step per mode, as an engine would run it.
struct ModeCase {
  std::string name;
  ForwardMode mode;
  std::vector<int32_t> prefix_lens;
  std::vector<int32_t> new_tokens;
  SpecInfo spec;
};

std::vector<ModeCase> AllModeCases() {
  const SpecInfo draft{.num_draft_tokens = kNumDraftTokens};
  return {
      {"Extend", ForwardMode::kExtend, {0, 17, 5}, {9, 1, 30}, {}},
      {"Mixed", ForwardMode::kMixed, {40, 0, 63}, {1, 12, 1}, {}},
      {"Decode", ForwardMode::kDecode, {12, 0, 47}, {1, 1, 1}, {}},
      {"DraftDecodeStep0",
       ForwardMode::kDecode,
       {12, 1, 47},
       {1, 1, 1},
       SpecInfo{.num_draft_tokens = kNumDraftTokens, .draft_step = 0}},
      {"DraftDecodeStep2",
       ForwardMode::kDecode,
       {12, 3, 47},
       {1, 1, 1},
       SpecInfo{.num_draft_tokens = kNumDraftTokens, .draft_step = 2}},
      {"TargetVerify", ForwardMode::kTargetVerify, {12, 0, 47}, {4, 4, 4}, draft},
      {"DraftExtend",
       ForwardMode::kDraftExtend,
       {12, 3, 47},
       {3, 1, 5},
       SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {2, 0, 4}}},
      {"DraftExtendV2", ForwardMode::kDraftExtendV2, {12, 3, 47}, {4, 4, 4}, draft},
  };
}

using RoundTripCase = std::tuple<ModeCase, int32_t, SeqLensConvention>;

class EngineBatchRoundTripTest : public ::testing::TestWithParam<RoundTripCase> {
 protected:
  KvPagePool MakePool(int32_t page_size) {
    absl::StatusOr<KvPagePool> pool =
        KvPagePool::Create(PagePoolConfig{.num_pages = 1 + (400 + page_size - 1) / page_size + 8,
                                          .page_size = page_size,
                                          .max_requests = 8,
                                          .max_context_len = 128,
                                          .num_draft_tokens = kNumDraftTokens});
    EXPECT_TRUE(pool.ok()) << pool.status();
    EXPECT_TRUE(pool->ShufflePageOrder(page_size).ok());
    return *std::move(pool);
  }
};

TEST_P(EngineBatchRoundTripTest, BuildsTheDescriptorTheEngineMeant) {
  const auto& [c, page_size, convention] = GetParam();
  KvPagePool pool = MakePool(page_size);
  absl::StatusOr<EngineBatchInputs> inputs =
      MakeEngineBatch(pool, c.mode, convention, c.prefix_lens, c.new_tokens, c.spec);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_EQ(inputs->mode, c.mode);
  EXPECT_EQ(inputs->seq_lens_convention, convention);
  const bool upstream_leaves_extend_empty =
      c.mode == ForwardMode::kDecode || c.mode == ForwardMode::kTargetVerify;
  EXPECT_EQ(inputs->extend_seq_lens.empty(), upstream_leaves_extend_empty);

  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(*inputs, pool));
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->batch_size(), static_cast<int32_t>(c.prefix_lens.size()));
  EXPECT_EQ(batch->spec, c.spec);
  size_t k = 0;
  for (size_t i = 0; i < c.prefix_lens.size(); ++i) {
    const RequestEntry& r = batch->requests[i];
    EXPECT_EQ(r.row, inputs->req_pool_indices[i]);
    EXPECT_EQ(r.prefix_len, c.prefix_lens[i]) << "request " << i;
    EXPECT_EQ(r.new_tokens, c.new_tokens[i]) << "request " << i;
    EXPECT_EQ(inputs->seq_lens[i],
              convention == SeqLensConvention::kIncludesNewTokens ? r.kv_len() : r.prefix_len);
    // The step's slots are allocated where the engine would have them.
    const bool reserved = c.mode == ForwardMode::kTargetVerify ||
                          c.mode == ForwardMode::kDraftExtendV2 || c.spec.draft_step >= 0;
    const int32_t committed = reserved ? r.prefix_len - std::max(0, c.spec.draft_step) : r.kv_len();
    EXPECT_EQ(*pool.Length(r.row), committed) << "request " << i;
    EXPECT_EQ(*pool.Length(r.row) + *pool.DraftLength(r.row), r.kv_len()) << "request " << i;
    for (int32_t j = 0; j < r.new_tokens; ++j, ++k) {
      EXPECT_EQ(batch->out_cache_loc[k], *pool.Slot(r.row, r.prefix_len + j));
      EXPECT_EQ(batch->positions[k], r.prefix_len + j);
    }
  }
  EXPECT_EQ(static_cast<size_t>(batch->num_tokens()), k);
  EXPECT_TRUE(ValidateBatchDescriptor(*batch, pool).ok());

  // Declared with the other convention, the same batch is rejected.
  EngineBatchInputs wrong = *inputs;
  wrong.seq_lens_convention = convention == SeqLensConvention::kIncludesNewTokens
                                  ? SeqLensConvention::kPrefixOnly
                                  : SeqLensConvention::kIncludesNewTokens;
  absl::StatusOr<BatchDescriptor> rejected = Descriptor(BuildBatchDescriptor(wrong, pool));
  ASSERT_FALSE(rejected.ok()) << "wrong convention accepted";
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rejected.status().message()), HasSubstr("request "));
}

INSTANTIATE_TEST_SUITE_P(
    AllModes, EngineBatchRoundTripTest,
    ::testing::Combine(::testing::ValuesIn(AllModeCases()), ::testing::Values(1, 3, 16, 64, 256),
                       ::testing::Values(SeqLensConvention::kPrefixOnly,
                                         SeqLensConvention::kIncludesNewTokens)),
    [](const ::testing::TestParamInfo<RoundTripCase>& info) {
      return absl::StrCat(std::get<0>(info.param).name, "_page", std::get<1>(info.param), "_",
                          std::get<2>(info.param) == SeqLensConvention::kPrefixOnly
                              ? "PrefixOnly"
                              : "IncludesNewTokens");
    });

// A pool of pages of 4 slots, rows of 32 tokens (+ the draft tokens).
KvPagePool PoolOf(int num_pages, int max_requests) {
  absl::StatusOr<KvPagePool> pool =
      KvPagePool::Create(PagePoolConfig{.num_pages = num_pages,
                                        .page_size = 4,
                                        .max_requests = max_requests,
                                        .max_context_len = 32,
                                        .num_draft_tokens = kNumDraftTokens});
  EXPECT_TRUE(pool.ok()) << pool.status();
  return *std::move(pool);
}

KvPagePool SmallPool() { return PoolOf(/*num_pages=*/5, /*max_requests=*/4); }

TEST(EngineBatchTest, IdleBatchIsEmptyAndBuilds) {
  KvPagePool pool = SmallPool();
  absl::StatusOr<EngineBatchInputs> inputs =
      MakeEngineBatch(pool, ForwardMode::kIdle, SeqLensConvention::kPrefixOnly, {}, {}, {});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_TRUE(inputs->req_pool_indices.empty());
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(*inputs, pool));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->batch_size(), 0);
}

TEST(EngineBatchTest, MakeFailsWhenSizesDiffer) {
  KvPagePool pool = SmallPool();
  absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
      pool, ForwardMode::kExtend, SeqLensConvention::kPrefixOnly, {1, 2}, {1, 2, 3}, {});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(inputs.status().message()),
              HasSubstr("prefix_lens has 2 entries, new_tokens has 3"));
}

TEST(EngineBatchTest, MakeFailsOnNegativeLength) {
  KvPagePool pool = SmallPool();
  absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
      pool, ForwardMode::kExtend, SeqLensConvention::kPrefixOnly, {1, -1}, {1, 2}, {});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(inputs.status().message()),
              HasSubstr("request 1: prefix_lens[1] = -1, new_tokens[1] = 2 must not be negative"));
  EXPECT_EQ(pool.active_requests(), 0);
  EXPECT_EQ(pool.used_pages(), 0);
}

TEST(EngineBatchTest, MakeFailsWhenDraftStepExceedsPrefix) {
  KvPagePool pool = SmallPool();
  absl::StatusOr<EngineBatchInputs> inputs =
      MakeEngineBatch(pool, ForwardMode::kDecode, SeqLensConvention::kPrefixOnly, {1}, {1},
                      SpecInfo{.num_draft_tokens = kNumDraftTokens, .draft_step = 2});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(inputs.status().message()),
      HasSubstr("request 0: prefix_lens[0] = 1 is shorter than spec.draft_step 2 x spec.topk 1"));
}

TEST(EngineBatchTest, MakeFailsWhenPoolIsExhaustedAndFreesWhatItCreated) {
  KvPagePool pool = SmallPool();  // 4 usable pages of 4 slots
  absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
      pool, ForwardMode::kExtend, SeqLensConvention::kIncludesNewTokens, {8, 4}, {4, 4}, {});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(inputs.status().message()), HasSubstr("Extend(row=2"));
  EXPECT_EQ(pool.active_requests(), 0);
  EXPECT_EQ(pool.used_pages(), 0);
}

TEST(EngineBatchTest, MakeFailsPastRowWidthWithoutOverflowAndFreesWhatItCreated) {
  KvPagePool pool = PoolOf(/*num_pages=*/64, /*max_requests=*/4);
  const int32_t huge = std::numeric_limits<int32_t>::max();
  const absl::StatusOr<EngineBatchInputs> inputs =
      MakeEngineBatch(pool, ForwardMode::kDecode, SeqLensConvention::kPrefixOnly, {3, 5}, {1, huge},
                      SpecInfo{.draft_step = 2});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(inputs.status().message()),
              HasSubstr("request 1: prefix_lens[1] = 5 + new_tokens[1] = 2147483647 exceeds the "
                        "pool's row width 36"));
  EXPECT_EQ(pool.active_requests(), 0);
  EXPECT_EQ(pool.used_pages(), 0);
}

TEST(EngineBatchTest, MakeFailsWhenRowsRunOutAndFreesWhatItCreated) {
  KvPagePool pool = PoolOf(/*num_pages=*/64, /*max_requests=*/3);
  const absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
      pool, ForwardMode::kExtend, SeqLensConvention::kPrefixOnly, {3, 5, 7}, {1, 1, 1}, SpecInfo{});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(inputs.status().message()), HasSubstr("all 2 request rows are in use"));
  EXPECT_EQ(pool.active_requests(), 0);
  EXPECT_EQ(pool.used_pages(), 0);
}

// What a pool hands out from now on: requests created until the rows run
// out, each extended page by page until the pages run out (row and slots).
std::vector<std::vector<int32_t>> FutureAllocations(KvPagePool pool) {
  std::vector<std::vector<int32_t>> allocations;
  for (absl::StatusOr<int32_t> row = pool.CreateRequest(); row.ok(); row = pool.CreateRequest()) {
    std::vector<int32_t> taken = {*row};
    while (pool.Extend(*row, pool.page_size()).ok()) {
      taken.push_back(pool.Slot(*row, *pool.Length(*row) - 1).value());
    }
    allocations.push_back(std::move(taken));
  }
  return allocations;
}

// Regression: a failed call freed its requests oldest first, which put the
// pool's row and page stacks back in another order: counts were conserved
// but later requests got other rows and pages than from an untouched pool.
TEST(EngineBatchTest, FailedMakeLeavesThePoolHandingOutWhatAFreshPoolWould) {
  const PagePoolConfig config{.num_pages = 13,
                              .page_size = 2,
                              .max_requests = 5,
                              .max_context_len = 32,
                              .num_draft_tokens = 2};
  struct Failing {
    std::string name;
    ForwardMode mode;
    std::vector<int32_t> prefix_lens, new_tokens;
    SpecInfo spec;
    absl::StatusCode code;
  };
  const std::vector<Failing> cases = {
      {"pages run out in the last request",
       ForwardMode::kExtend,
       {3, 5, 9},
       {2, 1, 9},
       {},
       absl::StatusCode::kResourceExhausted},
      {"pages run out in a draft reserve",
       ForwardMode::kTargetVerify,
       {4, 6, 11},
       {2, 2, 2},
       SpecInfo{.num_draft_tokens = 2},
       absl::StatusCode::kResourceExhausted},
      {"rows run out",
       ForwardMode::kDecode,
       {1, 2, 3, 4, 5},
       {1, 1, 1, 1, 1},
       {},
       absl::StatusCode::kResourceExhausted},
      {"a bad request after good ones",
       ForwardMode::kExtend,
       {1, 2, -3},
       {1, 1, 1},
       {},
       absl::StatusCode::kInvalidArgument},
  };
  for (const uint64_t seed : {1, 7}) {
    KvPagePool fresh = KvPagePool::Create(config).value();
    ASSERT_TRUE(fresh.ShufflePageOrder(seed).ok());
    // A live request the batch does not own, so the stacks are not trivially full.
    const int32_t other = fresh.CreateRequest().value();
    ASSERT_TRUE(fresh.Extend(other, 3).ok());
    const std::vector<std::vector<int32_t>> expected = FutureAllocations(fresh);
    for (const Failing& c : cases) {
      SCOPED_TRACE(absl::StrCat(c.name, ", seed ", seed));
      KvPagePool pool = fresh;
      const absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
          pool, c.mode, SeqLensConvention::kPrefixOnly, c.prefix_lens, c.new_tokens, c.spec);
      ASSERT_EQ(inputs.status().code(), c.code) << inputs.status();
      EXPECT_EQ(pool.active_requests(), fresh.active_requests());
      EXPECT_EQ(pool.used_pages(), fresh.used_pages());
      EXPECT_TRUE(std::equal(pool.req_to_token().begin(), pool.req_to_token().end(),
                             fresh.req_to_token().begin()));
      EXPECT_EQ(FutureAllocations(pool), expected);
    }
  }
}

// Regression: TARGET_VERIFY and DECODE pass no extend_seq_lens, so a count
// other than the mode's surfaced later as unwritten rows blamed on the
// seq_lens convention. It is named here, before the pool is touched.
TEST(EngineBatchTest, MakeNamesACountTheModeFixes) {
  struct Case {
    ForwardMode mode;
    std::vector<int32_t> new_tokens;
    SpecInfo spec;
    std::string message;
  };
  const std::vector<Case> cases = {
      {ForwardMode::kTargetVerify,
       {4, 3},
       SpecInfo{.num_draft_tokens = 4},
       "request 1: new_tokens[1] = 3 but TARGET_VERIFY verifies spec.num_draft_tokens = 4 tokens "
       "per request"},
      {ForwardMode::kDraftExtendV2,
       {5, 4},
       SpecInfo{.num_draft_tokens = 4},
       "request 0: new_tokens[0] = 5 but DRAFT_EXTEND_V2 extends spec.num_draft_tokens = 4"},
      {ForwardMode::kDecode,
       {1, 2},
       {},
       "request 1: new_tokens[1] = 2 but DECODE writes 1 token per request"},
      {ForwardMode::kDraftExtend,
       {3, 3},
       SpecInfo{.num_draft_tokens = 4, .accept_lengths = {2, 1}},
       "request 1: new_tokens[1] = 3 but DRAFT_EXTEND extends spec.accept_lengths[1] + 1 = 2"},
  };
  for (const Case& c : cases) {
    KvPagePool pool = SmallPool();
    const absl::StatusOr<EngineBatchInputs> inputs =
        MakeEngineBatch(pool, c.mode, SeqLensConvention::kPrefixOnly, {4, 2}, c.new_tokens, c.spec);
    ASSERT_EQ(inputs.status().code(), absl::StatusCode::kInvalidArgument) << inputs.status();
    EXPECT_THAT(std::string(inputs.status().message()), HasSubstr(c.message));
    EXPECT_THAT(std::string(inputs.status().message()), Not(HasSubstr("seq_lens")));
    EXPECT_EQ(pool.active_requests(), 0);
  }
}

TEST(EngineBatchTest, MakeFailsOnModeOrConventionOutsideTheEnum) {
  KvPagePool pool = SmallPool();
  absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
      pool, static_cast<ForwardMode>(9), SeqLensConvention::kPrefixOnly, {1}, {1}, {});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(inputs.status().message()), HasSubstr("mode = 9 is not a ForwardMode"));
  inputs =
      MakeEngineBatch(pool, ForwardMode::kExtend, static_cast<SeqLensConvention>(2), {1}, {1}, {});
  ASSERT_EQ(inputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(inputs.status().message()),
              HasSubstr("convention = 2 is not a SeqLensConvention value"));
  EXPECT_EQ(pool.active_requests(), 0);
}

}  // namespace
}  // namespace paged_attention
