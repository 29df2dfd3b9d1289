// Random, mode-appropriate batches for sweeps over every forward mode.
#ifndef TESTING_RANDOM_BATCH_H_
#define TESTING_RANDOM_BATCH_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"
#include "testing/batch_scenario.h"

namespace paged_attention {

// A mode and the seq_lens convention the caller declares (both are valid for
// every mode: the descriptor only needs the caller to say which one it uses).
struct ModeCase {
  ForwardMode mode;
  SeqLensConvention convention;
  bool draft_decode = false;  // DECODE as draft step s >= 0
  std::string Name() const;
};

// Every mode the planner supports (IDLE included), each in both conventions,
// plus the draft decode steps.
std::vector<ModeCase> AllModeCases();

struct RandomBatchLimits {
  int32_t max_batch_size = 6;
  int32_t max_prefix = 300;
  int32_t max_extend = 40;       // new tokens of EXTEND/MIXED requests
  int32_t num_draft_tokens = 4;  // TARGET_VERIFY / DRAFT_EXTEND(_V2) / draft steps
};

// The most query tokens one request of `mode_case` can have under `limits`
// (the max_q_len a CUDA graph for it is captured with).
int32_t MaxQLenFor(const ModeCase& mode_case, const RandomBatchLimits& limits);

// Random lengths for `mode_case`: skewed on purpose (one long request among
// short ones about half the time) and with prefixes ending on page boundaries
// and one past them.
ScenarioSpec RandomScenarioSpec(const ModeCase& mode_case, int32_t page_size,
                                const RandomBatchLimits& limits, std::mt19937_64& rng);

// Token-tree shapes for tree speculation tests (spec_decode/draft_tree.h).
enum class TreeShape {
  kChain,        // node k's parent is k - 1: must equal the chain (topk = 1) path
  kBalanced,     // complete topk-ary tree in breadth-first order
  kCaterpillar,  // a spine with topk - 1 leaves on every spine node (deep and wide)
  kRandom,       // each node under a random earlier node (or the root) with room
};
inline constexpr TreeShape kAllTreeShapes[] = {TreeShape::kChain, TreeShape::kBalanced,
                                               TreeShape::kCaterpillar, TreeShape::kRandom};
std::string TreeShapeName(TreeShape shape);

// Parents of a `nodes`-node tree of `shape` whose nodes (and root) have at
// most `topk` children.
std::vector<int32_t> TreeParents(TreeShape shape, int32_t nodes, int32_t topk,
                                 std::mt19937_64& rng);

// A TARGET_VERIFY batch of `shapes.size()` tree requests (request i has tree
// shapes[i]) of num_draft_tokens nodes each, prefixes up to max_prefix (some
// ending mid-page, some on a page boundary), in a random seq_lens convention.
ScenarioSpec TreeVerifySpec(const std::vector<TreeShape>& shapes, int32_t num_draft_tokens,
                            int32_t topk, int32_t page_size, int32_t max_prefix,
                            std::mt19937_64& rng);

// Draft DECODE step `step` with `topk` branches for `batch_size` requests:
// each request's prefix holds its committed tokens and step x topk earlier
// drafts; it writes topk tokens.
ScenarioSpec TreeDraftDecodeSpec(int32_t batch_size, int32_t topk, int32_t step, int32_t page_size,
                                 int32_t max_prefix, std::mt19937_64& rng);

}  // namespace paged_attention

#endif  // TESTING_RANDOM_BATCH_H_
