#include "tools/checked_file.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(CheckedFileTest, WritesWhatItWasGiven) {
  const std::string path = TempPath("checked.txt");
  absl::StatusOr<CheckedFile> file = CheckedFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status();
  file->Write("hello, ");
  file->Write(std::string(100000, 'x'));
  ASSERT_TRUE(file->Close().ok());
  std::ifstream in(path, std::ios::binary);
  const std::string contents((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "hello, " + std::string(100000, 'x'));
}

// A small write sits in the stdio buffer: only the flush at close fails.
TEST(CheckedFileTest, AFullDeviceFailsAtCloseNamingTheFile) {
  absl::StatusOr<CheckedFile> file = CheckedFile::Create("/dev/full");
  ASSERT_TRUE(file.ok()) << file.status();
  file->Write("{}\n");
  EXPECT_TRUE(file->status().ok());
  const absl::Status closed = file->Close();
  ASSERT_EQ(closed.code(), absl::StatusCode::kResourceExhausted) << closed;
  EXPECT_THAT(std::string(closed.message()),
              HasSubstr("writing \"/dev/full\" failed: No space left on device"));
}

TEST(CheckedFileTest, ALargeWriteFailsAtOnceAndLaterWritesAreSkipped) {
  absl::StatusOr<CheckedFile> file = CheckedFile::Create("/dev/full");
  ASSERT_TRUE(file.ok()) << file.status();
  file->Write(std::string(1 << 20, 'x'));
  EXPECT_EQ(file->status().code(), absl::StatusCode::kResourceExhausted);
  file->Write("more");
  EXPECT_EQ(file->Close().code(), absl::StatusCode::kResourceExhausted);
}

TEST(CheckedFileTest, CreateNamesAPathItCannotCreate) {
  absl::StatusOr<CheckedFile> file = CheckedFile::Create(TempPath("no/such/dir/file"));
  ASSERT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("cannot create \""));
}

}  // namespace
}  // namespace paged_attention
