#include "attention/base/quoted.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace paged_attention {

std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::CHexEscape(text), "\"");
}

}  // namespace paged_attention
