#include "attention/base/device_info.h"

#include "gtest/gtest.h"
#include "testing/gpu_test.h"

namespace paged_attention {
namespace {

TEST(DeviceInfoTest, MissingOrdinalIsNotFound) {
  EXPECT_EQ(QueryDevice(VisibleGpuCount()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(QueryDevice(-1).status().code(), absl::StatusCode::kNotFound);
}

class DeviceInfoGpuTest : public GpuTest {};

TEST_F(DeviceInfoGpuTest, QueriesTheFirstDevice) {
  absl::StatusOr<DeviceInfo> info = QueryDevice(0);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->name.empty());
  EXPECT_GT(info->multiprocessor_count, 0);
  EXPECT_GT(info->global_memory_bytes, 0);
  EXPECT_GE(info->compute_capability_major, 7);
  EXPECT_GT(info->driver_version, 0);
}

}  // namespace
}  // namespace paged_attention
