// A caller-supplied string in an error message: in double quotes, C-escaped
// (absl::CHexEscape: \n, \", \\, and \xHH for other non-printable bytes), so
// the message stays one printable line whatever the string holds.
#ifndef ATTENTION_BASE_QUOTED_H_
#define ATTENTION_BASE_QUOTED_H_

#include <string>

#include "absl/strings/string_view.h"

namespace paged_attention {

std::string Quoted(absl::string_view text);

}  // namespace paged_attention

#endif  // ATTENTION_BASE_QUOTED_H_
