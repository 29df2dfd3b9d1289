#include "tools/batch_json.h"

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

void ExpectInvalid(absl::string_view text, absl::string_view message) {
  const absl::StatusOr<std::vector<ScenarioSpec>> specs = ParseBatchFile(text);
  ASSERT_FALSE(specs.ok()) << text;
  EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(specs.status().message().find(message), absl::string_view::npos)
      << specs.status() << "\nexpected: " << message;
}

TEST(BatchJsonTest, PrefixOnlyAndIncludesNewTokensGiveTheSamePrefixes) {
  const auto prefix_only = ParseBatchFile(
      R"({"mode": "DRAFT_EXTEND_V2", "page_size": 4, "seq_lens_convention": "prefix_only",
          "seq_lens": [100, 5], "num_draft_tokens": 4, "seed": 9})");
  const auto includes = ParseBatchFile(
      R"({"mode": "DRAFT_EXTEND_V2", "page_size": 4, "seq_lens_convention": "includes_new_tokens",
          "seq_lens": [104, 9], "new_tokens": [4, 4], "num_draft_tokens": 4, "seed": 9})");
  ASSERT_TRUE(prefix_only.ok()) << prefix_only.status();
  ASSERT_TRUE(includes.ok()) << includes.status();
  EXPECT_EQ((*prefix_only)[0].prefix_lens, (std::vector<int32_t>{100, 5}));
  EXPECT_EQ((*includes)[0].prefix_lens, (std::vector<int32_t>{100, 5}));
  EXPECT_EQ((*prefix_only)[0].new_tokens, (std::vector<int32_t>{4, 4}));
  EXPECT_EQ((*includes)[0].seed, 9u);
}

TEST(BatchJsonTest, ArrayOfBatches) {
  const auto specs = ParseBatchFile(
      R"([{"mode": "DECODE", "page_size": 1, "seq_lens_convention": "includes_new_tokens",
           "seq_lens": [3, 1]},
          {"mode": "IDLE", "page_size": 1, "seq_lens_convention": "prefix_only"}])");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].prefix_lens, (std::vector<int32_t>{2, 0}));
  EXPECT_TRUE((*specs)[1].prefix_lens.empty());
}

TEST(BatchJsonTest, ErrorsNameTheBatchFieldRequestAndValue) {
  ExpectInvalid("{", "not valid JSON");
  ExpectInvalid("[]", "empty array");
  ExpectInvalid("[1]", "batch 0 is not a JSON object");
  ExpectInvalid(R"({"page_size": 1, "seq_lens_convention": "prefix_only"})", "mode is required");
  ExpectInvalid(R"({"mode": 3, "page_size": 1, "seq_lens_convention": "prefix_only"})",
                "mode = 3 must be a string");
  ExpectInvalid(R"({"mode": "VERIFY", "page_size": 1, "seq_lens_convention": "prefix_only"})",
                "\"VERIFY\" is not a forward mode");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1, "seq_lens": [1]})",
                "seq_lens_convention is required");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "full"})",
                "seq_lens_convention = \"full\" must be");
  ExpectInvalid(R"({"mode": "DECODE", "seq_lens_convention": "prefix_only", "seq_lens": [1]})",
                "page_size is required");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 0, "seq_lens_convention": "prefix_only"})",
                "page_size = 0 must be in [1, 65536]");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1.5, "seq_lens_convention": "prefix_only"})",
                "page_size = 1.5 must be an integer");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only"})",
                "seq_lens is required");
  ExpectInvalid(
      R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only", "seq_lens": 4})",
      "seq_lens = 4 must be an array");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4, -2]})",
                "batch 0: request 1: seq_lens[1] = -2 must be an integer in [0, 16777216]");
  ExpectInvalid(R"({"mode": "EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4]})",
                "new_tokens is required for mode EXTEND");
  ExpectInvalid(R"({"mode": "EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [1, 2]})",
                "new_tokens has 2 entries but seq_lens has 1");
  ExpectInvalid(R"({"mode": "EXTEND", "page_size": 1, "seq_lens_convention": "includes_new_tokens",
                    "seq_lens": [4, 2], "new_tokens": [1, 3]})",
                "request 1: seq_lens[1] = 2 is smaller than new_tokens[1] = 3");
  ExpectInvalid(R"({"mode": "IDLE", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4]})",
                "an IDLE batch has no requests");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "colour": 1})",
                "unknown field \"colour\"");
  ExpectInvalid(R"([{"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only",
                     "seq_lens": [4]}, {"mode": "DECODE", "page_size": -1,
                     "seq_lens_convention": "prefix_only", "seq_lens": [4]}])",
                "batch 1: page_size = -1");
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "seed": -1})",
                "seed = -1 must be in");
}

}  // namespace
}  // namespace paged_attention
