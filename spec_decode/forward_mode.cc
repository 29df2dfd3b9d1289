#include "spec_decode/forward_mode.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attention/base/quoted.h"

namespace paged_attention {

absl::string_view ForwardModeName(ForwardMode mode) {
  switch (mode) {
    case ForwardMode::kExtend:
      return "EXTEND";
    case ForwardMode::kDecode:
      return "DECODE";
    case ForwardMode::kMixed:
      return "MIXED";
    case ForwardMode::kIdle:
      return "IDLE";
    case ForwardMode::kTargetVerify:
      return "TARGET_VERIFY";
    case ForwardMode::kDraftExtend:
      return "DRAFT_EXTEND";
    case ForwardMode::kDraftExtendV2:
      return "DRAFT_EXTEND_V2";
  }
  return "UNKNOWN";
}

bool IsKnownForwardMode(ForwardMode mode) {
  for (ForwardMode known : kAllForwardModes) {
    if (mode == known) return true;
  }
  return false;
}

absl::StatusOr<ForwardMode> ParseForwardMode(absl::string_view name) {
  std::string valid;
  for (ForwardMode mode : kAllForwardModes) {
    if (ForwardModeName(mode) == name) return mode;
    absl::StrAppend(&valid, valid.empty() ? "" : ", ", ForwardModeName(mode));
  }
  // Escaped: the name comes from files and flags, and an error message stays
  // one printable line whatever bytes it held (a newline, a NUL, invalid UTF-8).
  return absl::InvalidArgumentError(
      absl::StrCat(Quoted(name), " is not a forward mode; expected one of ", valid));
}

bool IsExtend(ForwardMode mode, DraftExtendV2Policy draft_extend_v2) {
  switch (mode) {
    case ForwardMode::kExtend:
    case ForwardMode::kMixed:
    case ForwardMode::kTargetVerify:
    case ForwardMode::kDraftExtend:
      return true;
    case ForwardMode::kDraftExtendV2:
      return draft_extend_v2 == DraftExtendV2Policy::kInclude;
    case ForwardMode::kDecode:
    case ForwardMode::kIdle:
      return false;
  }
  return false;
}

bool IsDecode(ForwardMode mode) { return mode == ForwardMode::kDecode; }
bool IsMixed(ForwardMode mode) { return mode == ForwardMode::kMixed; }
bool IsIdle(ForwardMode mode) { return mode == ForwardMode::kIdle; }
bool IsDecodeOrIdle(ForwardMode mode) { return IsDecode(mode) || IsIdle(mode); }
bool IsTargetVerify(ForwardMode mode) { return mode == ForwardMode::kTargetVerify; }

bool IsDraftExtend(ForwardMode mode, DraftExtendV2Policy draft_extend_v2) {
  return mode == ForwardMode::kDraftExtend ||
         (draft_extend_v2 == DraftExtendV2Policy::kInclude && IsDraftExtendV2(mode));
}

bool IsDraftExtendV2(ForwardMode mode) { return mode == ForwardMode::kDraftExtendV2; }

bool IsExtendOrDraftExtendOrMixed(ForwardMode mode, DraftExtendV2Policy draft_extend_v2) {
  return mode == ForwardMode::kExtend || mode == ForwardMode::kMixed ||
         IsDraftExtend(mode, draft_extend_v2);
}

bool IsCudaGraph(ForwardMode mode) {
  return mode == ForwardMode::kDecode || mode == ForwardMode::kIdle ||
         mode == ForwardMode::kTargetVerify;
}

}  // namespace paged_attention
