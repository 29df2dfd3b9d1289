#include "testing/attention_check.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(RoundingStepTest, IsTheSpacingOfTheDTypeAtTheMagnitude) {
  // bf16 keeps 7 fraction bits, fp16 10: the step in [1, 2) is 2^-7 / 2^-10.
  EXPECT_EQ(RoundingStep(DType::kBFloat16, 1.0), std::ldexp(1.0, -7));
  EXPECT_EQ(RoundingStep(DType::kBFloat16, 1.99), std::ldexp(1.0, -7));
  EXPECT_EQ(RoundingStep(DType::kBFloat16, 2.0), std::ldexp(1.0, -6));
  EXPECT_EQ(RoundingStep(DType::kBFloat16, 0.75), std::ldexp(1.0, -8));
  EXPECT_EQ(RoundingStep(DType::kFloat16, 1.5), std::ldexp(1.0, -10));
  EXPECT_EQ(RoundingStep(DType::kFloat16, 0.0), 0.0);
}

TEST(LowPrecisionErrorBoundTest, TwiceTheReferenceErrorOrOneStep) {
  // Above one step: twice the low-precision error.
  EXPECT_DOUBLE_EQ(LowPrecisionErrorBound(DType::kBFloat16, 0.01, 1.0, 1e-5), 0.02 + 1e-5);
  // Below it: one step at the largest output (2^-8 at 0.5 in bf16).
  EXPECT_DOUBLE_EQ(LowPrecisionErrorBound(DType::kBFloat16, 1e-4, 0.5, 1e-5),
                   std::ldexp(1.0, -8) + 1e-5);
  EXPECT_DOUBLE_EQ(LowPrecisionErrorBound(DType::kFloat16, 0.0, 0.0, 1e-5), 1e-5);
}

TEST(LargestMagnitudeTest, OverTheFirstCountElements) {
  const std::vector<double> values = {0.5, -3.0, 2.0, -7.0};
  EXPECT_EQ(LargestMagnitude(values, 3), 3.0);
  EXPECT_EQ(LargestMagnitude(values, 4), 7.0);
  EXPECT_EQ(LargestMagnitude(values, 0), 0.0);
}

TEST(FirstDifferenceTest, ComparesBitsNotValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {1.0f, nan, 0.0f, 2.0f};
  std::vector<float> b = a;
  EXPECT_EQ(FirstDifference(a, b, 4), "");
  b[2] = -0.0f;  // equal as values, not as bits
  EXPECT_EQ(FirstDifference(a, b, 4), "element 2: 0 (0x0p+0) vs -0 (-0x0p+0)");
  EXPECT_EQ(FirstDifference(a, b, 2), "") << "only the first count elements";
  b[2] = 0.0f;
  b[3] = std::nextafter(2.0f, 3.0f);  // one ulp, which decimal at 6 digits would hide
  EXPECT_EQ(FirstDifference(a, b, 4), "element 3: 2 (0x1p+1) vs 2.00000024 (0x1.000002p+1)");
  EXPECT_EQ(FirstDifference(a, b, 5), "sizes 4 and 4 hold fewer than 5");
}

TEST(FirstDifferenceTest, DoublesToo) {
  const std::vector<double> a = {0.5, -1.0};
  const std::vector<double> b = {0.5, std::nextafter(-1.0, 0.0)};
  EXPECT_EQ(FirstDifference(a, a, 2), "");
  EXPECT_NE(FirstDifference(a, b, 2), "");
  EXPECT_EQ(FirstDifference(a, b, 1), "");
}

}  // namespace
}  // namespace paged_attention
