#include "attention/base/quoted.h"

#include <string>

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(QuotedTest, QuotesAndEscapesWhatWouldBreakTheLine) {
  EXPECT_EQ(Quoted("decode"), "\"decode\"");
  EXPECT_EQ(Quoted(""), "\"\"");
  EXPECT_EQ(Quoted("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(Quoted("say \"x\""), "\"say \\\"x\\\"\"");
  EXPECT_EQ(Quoted(std::string("n\0ul", 4)), "\"n\\x00ul\"");
  EXPECT_EQ(Quoted("\x7f\xff"), "\"\\x7f\\xff\"");
}

}  // namespace
}  // namespace paged_attention
