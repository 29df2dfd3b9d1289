#include "testing/gpu_clocks.h"

#include "attention/base/device_info.h"
#include "gtest/gtest.h"
#include "testing/gpu_test.h"

namespace paged_attention {
namespace {

TEST(GpuClocksTest, WithoutAGpuEverySampleIsZero) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "this machine has a GPU";
  const GpuClockSample sample = SampleGpuClock();
  EXPECT_EQ(sample.sm_mhz, 0);
  EXPECT_EQ(sample.power_w, 0);
}

class GpuClocksGpuTest : public GpuTest {};

// An H100/H200's SM clock runs between ~345 and 1980 MHz and its board draws
// 50-700 W; any GPU we run on sits well inside these bounds.
TEST_F(GpuClocksGpuTest, ReadsAPlausibleClockAndPower) {
  const GpuClockSample sample = SampleGpuClock();
  EXPECT_GT(sample.sm_mhz, 100);
  EXPECT_LT(sample.sm_mhz, 4000);
  EXPECT_GT(sample.power_w, 5);
  EXPECT_LT(sample.power_w, 2000);
}

}  // namespace
}  // namespace paged_attention
