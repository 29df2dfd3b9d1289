#include "tools/run_config.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/batch_json.h"

namespace paged_attention {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

void ExpectFlagError(const RunFlags& flags, absl::StatusCode code, const std::string& message) {
  const absl::StatusOr<RunConfig> config = ValidateRunFlags(flags);
  ASSERT_FALSE(config.ok()) << message;
  EXPECT_EQ(config.status().code(), code) << config.status();
  EXPECT_THAT(std::string(config.status().message()), HasSubstr(message));
}

TEST(ValidateRunFlagsTest, AcceptsTheDefaultsAndEveryKernelShape) {
  absl::StatusOr<RunConfig> config = ValidateRunFlags(RunFlags{});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->run);
  EXPECT_EQ(config->num_q_heads, 32);
  for (int64_t head_dim : {64, 128, 256}) {
    RunFlags flags;
    flags.head_dim = head_dim;
    flags.dump_dir = "/tmp/x";
    flags.softcap = 30;
    flags.graph_max_batch = kMaxGraphMaxBatch;
    config = ValidateRunFlags(flags);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_TRUE(config->run);  // implied by --dump_dir
    EXPECT_EQ(config->softcap, 30.0f);
  }
}

// Regression: huge or odd values passed the old checks and then aborted in
// std::vector or exhausted the machine; head_dim other than 64/128/256 ran
// on the host only to be refused by the kernel.
TEST(ValidateRunFlagsTest, RefusesEachBadFlagByName) {
  struct Case {
    RunFlags flags;
    absl::StatusCode code;
    std::string message;
  };
  auto with = [](auto set) {
    RunFlags flags;
    set(flags);
    return flags;
  };
  const std::vector<Case> cases = {
      {with([](RunFlags& f) { f.graph_max_batch = -1; }), absl::StatusCode::kInvalidArgument,
       "--graph_max_batch = -1 must be in [0, 4096]"},
      {with([](RunFlags& f) { f.graph_max_batch = 100000000; }), absl::StatusCode::kInvalidArgument,
       "--graph_max_batch = 100000000 must be in [0, 4096]"},
      {with([](RunFlags& f) { f.graph_max_batch = 1000000000; }),
       absl::StatusCode::kInvalidArgument, "--graph_max_batch = 1000000000 must be in [0, 4096]"},
      {with([](RunFlags& f) { f.num_q_heads = 1000000000; }), absl::StatusCode::kInvalidArgument,
       "--num_q_heads = 1000000000 must be in [1, 256]"},
      {with([](RunFlags& f) { f.num_q_heads = 0; }), absl::StatusCode::kInvalidArgument,
       "--num_q_heads = 0 must be in [1, 256]"},
      {with([](RunFlags& f) { f.num_kv_heads = int64_t{1} << 40; }),
       absl::StatusCode::kInvalidArgument, "--num_kv_heads = 1099511627776 must be in [1, 256]"},
      {with([](RunFlags& f) { f.num_kv_heads = 5; }), absl::StatusCode::kInvalidArgument,
       "--num_q_heads = 32 must be a multiple of --num_kv_heads = 5"},
      {with([](RunFlags& f) { f.head_dim = 96; }), absl::StatusCode::kUnimplemented,
       "--head_dim = 96 is not supported: use 64, 128 or 256"},
      {with([](RunFlags& f) { f.head_dim = 1000000000; }), absl::StatusCode::kUnimplemented,
       "--head_dim = 1000000000 is not supported"},
      {with([](RunFlags& f) { f.dtype = "float32"; }), absl::StatusCode::kInvalidArgument,
       "--dtype = \"float32\" must be bfloat16 or float16"},
      // Control bytes are escaped: the CLI's error stays one printable line.
      {with([](RunFlags& f) { f.dtype = "bf\n16\r\x01"; }), absl::StatusCode::kInvalidArgument,
       "--dtype = \"bf\\n16\\r\\x01\" must be bfloat16 or float16"},
      {with([](RunFlags& f) { f.window_left = -2; }), absl::StatusCode::kInvalidArgument,
       "--window_left = -2 must be in [-1, 2147483647]"},
      {with([](RunFlags& f) { f.window_left = int64_t{1} << 32; }),
       absl::StatusCode::kInvalidArgument, "--window_left = 4294967296 must be in"},
      {with([](RunFlags& f) { f.softcap = std::numeric_limits<double>::infinity(); }),
       absl::StatusCode::kInvalidArgument, "--softcap = inf must be 0 (off) or a positive number"},
      {with([](RunFlags& f) { f.softcap = std::nan(""); }), absl::StatusCode::kInvalidArgument,
       "--softcap = nan must be 0 (off)"},
      {with([](RunFlags& f) { f.softcap = -1; }), absl::StatusCode::kInvalidArgument,
       "--softcap = -1 must be"},
      // Finite as a double, but inf or 0 ("off") as the kernel's float.
      {with([](RunFlags& f) { f.softcap = 1e39; }), absl::StatusCode::kInvalidArgument,
       "--softcap = 1e+39 must be"},
      {with([](RunFlags& f) { f.softcap = 1e-50; }), absl::StatusCode::kInvalidArgument,
       "--softcap = 1e-50 must be"},
  };
  for (const Case& c : cases) ExpectFlagError(c.flags, c.code, c.message);
}

std::vector<ScenarioSpec> Specs(const std::string& text) {
  absl::StatusOr<BatchFile> file = ParseBatchFile(text);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  EXPECT_TRUE(UseCommonPool(file->specs).ok());
  return file->specs;
}

RunConfig Config(bool run, int64_t graph_max_batch = 0) {
  RunFlags flags;
  flags.run = run;
  flags.graph_max_batch = graph_max_batch;
  return ValidateRunFlags(flags).value();
}

void ExpectLimitError(const std::vector<ScenarioSpec>& specs, const RunConfig& config,
                      absl::StatusCode code, const std::vector<std::string>& parts) {
  const absl::Status status = CheckRunLimits(specs, config);
  ASSERT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(part));
  }
}

TEST(CheckRunLimitsTest, SmallBatchesPassEveryWay) {
  const std::vector<ScenarioSpec> specs = Specs(
      R"([{"mode": "TARGET_VERIFY", "page_size": 16, "seq_lens_convention": "prefix_only",
           "seq_lens": [1000, 7, 64], "num_draft_tokens": 4},
          {"mode": "DECODE", "page_size": 16, "seq_lens_convention": "includes_new_tokens",
           "seq_lens": [2000, 17]}])");
  for (bool run : {false, true}) {
    // --run with a 4096-request graph would attend 4096 padded rows: too much.
    for (int64_t graph : {0, 4, run ? 64 : 4096}) {
      EXPECT_TRUE(CheckRunLimits(specs, Config(run, graph)).ok()) << run << " " << graph;
    }
  }
}

// Regression: a 64 KiB page made --run allocate gigabytes of K/V for one
// token (and a long request tens of GB) before anything said no.
TEST(CheckRunLimitsTest, RunPastTheHostBudgetIsRefusedBeforeAnythingIsBuilt) {
  const std::vector<ScenarioSpec> huge_page = Specs(
      R"({"mode": "DECODE", "page_size": 65536, "seq_lens_convention": "prefix_only",
          "seq_lens": [1]})");
  EXPECT_TRUE(CheckRunLimits(huge_page, Config(false)).ok());  // planning alone is small
  ExpectLimitError(
      huge_page, Config(true), absl::StatusCode::kResourceExhausted,
      {"batch 0: --run would take about", "page_size 65536", "more than the limit of 2147483648"});
  const std::vector<ScenarioSpec> long_request = Specs(
      R"([{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "prefix_only",
           "seq_lens": [3]},
          {"mode": "DECODE", "page_size": 16, "seq_lens_convention": "prefix_only",
           "seq_lens": [16777215]}])");
  ExpectLimitError(long_request, Config(true), absl::StatusCode::kResourceExhausted,
                   {"batch 0: --run would take about"});  // the common pool is large for all
}

TEST(CheckRunLimitsTest, RunPastTheWorkLimitIsRefused) {
  const std::vector<ScenarioSpec> prefill = Specs(
      R"({"mode": "EXTEND", "page_size": 16, "seq_lens_convention": "prefix_only",
          "seq_lens": [4096], "new_tokens": [4096]})");
  ExpectLimitError(
      prefill, Config(true), absl::StatusCode::kResourceExhausted,
      {"batch 0: --run attention work", "is 137438953472, more than the limit of 2147483648"});
}

// The dump's tree_mask.npy is dense, [live query tokens, longest request]:
// one long request beside many short ones makes it large while --run's own
// costs stay small.
TEST(CheckRunLimitsTest, DumpMaskPastItsLimitIsRefused) {
  const std::vector<ScenarioSpec> specs = Specs(
      R"({"mode": "EXTEND", "page_size": 16, "seq_lens_convention": "prefix_only",
          "seq_lens": [100000, 0], "new_tokens": [1, 3000]})");
  RunFlags flags;
  flags.run = true;
  flags.num_q_heads = 1;
  flags.num_kv_heads = 1;
  flags.head_dim = 64;
  EXPECT_TRUE(CheckRunLimits(specs, ValidateRunFlags(flags).value()).ok());
  flags.dump_dir = "/tmp/dump";
  const RunConfig dump = ValidateRunFlags(flags).value();
  EXPECT_EQ(EstimateRunCost(specs[0], dump, 1).dump_mask_bytes, int64_t{3001} * 100001);
  ExpectLimitError(specs, dump, absl::StatusCode::kResourceExhausted,
                   {"batch 0: --dump_dir tree_mask.npy (live query tokens * the longest "
                    "request's keys) would be 300103001 bytes, more than the limit of 268435456"});
}

TEST(CheckRunLimitsTest, GraphCapacityIsBoundedByTheGraphLimits) {
  // 4096 rows of a 16M-token row width, one slot per page: a 256 GiB table.
  const std::vector<ScenarioSpec> long_row = Specs(
      R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only",
          "seq_lens": [1000000]})");
  ExpectLimitError(long_row, Config(false, 4096), absl::StatusCode::kResourceExhausted,
                   {"batch 0: --graph_max_batch = 4096 * the pool's row width = 4096008192 key "
                    "rows exceed int32"});
  ExpectLimitError(long_row, Config(false, 100), absl::StatusCode::kResourceExhausted,
                   {"--graph_max_batch = 100 * ceil(row width / page_size 1) = 100000200 graph "
                    "page table entries (400000800 bytes) exceed the limit of 67108864"});
  const std::vector<ScenarioSpec> long_query = Specs(
      R"({"mode": "EXTEND", "page_size": 1024, "seq_lens_convention": "prefix_only",
          "seq_lens": [0], "new_tokens": [1000000]})");
  ExpectLimitError(long_query, Config(false, 4096), absl::StatusCode::kResourceExhausted,
                   {"--graph_max_batch = 4096 * the longest new_tokens 1000000 = 4096000000 "
                    "query tokens exceed int32"});
  // --run pads to the capacity: 4096 * 64 query tokens of 32 heads.
  const std::vector<ScenarioSpec> padded = Specs(
      R"({"mode": "EXTEND", "page_size": 16, "seq_lens_convention": "prefix_only",
          "seq_lens": [0], "new_tokens": [64]})");
  EXPECT_TRUE(CheckRunLimits(padded, Config(true)).ok());
  ExpectLimitError(padded, Config(true, 4096), absl::StatusCode::kResourceExhausted,
                   {"padded to --graph_max_batch"});
}

TEST(CheckRunLimitsTest, GraphReplayNeedsOnePageSize) {
  const std::vector<ScenarioSpec> mixed = Specs(
      R"([{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "prefix_only",
           "seq_lens": [3]},
          {"mode": "DECODE", "page_size": 8, "seq_lens_convention": "prefix_only",
           "seq_lens": [3]}])");
  EXPECT_TRUE(CheckRunLimits(mixed, Config(true)).ok());
  ExpectLimitError(mixed, Config(false, 2), absl::StatusCode::kInvalidArgument,
                   {"batch 1: page_size = 8 differs from batch 0's 16"});
}

TEST(EstimateRunCostTest, SaturatesInsteadOfOverflowing) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kExtend;
  spec.page_size = 1 << 16;
  spec.num_pages = std::numeric_limits<int32_t>::max();
  spec.prefix_lens = {std::numeric_limits<int32_t>::max()};
  spec.new_tokens = {std::numeric_limits<int32_t>::max()};
  RunFlags flags;
  flags.num_q_heads = kMaxNumHeads;
  flags.num_kv_heads = kMaxNumHeads;
  flags.head_dim = 256;
  flags.graph_max_batch = kMaxGraphMaxBatch;
  const RunCost cost =
      EstimateRunCost(spec, ValidateRunFlags(flags).value(), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(cost.host_bytes, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(cost.attention_work, std::numeric_limits<int64_t>::max());
  EXPECT_GT(cost.graph_query_tokens, std::numeric_limits<int32_t>::max());
}

TEST(EstimateRunCostTest, CountsThePoolKeysAndQueries) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kExtend;
  spec.page_size = 4;
  spec.num_pages = 10;
  spec.max_context_len = 20;
  spec.draft_headroom = 1;
  spec.prefix_lens = {5, 7};
  spec.new_tokens = {2, 3};
  RunFlags flags;
  flags.num_q_heads = 4;
  flags.num_kv_heads = 2;
  flags.head_dim = 64;
  const RunCost cost = EstimateRunCost(spec, ValidateRunFlags(flags).value(), 3);
  // K/V 2 * 40 slots * 128 * 2 bytes; keys 40 * (12 + 5 + 4) * 128; queries 48 * 5 * 4 * 65.
  EXPECT_EQ(cost.host_bytes, 2 * 40 * 128 * 2 + 40 * 21 * 128 + 48 * 5 * 4 * 65);
  EXPECT_EQ(cost.attention_work, (2 * 7 + 3 * 10) * 4 * 64);
  EXPECT_EQ(cost.graph_page_table_entries, 0);
}

}  // namespace
}  // namespace paged_attention
