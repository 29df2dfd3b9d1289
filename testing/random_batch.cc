#include "testing/random_batch.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace paged_attention {

std::string ModeCase::Name() const {
  return absl::StrCat(ForwardModeName(mode), draft_decode ? "_DRAFT_STEP" : "", "_",
                      SeqLensConventionName(convention));
}

std::vector<ModeCase> AllModeCases() {
  std::vector<ModeCase> cases;
  for (ForwardMode mode :
       {ForwardMode::kExtend, ForwardMode::kDecode, ForwardMode::kMixed, ForwardMode::kIdle,
        ForwardMode::kTargetVerify, ForwardMode::kDraftExtend, ForwardMode::kDraftExtendV2}) {
    for (SeqLensConvention convention :
         {SeqLensConvention::kPrefixOnly, SeqLensConvention::kIncludesNewTokens}) {
      cases.push_back({mode, convention, false});
      if (mode == ForwardMode::kDecode) cases.push_back({mode, convention, true});
    }
  }
  return cases;
}

int32_t MaxQLenFor(const ModeCase& mode_case, const RandomBatchLimits& limits) {
  switch (mode_case.mode) {
    case ForwardMode::kExtend:
    case ForwardMode::kMixed:
      return limits.max_extend;
    case ForwardMode::kDecode:
      return 1;
    default:
      return limits.num_draft_tokens;
  }
}

ScenarioSpec RandomScenarioSpec(const ModeCase& mode_case, int32_t page_size,
                                const RandomBatchLimits& limits, std::mt19937_64& rng) {
  auto uniform = [&rng](int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
  };
  ScenarioSpec spec;
  spec.mode = mode_case.mode;
  spec.convention = mode_case.convention;
  spec.page_size = page_size;
  spec.seed = rng();
  const int32_t nd = limits.num_draft_tokens;
  const int32_t bs = mode_case.mode == ForwardMode::kIdle ? 0 : uniform(1, limits.max_batch_size);
  const int32_t long_request = uniform(0, 1) == 0 ? uniform(0, std::max(bs - 1, 0)) : -1;
  const int32_t draft_step = mode_case.draft_decode ? uniform(0, nd - 1) : -1;
  for (int32_t i = 0; i < bs; ++i) {
    int32_t prefix;
    switch (uniform(0, 3)) {
      case 0:
        prefix = page_size * uniform(0, limits.max_prefix / page_size);
        break;
      case 1:
        prefix = page_size * uniform(0, limits.max_prefix / page_size) + 1;
        break;
      default:
        prefix = uniform(0, limits.max_prefix);
        break;
    }
    if (i == long_request) prefix = limits.max_prefix * 4 + uniform(0, page_size);
    int32_t new_tokens = 1;
    switch (mode_case.mode) {
      case ForwardMode::kExtend:
        new_tokens = uniform(1, limits.max_extend);
        break;
      case ForwardMode::kMixed:
        new_tokens = uniform(0, 1) ? 1 : uniform(2, limits.max_extend);
        break;
      case ForwardMode::kTargetVerify:
      case ForwardMode::kDraftExtendV2:
        new_tokens = nd;
        break;
      case ForwardMode::kDraftExtend: {
        const int32_t accepted = uniform(0, nd - 1);
        spec.spec.accept_lengths.push_back(accepted);
        new_tokens = accepted + 1;
        break;
      }
      default:
        break;
    }
    // A draft step s writes token committed + s: the prefix includes s drafts.
    if (draft_step >= 0) prefix += draft_step;
    spec.prefix_lens.push_back(prefix);
    spec.new_tokens.push_back(new_tokens);
  }
  if (mode_case.mode == ForwardMode::kTargetVerify || mode_case.mode == ForwardMode::kDraftExtend ||
      mode_case.mode == ForwardMode::kDraftExtendV2 || draft_step >= 0) {
    spec.spec.num_draft_tokens = nd;
  }
  spec.spec.draft_step = draft_step;
  return spec;
}

}  // namespace paged_attention
