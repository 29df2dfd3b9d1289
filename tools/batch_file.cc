#include "tools/batch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attention/base/quoted.h"

namespace paged_attention {
namespace {

// Closes the descriptor on every return path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes) {
  if (max_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_bytes = ", max_bytes, " is negative"));
  }
  // O_NOCTTY: a terminal named as the file must not become our controlling one.
  const FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", Quoted(path)));
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot stat ", Quoted(path)));
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(Quoted(path), " is a directory, not a file"));
  }
  // A regular file's size is known: refuse a large one without reading it.
  // (It may still grow while we read; the read below is bounded regardless.)
  const bool regular = S_ISREG(info.st_mode);
  if (regular && info.st_size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(Quoted(path), " has ", info.st_size,
                                                   " bytes, more than the limit of ", max_bytes));
  }
  // Read up to max_bytes + 1: one byte past the limit proves the input is too
  // long, whatever the file type (pipes, FIFOs and devices report no size).
  const int64_t cap = max_bytes + 1;
  std::string contents;
  contents.resize(static_cast<size_t>(std::min<int64_t>(cap, regular ? info.st_size + 1 : 65536)));
  int64_t total = 0;
  while (total < cap) {
    if (total == static_cast<int64_t>(contents.size())) {
      contents.resize(static_cast<size_t>(std::min<int64_t>(cap, 2 * total)));
    }
    const ssize_t got = read(fd.get(), contents.data() + total, contents.size() - total);
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", Quoted(path)));
    }
    if (got == 0) break;  // end of file
    total += got;
  }
  if (total > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(path), " holds more than the limit of ", max_bytes, " bytes"));
  }
  if (total == 0) {
    return absl::InvalidArgumentError(absl::StrCat(Quoted(path), " is empty"));
  }
  contents.resize(static_cast<size_t>(total));
  return contents;
}

}  // namespace paged_attention
