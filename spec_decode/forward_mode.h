// What kind of forward pass a batch is (upstream SGLang's ForwardMode) and the
// predicates the attention backend dispatches on.
//
//   ASSIGN_OR_RETURN(ForwardMode mode, ParseForwardMode("DRAFT_EXTEND_V2"));
//   if (IsExtend(mode, DraftExtendV2Policy::kInclude)) { ... }
//
// Upstream has more members (PREBUILT, SPLIT_PREFILL, DLLM_EXTEND); this
// backend serves the seven below. The numeric values are ours and carry no
// meaning: compare and persist modes by name (upstream's values shift between
// versions).
#ifndef SPEC_DECODE_FORWARD_MODE_H_
#define SPEC_DECODE_FORWARD_MODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paged_attention {

enum class ForwardMode {
  kExtend,         // prefill / chunked prefill; part of the prefix may be cached
  kDecode,         // one new token per request; also EAGLE draft decode steps
  kMixed,          // chunked prefill mixed with decode requests; handled like kExtend
  kIdle,           // no requests (a data-parallel rank with nothing to do)
  kTargetVerify,   // the target model scores num_draft_tokens per request
  kDraftExtend,    // V1 draft model re-extends accept_length + 1 tokens per request
  kDraftExtendV2,  // V2 ("overlap") draft model extends exactly num_draft_tokens per request
};

// Every mode, in declaration order, for exhaustive tests and tools.
inline constexpr ForwardMode kAllForwardModes[] = {
    ForwardMode::kExtend,        ForwardMode::kDecode,       ForwardMode::kMixed,
    ForwardMode::kIdle,          ForwardMode::kTargetVerify, ForwardMode::kDraftExtend,
    ForwardMode::kDraftExtendV2,
};

// True for the seven modes above; false for any other value cast to
// ForwardMode (e.g. read from a file or another process), which the
// predicates would silently treat as "none of these".
bool IsKnownForwardMode(ForwardMode mode);

// Whether a predicate counts DRAFT_EXTEND_V2 (upstream's include_v2 /
// include_draft_extend_v2 keyword, which defaults to exclude).
enum class DraftExtendV2Policy { kExclude, kInclude };

// Upstream's name: "EXTEND", "DECODE", "MIXED", "IDLE", "TARGET_VERIFY",
// "DRAFT_EXTEND", "DRAFT_EXTEND_V2".
absl::string_view ForwardModeName(ForwardMode mode);

// Inverse of ForwardModeName (exact, case-sensitive). InvalidArgument naming
// the string and listing the valid names.
absl::StatusOr<ForwardMode> ParseForwardMode(absl::string_view name);

// The predicates (upstream's ForwardMode.is_*), exhaustively tested against
// the table in forward_mode_test.cc.

// EXTEND, MIXED, TARGET_VERIFY, DRAFT_EXTEND; plus DRAFT_EXTEND_V2 if included.
// (Dispatch is a different question: upstream sends every mode except DECODE
// and IDLE, DRAFT_EXTEND_V2 included, to forward_extend.)
bool IsExtend(ForwardMode mode, DraftExtendV2Policy draft_extend_v2);
bool IsDecode(ForwardMode mode);
bool IsMixed(ForwardMode mode);
bool IsIdle(ForwardMode mode);
bool IsDecodeOrIdle(ForwardMode mode);
bool IsTargetVerify(ForwardMode mode);
// DRAFT_EXTEND; plus DRAFT_EXTEND_V2 if included.
bool IsDraftExtend(ForwardMode mode, DraftExtendV2Policy draft_extend_v2);
bool IsDraftExtendV2(ForwardMode mode);
// EXTEND, MIXED, DRAFT_EXTEND; plus DRAFT_EXTEND_V2 if included (not TARGET_VERIFY).
bool IsExtendOrDraftExtendOrMixed(ForwardMode mode, DraftExtendV2Policy draft_extend_v2);
// Modes the main CUDA-graph runner captures: DECODE, IDLE, TARGET_VERIFY.
// DRAFT_EXTEND(_V2) are captured by a separate draft-extend runner.
bool IsCudaGraph(ForwardMode mode);

}  // namespace paged_attention

#endif  // SPEC_DECODE_FORWARD_MODE_H_
