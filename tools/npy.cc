#include "tools/npy.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attention/base/status_macros.h"
#include "tools/checked_file.h"

namespace paged_attention {

absl::StatusOr<int64_t> NpyItemSize(const std::string& descr) {
  if (descr == "|b1") return 1;
  if (descr == "<u2") return 2;
  if (descr == "<f4" || descr == "<i4") return 4;
  if (descr == "<f8") return 8;
  return absl::InvalidArgumentError(
      absl::StrCat("npy descr \"", descr, "\" is not one of |b1, <u2, <f4, <f8, <i4"));
}

std::string NpyHeader(const std::string& descr, absl::Span<const int64_t> shape) {
  std::string shape_text = absl::StrJoin(shape, ", ");
  if (shape.size() == 1) shape_text += ",";
  std::string dict = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (",
                                  shape_text, "), }");
  // magic(6) + version(2) + length(2) + dict + padding + '\n' is a multiple of 64.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string header("\x93NUMPY\x01\x00", 8);
  header.push_back(static_cast<char>(dict.size() & 0xff));
  header.push_back(static_cast<char>((dict.size() >> 8) & 0xff));
  return header + dict;
}

absl::Status WriteNpy(const std::string& path, const std::string& descr,
                      absl::Span<const int64_t> shape, const void* data, size_t bytes) {
  absl::StatusOr<int64_t> item_size = NpyItemSize(descr);
  if (!item_size.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", path, "\": ", item_size.status().message()));
  }
  // The byte count the shape implies, in int64 without overflow.
  int64_t expected = *item_size;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", path, "\": shape[", i, "] = ", shape[i], " is negative"));
    }
    if (shape[i] != 0 && expected > std::numeric_limits<int64_t>::max() / shape[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", path, "\": shape (", absl::StrJoin(shape, ", "), ") overflows int64 bytes"));
    }
    expected *= shape[i];
  }
  if (static_cast<uint64_t>(expected) != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", path, "\": shape (", absl::StrJoin(shape, ", "), ") of ", descr, " is ",
                     expected, " bytes but ", bytes, " bytes were given"));
  }
  if (data == nullptr && bytes > 0) {
    return absl::InvalidArgumentError(absl::StrCat("\"", path, "\": data is null"));
  }
  const std::string header = NpyHeader(descr, shape);
  if (header.size() - 10 > 0xffff) {
    return absl::InvalidArgumentError(absl::StrCat("\"", path, "\": the header of ", shape.size(),
                                                   " dimensions does not fit npy format 1.0"));
  }
  ASSIGN_OR_RETURN(CheckedFile file, CheckedFile::Create(path));
  file.Write(header);
  file.Write(absl::string_view(static_cast<const char*>(data), bytes));
  return file.Close();
}

}  // namespace paged_attention
