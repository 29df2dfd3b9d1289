#include "spec_decode/draft_tree.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace paged_attention {

absl::StatusOr<std::vector<uint64_t>> AncestorMasks(absl::Span<const int32_t> parents,
                                                    int32_t max_children, int64_t request,
                                                    absl::string_view field) {
  const int64_t nodes = static_cast<int64_t>(parents.size());
  if (nodes > kMaxDraftTreeKeys) {
    return absl::InvalidArgumentError(absl::StrCat("request ", request, ": ", field, " has ", nodes,
                                                   " nodes; trees hold at most ",
                                                   kMaxDraftTreeKeys));
  }
  std::vector<uint64_t> masks(nodes, 0);
  std::vector<int32_t> children(nodes + 1, 0);  // [0]: the root (-1)
  for (int64_t k = 0; k < nodes; ++k) {
    const int32_t parent = parents[k];
    if (parent < -1 || parent >= k) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", request, ": ", field, " node ", k, " has parent ", parent,
          "; a parent is -1 (the last committed token) or an earlier node (0 .. ", k - 1, ")"));
    }
    if (++children[parent + 1] > max_children) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", request, ": ", field, " node ", k, " is child ", children[parent + 1], " of ",
          parent < 0 ? std::string("the root") : absl::StrCat("node ", parent),
          " but spec.topk = ", max_children, " allows at most ", max_children, " children"));
    }
    masks[k] = (parent < 0 ? 0 : masks[parent]) | (uint64_t{1} << k);
  }
  return masks;
}

std::vector<int32_t> DraftDecodeParents(int32_t topk, int32_t step) {
  std::vector<int32_t> parents;
  for (int32_t t = 0; t <= step; ++t) {
    for (int32_t b = 0; b < topk; ++b) parents.push_back(t == 0 ? -1 : (t - 1) * topk + b);
  }
  return parents;
}

std::vector<int32_t> NodeDepths(absl::Span<const int32_t> parents) {
  std::vector<int32_t> depth(parents.size(), 0);
  for (size_t k = 0; k < parents.size(); ++k) {
    // Total on any input (callers may not have validated it yet): a parent
    // that is not an earlier node counts as the root.
    const int32_t parent = parents[k];
    depth[k] = parent >= 0 && static_cast<size_t>(parent) < k ? depth[parent] + 1 : 0;
  }
  return depth;
}

}  // namespace paged_attention
