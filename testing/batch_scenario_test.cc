#include "testing/batch_scenario.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::HasSubstr;

Scenario SmallScenario() {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kExtend;
  spec.convention = SeqLensConvention::kPrefixOnly;
  spec.page_size = 4;
  spec.prefix_lens = {5, 0};
  spec.new_tokens = {3, 2};
  spec.seed = 1;
  return BuildScenario(spec).value();
}

TEST(MakeAttentionDataTest, BuildsInputsOfTheAskedShape) {
  const Scenario scenario = SmallScenario();
  const AttentionData data =
      MakeAttentionData(*scenario.pool, scenario.batch, 4, 2, 8, DType::kBFloat16, 3).value();
  EXPECT_EQ(data.q.size(), 5u * 4 * 8 * 2);
  EXPECT_EQ(data.kv.layout().num_kv_heads, 2);
}

// Regression: negative or huge shapes reached std::vector and aborted the
// process (std::length_error, std::bad_alloc) instead of returning a status.
TEST(MakeAttentionDataTest, RefusesBadShapesBeforeAllocating) {
  const Scenario scenario = SmallScenario();
  auto make = [&](int32_t q_heads, int32_t kv_heads, int32_t head_dim) {
    return MakeAttentionData(*scenario.pool, scenario.batch, q_heads, kv_heads, head_dim,
                             DType::kBFloat16, 0)
        .status();
  };
  for (const absl::Status& status :
       {make(-4, 2, 8), make(4, 0, 8), make(4, 2, -1), make(6, 4, 8)}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("need positive values"));
  }
  const absl::Status huge = make(1 << 30, 1, 1 << 10);
  EXPECT_EQ(huge.code(), absl::StatusCode::kResourceExhausted) << huge;
  EXPECT_THAT(std::string(huge.message()), HasSubstr("more than the host budget"));
  // K/V past the host budget: HostKvCache says so.
  EXPECT_EQ(make(1, 1, 1 << 30).code(), absl::StatusCode::kResourceExhausted);
}

// ValidatedBatch rules out a malformed descriptor by type; what it cannot
// rule out is the pool changing after validation. A freed request must be
// refused, not read through a stale page table.
TEST(MakeAttentionDataTest, RefusesABatchItsPoolNoLongerHolds) {
  Scenario scenario = SmallScenario();
  const int32_t row = scenario.batch.requests()[0].row;
  ASSERT_TRUE(scenario.pool->FreeRequest(row).ok());
  const absl::Status status =
      MakeAttentionData(*scenario.pool, scenario.batch, 4, 2, 8, DType::kBFloat16, 0).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

}  // namespace
}  // namespace paged_attention
