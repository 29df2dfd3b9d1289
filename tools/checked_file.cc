#include "tools/checked_file.h"

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"

namespace paged_attention {

absl::StatusOr<CheckedFile> CheckedFile::Create(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot create \"", path, "\""));
  }
  return CheckedFile(file, absl::StrCat("\"", path, "\""));
}

CheckedFile CheckedFile::Stdout() { return CheckedFile(stdout, "stdout"); }

CheckedFile::CheckedFile(CheckedFile&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)),
      name_(std::move(other.name_)),
      status_(std::move(other.status_)) {}

CheckedFile::~CheckedFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void CheckedFile::Fail(int error_number) {
  if (!status_.ok()) return;
  // errno 0: stdio reported a failure without saying why.
  status_ = error_number != 0
                ? absl::ErrnoToStatus(error_number, absl::StrCat("writing ", name_, " failed"))
                : absl::DataLossError(absl::StrCat("writing ", name_, " failed"));
}

void CheckedFile::Write(absl::string_view bytes) {
  if (!status_.ok() || bytes.empty()) return;
  if (file_ == nullptr) {
    status_ = absl::FailedPreconditionError(absl::StrCat("writing ", name_, " after Close()"));
    return;
  }
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) Fail(errno);
}

absl::Status CheckedFile::Close() {
  if (file_ == nullptr) return status_;
  errno = 0;
  if (std::fflush(file_) != 0) Fail(errno);
  if (std::ferror(file_)) Fail(errno);
  errno = 0;
  // fclose can report what the flush could not (e.g. on NFS); the file is
  // closed either way.
  if (std::fclose(std::exchange(file_, nullptr)) != 0) Fail(errno);
  return status_;
}

}  // namespace paged_attention
