#include "spec_decode/batch_descriptor.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/engine_batch.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {
namespace {

// The descriptor of a successful build (tests inspect its plain fields).
absl::StatusOr<BatchDescriptor> Descriptor(absl::StatusOr<ValidatedBatch> batch) {
  if (!batch.ok()) return batch.status();
  return batch->descriptor();
}

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int32_t kPageSize = 4;
constexpr int32_t kNumDraftTokens = 4;

KvPagePool MakePool() {
  absl::StatusOr<KvPagePool> pool =
      KvPagePool::Create(PagePoolConfig{.num_pages = 128,
                                        .page_size = kPageSize,
                                        .max_requests = 8,
                                        .max_context_len = 60,
                                        .num_draft_tokens = kNumDraftTokens});
  EXPECT_TRUE(pool.ok()) << pool.status();
  // Non-contiguous pages, so a slot off by one page is never right by luck.
  EXPECT_TRUE(pool->ShufflePageOrder(3).ok());
  return *std::move(pool);
}

class BatchDescriptorTest : public ::testing::Test {
 protected:
  // A consistent engine batch (see engine_batch.h) in `pool_`.
  EngineBatchInputs Make(ForwardMode mode, SeqLensConvention convention,
                         std::vector<int32_t> prefix_lens, std::vector<int32_t> new_tokens,
                         const SpecInfo& spec = {}) {
    absl::StatusOr<EngineBatchInputs> inputs =
        MakeEngineBatch(pool_, mode, convention, prefix_lens, new_tokens, spec);
    EXPECT_TRUE(inputs.ok()) << inputs.status();
    return inputs.ok() ? *std::move(inputs) : EngineBatchInputs{};
  }

  EngineBatchInputs MakeExtend() {
    return Make(ForwardMode::kExtend, SeqLensConvention::kIncludesNewTokens, {10, 0, 7}, {3, 5, 1});
  }

  // Expects Build to fail with `code` and every substring in `parts`.
  void ExpectBuildError(const EngineBatchInputs& inputs, absl::StatusCode code,
                        std::vector<std::string> parts) {
    absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(inputs, pool_));
    ASSERT_FALSE(batch.ok()) << "built a descriptor from an invalid batch";
    EXPECT_EQ(batch.status().code(), code) << batch.status();
    for (const std::string& part : parts) {
      EXPECT_THAT(std::string(batch.status().message()), HasSubstr(part));
    }
  }

  KvPagePool pool_ = MakePool();
};

// ----- Happy paths.

TEST_F(BatchDescriptorTest, ExtendKeepsPrefixAndNewTokensSeparate) {
  // The skewed-prefix regression case: prefix [100, 5], extend [1, 8].
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(PagePoolConfig{.num_pages = 64,
                                                                      .page_size = 4,
                                                                      .max_requests = 4,
                                                                      .max_context_len = 128,
                                                                      .num_draft_tokens = 4});
  ASSERT_TRUE(pool.ok());
  absl::StatusOr<EngineBatchInputs> inputs =
      MakeEngineBatch(*pool, ForwardMode::kExtend, SeqLensConvention::kIncludesNewTokens, {100, 5},
                      {1, 8}, SpecInfo{});
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_EQ(inputs->seq_lens, (std::vector<int32_t>{101, 13}));
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(*inputs, *pool));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->mode, ForwardMode::kExtend);
  EXPECT_EQ(batch->page_size, 4);
  ASSERT_EQ(batch->batch_size(), 2);
  EXPECT_EQ(batch->num_tokens(), 9);
  EXPECT_EQ(batch->requests[0], (RequestEntry{.row = 1, .prefix_len = 100, .new_tokens = 1}));
  EXPECT_EQ(batch->requests[1], (RequestEntry{.row = 2, .prefix_len = 5, .new_tokens = 8}));
  EXPECT_EQ(batch->requests[0].kv_len(), 101);
  EXPECT_EQ(batch->requests[1].kv_len(), 13);
  EXPECT_EQ(batch->positions, (std::vector<int32_t>{100, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(batch->out_cache_loc, inputs->out_cache_loc);
  EXPECT_EQ(batch->out_cache_loc[0], *pool->Slot(1, 100));
  EXPECT_TRUE(ValidateBatchDescriptor(*batch, *pool).ok());
}

TEST_F(BatchDescriptorTest, DerivesPositionsWhenEmpty) {
  EngineBatchInputs inputs = MakeExtend();
  const std::vector<int32_t> positions = inputs.positions;
  inputs.positions.clear();
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(inputs, pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->positions, positions);
}

TEST_F(BatchDescriptorTest, DecodeAndTargetVerifyDefaultTheirNewTokens) {
  EngineBatchInputs decode =
      Make(ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens, {9, 4}, {1, 1});
  ASSERT_TRUE(decode.extend_seq_lens.empty());
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(decode, pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->requests[1].prefix_len, 4);
  EXPECT_EQ(batch->requests[1].new_tokens, 1);

  EngineBatchInputs verify =
      Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {9, 4},
           {kNumDraftTokens, kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  ASSERT_TRUE(verify.extend_seq_lens.empty());
  batch = Descriptor(BuildBatchDescriptor(verify, pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->requests[0].prefix_len, 9);
  EXPECT_EQ(batch->requests[0].new_tokens, kNumDraftTokens);
}

TEST_F(BatchDescriptorTest, DraftExtendTakesNewTokensFromAcceptLengths) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens, {20, 30}, {3, 1},
           SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {2, 0}});
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(inputs, pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  inputs.extend_seq_lens.clear();  // accept_lengths alone is enough
  absl::StatusOr<BatchDescriptor> from_accept = Descriptor(BuildBatchDescriptor(inputs, pool_));
  ASSERT_TRUE(from_accept.ok()) << from_accept.status();
  EXPECT_EQ(*from_accept, *batch);
  EXPECT_EQ(batch->requests[0].new_tokens, 3);
  EXPECT_EQ(batch->requests[1].new_tokens, 1);
}

TEST_F(BatchDescriptorTest, IdleBatchIsEmpty) {
  EngineBatchInputs inputs;
  inputs.mode = ForwardMode::kIdle;
  inputs.seq_lens_convention = SeqLensConvention::kPrefixOnly;
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(inputs, pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->batch_size(), 0);
  EXPECT_EQ(batch->num_tokens(), 0);
}

// ----- DRAFT_EXTEND_V2: the convention upstream could not agree on.

TEST_F(BatchDescriptorTest, DraftExtendV2BothConventionsGiveIdenticalDescriptors) {
  const SpecInfo spec{.num_draft_tokens = kNumDraftTokens};
  // Production: seq_lens = prefix + num_draft_tokens.
  EngineBatchInputs production =
      Make(ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens, {12, 3, 40},
           {kNumDraftTokens, kNumDraftTokens, kNumDraftTokens}, spec);
  // The old test fixture's form of the same batch: seq_lens = prefix.
  EngineBatchInputs fixture = production;
  fixture.seq_lens_convention = SeqLensConvention::kPrefixOnly;
  for (int32_t& seq_len : fixture.seq_lens) seq_len -= kNumDraftTokens;
  absl::StatusOr<BatchDescriptor> a = Descriptor(BuildBatchDescriptor(production, pool_));
  absl::StatusOr<BatchDescriptor> b = Descriptor(BuildBatchDescriptor(fixture, pool_));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->requests[0].prefix_len, 12);
  EXPECT_EQ(a->requests[0].kv_len(), 16);
}

TEST_F(BatchDescriptorTest, DraftExtendV2WithPrefixOnlyDeclaredForProductionSeqLensIsRejected) {
  // seq_lens already include the draft tokens (production), declared as
  // prefix only: the #26512 double count. Rejected naming the request.
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens, {12, 3},
           {kNumDraftTokens, kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.seq_lens_convention = SeqLensConvention::kPrefixOnly;
  ExpectBuildError(
      inputs, absl::StatusCode::kInvalidArgument,
      {"request 0:", "seq_lens_convention=prefix_only", "seq_lens[0] = 16", "puts prefix at 16",
       "row 1 has only 16 written slots", "(Length 12 + DraftLength 4)"});
}

TEST_F(BatchDescriptorTest, DraftExtendV2WithIncludesDeclaredForFixtureSeqLensIsRejected) {
  // The other way round: seq_lens = prefix (the old fixture), declared as
  // including the new tokens, which puts the prefix num_draft_tokens too early.
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtendV2, SeqLensConvention::kPrefixOnly, {12, 9},
           {kNumDraftTokens, kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.seq_lens_convention = SeqLensConvention::kIncludesNewTokens;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 0:", absl::StrCat("out_cache_loc[0] = ", inputs.out_cache_loc[0]),
                    absl::StrCat("req_to_token[row 1][8] = ", *pool_.Slot(1, 8)),
                    "seq_lens_convention=includes_new_tokens with seq_lens[0] = 12 puts prefix "
                    "at 8",
                    "the rows written this step are not where the convention says"});
}

TEST_F(BatchDescriptorTest, DraftExtendV2DoubleCountInOneRequestNamesThatRequest) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens, {12, 20, 7},
           {kNumDraftTokens, kNumDraftTokens, kNumDraftTokens},
           SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.seq_lens[1] += kNumDraftTokens;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1:", "seq_lens[1] = 28", "puts prefix at 24"});
}

// ----- Error paths: one test each, code and message.

TEST_F(BatchDescriptorTest, BuildFailsWithoutSeqLensConvention) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.seq_lens_convention.reset();
  ExpectBuildError(
      inputs, absl::StatusCode::kInvalidArgument,
      {"seq_lens_convention must be named", "prefix_only or includes_new_tokens", "EXTEND batch"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenSeqLensCountDiffers) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.seq_lens.push_back(1);
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"seq_lens has 4 entries, batch has 3 requests"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenExtendSeqLensCountDiffers) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.extend_seq_lens.pop_back();
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"extend_seq_lens has 2 entries, batch has 3 requests"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenExtendHasNoExtendSeqLens) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.extend_seq_lens.clear();
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"extend_seq_lens has 0 entries, batch has 3 requests"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnZeroExtendSeqLen) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.extend_seq_lens[2] = 0;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 2: extend_seq_lens[2] = 0 must be >= 1"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenDraftExtendV2ExtendsOtherThanNumDraftTokens) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens, {12, 3},
           {kNumDraftTokens, kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.extend_seq_lens[1] = 3;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: extend_seq_lens[1] = 3",
                    "DRAFT_EXTEND_V2 extends exactly spec.num_draft_tokens per request = 4"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenDraftExtendLengthsDisagreeWithAcceptLengths) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens, {20, 30}, {3, 1},
           SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {2, 0}});
  inputs.spec.accept_lengths[1] = 1;
  ExpectBuildError(
      inputs, absl::StatusCode::kInvalidArgument,
      {"request 1: extend_seq_lens[1] = 1", "DRAFT_EXTEND extends spec.accept_lengths[1] + 1 = 2"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenDraftExtendHasNoLengths) {
  EngineBatchInputs inputs = Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens,
                                  {20}, {3}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.extend_seq_lens.clear();
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"DRAFT_EXTEND needs extend_seq_lens or spec.accept_lengths"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenAcceptLengthsCountDiffers) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens, {20, 30}, {3, 1},
           SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {2, 0}});
  inputs.spec.accept_lengths.push_back(0);
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.accept_lengths has 3 entries, batch has 2 requests"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnNegativeAcceptLength) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens, {20, 30}, {3, 1},
           SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {2, 0}});
  inputs.spec.accept_lengths[1] = -1;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: spec.accept_lengths[1] = -1 is negative"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnAcceptLengthsOutsideDraftExtend) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.spec.accept_lengths = {1, 1, 1};
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.accept_lengths has 3 entries but mode is EXTEND"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenDecodeWritesMoreThanOneToken) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens, {9, 4}, {1, 1});
  inputs.extend_seq_lens = {1, 2};
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: extend_seq_lens[1] = 2", "DECODE writes 1 token per request = 1"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenTargetVerifyCountDiffersFromNumDraftTokens) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {9, 4},
           {kNumDraftTokens, kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.extend_seq_lens = {4, 5};
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: extend_seq_lens[1] = 5",
                    "TARGET_VERIFY verifies spec.num_draft_tokens per request = 4"});
}

// ----- Trees (topk > 1).

TEST_F(BatchDescriptorTest, TreeVerifyCarriesAncestorMasksAndDepthPositions) {
  // root -> 0, 1; 0 -> 2; 1 -> 3 (two requests, the second a chain).
  SpecInfo spec{.num_draft_tokens = kNumDraftTokens, .topk = 2};
  spec.tree_parents = {-1, -1, 0, 1, /*request 1:*/ -1, 0, 1, 2};
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly,
                                  {9, 5}, {kNumDraftTokens, kNumDraftTokens}, spec);
  EXPECT_EQ(inputs.positions, (std::vector<int32_t>{9, 9, 10, 10, 5, 6, 7, 8}));
  absl::StatusOr<ValidatedBatch> batch = BuildBatchDescriptor(inputs, pool_);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_TRUE(batch->has_tree());
  EXPECT_EQ(batch->tree_draft_keys(), kNumDraftTokens);
  EXPECT_EQ(batch->tree_masks(), (std::vector<uint64_t>{0b0001, 0b0010, 0b0101, 0b1010, 0b0001,
                                                        0b0011, 0b0111, 0b1111}));
  EXPECT_EQ(batch->requests()[0].kv_len(), 9 + kNumDraftTokens);
  EXPECT_EQ(batch->tree_parents(), spec.tree_parents);
  // Derived positions follow the tree too, and the descriptor revalidates.
  inputs.positions.clear();
  absl::StatusOr<ValidatedBatch> derived = BuildBatchDescriptor(inputs, pool_);
  ASSERT_TRUE(derived.ok()) << derived.status();
  EXPECT_EQ(derived->descriptor().positions, batch->descriptor().positions);
  absl::StatusOr<ValidatedBatch> again = ValidateBatchDescriptor(batch->descriptor(), pool_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->tree_masks(), batch->tree_masks());
}

TEST_F(BatchDescriptorTest, ChainVerifyWithoutParentsIsNotATree) {
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {9},
                                  {kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  absl::StatusOr<ValidatedBatch> batch = BuildBatchDescriptor(inputs, pool_);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_FALSE(batch->has_tree());
  EXPECT_TRUE(batch->tree_masks().empty());
  EXPECT_TRUE(batch->tree_parents().empty());
}

TEST_F(BatchDescriptorTest, TreeDraftDecodeStepWritesOneTokenPerBranch) {
  // Step 2 of topk 3: committed 7, the earlier steps' 6 drafts, 3 new tokens.
  const SpecInfo spec{.num_draft_tokens = kNumDraftTokens, .draft_step = 2, .topk = 3};
  EngineBatchInputs inputs =
      Make(ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens, {7 + 6}, {3}, spec);
  EXPECT_EQ(inputs.seq_lens, (std::vector<int32_t>{16}));
  EXPECT_EQ(inputs.positions, (std::vector<int32_t>{9, 9, 9}));
  absl::StatusOr<ValidatedBatch> batch = BuildBatchDescriptor(inputs, pool_);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->requests()[0], (RequestEntry{.row = 1, .prefix_len = 13, .new_tokens = 3}));
  EXPECT_EQ(batch->tree_draft_keys(), 9);
  EXPECT_EQ(batch->tree_masks(), (std::vector<uint64_t>{0b001001001, 0b010010010, 0b100100100}));
  EXPECT_EQ(batch->tree_parents(), (std::vector<int32_t>{-1, -1, -1, 0, 1, 2, 3, 4, 5}));
}

TEST_F(BatchDescriptorTest, BuildFailsOnTreeVerifyWithoutParents) {
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {9},
                                  {kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.spec.topk = 4;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.topk = 4 in TARGET_VERIFY needs spec.tree_parents"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnMalformedTreeNamingRequestAndNode) {
  SpecInfo spec{.num_draft_tokens = kNumDraftTokens, .topk = 2};
  spec.tree_parents = {-1, 0, 1, 2, -1, -1, 0, 0};
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly,
                                  {9, 5}, {kNumDraftTokens, kNumDraftTokens}, spec);
  inputs.positions.clear();
  inputs.spec.tree_parents = {-1, 0, 1, 2, -1, -1, 3, 0};  // request 1, node 2: a later parent
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: spec.tree_parents node 2 has parent 3"});
  inputs.spec.tree_parents = {-1, 0, 1, 2, -1, -1, -1, 0};  // three children of the root
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: spec.tree_parents node 2 is child 3 of the root", "spec.topk = 2"});
  inputs.spec.tree_parents = {-1, 0, 1};
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.tree_parents has 3 entries, expected batch 2 x spec.num_draft_tokens 4"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnTreePositionsThatIgnoreDepth) {
  SpecInfo spec{.num_draft_tokens = kNumDraftTokens, .topk = 2};
  spec.tree_parents = {-1, -1, 0, 1};
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {9},
                                  {kNumDraftTokens}, spec);
  inputs.positions = {9, 10, 11, 12};  // chain positions
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 0: positions[1] = 10 but committed length 9 + the depth of its tree "
                    "node, 0 = 9"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnTreeParentsOutsideTargetVerify) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.spec.tree_parents = {-1};
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.tree_parents has 1 entries but mode is EXTEND"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnTreeDraftStepPastSixtyFourKeys) {
  EngineBatchInputs inputs = Make(ForwardMode::kDecode, SeqLensConvention::kPrefixOnly, {9}, {1},
                                  SpecInfo{.num_draft_tokens = kNumDraftTokens, .draft_step = 1});
  inputs.spec.num_draft_tokens = 16;
  inputs.spec.draft_step = 7;
  inputs.spec.topk = 9;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.draft_step = 7 with spec.topk = 9", "= 72 draft keys"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnTreeDraftStepWithOneTokenPerRequest) {
  EngineBatchInputs inputs = Make(ForwardMode::kDecode, SeqLensConvention::kPrefixOnly, {9}, {1},
                                  SpecInfo{.num_draft_tokens = kNumDraftTokens, .draft_step = 1});
  inputs.spec.topk = 2;
  inputs.extend_seq_lens = {1};
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 0: extend_seq_lens[0] = 1",
                    "a tree draft step writes spec.topk tokens per request = 2"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnNonPositiveTopk) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.spec.topk = 0;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument, {"spec.topk = 0 must be >= 1"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnNegativeNumDraftTokens) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.spec.num_draft_tokens = -2;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.num_draft_tokens = -2 is negative"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenTargetVerifyHasNoDraftTokens) {
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {9},
                                  {kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.spec.num_draft_tokens = 0;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.num_draft_tokens = 0 must be >= 1 for TARGET_VERIFY"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnDraftStepBelowMinusOne) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens, {9}, {1});
  inputs.spec.draft_step = -2;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.draft_step = -2 must be >= 0, or -1"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnDraftStepOutsideDecode) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.spec.draft_step = 0;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.draft_step = 0 is set but mode is EXTEND"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnNegativeSeqLen) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.seq_lens[1] = -3;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: seq_lens[1] = -3 is negative"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenPrefixWouldBeNegative) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.seq_lens[1] = 2;  // 5 new tokens
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: seq_lens[1] = 2 minus new_tokens 5 gives prefix_len -3",
                    "seq_lens_convention=includes_new_tokens"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnNonEmptyIdleBatch) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.mode = ForwardMode::kIdle;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"an IDLE batch must be empty, got 3 req_pool_indices"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnEmptyNonIdleBatch) {
  EngineBatchInputs inputs;
  inputs.mode = ForwardMode::kDecode;
  inputs.seq_lens_convention = SeqLensConvention::kIncludesNewTokens;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"a DECODE batch has no requests (an empty batch is IDLE)"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenOutCacheLocCountDiffers) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.out_cache_loc.pop_back();
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"out_cache_loc has 8 entries but the requests' new_tokens sum to 9"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenPositionsCountDiffers) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.positions.push_back(0);
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"positions has 10 entries but the batch has 9 tokens"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenPositionDiffers) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.positions[4] = 99;  // request 1 (prefix 0), token 1
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: positions[4] = 99 but prefix_len 0 + token 1 = 1"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnDummyRow) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.req_pool_indices[2] = 0;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 2: requests[2].row = 0 is the reserved dummy row"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnRowOutsidePool) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.req_pool_indices[1] = 8;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: requests[1].row = 8 is outside [1, 8)"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnInactiveRow) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.req_pool_indices[1] = 6;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: requests[1].row = 6 is not an active request"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnRepeatedRow) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.req_pool_indices[2] = inputs.req_pool_indices[0];
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 2: requests[2].row = 1 repeats requests[0].row"});
}

TEST_F(BatchDescriptorTest, BuildFailsPastRowWidth) {
  // Row width 64; prefix 58 + 4 read as prefix-only puts the prefix at 62.
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens, {58},
           {kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.seq_lens_convention = SeqLensConvention::kPrefixOnly;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 0: prefix_len 62 + new_tokens 4 = 66 exceeds row width 64 of row 1"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnUnwrittenSlots) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.seq_lens_convention = SeqLensConvention::kPrefixOnly;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 0: prefix_len 13 + new_tokens 3 = 16 but row 1 has only 13 written "
                    "slots (Length 13 + DraftLength 0)",
                    "this step would read unwritten rows"});
}

TEST_F(BatchDescriptorTest, BuildFailsWhenOutCacheLocIsNotTheRowsSlots) {
  EngineBatchInputs inputs = MakeExtend();
  const int32_t wrong = *pool_.Slot(2, 0);  // request 1's slot, in request 0's place
  inputs.out_cache_loc[1] = wrong;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {absl::StrCat("request 0: out_cache_loc[1] = ", wrong,
                                 " but req_to_token[row 1][11] = ", *pool_.Slot(1, 11)),
                    "not where the convention says"});
}

TEST_F(BatchDescriptorTest, ValidateFailsOnPageSizeMismatch) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(MakeExtend(), pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->page_size = 16;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("page_size = 16 differs from the pool's page size 4"));
}

TEST_F(BatchDescriptorTest, ValidateFailsOnNegativePrefixLen) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(MakeExtend(), pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->requests[1].prefix_len = -1;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("request 1: requests[1].prefix_len = -1 is negative"));
}

TEST_F(BatchDescriptorTest, ValidateFailsOnZeroNewTokens) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(MakeExtend(), pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->requests[2].new_tokens = 0;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("request 2: requests[2].new_tokens = 0 must be >= 1"));
}

TEST_F(BatchDescriptorTest, ValidateFailsOnShiftedPrefixWithoutConventionContext) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(MakeExtend(), pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->requests[0].prefix_len -= 1;
  for (int32_t k = 0; k < 3; ++k) batch->positions[k] -= 1;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      AllOf(HasSubstr(absl::StrCat("request 0: out_cache_loc[0] = ", batch->out_cache_loc[0],
                                   " but req_to_token[row 1][9]")),
            HasSubstr("(prefix_len 9, new_tokens 3)"), HasSubstr("not where prefix_len says")));
}

TEST_F(BatchDescriptorTest, ValidateFailsOnIdleWithRequests) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(MakeExtend(), pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->mode = ForwardMode::kIdle;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("an IDLE batch must be empty, got 3 requests"));
}

TEST(SeqLensConventionTest, NamesUsedInMessages) {
  EXPECT_EQ(SeqLensConventionName(SeqLensConvention::kPrefixOnly), "prefix_only");
  EXPECT_EQ(SeqLensConventionName(SeqLensConvention::kIncludesNewTokens), "includes_new_tokens");
}

TEST_F(BatchDescriptorTest, BuildFailsOnAcceptLengthWithNoRoomForBonusToken) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens, {10, 3}, {2, 1},
           SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {1, 0}});
  // Drafts as many as accepted, so only the bonus token's int32 room is wrong.
  inputs.spec.num_draft_tokens = std::numeric_limits<int32_t>::max();
  inputs.spec.accept_lengths[1] = std::numeric_limits<int32_t>::max();
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: spec.accept_lengths[1] = 2147483647 leaves no room"});
}

// Regression: positions used to be derived from unchecked lengths, so one
// huge extend_seq_lens entry allocated gigabytes (and overflowed int32)
// before validation could say no.
TEST_F(BatchDescriptorTest, BuildRejectsHugeLengthsBeforeDerivingPositions) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.positions.clear();
  inputs.extend_seq_lens[1] = std::numeric_limits<int32_t>::max();
  inputs.seq_lens[1] = std::numeric_limits<int32_t>::max();
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: prefix_len 0 + new_tokens 2147483647 = 2147483647 exceeds row "
                    "width 64"});
  inputs.extend_seq_lens[1] = 1 << 30;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 1: prefix_len 1073741823 + new_tokens 1073741824 = 2147483647"});
}

TEST_F(BatchDescriptorTest, ValidateFailsWhenNewTokensDisagreeWithTheMode) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(
      Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly, {5, 9},
           {kNumDraftTokens, kNumDraftTokens}, SpecInfo{.num_draft_tokens = kNumDraftTokens}),
      pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->requests[1].new_tokens = 2;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("request 1: requests[1].new_tokens = 2 but TARGET_VERIFY verifies "
                        "spec.num_draft_tokens per request = 4"));
}

TEST_F(BatchDescriptorTest, ValidateFailsOnEmptyNonIdleBatch) {
  BatchDescriptor batch;
  batch.mode = ForwardMode::kDecode;
  batch.page_size = kPageSize;
  const absl::Status status = ValidateBatchDescriptor(batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("a DECODE batch has no requests (an empty batch is IDLE)"));
}

TEST_F(BatchDescriptorTest, ValidateFailsOnBadSpecNamingTheField) {
  BatchDescriptor batch;
  batch.mode = ForwardMode::kDraftExtendV2;
  batch.page_size = kPageSize;
  const absl::Status status = ValidateBatchDescriptor(batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("spec.num_draft_tokens = 0 must be >= 1 for DRAFT_EXTEND_V2"));
}

// ----- Silent wrong answers: values every mode rule used to wave through.

TEST_F(BatchDescriptorTest, ValidateFailsOnModeOutsideTheEnum) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(
      Make(ForwardMode::kDecode, SeqLensConvention::kIncludesNewTokens, {9, 4}, {1, 1}), pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->mode = static_cast<ForwardMode>(42);
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("mode = 42 is not a ForwardMode value"));
}

TEST_F(BatchDescriptorTest, BuildFailsOnModeOrConventionOutsideTheEnum) {
  EngineBatchInputs inputs = MakeExtend();
  inputs.mode = static_cast<ForwardMode>(-1);
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"mode = -1 is not a ForwardMode value"});
  inputs = MakeExtend();
  inputs.seq_lens_convention = static_cast<SeqLensConvention>(7);
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"seq_lens_convention = 7 is not a SeqLensConvention value"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnAcceptLengthBeyondTheDrafts) {
  EngineBatchInputs inputs =
      Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens, {20, 30}, {3, 1},
           SpecInfo{.num_draft_tokens = kNumDraftTokens, .accept_lengths = {2, 0}});
  inputs.spec.num_draft_tokens = 1;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"request 0: spec.accept_lengths[0] = 2 exceeds spec.num_draft_tokens = 1"});
}

TEST_F(BatchDescriptorTest, BuildFailsOnDraftExtendWithoutDrafts) {
  EngineBatchInputs inputs = Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens,
                                  {20, 30}, {3, 1}, SpecInfo{.num_draft_tokens = kNumDraftTokens});
  inputs.spec.num_draft_tokens = 0;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.num_draft_tokens = 0 must be >= 1 for DRAFT_EXTEND"});
}

TEST_F(BatchDescriptorTest, ValidateFailsOnDraftExtendLongerThanTheDraftsAllow) {
  absl::StatusOr<BatchDescriptor> batch = Descriptor(
      BuildBatchDescriptor(Make(ForwardMode::kDraftExtend, SeqLensConvention::kIncludesNewTokens,
                                {20, 30}, {3, 5}, SpecInfo{.num_draft_tokens = kNumDraftTokens}),
                           pool_));
  ASSERT_TRUE(batch.ok()) << batch.status();
  batch->spec.num_draft_tokens = 3;
  const absl::Status status = ValidateBatchDescriptor(*batch, pool_).status();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("request 1: requests[1].new_tokens = 5 but DRAFT_EXTEND extends at most "
                        "spec.num_draft_tokens + 1 = 4"));
}

TEST_F(BatchDescriptorTest, BuildFailsOnDraftStepBeyondTheDrafts) {
  EngineBatchInputs inputs = Make(ForwardMode::kDecode, SeqLensConvention::kPrefixOnly, {9}, {1},
                                  SpecInfo{.num_draft_tokens = kNumDraftTokens, .draft_step = 3});
  inputs.spec.num_draft_tokens = 3;
  ExpectBuildError(inputs, absl::StatusCode::kInvalidArgument,
                   {"spec.draft_step = 3 must be < spec.num_draft_tokens = 3"});
}

// Regression: a TARGET_VERIFY batch whose pool row holds fewer drafts than
// spec.num_draft_tokens was blamed on the seq_lens convention.
TEST_F(BatchDescriptorTest, BuildNamesTheDraftCountNotTheConventionForVerify) {
  EngineBatchInputs inputs = Make(ForwardMode::kTargetVerify, SeqLensConvention::kPrefixOnly,
                                  {9, 4}, {3, 3}, SpecInfo{.num_draft_tokens = 3});
  inputs.spec.num_draft_tokens = kNumDraftTokens;
  absl::StatusOr<BatchDescriptor> batch = Descriptor(BuildBatchDescriptor(inputs, pool_));
  ASSERT_EQ(batch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(batch.status().message()),
              AllOf(HasSubstr("request 0: row"),
                    HasSubstr("has 3 reserved draft slots (DraftLength) but TARGET_VERIFY reads "
                              "spec.num_draft_tokens = 4")));
  EXPECT_THAT(std::string(batch.status().message()),
              ::testing::Not(HasSubstr("seq_lens_convention")));
}

}  // namespace
}  // namespace paged_attention
