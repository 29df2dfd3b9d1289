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

}  // namespace
}  // namespace paged_attention
