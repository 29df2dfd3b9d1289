#include "spec_decode/forward_mode.h"

#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::HasSubstr;

// The truth table, one row per predicate, columns in the order
// EXTEND, DECODE, MIXED, IDLE, TARGET_VERIFY, DRAFT_EXTEND, DRAFT_EXTEND_V2.
struct TableRow {
  const char* predicate;
  bool (*fn)(ForwardMode);
  bool expected[7];
};

const TableRow kTable[] = {
    {"is_extend (DE2 excluded)",
     [](ForwardMode m) { return IsExtend(m, DraftExtendV2Policy::kExclude); },
     {1, 0, 1, 0, 1, 1, 0}},
    {"is_extend (DE2 included)",
     [](ForwardMode m) { return IsExtend(m, DraftExtendV2Policy::kInclude); },
     {1, 0, 1, 0, 1, 1, 1}},
    {"is_decode", IsDecode, {0, 1, 0, 0, 0, 0, 0}},
    {"is_mixed", IsMixed, {0, 0, 1, 0, 0, 0, 0}},
    {"is_idle", IsIdle, {0, 0, 0, 1, 0, 0, 0}},
    {"is_decode_or_idle", IsDecodeOrIdle, {0, 1, 0, 1, 0, 0, 0}},
    {"is_target_verify", IsTargetVerify, {0, 0, 0, 0, 1, 0, 0}},
    {"is_draft_extend (DE2 excluded)",
     [](ForwardMode m) { return IsDraftExtend(m, DraftExtendV2Policy::kExclude); },
     {0, 0, 0, 0, 0, 1, 0}},
    {"is_draft_extend (DE2 included)",
     [](ForwardMode m) { return IsDraftExtend(m, DraftExtendV2Policy::kInclude); },
     {0, 0, 0, 0, 0, 1, 1}},
    {"is_draft_extend_v2", IsDraftExtendV2, {0, 0, 0, 0, 0, 0, 1}},
    {"is_extend_or_draft_extend_or_mixed (DE2 excluded)",
     [](ForwardMode m) { return IsExtendOrDraftExtendOrMixed(m, DraftExtendV2Policy::kExclude); },
     {1, 0, 1, 0, 0, 1, 0}},
    {"is_extend_or_draft_extend_or_mixed (DE2 included)",
     [](ForwardMode m) { return IsExtendOrDraftExtendOrMixed(m, DraftExtendV2Policy::kInclude); },
     {1, 0, 1, 0, 0, 1, 1}},
    {"is_cuda_graph", IsCudaGraph, {0, 1, 0, 1, 1, 0, 0}},
};

TEST(ForwardModeTest, PredicatesMatchTheTruthTable) {
  ASSERT_EQ(std::size(kAllForwardModes), 7u);
  for (const TableRow& row : kTable) {
    for (size_t i = 0; i < std::size(kAllForwardModes); ++i) {
      const ForwardMode mode = kAllForwardModes[i];
      EXPECT_EQ(row.fn(mode), row.expected[i]) << row.predicate << " of " << ForwardModeName(mode);
    }
  }
}

TEST(ForwardModeTest, NamesAreUpstreamsAndRoundTrip) {
  const std::vector<std::string> names = {"EXTEND",        "DECODE",       "MIXED",          "IDLE",
                                          "TARGET_VERIFY", "DRAFT_EXTEND", "DRAFT_EXTEND_V2"};
  for (size_t i = 0; i < std::size(kAllForwardModes); ++i) {
    EXPECT_EQ(ForwardModeName(kAllForwardModes[i]), names[i]);
    absl::StatusOr<ForwardMode> parsed = ParseForwardMode(names[i]);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, kAllForwardModes[i]);
  }
}

TEST(ForwardModeTest, ParseFailsNamingTheString) {
  for (const char* name : {"draft_extend_v2", "PREBUILT", "", "DECODE "}) {
    absl::StatusOr<ForwardMode> parsed = ParseForwardMode(name);
    ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr(absl::StrCat("\"", name, "\" is not a forward mode")));
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("DRAFT_EXTEND_V2"));
  }
}

TEST(ForwardModeTest, ParseEscapesControlBytesSoTheMessageIsOneLine) {
  const std::string name("DE\nCODE\t\x01\xff", 10);
  absl::StatusOr<ForwardMode> parsed = ParseForwardMode(name);
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(parsed.status().message());
  EXPECT_THAT(message, HasSubstr("\"DE\\nCODE\\t\\x01\\xff\" is not a forward mode"));
  for (const char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << message;
}

TEST(ForwardModeTest, OnlyTheSevenModesAreKnown) {
  for (ForwardMode mode : kAllForwardModes) EXPECT_TRUE(IsKnownForwardMode(mode));
  for (int value : {-1, 7, 8, 42, 1 << 30}) {
    EXPECT_FALSE(IsKnownForwardMode(static_cast<ForwardMode>(value))) << value;
  }
}

}  // namespace
}  // namespace paged_attention
