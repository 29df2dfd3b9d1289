// Reads a small input file (the plan CLI's --batch) without trusting its type
// or size: at most `max_bytes` + 1 bytes are ever read, whatever the path
// names (a regular file, a pipe or FIFO, /dev/zero, /dev/stdin), so no input
// can make the caller allocate more than the limit or read forever from an
// endless device.
//
//   ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kMaxBatchFileBytes));
//
// A FIFO is opened like any file: open() waits for a writer, as `cat` does.
#ifndef TOOLS_BATCH_FILE_H_
#define TOOLS_BATCH_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace paged_attention {

// The whole contents of `path`, 1 .. max_bytes bytes. Errors, each naming the
// path in quotes:
// - the code of errno (NotFound, PermissionDenied, ...) when it cannot be
//   opened or read, with strerror;
// - InvalidArgument "is a directory, not a file";
// - InvalidArgument "is empty" (an empty file, /dev/null, a pipe closed at once);
// - InvalidArgument "has N bytes, more than the limit of M" for a regular file
//   (known from its size, nothing is read) or "holds more than the limit of M
//   bytes" for anything else (after reading M + 1 bytes).
// max_bytes must be >= 0 (InvalidArgument otherwise).
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes);

}  // namespace paged_attention

#endif  // TOOLS_BATCH_FILE_H_
