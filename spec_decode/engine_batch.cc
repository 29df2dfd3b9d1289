#include "spec_decode/engine_batch.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attention/base/status_macros.h"

namespace paged_attention {
namespace {

// Allocates request i's committed prefix and this step's slots; appends the
// request to `inputs`.
absl::Status AddRequest(KvPagePool& pool, ForwardMode mode, SeqLensConvention convention,
                        int32_t prefix_len, int32_t new_tokens, const SpecInfo& spec, size_t i,
                        std::vector<int32_t>& created, EngineBatchInputs& inputs) {
  if (prefix_len < 0 || new_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat("request ", i, ": prefix_lens[", i,
                                                   "] = ", prefix_len, ", new_tokens[", i,
                                                   "] = ", new_tokens, " must not be negative"));
  }
  const bool draft_decode = mode == ForwardMode::kDecode && spec.draft_step >= 0;
  // Tokens of earlier draft steps: reserved, not committed.
  const int32_t earlier_draft = draft_decode ? spec.draft_step : 0;
  if (prefix_len < earlier_draft) {
    return absl::InvalidArgumentError(
        absl::StrCat("request ", i, ": prefix_lens[", i, "] = ", prefix_len,
                     " is shorter than spec.draft_step = ", spec.draft_step,
                     " (a draft step's prefix includes the earlier steps' draft tokens)"));
  }
  if (int64_t{prefix_len} + new_tokens > pool.row_width()) {
    // Checked here, before any sum below can overflow int32.
    return absl::OutOfRangeError(
        absl::StrCat("request ", i, ": prefix_lens[", i, "] = ", prefix_len, " + new_tokens[", i,
                     "] = ", new_tokens, " exceeds the pool's row width ", pool.row_width()));
  }
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
  if (mode != ForwardMode::kDecode && mode != ForwardMode::kTargetVerify) {
    inputs.extend_seq_lens.push_back(new_tokens);
  }
  for (int32_t j = 0; j < new_tokens; ++j) {
    ASSIGN_OR_RETURN(const int32_t slot, pool.Slot(row, prefix_len + j));
    inputs.out_cache_loc.push_back(slot);
    inputs.positions.push_back(prefix_len + j);
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
  EngineBatchInputs inputs;
  inputs.mode = mode;
  inputs.seq_lens_convention = convention;
  inputs.spec = spec;
  std::vector<int32_t> created;
  for (size_t i = 0; i < prefix_lens.size(); ++i) {
    const absl::Status status =
        AddRequest(pool, mode, convention, prefix_lens[i], new_tokens[i], spec, i, created, inputs);
    if (!status.ok()) {
      // Leave the pool as it was; these rows were created here, so freeing
      // them cannot fail.
      for (int32_t row : created) pool.FreeRequest(row).IgnoreError();
      return status;
    }
  }
  return inputs;
}

}  // namespace paged_attention
