#include "attention/planner/split_plan.h"

#include <limits>

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(SplitPlanTest, NoSplitWhenBlocksFillTheGpu) {
  EXPECT_EQ(ChooseNumKvSplits(64, 8, 1, 4096, 132), 1);
  EXPECT_EQ(ChooseNumKvSplits(4, 8, 4096, 4096, 132), 1);  // prefill
}

TEST(SplitPlanTest, SplitsLongKeysWithFewQueries) {
  const int32_t splits = ChooseNumKvSplits(1, 8, 1, 32768, 132);
  EXPECT_GT(splits, 8);
  EXPECT_LE(splits, kMaxKvSplits);
  EXPECT_GE(32768 / splits, kMinKeysPerSplit);
}

TEST(SplitPlanTest, ShortKeysAreNotSplitBelowTheMinimum) {
  EXPECT_EQ(ChooseNumKvSplits(1, 1, 1, 300, 132), 1);
  EXPECT_LE(ChooseNumKvSplits(1, 1, 1, 2048, 132), 2048 / kMinKeysPerSplit);
}

TEST(SplitPlanTest, AlwaysInRange) {
  for (int32_t batch : {0, 1, 3, 17, 200}) {
    for (int32_t k : {0, 1, 511, 4096, 131072}) {
      for (int32_t q : {0, 1, 8, 512}) {
        const int32_t splits = ChooseNumKvSplits(batch, 4, q, k, 132);
        EXPECT_GE(splits, 1);
        EXPECT_LE(splits, kMaxKvSplits);
      }
    }
  }
}

TEST(SplitPlanTest, GraphCapacityOfALongRowSplitsButStaysBounded) {
  // Captured for 8 decode requests over a 128k row: splits fill the GPU.
  const int32_t splits = ChooseNumKvSplits(8, 8, 1, 131072, 132);
  EXPECT_GT(splits, 1);
  EXPECT_LE(splits, kMaxKvSplits);
}

TEST(SplitPlanTest, ExtremeLengthsStayInRangeWithoutOverflow) {
  const int32_t huge = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(ChooseNumKvSplits(1, 1, huge, huge, 132), 1);
  const int32_t splits = ChooseNumKvSplits(1, 1, 1, huge, huge);
  EXPECT_GE(splits, 1);
  EXPECT_LE(splits, kMaxKvSplits);
}

}  // namespace
}  // namespace paged_attention
