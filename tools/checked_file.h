// Output files whose every write is checked, up to the final close, so a full
// disk, /dev/full, a closed stdout or a quota fails the call naming the file
// instead of losing the output silently (a buffered write only fails when it
// is flushed, often at close).
//
//   ASSIGN_OR_RETURN(CheckedFile file, CheckedFile::Create(path));
//   file.Write(header);
//   file.Write(data);
//   RETURN_IF_ERROR(file.Close());  // the first failure of any write, the flush or the close
#ifndef TOOLS_CHECKED_FILE_H_
#define TOOLS_CHECKED_FILE_H_

#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paged_attention {

class CheckedFile {
 public:
  // Creates or truncates `path` for writing. The error of fopen (e.g.
  // NotFound, PermissionDenied) names the path.
  static absl::StatusOr<CheckedFile> Create(const std::string& path);
  // Writes to the process's stdout; Close() flushes and closes it.
  static CheckedFile Stdout();

  CheckedFile(CheckedFile&& other) noexcept;
  CheckedFile& operator=(CheckedFile&& other) = delete;
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;
  // Closes a file not closed yet, ignoring errors: call Close() to see them.
  ~CheckedFile();

  // Appends `bytes`. After the first failure further writes are skipped and
  // status() holds the error.
  void Write(absl::string_view bytes);
  // OK, or the first failure so far: "writing \"PATH\" failed: <strerror>".
  const absl::Status& status() const { return status_; }
  // Flushes and closes; returns the first failure of any write, the flush or
  // the close. The file is closed whatever the outcome.
  absl::Status Close();

  const std::string& name() const { return name_; }

 private:
  CheckedFile(std::FILE* file, std::string name) : file_(file), name_(std::move(name)) {}
  void Fail(int error_number);

  std::FILE* file_;
  std::string name_;  // "\"PATH\"" or "stdout", for messages
  absl::Status status_;
};

}  // namespace paged_attention

#endif  // TOOLS_CHECKED_FILE_H_
