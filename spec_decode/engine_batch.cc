#include "spec_decode/engine_batch.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attention/base/status_macros.h"
#include "spec_decode/draft_tree.h"

namespace paged_attention {
namespace {

// Draft tokens a draft decode step's prefix holds beyond the committed
// length: draft_step per branch, topk branches.
int64_t EarlierDraftTokens(ForwardMode mode, const SpecInfo& spec) {
  if (!IsDecode(mode) || spec.draft_step < 0) return 0;
  return int64_t{spec.draft_step} * std::max(spec.topk, 1);
}

// Checks request i before anything is allocated, so that a bad request is
// refused with the pool untouched and named by the field that is wrong.
absl::Status CheckRequest(const KvPagePool& pool, ForwardMode mode, int32_t prefix_len,
                          int32_t new_tokens, const SpecInfo& spec, size_t i) {
  if (prefix_len < 0 || new_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat("request ", i, ": prefix_lens[", i,
                                                   "] = ", prefix_len, ", new_tokens[", i,
                                                   "] = ", new_tokens, " must not be negative"));
  }
  const bool draft_decode = IsDecode(mode) && spec.draft_step >= 0;
  if (draft_decode && prefix_len < EarlierDraftTokens(mode, spec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request ", i, ": prefix_lens[", i, "] = ", prefix_len, " is shorter than spec.draft_step ",
        spec.draft_step, " x spec.topk ", spec.topk,
        " (a draft step's prefix includes the earlier steps' draft tokens)"));
  }
  if (int64_t{prefix_len} + new_tokens > pool.row_width()) {
    // Checked here, before any sum below can overflow int32.
    return absl::OutOfRangeError(
        absl::StrCat("request ", i, ": prefix_lens[", i, "] = ", prefix_len, " + new_tokens[", i,
                     "] = ", new_tokens, " exceeds the pool's row width ", pool.row_width()));
  }
  // Counts the mode fixes. TARGET_VERIFY's and DECODE's are not passed on as
  // extend_seq_lens (upstream does not), so a wrong one would otherwise
  // surface as unwritten rows blamed on the seq_lens convention.
  int64_t fixed = -1;
  std::string why;
  switch (mode) {
    case ForwardMode::kDecode:
      fixed = draft_decode ? std::max(spec.topk, 1) : 1;
      why = fixed > 1 ? absl::StrCat("a tree draft step writes spec.topk = ", fixed,
                                     " tokens per request")
                      : "DECODE writes 1 token per request";
      break;
    case ForwardMode::kTargetVerify:
      fixed = spec.num_draft_tokens;
      why = absl::StrCat("TARGET_VERIFY verifies spec.num_draft_tokens = ", fixed,
                         " tokens per request");
      break;
    case ForwardMode::kDraftExtendV2:
      fixed = spec.num_draft_tokens;
      why = absl::StrCat("DRAFT_EXTEND_V2 extends spec.num_draft_tokens = ", fixed,
                         " tokens per request");
      break;
    case ForwardMode::kDraftExtend:
      if (i < spec.accept_lengths.size()) {
        fixed = int64_t{spec.accept_lengths[i]} + 1;
        why = absl::StrCat("DRAFT_EXTEND extends spec.accept_lengths[", i, "] + 1 = ", fixed);
      }
      break;
    case ForwardMode::kExtend:
    case ForwardMode::kMixed:
    case ForwardMode::kIdle:
      break;
  }
  if (fixed >= 0 && new_tokens != fixed) {
    return absl::InvalidArgumentError(
        absl::StrCat("request ", i, ": new_tokens[", i, "] = ", new_tokens, " but ", why));
  }
  return absl::OkStatus();
}

// Allocates request i's committed prefix and this step's slots (checked by
// CheckRequest); appends the request to `inputs`.
absl::Status AddRequest(KvPagePool& pool, ForwardMode mode, SeqLensConvention convention,
                        int32_t prefix_len, int32_t new_tokens, const SpecInfo& spec,
                        std::vector<int32_t>& created, EngineBatchInputs& inputs) {
  const bool draft_decode = IsDecode(mode) && spec.draft_step >= 0;
  // Tokens of earlier draft steps: reserved, not committed.
  const int32_t earlier_draft = static_cast<int32_t>(EarlierDraftTokens(mode, spec));
  ASSIGN_OR_RETURN(const int32_t row, pool.CreateRequest());
  created.push_back(row);
  RETURN_IF_ERROR(pool.Extend(row, prefix_len - earlier_draft));
  switch (mode) {
    case ForwardMode::kTargetVerify:
    case ForwardMode::kDraftExtendV2:
      RETURN_IF_ERROR(pool.ReserveDraft(row, new_tokens));
      break;
    case ForwardMode::kDecode:
      if (draft_decode) {
        RETURN_IF_ERROR(pool.ReserveDraft(row, earlier_draft + new_tokens));
      } else {
        RETURN_IF_ERROR(pool.Extend(row, new_tokens));
      }
      break;
    case ForwardMode::kExtend:
    case ForwardMode::kMixed:
    case ForwardMode::kDraftExtend:
    case ForwardMode::kIdle:
      RETURN_IF_ERROR(pool.Extend(row, new_tokens));
      break;
  }
  inputs.req_pool_indices.push_back(row);
  inputs.seq_lens.push_back(
      convention == SeqLensConvention::kIncludesNewTokens ? prefix_len + new_tokens : prefix_len);
  if (!IsDecode(mode) && !IsTargetVerify(mode)) {
    inputs.extend_seq_lens.push_back(new_tokens);
  }
  // Positions: prefix + j, or in a tree the committed length + the node's
  // depth (spec_decode/draft_tree.h).
  std::vector<int32_t> depth(new_tokens);
  int32_t committed = prefix_len;
  if (IsTargetVerify(mode) && !spec.tree_parents.empty()) {
    const size_t first = inputs.req_pool_indices.size() - 1;
    if (spec.tree_parents.size() >= (first + 1) * new_tokens) {  // else the descriptor says why
      depth = NodeDepths(
          absl::MakeConstSpan(spec.tree_parents).subspan(first * new_tokens, new_tokens));
    }
  } else if (draft_decode && spec.topk > 1) {
    committed = prefix_len - earlier_draft;
    std::fill(depth.begin(), depth.end(), spec.draft_step);
  } else {
    for (int32_t j = 0; j < new_tokens; ++j) depth[j] = j;
  }
  for (int32_t j = 0; j < new_tokens; ++j) {
    ASSIGN_OR_RETURN(const int32_t slot, pool.Slot(row, prefix_len + j));
    inputs.out_cache_loc.push_back(slot);
    inputs.positions.push_back(committed + depth[j]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EngineBatchInputs> MakeEngineBatch(KvPagePool& pool, ForwardMode mode,
                                                  SeqLensConvention convention,
                                                  absl::Span<const int32_t> prefix_lens,
                                                  absl::Span<const int32_t> new_tokens,
                                                  const SpecInfo& spec) {
  if (prefix_lens.size() != new_tokens.size()) {
    return absl::InvalidArgumentError(absl::StrCat("prefix_lens has ", prefix_lens.size(),
                                                   " entries, new_tokens has ", new_tokens.size()));
  }
  if (!IsKnownForwardMode(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("mode = ", static_cast<int64_t>(mode), " is not a ForwardMode value"));
  }
  if (convention != SeqLensConvention::kPrefixOnly &&
      convention != SeqLensConvention::kIncludesNewTokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "convention = ", static_cast<int64_t>(convention), " is not a SeqLensConvention value"));
  }
  if (IsDraftExtend(mode, DraftExtendV2Policy::kExclude) && !spec.accept_lengths.empty() &&
      spec.accept_lengths.size() != prefix_lens.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.accept_lengths has ", spec.accept_lengths.size(),
                     " entries, prefix_lens has ", prefix_lens.size()));
  }
  for (size_t i = 0; i < prefix_lens.size(); ++i) {
    RETURN_IF_ERROR(CheckRequest(pool, mode, prefix_lens[i], new_tokens[i], spec, i));
  }
  EngineBatchInputs inputs;
  inputs.mode = mode;
  inputs.seq_lens_convention = convention;
  inputs.spec = spec;
  std::vector<int32_t> created;
  for (size_t i = 0; i < prefix_lens.size(); ++i) {
    const absl::Status status =
        AddRequest(pool, mode, convention, prefix_lens[i], new_tokens[i], spec, created, inputs);
    if (!status.ok()) {
      // Only the pool's resources can run out here (CheckRequest passed).
      // Free newest first: the pool's free lists are stacks, so this pushes
      // every page and row back exactly where it was, and the pool hands out
      // the same pages and rows in the same order as if this call never ran.
      for (auto row = created.rbegin(); row != created.rend(); ++row) {
        pool.FreeRequest(*row).IgnoreError();  // created here: cannot fail
      }
      return status;
    }
  }
  return inputs;
}

}  // namespace paged_attention
