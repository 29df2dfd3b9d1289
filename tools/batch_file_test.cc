#include "tools/batch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kLimit = 1000;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = TempPath(name);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  EXPECT_NE(file, nullptr);
  EXPECT_EQ(std::fwrite(contents.data(), 1, contents.size(), file), contents.size());
  EXPECT_EQ(std::fclose(file), 0);
  return path;
}

void ExpectError(const absl::StatusOr<std::string>& read, absl::StatusCode code,
                 const std::string& message) {
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), code) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr(message));
}

TEST(ReadBoundedFileTest, ReadsAFileUpToTheLimit) {
  const std::string contents(kLimit, 'x');
  absl::StatusOr<std::string> read = ReadBoundedFile(WriteTemp("exact", contents), kLimit);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, contents);
  read = ReadBoundedFile(WriteTemp("one", "{"), kLimit);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "{");
}

TEST(ReadBoundedFileTest, RefusesARegularFileOverTheLimitByItsSize) {
  const std::string path = WriteTemp("over", std::string(kLimit + 1, 'x'));
  ExpectError(ReadBoundedFile(path, kLimit), absl::StatusCode::kInvalidArgument,
              absl::StrCat("\"", path, "\" has 1001 bytes, more than the limit of 1000"));
  // A sparse 100 MB file: refused from its size, nothing read.
  const std::string sparse = TempPath("sparse");
  const int fd = open(sparse.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 100 << 20), 0);
  close(fd);
  ExpectError(ReadBoundedFile(sparse, kLimit), absl::StatusCode::kInvalidArgument,
              "has 104857600 bytes, more than the limit of 1000");
}

// Regression (plan_batch --batch=/dev/zero grew until the machine killed it):
// a device without a size is read no further than the limit + 1.
TEST(ReadBoundedFileTest, StopsReadingAnEndlessDeviceAfterTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  ExpectError(ReadBoundedFile("/dev/zero", 1 << 20), absl::StatusCode::kInvalidArgument,
              "\"/dev/zero\" holds more than the limit of 1048576 bytes");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ReadBoundedFileTest, SaysAnEmptyFileOrDevNullIsEmpty) {
  ExpectError(ReadBoundedFile("/dev/null", kLimit), absl::StatusCode::kInvalidArgument,
              "\"/dev/null\" is empty");
  ExpectError(ReadBoundedFile(WriteTemp("empty", ""), kLimit), absl::StatusCode::kInvalidArgument,
              "is empty");
}

TEST(ReadBoundedFileTest, SaysADirectoryIsADirectory) {
  const std::string dir = TempPath("a_directory");
  mkdir(dir.c_str(), 0755);
  ExpectError(ReadBoundedFile(dir, kLimit), absl::StatusCode::kInvalidArgument,
              absl::StrCat("\"", dir, "\" is a directory, not a file"));
}

TEST(ReadBoundedFileTest, NamesAMissingFile) {
  ExpectError(ReadBoundedFile(TempPath("missing/batch.json"), kLimit), absl::StatusCode::kNotFound,
              "cannot open");
}

TEST(ReadBoundedFileTest, ReadsAPipeAndStopsOneBytePastTheLimit) {
  for (const size_t size : {size_t{kLimit}, size_t{kLimit + 1}, size_t{4 * kLimit}}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const std::string contents(size, 'p');
    ASSERT_EQ(write(fds[1], contents.data(), contents.size()), static_cast<ssize_t>(size));
    close(fds[1]);
    const absl::StatusOr<std::string> read =
        ReadBoundedFile(absl::StrCat("/proc/self/fd/", fds[0]), kLimit);
    close(fds[0]);
    if (size <= kLimit) {
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ(*read, contents);
    } else {
      ExpectError(read, absl::StatusCode::kInvalidArgument, "holds more than the limit of 1000");
    }
  }
}

TEST(ReadBoundedFileTest, ReadsAFifoFromAWriterThatNeverStops) {
  const std::string fifo = TempPath("fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  // The writer writes until the reader goes away (EPIPE; SIGPIPE ignored).
  std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&fifo] {
    const int fd = open(fifo.c_str(), O_WRONLY);
    const std::string chunk(4096, 'f');
    while (fd >= 0 && write(fd, chunk.data(), chunk.size()) > 0) {
    }
    if (fd >= 0) close(fd);
  });
  ExpectError(ReadBoundedFile(fifo, kLimit), absl::StatusCode::kInvalidArgument,
              "holds more than the limit of 1000 bytes");
  writer.join();
}

TEST(ReadBoundedFileTest, EscapesThePathSoTheMessageIsOneLine) {
  const std::string path = TempPath("no\nsuch\tfile");
  const absl::StatusOr<std::string> read = ReadBoundedFile(path, kLimit);
  ASSERT_FALSE(read.ok());
  const std::string message(read.status().message());
  EXPECT_THAT(message, HasSubstr("no\\nsuch\\tfile\""));
  for (const char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << message;
}

TEST(ReadBoundedFileTest, RefusesANegativeLimit) {
  ExpectError(ReadBoundedFile("/dev/null", -1), absl::StatusCode::kInvalidArgument,
              "max_bytes = -1 is negative");
}

}  // namespace
}  // namespace paged_attention
