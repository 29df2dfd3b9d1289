#include "attention/planner/split_plan.h"

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(SplitPlanTest, ShortKeysAreNeverSplit) {
  EXPECT_EQ(ChooseNumKvSplits(1, 8, 1, kMinKeysPerSplit, 132), 1);
  EXPECT_EQ(ChooseNumKvSplits(1, 8, 1, 1, 132), 1);
}

TEST(SplitPlanTest, SingleLongDecodeIsSplitToFillTheGpu) {
  // 1 request x 8 KV heads = 8 blocks; 32k keys allow 128 splits of 256.
  const int32_t splits = ChooseNumKvSplits(1, 8, 1, 32768, 132);
  EXPECT_GE(8 * splits, 132);
  EXPECT_LE(splits, kMaxKvSplits);
}

TEST(SplitPlanTest, LargeBatchesAndPrefillNeedNoSplit) {
  EXPECT_EQ(ChooseNumKvSplits(256, 8, 1, 32768, 132), 1);
  EXPECT_EQ(ChooseNumKvSplits(4, 8, 4096, 4096, 132), 1);
}

TEST(SplitPlanTest, EachSplitCoversAtLeastTheMinimumKeys) {
  for (int32_t keys : {300, 600, 1000, 5000, 100000}) {
    const int32_t splits = ChooseNumKvSplits(1, 1, 1, keys, 132);
    EXPECT_GE(keys / splits, kMinKeysPerSplit) << keys;
  }
}

TEST(SplitPlanTest, EmptyBatchIsOneSplit) { EXPECT_EQ(ChooseNumKvSplits(0, 8, 1, 100000, 132), 1); }

}  // namespace
}  // namespace paged_attention
