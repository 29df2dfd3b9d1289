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

std::string TreeShapeName(TreeShape shape) {
  switch (shape) {
    case TreeShape::kChain:
      return "Chain";
    case TreeShape::kBalanced:
      return "Balanced";
    case TreeShape::kCaterpillar:
      return "Caterpillar";
    case TreeShape::kRandom:
      return "Random";
  }
  return "Unknown";
}

std::vector<int32_t> TreeParents(TreeShape shape, int32_t nodes, int32_t topk,
                                 std::mt19937_64& rng) {
  std::vector<int32_t> parents(nodes);
  std::vector<int32_t> children(nodes + 1, 0);  // [0]: the root
  int32_t spine = -1;
  for (int32_t k = 0; k < nodes; ++k) {
    int32_t parent = -1;
    switch (shape) {
      case TreeShape::kChain:
        parent = k - 1;
        break;
      case TreeShape::kBalanced:
        parent = k < topk ? -1 : k / topk - 1;
        break;
      case TreeShape::kCaterpillar:
        // The spine node takes topk - 1 leaves, then its next spine child.
        parent = spine;
        if (children[spine + 1] == topk - 1 || topk == 1) spine = k;
        break;
      case TreeShape::kRandom: {
        std::vector<int32_t> open;
        for (int32_t candidate = -1; candidate < k; ++candidate) {
          if (children[candidate + 1] < topk) open.push_back(candidate);
        }
        parent = open[std::uniform_int_distribution<size_t>(0, open.size() - 1)(rng)];
        break;
      }
    }
    ++children[parent + 1];
    parents[k] = parent;
  }
  return parents;
}

namespace {

int32_t RandomPrefix(int32_t page_size, int32_t max_prefix, std::mt19937_64& rng) {
  auto uniform = [&rng](int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
  };
  switch (uniform(0, 2)) {
    case 0:
      return page_size * uniform(0, max_prefix / page_size);  // on a page boundary
    case 1:
      return page_size * uniform(0, max_prefix / page_size) + page_size / 2;  // mid-page
    default:
      return uniform(0, max_prefix);
  }
}

SeqLensConvention RandomConvention(std::mt19937_64& rng) {
  return rng() % 2 ? SeqLensConvention::kPrefixOnly : SeqLensConvention::kIncludesNewTokens;
}

}  // namespace

ScenarioSpec TreeVerifySpec(const std::vector<TreeShape>& shapes, int32_t num_draft_tokens,
                            int32_t topk, int32_t page_size, int32_t max_prefix,
                            std::mt19937_64& rng) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kTargetVerify;
  spec.convention = RandomConvention(rng);
  spec.page_size = page_size;
  spec.seed = rng();
  spec.spec.num_draft_tokens = num_draft_tokens;
  spec.spec.topk = topk;
  for (TreeShape shape : shapes) {
    spec.prefix_lens.push_back(RandomPrefix(page_size, max_prefix, rng));
    spec.new_tokens.push_back(num_draft_tokens);
    const std::vector<int32_t> parents = TreeParents(shape, num_draft_tokens, topk, rng);
    spec.spec.tree_parents.insert(spec.spec.tree_parents.end(), parents.begin(), parents.end());
  }
  return spec;
}

ScenarioSpec TreeDraftDecodeSpec(int32_t batch_size, int32_t topk, int32_t step, int32_t page_size,
                                 int32_t max_prefix, std::mt19937_64& rng) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDecode;
  spec.convention = RandomConvention(rng);
  spec.page_size = page_size;
  spec.seed = rng();
  spec.spec.num_draft_tokens = step + 1;
  spec.spec.draft_step = step;
  spec.spec.topk = topk;
  spec.draft_headroom = (step + 1) * topk;
  for (int32_t i = 0; i < batch_size; ++i) {
    spec.prefix_lens.push_back(RandomPrefix(page_size, max_prefix, rng) + step * topk);
    spec.new_tokens.push_back(topk);
  }
  return spec;
}

}  // namespace paged_attention
