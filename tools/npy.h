// Writes arrays as .npy files (numpy format 1.0, little-endian) so anyone can
// check our inputs and outputs with their own tools: np.load("q.npy").
#ifndef TOOLS_NPY_H_
#define TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace paged_attention {

// Bytes of one element of numpy type string `descr`: "|b1" (bool, one byte
// 0 or 1) 1, "<u2" (bf16/fp16 bit patterns) 2, "<f4" 4, "<f8" 8, "<i4" 4.
// InvalidArgument for other strings.
absl::StatusOr<int64_t> NpyItemSize(const std::string& descr);

// Writes `data` (the elements in C order) as an .npy file. Checked before
// anything is written (InvalidArgument, naming the path): `descr` is one of
// NpyItemSize's, every dimension >= 0, and `bytes` == product(shape) *
// itemsize (in int64, without overflow). Every write and the final close are
// checked: a full disk fails the call naming the file.
absl::Status WriteNpy(const std::string& path, const std::string& descr,
                      absl::Span<const int64_t> shape, const void* data, size_t bytes);

// The header bytes (magic, version 1.0, padded dict) for `descr` and `shape`.
// Version 1.0 stores the header length in 16 bits; WriteNpy refuses shapes
// whose header would not fit (it would take thousands of dimensions).
std::string NpyHeader(const std::string& descr, absl::Span<const int64_t> shape);

}  // namespace paged_attention

#endif  // TOOLS_NPY_H_
