#include "tools/batch_json.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

constexpr char kDecode[] =
    R"("mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only")";

TEST(BatchJsonTest, EveryFieldsRangeIsNamed) {
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "num_draft_tokens": 1025})"),
                "batch 0: num_draft_tokens = 1025 must be in [0, 1024]");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "draft_step": -2})"),
                "batch 0: draft_step = -2 must be in [-1, 1024]");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "seed": "x"})"),
                "batch 0: seed = \"x\" must be an integer");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "seed": 18446744073709551615})"),
                "seed = 18446744073709551615 must be in [0, 9223372036854775807]");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "new_tokens": [1.5]})"),
                "batch 0: request 0: new_tokens[0] = 1.5 must be an integer in [0, 16777216]");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [16777217]})"),
                "request 0: seq_lens[0] = 16777217 must be an integer in [0, 16777216]");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [18446744073709551615]})"),
                "seq_lens[0] = 18446744073709551615 must be an integer");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "accept_lengths": [-1]})"),
                "batch 0: request 0: accept_lengths[0] = -1 must be an integer");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "accept_lengths": {}})"),
                "batch 0: accept_lengths = {} must be an array");
}

TEST(BatchJsonTest, SizeLimitsAreNamed) {
  ExpectInvalid(std::string(kMaxBatchFileBytes + 1, ' '),
                "batch file has 1048577 bytes, more than the limit of 1048576");
  ExpectInvalid(std::string(9, '[') + std::string(9, ']'),
                "batch file nests arrays/objects more than 8 deep");
  // Brackets inside strings do not count.
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "x\"[[[[[[[[[[": 1})"),
                "unknown field \"x\\\"[[[[[[[[[[\"");
  std::string many = "[";
  for (int i = 0; i <= kMaxBatchesPerFile; ++i) {
    absl::StrAppend(&many, i ? "," : "", "{", kDecode, R"(, "seq_lens": [4]})");
  }
  ExpectInvalid(absl::StrCat(many, "]"),
                "batch file holds 257 batches, more than the limit of 256");
  std::string lengths;
  for (int i = 0; i <= kMaxRequestsPerBatch; ++i) absl::StrAppend(&lengths, i ? "," : "", "1");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [)", lengths, "]}"),
                "batch 0: seq_lens has 4097 entries, more than the 4096 requests a batch may have");
}

TEST(BatchJsonTest, ErrorMessagesQuoteLongValuesBriefly) {
  const absl::StatusOr<std::vector<ScenarioSpec>> specs =
      ParseBatchFile(absl::StrCat(R"({"mode": ")", std::string(5000, 'A'), R"(", "page_size": 1,
                      "seq_lens_convention": "prefix_only", "seq_lens": [4]})"));
  ASSERT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(specs.status().message().size(), 400u) << specs.status();
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [[1, 2, 3, 4, 5, 6, 7, 8, 9]]})"),
                "seq_lens[0] = [...] must be an integer");
}

TEST(BatchJsonTest, CommonPoolTakesTheLargestBatchAndLongestRequest) {
  auto specs = ParseBatchFile(
      R"([{"mode": "EXTEND", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [100], "new_tokens": [5]},
          {"mode": "TARGET_VERIFY", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [1, 2, 3], "num_draft_tokens": 3}])");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_TRUE(UseCommonPool(*specs).ok());
  for (const ScenarioSpec& spec : *specs) {
    EXPECT_EQ(spec.max_context_len, 105);
    EXPECT_EQ(spec.max_requests, 5);
    EXPECT_EQ(spec.draft_headroom, 3);
    EXPECT_EQ(spec.num_pages, (27 + 1) + 3 + 9);
  }
}

TEST(BatchJsonTest, CommonPoolPastTheTableLimitIsResourceExhausted) {
  std::string lengths;
  for (int i = 0; i < 8; ++i) absl::StrAppend(&lengths, i ? "," : "", "16777216");
  auto specs = ParseBatchFile(absl::StrCat(
      R"([{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "prefix_only", "seq_lens": [)",
      lengths, R"(]}])"));
  ASSERT_TRUE(specs.ok()) << specs.status();
  const absl::Status status = UseCommonPool(*specs);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("common pool: max_requests 10 (batch 0) * row width 16777218 "
                                  "(batch 0) = 167772180 req_to_token entries exceed the limit "
                                  "of 67108864"),
            absl::string_view::npos)
      << status;
}

}  // namespace
}  // namespace paged_attention
