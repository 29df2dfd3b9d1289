// GPU tests: derive fixtures from GpuTest (or call SkipUnlessGpu in SetUp) so
// they skip with a clear reason on machines without a GPU, e.g. CI.
//
//   class KvWriteGpuTest : public GpuTest {};
//   TEST_F(KvWriteGpuTest, MatchesHostWrite) { ... }
//
// Tag such test targets `gpu` in BUILD so tools/gpu_bundle.sh collects them.
#ifndef TESTING_GPU_TEST_H_
#define TESTING_GPU_TEST_H_

#include "attention/base/device_info.h"
#include "gtest/gtest.h"

namespace paged_attention {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (VisibleGpuCount() == 0) GTEST_SKIP() << "GPU test skipped: " << NoGpuReason();
  }
};

template <typename Param>
class GpuTestWithParam : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (VisibleGpuCount() == 0) GTEST_SKIP() << "GPU test skipped: " << NoGpuReason();
  }
};

}  // namespace paged_attention

#endif  // TESTING_GPU_TEST_H_
