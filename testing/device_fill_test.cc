#include "testing/device_fill.h"

#include <cmath>
#include <random>

#include "attention/base/device_buffer.h"
#include "gtest/gtest.h"
#include "testing/gpu_test.h"

namespace paged_attention {
namespace {

class DeviceFillGpuTest : public GpuTest {};

TEST_F(DeviceFillGpuTest, FillsExactlyTheRequestedRangeOfEachDtype) {
  std::mt19937 rng(static_cast<unsigned>(std::random_device{}()));
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const int64_t total = 100003;
    const int64_t offset = std::uniform_int_distribution<int64_t>(0, 1000)(rng);
    const int64_t count = std::uniform_int_distribution<int64_t>(1, total - offset)(rng);
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(total * DTypeSize(dtype), "fill");
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    ASSERT_TRUE(FillDevice(buffer->data(), total, dtype, 1.5f).ok());
    char* base = buffer->as<char>() + offset * DTypeSize(dtype);
    ASSERT_TRUE(FillDevice(base, count, dtype, std::nanf("")).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint8_t> bytes(total * DTypeSize(dtype));
    ASSERT_TRUE(buffer->CopyToHost(bytes.data(), bytes.size()).ok());
    for (int64_t i = 0; i < total; ++i) {
      float value;
      if (dtype == DType::kFloat32) {
        std::memcpy(&value, &bytes[i * 4], 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, &bytes[i * 2], 2);
        value = dtype == DType::kFloat16 ? Float16ToFloat(bits) : BFloat16ToFloat(bits);
      }
      const bool in_range = i >= offset && i < offset + count;
      ASSERT_EQ(std::isnan(value), in_range) << DTypeName(dtype) << " element " << i;
      if (!in_range) {
        ASSERT_EQ(value, 1.5f) << DTypeName(dtype) << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace paged_attention
