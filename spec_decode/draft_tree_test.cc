#include "spec_decode/draft_tree.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DraftTreeTest, ChainMasksAreTheCausalPrefixes) {
  const std::vector<int32_t> chain = {-1, 0, 1, 2};
  absl::StatusOr<std::vector<uint64_t>> masks = AncestorMasks(chain, 1, 0, "tree");
  ASSERT_TRUE(masks.ok()) << masks.status();
  EXPECT_THAT(*masks, ElementsAre(0b1, 0b11, 0b111, 0b1111));
  EXPECT_THAT(NodeDepths(chain), ElementsAre(0, 1, 2, 3));
}

TEST(DraftTreeTest, BranchingTreeSeesOnlyAncestors) {
  // Tree (children below their parent):
  //   root -> 0, 1
  //   0 -> 2, 3
  //   1 -> 4
  const std::vector<int32_t> tree = {-1, -1, 0, 0, 1};
  absl::StatusOr<std::vector<uint64_t>> masks = AncestorMasks(tree, 2, 0, "tree");
  ASSERT_TRUE(masks.ok()) << masks.status();
  EXPECT_THAT(*masks, ElementsAre(0b00001, 0b00010, 0b00101, 0b01001, 0b10010));
  EXPECT_THAT(NodeDepths(tree), ElementsAre(0, 0, 1, 1, 1));
}

TEST(DraftTreeTest, SixtyFourNodesUseEveryBit) {
  std::vector<int32_t> chain(64);
  for (int32_t k = 0; k < 64; ++k) chain[k] = k - 1;
  absl::StatusOr<std::vector<uint64_t>> masks = AncestorMasks(chain, 1, 0, "tree");
  ASSERT_TRUE(masks.ok()) << masks.status();
  EXPECT_EQ(masks->back(), ~uint64_t{0});
  chain.push_back(63);
  absl::Status too_many = AncestorMasks(chain, 1, 3, "tree").status();
  EXPECT_EQ(too_many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_many.message(), HasSubstr("request 3: tree has 65 nodes"));
}

TEST(DraftTreeTest, RejectsParentsThatDoNotPrecedeTheirChildren) {
  for (const std::vector<int32_t>& parents :
       {std::vector<int32_t>{-1, 1}, std::vector<int32_t>{-1, 2, 0}, std::vector<int32_t>{-2}}) {
    absl::Status status = AncestorMasks(parents, 4, 7, "spec.tree_parents").status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("request 7: spec.tree_parents node"));
    EXPECT_THAT(status.message(), HasSubstr("an earlier node"));
  }
}

TEST(DraftTreeTest, RejectsMoreChildrenThanTopk) {
  absl::Status root = AncestorMasks({-1, -1, -1}, 2, 1, "spec.tree_parents").status();
  EXPECT_THAT(root.message(), HasSubstr("node 2 is child 3 of the root but spec.topk = 2"));
  absl::Status inner = AncestorMasks({-1, 0, 0}, 1, 1, "spec.tree_parents").status();
  EXPECT_THAT(inner.message(), HasSubstr("node 2 is child 2 of node 0"));
}

// Engine-side callers derive positions before the descriptor validates the
// tree (found by the descriptor fuzzer): depths must not read out of bounds.
TEST(DraftTreeTest, DepthsAreDefinedForMalformedParents) {
  EXPECT_THAT(NodeDepths({5, -7, 0, 2, 3}), ElementsAre(0, 0, 1, 2, 3));
}

TEST(DraftTreeTest, DraftDecodeBranchesFollowTheirOwnChains) {
  // topk 3, step 2: node t*3 + b is branch b's draft of step t.
  const std::vector<int32_t> parents = DraftDecodeParents(3, 2);
  EXPECT_THAT(parents, ElementsAre(-1, -1, -1, 0, 1, 2, 3, 4, 5));
  absl::StatusOr<std::vector<uint64_t>> masks = AncestorMasks(parents, 3, 0, "tree");
  ASSERT_TRUE(masks.ok()) << masks.status();
  // The step's query rows are the last three nodes: branch b sees b, 3+b, 6+b.
  EXPECT_EQ((*masks)[6], 0b001001001u);
  EXPECT_EQ((*masks)[7], 0b010010010u);
  EXPECT_EQ((*masks)[8], 0b100100100u);
  EXPECT_THAT(NodeDepths(parents), ElementsAre(0, 0, 0, 1, 1, 1, 2, 2, 2));
}

}  // namespace
}  // namespace paged_attention
