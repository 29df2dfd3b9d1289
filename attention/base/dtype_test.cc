#include "attention/base/dtype.h"

#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(DTypeTest, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa.
  EXPECT_EQ(FloatToBFloat16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
}

TEST(DTypeTest, Float16ExactValuesAndSpecials) {
  EXPECT_EQ(FloatToFloat16(1.0f), 0x3c00);
  EXPECT_EQ(FloatToFloat16(-2.0f), 0xc000);
  EXPECT_EQ(FloatToFloat16(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToFloat16(1e6f), 0x7c00);
  EXPECT_EQ(FloatToFloat16(5.960464477539063e-08f), 0x0001);  // smallest subnormal
  EXPECT_TRUE(std::isnan(Float16ToFloat(FloatToFloat16(std::nanf("")))));
}

TEST(DTypeTest, RoundTripErrorIsWithinHalfAnUlpOnRandomValues) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng);
    const float half_ulp_bf16 = std::ldexp(1.0f, std::ilogb(x) - 8);
    const float half_ulp_fp16 = std::max(std::ldexp(1.0f, std::ilogb(x) - 11), 1.0f / (1 << 25));
    EXPECT_LE(std::fabs(RoundTrip(DType::kBFloat16, x) - x), half_ulp_bf16) << x;
    EXPECT_LE(std::fabs(RoundTrip(DType::kFloat16, x) - x), half_ulp_fp16) << x;
  }
}

}  // namespace
}  // namespace paged_attention
