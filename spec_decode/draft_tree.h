// Token trees of tree speculation (EAGLE topk > 1): which draft keys each
// query row of a request may see.
//
// A tree request reads its committed keys and then D *draft keys*, its last D
// keys: draft node k is key committed_len + k, and parents[k] is node k's
// parent (-1: the last committed token), always an earlier node. A query row
// sees every committed key and, of the draft keys, exactly its node's
// ancestors and the node itself. Two shapes use it:
//   TARGET_VERIFY: D = num_draft_tokens nodes given by spec.tree_parents;
//     query row j is node j.
//   draft DECODE step s with topk K: K branches, each extending its own chain;
//     node t*K + b is branch b's draft of step t (parent (t-1)*K + b), so
//     D = (s+1)*K and query row b is node s*K + b, this step's token.
// A chain (parents[k] = k - 1) is exactly the bottom-right causal mask, so
// topk = 1 and a chain tree give the same attention.
//
// Masks are 64-bit words (bit k: draft key k), so D <= kMaxDraftTreeKeys.
#ifndef SPEC_DECODE_DRAFT_TREE_H_
#define SPEC_DECODE_DRAFT_TREE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace paged_attention {

inline constexpr int32_t kMaxDraftTreeKeys = 64;

// The ancestors-or-self mask of every node of `parents` (bit k of mask j: node
// j sees draft key k). InvalidArgument naming the request, the node and the
// field `field` (e.g. "spec.tree_parents") when a parent is not -1 or an
// earlier node, when a node (or the root, -1) has more than `max_children`
// children, or when there are more than kMaxDraftTreeKeys nodes.
absl::StatusOr<std::vector<uint64_t>> AncestorMasks(absl::Span<const int32_t> parents,
                                                    int32_t max_children, int64_t request,
                                                    absl::string_view field);

// The parents of draft decode step `step` with `topk` branches (see above):
// (step + 1) * topk nodes.
std::vector<int32_t> DraftDecodeParents(int32_t topk, int32_t step);

// Depth of each node (0 for a child of the root): the position of node k is
// committed_len + depth[k]. Defined for any input; meaningful for a tree
// AncestorMasks accepts (elsewhere a parent that is not an earlier node
// counts as the root).
std::vector<int32_t> NodeDepths(absl::Span<const int32_t> parents);

}  // namespace paged_attention

#endif  // SPEC_DECODE_DRAFT_TREE_H_
