// libFuzzer target: the plan CLI's file-reading path on raw bytes (see
// tools/FUZZING.md). The input's first byte picks how the bytes are served
// (a regular file, or a pipe that reports no size) and the second the read
// limit (small ones, so both sides of a limit are reached); the rest is the
// file. ReadBoundedFile must return exactly the bytes when 1 <= size <=
// limit and refuse them otherwise; ParseBatchFile must then accept only one
// JSON value as written: no NUL byte, no byte order mark, no key twice in an
// object, an array exactly when the first non-blank byte opens one.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "testing/fuzz_input.h"
#include "tools/batch_file.h"
#include "tools/batch_json.h"

namespace paged_attention {
namespace {

using nlohmann::json;

// Key events and objects, counted by a SAX pass that keeps nothing: a key
// given twice in one object shows as more key events than the DOM holds.
class KeyCount : public nlohmann::json_sax<json> {
 public:
  int64_t keys = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override {
    ++keys;
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

int64_t DomKeys(const json& value) {
  int64_t keys = value.is_object() ? static_cast<int64_t>(value.size()) : 0;
  if (value.is_structured()) {
    for (const json& child : value) keys += DomKeys(child);
  }
  return keys;
}

// A file descriptor serving `bytes`: a memfd (a regular file with a size) or
// a pipe (no size). -1 if the pipe cannot hold them unread.
int Serve(const std::string& bytes, bool as_pipe) {
  if (as_pipe) {
    int fds[2];
    if (bytes.size() > 60000 || pipe(fds) != 0) return -1;
    const bool written =
        write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    close(fds[1]);
    if (!written) {
      close(fds[0]);
      return -1;
    }
    return fds[0];
  }
  const int fd = memfd_create("batch", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  return fd;
}

void Run(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const bool as_pipe = (data[0] & 1) != 0;
  const int64_t limits[] = {0, 1, 16, 64, 512, kMaxBatchFileBytes};
  const int64_t limit = limits[data[1] % 6];
  const std::string bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
  const int fd = Serve(bytes, as_pipe);
  if (fd < 0) return;
  const absl::StatusOr<std::string> read =
      ReadBoundedFile(absl::StrCat("/proc/self/fd/", fd), limit);
  close(fd);
  const int64_t n = static_cast<int64_t>(bytes.size());
  if (n == 0) {
    FUZZ_CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StrContains(read.status().message(), "is empty"));
    return;
  }
  if (n > limit) {
    FUZZ_CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StrContains(read.status().message(), "more than the limit"));
    return;
  }
  FUZZ_CHECK(read.ok());
  FUZZ_CHECK(*read == bytes);

  const absl::StatusOr<BatchFile> file = ParseBatchFile(*read);
  if (!file.ok()) {
    FUZZ_CHECK(file.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!file.status().message().empty());
    FUZZ_CHECK(file.status().message().find('\n') == absl::string_view::npos);
    return;
  }
  FUZZ_CHECK(bytes.find('\0') == std::string::npos);
  FUZZ_CHECK(!absl::StartsWith(bytes, "\xEF\xBB\xBF"));
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  FUZZ_CHECK(first != std::string::npos);
  FUZZ_CHECK(file->is_array == (bytes[first] == '['));
  const json root = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!root.is_discarded());
  FUZZ_CHECK(file->specs.size() == (root.is_array() ? root.size() : 1));
  KeyCount count;
  FUZZ_CHECK(json::sax_parse(bytes, &count));
  FUZZ_CHECK(count.keys == DomKeys(root));
}

}  // namespace
}  // namespace paged_attention

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paged_attention::Run(data, size);
  return 0;
}
