#include "tools/npy.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paged_attention {

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
  header.push_back(static_cast<char>(dict.size() >> 8));
  return header + dict;
}

absl::Status WriteNpy(const std::string& path, const std::string& descr,
                      absl::Span<const int64_t> shape, const void* data, size_t bytes) {
  std::ofstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot write \"", path, "\""));
  const std::string header = NpyHeader(descr, shape);
  file.write(header.data(), header.size());
  file.write(static_cast<const char*>(data), bytes);
  if (!file) return absl::InternalError(absl::StrCat("write of \"", path, "\" failed"));
  return absl::OkStatus();
}

}  // namespace paged_attention
