// Writes arrays as .npy files (numpy format 1.0, little-endian) so anyone can
// check our inputs and outputs with their own tools: np.load("q.npy").
#ifndef TOOLS_NPY_H_
#define TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace paged_attention {

// `descr` is numpy's type string: "<u2" (bf16/fp16 bit patterns), "<f4",
// "<f8", "<i4". `data` holds the elements in C order, product(shape) of them.
absl::Status WriteNpy(const std::string& path, const std::string& descr,
                      absl::Span<const int64_t> shape, const void* data, size_t bytes);

// The header bytes (magic, version 1.0, padded dict) for `descr` and `shape`.
std::string NpyHeader(const std::string& descr, absl::Span<const int64_t> shape);

}  // namespace paged_attention

#endif  // TOOLS_NPY_H_
