#include "tools/batch_json.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "attention/planner/metadata_planner.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/batch_scenario.h"

namespace paged_attention {
namespace {

void ExpectInvalid(absl::string_view text, absl::string_view message) {
  const absl::StatusOr<BatchFile> file = ParseBatchFile(text);
  ASSERT_FALSE(file.ok()) << text;
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(file.status().message().find(message), absl::string_view::npos)
      << file.status() << "\nexpected: " << message;
}

// The specs of a file that must parse.
std::vector<ScenarioSpec> Parse(absl::string_view text) {
  absl::StatusOr<BatchFile> file = ParseBatchFile(text);
  EXPECT_TRUE(file.ok()) << file.status() << "\n" << text;
  return file.ok() ? file->specs : std::vector<ScenarioSpec>{};
}

TEST(BatchJsonTest, PrefixOnlyAndIncludesNewTokensGiveTheSamePrefixes) {
  const std::vector<ScenarioSpec> prefix_only = Parse(
      R"({"mode": "DRAFT_EXTEND_V2", "page_size": 4, "seq_lens_convention": "prefix_only",
          "seq_lens": [100, 5], "num_draft_tokens": 4, "seed": 9})");
  const std::vector<ScenarioSpec> includes = Parse(
      R"({"mode": "DRAFT_EXTEND_V2", "page_size": 4, "seq_lens_convention": "includes_new_tokens",
          "seq_lens": [104, 9], "new_tokens": [4, 4], "num_draft_tokens": 4, "seed": 9})");
  ASSERT_EQ(prefix_only.size(), 1u);
  ASSERT_EQ(includes.size(), 1u);
  EXPECT_EQ(prefix_only[0].prefix_lens, (std::vector<int32_t>{100, 5}));
  EXPECT_EQ(includes[0].prefix_lens, (std::vector<int32_t>{100, 5}));
  EXPECT_EQ(prefix_only[0].new_tokens, (std::vector<int32_t>{4, 4}));
  EXPECT_EQ(includes[0].seed, 9u);
}

TEST(BatchJsonTest, ArrayOfBatches) {
  const absl::StatusOr<BatchFile> file = ParseBatchFile(
      R"([{"mode": "DECODE", "page_size": 1, "seq_lens_convention": "includes_new_tokens",
           "seq_lens": [3, 1]},
          {"mode": "IDLE", "page_size": 1, "seq_lens_convention": "prefix_only"}])");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->is_array);
  ASSERT_EQ(file->specs.size(), 2u);
  EXPECT_EQ(file->specs[0].prefix_lens, (std::vector<int32_t>{2, 0}));
  EXPECT_TRUE(file->specs[1].prefix_lens.empty());
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
  const absl::StatusOr<BatchFile> file =
      ParseBatchFile(absl::StrCat(R"({"mode": ")", std::string(5000, 'A'), R"(", "page_size": 1,
                      "seq_lens_convention": "prefix_only", "seq_lens": [4]})"));
  ASSERT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(file.status().message().size(), 400u) << file.status();
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [[1, 2, 3, 4, 5, 6, 7, 8, 9]]})"),
                "seq_lens[0] = [...] must be an integer");
}

TEST(BatchJsonTest, CommonPoolTakesTheLargestBatchAndLongestRequest) {
  std::vector<ScenarioSpec> specs = Parse(
      R"([{"mode": "EXTEND", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [100], "new_tokens": [5]},
          {"mode": "TARGET_VERIFY", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [1, 2, 3], "num_draft_tokens": 3}])");
  ASSERT_TRUE(UseCommonPool(specs).ok());
  for (const ScenarioSpec& spec : specs) {
    EXPECT_EQ(spec.max_context_len, 105);
    EXPECT_EQ(spec.max_requests, 5);
    EXPECT_EQ(spec.draft_headroom, 3);
    EXPECT_EQ(spec.num_pages, (27 + 1) + 3 + 9);
  }
}

TEST(BatchJsonTest, CommonPoolPastTheTableLimitIsResourceExhausted) {
  std::string lengths;
  for (int i = 0; i < 8; ++i) absl::StrAppend(&lengths, i ? "," : "", "16777216");
  std::vector<ScenarioSpec> specs = Parse(absl::StrCat(
      R"([{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "prefix_only", "seq_lens": [)",
      lengths, R"(]}])"));
  const absl::Status status = UseCommonPool(specs);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("common pool: max_requests 10 (batch 0) * row width 16777218 "
                                  "(batch 0) = 167772180 req_to_token entries exceed the limit "
                                  "of 67108864"),
            absl::string_view::npos)
      << status;
}

// ----- The text is exactly one JSON value, read as written.

constexpr char kTwoBatches[] =
    R"([{"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only", "seq_lens": [3]},
        {"mode": "DECODE", "page_size": 1, "seq_lens_convention": "prefix_only", "seq_lens": [5]}])";

// Regression: the parser skipped a byte order mark that the CLI's own
// array check (the first non-space byte) did not, so an array was planned
// as its first batch only.
TEST(BatchJsonTest, AByteOrderMarkIsRefusedByName) {
  ExpectInvalid(absl::StrCat("\xEF\xBB\xBF", kTwoBatches),
                "batch file starts with a UTF-8 byte order mark (EF BB BF)");
}

// Regression: the parser ends its input at a NUL byte, so whatever followed
// (another batch, garbage) was ignored.
TEST(BatchJsonTest, ANulByteIsRefusedByName) {
  std::string text = absl::StrCat("{", kDecode, R"(, "seq_lens": [4]})");
  const size_t at = text.size();
  text += std::string("\0garbage", 8);
  ExpectInvalid(text, absl::StrCat("batch file has a NUL byte at byte ", at));
  ExpectInvalid(std::string("\0", 1), "NUL byte at byte 0");
}

// Regression: the last of two equal keys won, silently.
TEST(BatchJsonTest, ADuplicateKeyIsRefusedNamingTheBatch) {
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "seq_lens": [9]})"),
                "batch 0: field \"seq_lens\" appears twice in one object");
  ExpectInvalid(absl::StrCat("[{", kDecode, R"(, "seq_lens": [4]}, {)", kDecode,
                             R"(, "seed": 1, "mode": "EXTEND", "seq_lens": [4]}])"),
                "batch 1: field \"mode\" appears twice");
  // Equal keys in different objects are fine.
  EXPECT_EQ(Parse(kTwoBatches).size(), 2u);
}

TEST(BatchJsonTest, TheArrayShapeIsTheParsersOwn) {
  absl::StatusOr<BatchFile> file =
      ParseBatchFile(absl::StrCat(" \r\n\t[{", kDecode, R"(, "seq_lens": [4]}])"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->is_array);  // an array of one batch prints as an array
  file = ParseBatchFile(absl::StrCat("\n{", kDecode, R"(, "seq_lens": [4]}  )"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(file->is_array);
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4]} {})"), "not valid JSON");
}

// Regression: these combinations were accepted and planned something other
// than what the file says (or failed later blaming seq_lens).
TEST(BatchJsonTest, SpeculativeFieldsThatDisagreeWithTheModeAreNamed) {
  ExpectInvalid(R"({"mode": "DRAFT_EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4, 4], "new_tokens": [6, 1], "accept_lengths": [5, 0],
                    "num_draft_tokens": 4})",
                "batch 0: request 0: accept_lengths[0] = 5 exceeds num_draft_tokens = 4");
  ExpectInvalid(R"({"mode": "DRAFT_EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [2]})",
                "batch 0: num_draft_tokens is required for mode DRAFT_EXTEND");
  ExpectInvalid(R"({"mode": "TARGET_VERIFY", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "num_draft_tokens": 0})",
                "batch 0: num_draft_tokens = 0 must be >= 1 for mode TARGET_VERIFY");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "draft_step": 3,
                             "num_draft_tokens": 3})"),
                "batch 0: draft_step = 3 must be < num_draft_tokens = 3");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "draft_step": 0})"),
                "batch 0: draft_step = 0 must be < num_draft_tokens = 0");
  ExpectInvalid(R"({"mode": "EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [1], "draft_step": 0, "num_draft_tokens": 2})",
                "batch 0: draft_step = 0 is only for DECODE batches, not EXTEND");
  ExpectInvalid(R"({"mode": "EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [1], "accept_lengths": [0]})",
                "batch 0: accept_lengths is only for DRAFT_EXTEND, not EXTEND");
  ExpectInvalid(R"({"mode": "DRAFT_EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4, 4], "new_tokens": [1, 1], "accept_lengths": [0],
                    "num_draft_tokens": 4})",
                "batch 0: accept_lengths has 1 entries but seq_lens has 2");
  ExpectInvalid(R"({"mode": "DRAFT_EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [6], "num_draft_tokens": 4})",
                "request 0: new_tokens[0] = 6 but DRAFT_EXTEND extends at most num_draft_tokens + "
                "1 = 5");
}

// Regression: TARGET_VERIFY with new_tokens != num_draft_tokens failed in
// the descriptor check, blaming the seq_lens convention.
TEST(BatchJsonTest, ACountTheModeFixesIsNamedNotBlamedOnSeqLens) {
  ExpectInvalid(R"({"mode": "TARGET_VERIFY", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4, 4], "new_tokens": [4, 3], "num_draft_tokens": 4})",
                "batch 0: request 1: new_tokens[1] = 3 but TARGET_VERIFY verifies "
                "num_draft_tokens = 4 tokens per request");
  ExpectInvalid(R"({"mode": "DRAFT_EXTEND_V2", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [5], "num_draft_tokens": 4})",
                "request 0: new_tokens[0] = 5 but DRAFT_EXTEND_V2 extends num_draft_tokens = 4");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "new_tokens": [2]})"),
                "request 0: new_tokens[0] = 2 but DECODE writes 1 token per request");
  ExpectInvalid(R"({"mode": "DRAFT_EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [3], "accept_lengths": [1],
                    "num_draft_tokens": 4})",
                "request 0: new_tokens[0] = 3 but DRAFT_EXTEND extends accept_lengths[0] + 1 = 2");
}

// ----- Trees (topk > 1).

constexpr char kVerify[] =
    R"("mode": "TARGET_VERIFY", "page_size": 4, "seq_lens_convention": "prefix_only")";
constexpr char kDraftStep[] =
    R"("mode": "DECODE", "page_size": 4, "seq_lens_convention": "prefix_only", "draft_step": 2,
       "num_draft_tokens": 3)";

TEST(BatchJsonTest, TreeFieldsFlattenIntoTheSpec) {
  std::vector<ScenarioSpec> specs =
      Parse(absl::StrCat("{", kVerify, R"(, "seq_lens": [30, 5], "num_draft_tokens": 4,
                         "topk": 2, "tree_parents": [[-1, -1, 0, 1], [-1, 0, 1, 2]]})"));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].spec.topk, 2);
  EXPECT_EQ(specs[0].spec.tree_parents, (std::vector<int32_t>{-1, -1, 0, 1, -1, 0, 1, 2}));
  EXPECT_EQ(specs[0].new_tokens, (std::vector<int32_t>{4, 4}));
  // A chain needs no topk.
  specs = Parse(absl::StrCat("{", kVerify, R"(, "seq_lens": [30], "num_draft_tokens": 2,
                             "tree_parents": [[-1, 0]]})"));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].spec.topk, 1);
  EXPECT_EQ(specs[0].spec.tree_parents, (std::vector<int32_t>{-1, 0}));
  // A tree draft step writes topk tokens per request: the default, and a
  // count given must be that.
  specs = Parse(absl::StrCat("{", kDraftStep, R"(, "seq_lens": [40, 9], "topk": 3})"));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].spec.topk, 3);
  EXPECT_TRUE(specs[0].spec.tree_parents.empty());
  EXPECT_EQ(specs[0].new_tokens, (std::vector<int32_t>{3, 3}));
  EXPECT_EQ(Parse(absl::StrCat("{", kDraftStep, R"(, "seq_lens": [40], "new_tokens": [3],
                               "topk": 3})"))[0]
                .new_tokens,
            (std::vector<int32_t>{3}));
}

TEST(BatchJsonTest, TreeErrorsNameTheBatchFieldRequestAndValue) {
  const std::string verify = absl::StrCat("{", kVerify, R"(, "seq_lens": [30, 5], )");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2, "topk": 0})"),
                "batch 0: topk = 0 must be in [1, 64]");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2, "topk": 2.5})"),
                "batch 0: topk = 2.5 must be an integer");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2, "topk": 2})"),
                "batch 0: topk = 2 in TARGET_VERIFY needs tree_parents");
  ExpectInvalid(R"({"mode": "EXTEND", "page_size": 1, "seq_lens_convention": "prefix_only",
                    "seq_lens": [4], "new_tokens": [2], "topk": 2})",
                "batch 0: topk = 2 is only for TARGET_VERIFY and draft DECODE steps "
                "(draft_step >= 0), not EXTEND");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "topk": 2})"),
                "not DECODE without draft_step");
  ExpectInvalid(absl::StrCat("{", kDecode, R"(, "seq_lens": [4], "tree_parents": [[-1]]})"),
                "batch 0: tree_parents is only for TARGET_VERIFY, not DECODE");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2, "tree_parents": 7})"),
                "batch 0: tree_parents = 7 must be an array");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2, "tree_parents": [[-1, 0], 3]})"),
                "batch 0: request 1: tree_parents[1] = 3 must be an array of parents");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2, "tree_parents": [[-1, 0]]})"),
                "batch 0: tree_parents has 1 entries but seq_lens has 2");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2,
                             "tree_parents": [[-1, 0], [-1, 0, 1]]})"),
                "batch 0: request 1: tree_parents[1] has 3 entries but num_draft_tokens = 2");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2,
                             "tree_parents": [[-1, 0], [-1, "a"]]})"),
                "batch 0: request 1: tree_parents[1][1] = \"a\" must be an integer in [-1, 63]");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2,
                             "tree_parents": [[-1, 0], [-1, 18446744073709551615]]})"),
                "tree_parents[1][1] = 18446744073709551615 must be an integer in [-1, 63]");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 2,
                             "tree_parents": [[-2, 0], [-1, 0]]})"),
                "batch 0: request 0: tree_parents[0][0] = -2 must be an integer in [-1, 63]");
  // The tree's shape, in the descriptor's words (AncestorMasks).
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 3,
                             "tree_parents": [[-1, 0, 1], [-1, 2, 0]]})"),
                "batch 0: request 1: tree_parents node 1 has parent 2; a parent is -1 (the last "
                "committed token) or an earlier node (0 .. 0)");
  ExpectInvalid(absl::StrCat(verify, R"("num_draft_tokens": 3, "topk": 2,
                             "tree_parents": [[-1, 0, 0], [-1, -1, -1]]})"),
                "batch 0: request 1: tree_parents node 2 is child 3 of the root");
  // A draft step's tree holds at most 64 draft keys.
  ExpectInvalid(R"({"mode": "DECODE", "page_size": 4, "seq_lens_convention": "prefix_only",
                    "seq_lens": [400], "draft_step": 16, "num_draft_tokens": 20, "topk": 4})",
                "batch 0: draft_step = 16 with topk = 4 reads (16 + 1) x 4 = 68 draft keys per "
                "request; trees hold at most 64");
  ExpectInvalid(absl::StrCat("{", kDraftStep, R"(, "seq_lens": [40], "new_tokens": [1],
                             "topk": 3})"),
                "batch 0: request 0: new_tokens[0] = 1 but a tree draft step writes topk = 3 "
                "tokens per request");
}

// Regression guard: a tree list is bounded by its own limit before its
// entries are read, whatever num_draft_tokens says.
TEST(BatchJsonTest, ATreeListPastSixtyFourNodesIsRefusedByItsLength) {
  std::string parents = "-1";
  for (int k = 1; k < 65; ++k) absl::StrAppend(&parents, ",", k - 1);
  ExpectInvalid(absl::StrCat("{", kVerify, R"(, "seq_lens": [30], "num_draft_tokens": 65,
                             "tree_parents": [[)",
                             parents, "]]}"),
                "batch 0: request 0: tree_parents[0] has 65 entries, more than the 64 nodes a "
                "tree may have");
}

TEST(BatchJsonTest, TreeBatchesBuildAndPrintTheirTree) {
  std::vector<ScenarioSpec> specs =
      Parse(absl::StrCat("[{", kVerify, R"(, "seq_lens": [30, 5], "num_draft_tokens": 4, "topk": 2,
      "tree_parents": [[-1, -1, 0, 1], [-1, 0, 1, 2]]}, {)",
                         kDraftStep, R"(, "seq_lens": [40, 9], "topk": 3}])"));
  ASSERT_EQ(specs.size(), 2u);
  ASSERT_TRUE(UseCommonPool(specs).ok());
  const PlannerConfig config = HostPlannerConfig(32, 8, 128);
  const std::string want[] = {
      // Request 0: committed 30; nodes 0, 1 see themselves, 2 sees 0 and
      // itself, 3 sees 1 and itself. Request 1 is a chain: 5 + 1 .. 5 + 4.
      R"("tree":{"draft_keys":4,"parents":[[-1,-1,0,1],[-1,0,1,2]],)"
      R"("query_keys":[[31,31,32,32],[6,7,8,9]],"topk":2})",
      // Step 2 of 3 branches: 9 draft keys (3 steps x 3), committed 40 - 6 =
      // 34 and 9 - 6 = 3; each branch's query sees its 3 drafts.
      R"("tree":{"draft_keys":9,"parents":[[-1,-1,-1,0,1,2,3,4,5],[-1,-1,-1,0,1,2,3,4,5]],)"
      R"("query_keys":[[37,37,37],[6,6,6]],"topk":3})",
  };
  for (size_t b = 0; b < specs.size(); ++b) {
    const Scenario scenario = BuildScenario(specs[b]).value();
    ASSERT_TRUE(scenario.batch.has_tree());
    const HostMetadata plan = PlanEager(scenario.batch, *scenario.pool, config).value();
    const std::string json = MetadataJson(plan, scenario.batch, *scenario.pool).value();
    EXPECT_NE(json.find(want[b]), std::string::npos) << json;
  }
  // A batch without a tree prints none.
  const Scenario chain = BuildScenario(Parse(absl::StrCat("{", kVerify, R"(, "seq_lens": [30],
                                        "num_draft_tokens": 2})"))[0])
                             .value();
  const HostMetadata plan = PlanEager(chain.batch, *chain.pool, config).value();
  EXPECT_EQ(MetadataJson(plan, chain.batch, *chain.pool).value().find("\"tree\""),
            std::string::npos);
}

// ----- Output.

// What MetadataJson printed before it streamed: one nlohmann::json object
// (keys sorted by its std::map), dumped compactly. The streamed text must be
// the same bytes.
std::string ReferenceJson(const HostMetadata& metadata, const ValidatedBatch& validated,
                          const KvPagePool& pool, absl::string_view run) {
  using nlohmann::json;
  const BatchDescriptor& batch = validated.descriptor();
  const int32_t live = batch.batch_size();
  json out = json::object();
  out["mode"] = std::string(ForwardModeName(batch.mode));
  out["page_size"] = metadata.shape.page_size;
  out["cache_seqlens"] =
      std::vector<int32_t>(metadata.cache_seqlens.begin(), metadata.cache_seqlens.begin() + live);
  out["cu_seqlens_q"] =
      std::vector<int32_t>(metadata.cu_seqlens_q.begin(), metadata.cu_seqlens_q.begin() + live + 1);
  std::vector<int32_t> cu_k = {0};
  int32_t max_q = 0, max_k = 0;
  json page_table = json::array(), token_slots = json::array();
  for (int32_t i = 0; i < live; ++i) {
    cu_k.push_back(cu_k.back() + metadata.cache_seqlens[i]);
    max_q = std::max(max_q, metadata.cu_seqlens_q[i + 1] - metadata.cu_seqlens_q[i]);
    max_k = std::max(max_k, metadata.cache_seqlens[i]);
    const auto row =
        metadata.page_table.begin() + int64_t{i} * metadata.layout.max_pages_per_request;
    page_table.push_back(std::vector<int32_t>(row, row + metadata.NumPages(i)));
    std::vector<int32_t> slots;
    for (int32_t t = 0; t < metadata.cache_seqlens[i]; ++t) {
      slots.push_back(pool.Slot(batch.requests[i].row, t).value_or(-1));
    }
    token_slots.push_back(std::move(slots));
  }
  out["cu_seqlens_k"] = cu_k;
  out["max_seq_len_q"] = max_q;
  out["max_seq_len_k"] = max_k;
  out["page_table"] = std::move(page_table);
  out["token_slots"] = std::move(token_slots);
  const PartitionCounts& partition = metadata.summary.partition;
  json segments = json::array(), merges = json::array();
  for (int32_t w = 0; w + 1 < static_cast<int32_t>(metadata.worker_begin.size()); ++w) {
    for (int32_t s = metadata.worker_begin[w]; s < metadata.worker_begin[w + 1]; ++s) {
      const WorkSegment& g = metadata.segments[s];
      segments.push_back({w, g.request, g.kv_head, g.unit_tile, g.key_begin, g.key_end, g.partial});
    }
  }
  for (int32_t m = 0; m < partition.num_merge_tasks; ++m) {
    const MergeTask& t = metadata.merge_tasks[m];
    merges.push_back({t.request, t.kv_head, t.unit_tile, t.first_partial, t.num_partials});
  }
  out["work_plan"] = {{"workers", metadata.worker_begin.size() - 1},
                      {"active_workers", partition.num_active_workers},
                      {"segments", std::move(segments)},
                      {"merge_tasks", std::move(merges)}};
  if (!run.empty()) out["run"] = json::parse(run.begin(), run.end());
  if (validated.has_tree()) {
    // Parents and masks recomputed here from the spec, not read from the
    // validated batch: the printed tree is the one the file asked for.
    const int32_t d = validated.tree_draft_keys();
    json parents = json::array(), query_keys = json::array();
    int32_t token = 0;
    for (int32_t i = 0; i < live; ++i) {
      std::vector<int32_t> tree;
      if (batch.mode == ForwardMode::kTargetVerify) {
        tree.assign(batch.spec.tree_parents.begin() + i * d,
                    batch.spec.tree_parents.begin() + (i + 1) * d);
      } else {
        for (int32_t k = 0; k < d; ++k) {
          tree.push_back(k < batch.spec.topk ? -1 : k - batch.spec.topk);
        }
      }
      std::vector<int32_t> keys;
      const RequestEntry& r = batch.requests[i];
      for (int32_t j = 0; j < r.new_tokens; ++j, ++token) {
        int32_t seen = r.kv_len() - d;                                       // committed keys
        for (int32_t k = d - r.new_tokens + j; k >= 0; k = tree[k]) ++seen;  // ancestors-or-self
        keys.push_back(seen);
      }
      parents.push_back(tree);
      query_keys.push_back(keys);
    }
    out["tree"] = {{"draft_keys", d},
                   {"parents", std::move(parents)},
                   {"query_keys", std::move(query_keys)},
                   {"topk", batch.spec.topk}};
  }
  return out.dump();
}

TEST(BatchJsonTest, StreamedMetadataIsTheSameBytesInBoundedPieces) {
  std::vector<ScenarioSpec> specs = Parse(
      R"([{"mode": "DRAFT_EXTEND", "page_size": 4, "seq_lens_convention": "includes_new_tokens",
           "seq_lens": [101, 13], "new_tokens": [1, 8], "num_draft_tokens": 8, "seed": 3},
          {"mode": "TARGET_VERIFY", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [50000, 7, 64], "num_draft_tokens": 4, "seed": 5},
          {"mode": "IDLE", "page_size": 4, "seq_lens_convention": "prefix_only"},
          {"mode": "TARGET_VERIFY", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [30, 5], "num_draft_tokens": 5, "topk": 2, "seed": 6,
           "tree_parents": [[-1, -1, 0, 0, 1], [-1, 0, 1, 2, 3]]},
          {"mode": "DECODE", "page_size": 4, "seq_lens_convention": "prefix_only",
           "seq_lens": [40, 9], "num_draft_tokens": 3, "draft_step": 2, "topk": 3,
           "seed": 7}])");
  ASSERT_TRUE(UseCommonPool(specs).ok());
  for (const ScenarioSpec& spec : specs) {
    const Scenario scenario = BuildScenario(spec).value();
    // Few workers, so the printed plan holds cut units and merges too.
    PlannerConfig config = HostPlannerConfig(32, 8, 128);
    config.num_sms = 5;
    const HostMetadata plan = PlanEager(scenario.batch, *scenario.pool, config).value();
    const ValidatedBatch& batch = scenario.batch;
    for (const std::string run : {"", R"({"backend":"host","max_abs_error":0.5})"}) {
      std::string streamed;
      size_t largest_piece = 0;
      ASSERT_TRUE(WriteMetadataJson(plan, batch, *scenario.pool, run, [&](absl::string_view piece) {
                    streamed.append(piece.data(), piece.size());
                    largest_piece = std::max(largest_piece, piece.size());
                  }).ok());
      EXPECT_EQ(streamed, ReferenceJson(plan, batch, *scenario.pool, run));
      EXPECT_LT(largest_piece, kTextSinkChunkBytes + 64);
      EXPECT_EQ(MetadataJson(plan, batch, *scenario.pool, run).value(), streamed);
    }
  }
}

TEST(BatchJsonTest, MetadataThatDoesNotCoverTheBatchIsRefused) {
  const Scenario scenario =
      BuildScenario(Parse(absl::StrCat("{", kDecode, R"(, "seq_lens": [4, 9]})"))[0]).value();
  const HostMetadata plan =
      PlanEager(scenario.batch, *scenario.pool, HostPlannerConfig(32, 8, 128)).value();
  auto expect_refused = [&](const HostMetadata& metadata, absl::string_view run,
                            absl::string_view message) {
    const absl::StatusOr<std::string> text =
        MetadataJson(metadata, scenario.batch, *scenario.pool, run);
    ASSERT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(text.status().message().find(message), absl::string_view::npos) << text.status();
  };
  HostMetadata short_lengths = plan;
  short_lengths.cache_seqlens.pop_back();
  expect_refused(short_lengths, "", "metadata.cache_seqlens has 1 entries, fewer than the 2");
  HostMetadata short_table = plan;
  short_table.page_table.resize(1);
  expect_refused(short_table, "", "metadata.page_table has 1 entries");
  HostMetadata bad_pages = plan;
  bad_pages.cache_seqlens[1] = 1 << 20;  // more pages than a page-table row holds
  expect_refused(bad_pages, "", "metadata.cache_seqlens[1] = ");
  HostMetadata short_plan = plan;
  short_plan.segments.clear();
  expect_refused(short_plan, "", "metadata work plan");
  expect_refused(plan, "[1]", "is not a JSON object");
}

}  // namespace
}  // namespace paged_attention
