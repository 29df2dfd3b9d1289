#include "spec_decode/batch_descriptor.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "attention/base/status_macros.h"

namespace paged_attention {
namespace {

// Set by BuildBatchDescriptor so a failed placement check can say which
// convention put the prefix where it did.
struct ConventionContext {
  SeqLensConvention convention;
  absl::Span<const int32_t> seq_lens;
};

std::string ModeName(ForwardMode mode) { return std::string(ForwardModeName(mode)); }

bool IsDraftDecodeStep(ForwardMode mode, const SpecInfo& spec) {
  return IsDecode(mode) && spec.draft_step >= 0;
}

bool IsTreeDraftStep(ForwardMode mode, const SpecInfo& spec) {
  return IsDraftDecodeStep(mode, spec) && spec.topk > 1;
}

bool IsTreeBatch(ForwardMode mode, const SpecInfo& spec) {
  return (IsTargetVerify(mode) && !spec.tree_parents.empty()) || IsTreeDraftStep(mode, spec);
}

// A tree batch's draft keys per request and, per query token, its mask and
// its node's depth (spec_decode/draft_tree.h). Empty for other batches.
struct BatchTree {
  int32_t draft_keys = 0;
  std::vector<uint64_t> masks;  // [num_tokens]
  std::vector<int32_t> depths;  // [num_tokens]
};

// Builds the tree of every request of a batch whose requests and spec
// passed ValidateRequests (so the counts are consistent).
absl::StatusOr<BatchTree> TreeOf(const BatchDescriptor& batch) {
  BatchTree tree;
  if (!IsTreeBatch(batch.mode, batch.spec)) return tree;
  const SpecInfo& spec = batch.spec;
  if (IsTargetVerify(batch.mode)) {
    const int32_t nd = spec.num_draft_tokens;
    tree.draft_keys = nd;
    for (size_t i = 0; i < batch.requests.size(); ++i) {
      const auto parents = absl::MakeConstSpan(spec.tree_parents).subspan(i * nd, nd);
      ASSIGN_OR_RETURN(
          std::vector<uint64_t> masks,
          AncestorMasks(parents, spec.topk, static_cast<int64_t>(i), "spec.tree_parents"));
      const std::vector<int32_t> depths = NodeDepths(parents);
      tree.masks.insert(tree.masks.end(), masks.begin(), masks.end());
      tree.depths.insert(tree.depths.end(), depths.begin(), depths.end());
    }
    return tree;
  }
  // Draft decode step s: the request's query tokens are the last topk nodes.
  const std::vector<int32_t> parents = DraftDecodeParents(spec.topk, spec.draft_step);
  ASSIGN_OR_RETURN(const std::vector<uint64_t> masks,
                   AncestorMasks(parents, spec.topk, 0, "draft decode tree"));
  const std::vector<int32_t> depths = NodeDepths(parents);
  tree.draft_keys = static_cast<int32_t>(parents.size());
  const size_t first_query = parents.size() - spec.topk;
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    tree.masks.insert(tree.masks.end(), masks.begin() + first_query, masks.end());
    tree.depths.insert(tree.depths.end(), depths.begin() + first_query, depths.end());
  }
  return tree;
}

// Position of query token j of request r: prefix + j, or in a tree the
// committed length (kv_len - draft keys) + the node's depth.
int64_t ExpectedPosition(const RequestEntry& r, int32_t j, const BatchTree& tree, size_t token) {
  if (tree.draft_keys == 0) return int64_t{r.prefix_len} + j;
  return int64_t{r.kv_len()} - tree.draft_keys + tree.depths[token];
}

absl::Status CheckCount(absl::string_view field, size_t entries, size_t batch_size) {
  if (entries == batch_size) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " has ", entries, " entries, batch has ", batch_size, " requests"));
}

// The spec fields that do not depend on the requests' lengths.
absl::Status CheckSpec(ForwardMode mode, const SpecInfo& spec, size_t batch_size) {
  // Any other value would pass every mode rule below by matching none.
  if (!IsKnownForwardMode(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("mode = ", static_cast<int64_t>(mode), " is not a ForwardMode value (",
                     static_cast<int64_t>(kAllForwardModes[0]), " .. ",
                     static_cast<int64_t>(std::end(kAllForwardModes)[-1]), ")"));
  }
  const std::string mode_name = ModeName(mode);
  if (spec.topk < 1) {
    return absl::InvalidArgumentError(absl::StrCat("spec.topk = ", spec.topk, " must be >= 1"));
  }
  if (spec.num_draft_tokens < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.num_draft_tokens = ", spec.num_draft_tokens, " is negative"));
  }
  // DRAFT_EXTEND too: its accept_lengths and new tokens are bounded by the
  // drafts, so without them nothing would be.
  if ((IsTargetVerify(mode) || IsDraftExtend(mode, DraftExtendV2Policy::kInclude)) &&
      spec.num_draft_tokens < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.num_draft_tokens = ", spec.num_draft_tokens, " must be >= 1 for ", mode_name));
  }
  if (spec.draft_step < -1) {
    return absl::InvalidArgumentError(absl::StrCat("spec.draft_step = ", spec.draft_step,
                                                   " must be >= 0, or -1 for no draft step"));
  }
  if (spec.draft_step >= 0 && !IsDecode(mode)) {
    return absl::InvalidArgumentError(absl::StrCat("spec.draft_step = ", spec.draft_step,
                                                   " is set but mode is ", mode_name,
                                                   " (draft decode steps are DECODE batches)"));
  }
  // Step s writes draft token s: there is no step past the last draft.
  if (spec.draft_step >= 0 && spec.draft_step >= spec.num_draft_tokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.draft_step = ", spec.draft_step, " must be < spec.num_draft_tokens = ",
                     spec.num_draft_tokens, " (step s writes draft token s)"));
  }
  if (!spec.tree_parents.empty() && !IsTargetVerify(mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.tree_parents has ", spec.tree_parents.size(), " entries but mode is ", mode_name,
        " (only TARGET_VERIFY takes a tree; a draft decode step's tree "
        "follows from spec.topk and spec.draft_step)"));
  }
  if (IsTargetVerify(mode) && spec.topk > 1 && spec.tree_parents.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.topk = ", spec.topk,
                     " in TARGET_VERIFY needs spec.tree_parents (the parent of each of the ",
                     spec.num_draft_tokens, " draft tokens per request)"));
  }
  if (IsTargetVerify(mode) && !spec.tree_parents.empty()) {
    if (spec.num_draft_tokens > kMaxDraftTreeKeys) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.num_draft_tokens = ", spec.num_draft_tokens, " with a tree exceeds ",
                       kMaxDraftTreeKeys, " draft tokens per request"));
    }
    if (static_cast<int64_t>(spec.tree_parents.size()) !=
        static_cast<int64_t>(batch_size) * spec.num_draft_tokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.tree_parents has ", spec.tree_parents.size(), " entries, expected batch ",
          batch_size, " x spec.num_draft_tokens ", spec.num_draft_tokens, " = ",
          static_cast<int64_t>(batch_size) * spec.num_draft_tokens));
    }
  }
  if (IsDraftDecodeStep(mode, spec) && spec.topk > 1 &&
      (int64_t{spec.draft_step} + 1) * spec.topk > kMaxDraftTreeKeys) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.draft_step = ", spec.draft_step, " with spec.topk = ", spec.topk, " reads (",
        spec.draft_step, " + 1) x ", spec.topk, " = ", (int64_t{spec.draft_step} + 1) * spec.topk,
        " draft keys per request; trees hold at most ", kMaxDraftTreeKeys));
  }
  if (!spec.accept_lengths.empty()) {
    if (!IsDraftExtend(mode, DraftExtendV2Policy::kExclude)) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.accept_lengths has ", spec.accept_lengths.size(),
                       " entries but mode is ", mode_name, " (only DRAFT_EXTEND uses it)"));
    }
    RETURN_IF_ERROR(CheckCount("spec.accept_lengths", spec.accept_lengths.size(), batch_size));
    for (size_t i = 0; i < spec.accept_lengths.size(); ++i) {
      if (spec.accept_lengths[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("request ", i, ": spec.accept_lengths[", i,
                                                       "] = ", spec.accept_lengths[i],
                                                       " is negative"));
      }
      if (spec.accept_lengths[i] > spec.num_draft_tokens) {
        return absl::InvalidArgumentError(
            absl::StrCat("request ", i, ": spec.accept_lengths[", i, "] = ", spec.accept_lengths[i],
                         " exceeds spec.num_draft_tokens = ", spec.num_draft_tokens,
                         " (no more drafts than were proposed can be accepted)"));
      }
      if (spec.accept_lengths[i] == std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("request ", i, ": spec.accept_lengths[", i, "] = ", spec.accept_lengths[i],
                         " leaves no room for the bonus token (int32)"));
      }
    }
  }
  return absl::OkStatus();
}

// New tokens the mode requires of request i, or -1 when any count >= 1 goes.
int32_t RequiredNewTokens(ForwardMode mode, const SpecInfo& spec, size_t i) {
  switch (mode) {
    case ForwardMode::kDecode:
      return IsTreeDraftStep(mode, spec) ? spec.topk : 1;
    case ForwardMode::kTargetVerify:
    case ForwardMode::kDraftExtendV2:
      return spec.num_draft_tokens;
    case ForwardMode::kDraftExtend:
      return spec.accept_lengths.empty() ? -1 : spec.accept_lengths[i] + 1;
    case ForwardMode::kExtend:
    case ForwardMode::kMixed:
    case ForwardMode::kIdle:
      return -1;
  }
  return -1;
}

// Why request i must have `required` new tokens, for error messages.
std::string RequiredReason(ForwardMode mode, const SpecInfo& spec, size_t i) {
  switch (mode) {
    case ForwardMode::kDecode:
      return IsTreeDraftStep(mode, spec) ? "a tree draft step writes spec.topk tokens per request"
                                         : "DECODE writes 1 token per request";
    case ForwardMode::kTargetVerify:
      return "TARGET_VERIFY verifies spec.num_draft_tokens per request";
    case ForwardMode::kDraftExtendV2:
      return "DRAFT_EXTEND_V2 extends exactly spec.num_draft_tokens per request";
    case ForwardMode::kDraftExtend:
      return absl::StrCat("DRAFT_EXTEND extends spec.accept_lengths[", i, "] + 1");
    default:
      return "";
  }
}

std::string PlacementHint(const ConventionContext* context, size_t i, const RequestEntry& r) {
  if (context == nullptr) {
    return absl::StrCat("(prefix_len ", r.prefix_len, ", new_tokens ", r.new_tokens, ")");
  }
  return absl::StrCat("(seq_lens_convention=", SeqLensConventionName(context->convention),
                      " with seq_lens[", i, "] = ", context->seq_lens[i], " puts prefix at ",
                      r.prefix_len, ")");
}

// The checks that need only the requests (not positions or out_cache_loc):
// the page size, the spec, and each request's row and lengths against the
// pool. Returns the batch's token count. BuildBatchDescriptor runs these before
// it derives positions, so a bad length can never size an array.
absl::StatusOr<int64_t> ValidateRequests(const BatchDescriptor& batch, const KvPagePool& pool,
                                         const ConventionContext* context) {
  const std::string mode_name = ModeName(batch.mode);
  if (batch.page_size != pool.page_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "page_size = ", batch.page_size, " differs from the pool's page size ", pool.page_size()));
  }
  RETURN_IF_ERROR(CheckSpec(batch.mode, batch.spec, batch.requests.size()));
  if (IsIdle(batch.mode)) {
    if (!batch.requests.empty() || !batch.out_cache_loc.empty() || !batch.positions.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("an IDLE batch must be empty, got ", batch.requests.size(), " requests, ",
                       batch.out_cache_loc.size(), " out_cache_loc and ", batch.positions.size(),
                       " positions entries"));
    }
    return int64_t{0};
  }
  if (batch.requests.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", mode_name, " batch has no requests (an empty batch is IDLE)"));
  }

  absl::flat_hash_map<int32_t, size_t> request_of_row;
  int64_t num_tokens = 0;
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    const RequestEntry& r = batch.requests[i];
    if (r.row == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": requests[", i, "].row = 0 is the reserved dummy row"));
    }
    if (r.row < 0 || r.row >= pool.max_requests()) {
      return absl::InvalidArgumentError(absl::StrCat("request ", i, ": requests[", i,
                                                     "].row = ", r.row, " is outside [1, ",
                                                     pool.max_requests(), ")"));
    }
    absl::StatusOr<int32_t> length = pool.Length(r.row);
    absl::StatusOr<int32_t> draft_length = pool.DraftLength(r.row);
    if (!length.ok() || !draft_length.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": requests[", i, "].row = ", r.row, " is not an active request"));
    }
    if (const auto [it, inserted] = request_of_row.emplace(r.row, i); !inserted) {
      return absl::InvalidArgumentError(absl::StrCat("request ", i, ": requests[", i,
                                                     "].row = ", r.row, " repeats requests[",
                                                     it->second, "].row"));
    }
    if (r.prefix_len < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": requests[", i, "].prefix_len = ", r.prefix_len, " is negative"));
    }
    if (r.new_tokens < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": requests[", i, "].new_tokens = ", r.new_tokens, " must be >= 1"));
    }
    const int32_t required = RequiredNewTokens(batch.mode, batch.spec, i);
    if (required >= 0 && r.new_tokens != required) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": requests[", i, "].new_tokens = ", r.new_tokens, " but ",
                       RequiredReason(batch.mode, batch.spec, i), " = ", required));
    }
    // accept_lengths[i] <= num_draft_tokens (CheckSpec): the same bound when
    // the counts come without accept_lengths.
    if (IsDraftExtend(batch.mode, DraftExtendV2Policy::kExclude) &&
        r.new_tokens > int64_t{batch.spec.num_draft_tokens} + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": requests[", i, "].new_tokens = ", r.new_tokens,
          " but DRAFT_EXTEND extends at most spec.num_draft_tokens + 1 = ",
          int64_t{batch.spec.num_draft_tokens} + 1, " (accepted drafts + the bonus token)"));
    }
    if (IsTreeDraftStep(batch.mode, batch.spec) &&
        r.prefix_len < int64_t{batch.spec.draft_step} * batch.spec.topk) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": requests[", i, "].prefix_len = ", r.prefix_len,
          " is shorter than the earlier steps' drafts, spec.draft_step ", batch.spec.draft_step,
          " x spec.topk ", batch.spec.topk, " ", PlacementHint(context, i, r)));
    }
    const int64_t kv_len = int64_t{r.prefix_len} + r.new_tokens;
    if (kv_len > pool.row_width()) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": prefix_len ", r.prefix_len, " + new_tokens ", r.new_tokens,
                       " = ", kv_len, " exceeds row width ", pool.row_width(), " of row ", r.row,
                       " ", PlacementHint(context, i, r)));
    }
    const int64_t written = int64_t{*length} + *draft_length;
    // Verify and V2 draft extend read exactly the drafts reserved past the
    // committed length. A prefix at that length with another draft count is
    // a count mismatch, not a seq_lens convention problem: say so.
    if (kv_len > written && (IsTargetVerify(batch.mode) || IsDraftExtendV2(batch.mode)) &&
        r.prefix_len == *length && *draft_length != r.new_tokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": row ", r.row, " has ", *draft_length,
          " reserved draft slots (DraftLength) but ", mode_name,
          " reads spec.num_draft_tokens = ", batch.spec.num_draft_tokens,
          " draft tokens per request: reserve as many drafts as spec.num_draft_tokens says"));
    }
    if (kv_len > written) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": prefix_len ", r.prefix_len, " + new_tokens ", r.new_tokens,
                       " = ", kv_len, " but row ", r.row, " has only ", written,
                       " written slots (Length ", *length, " + DraftLength ", *draft_length, ") ",
                       PlacementHint(context, i, r), ": this step would read unwritten rows"));
    }
    num_tokens += r.new_tokens;
  }
  return num_tokens;
}

// The per-token checks, after ValidateRequests returned `num_tokens`.
absl::Status ValidateTokens(const BatchDescriptor& batch, const KvPagePool& pool,
                            const ConventionContext* context, int64_t num_tokens,
                            const BatchTree& tree) {
  if (IsIdle(batch.mode)) return absl::OkStatus();

  if (static_cast<int64_t>(batch.out_cache_loc.size()) != num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("out_cache_loc has ", batch.out_cache_loc.size(),
                                                   " entries but the requests' new_tokens sum to ",
                                                   num_tokens));
  }
  if (static_cast<int64_t>(batch.positions.size()) != num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("positions has ", batch.positions.size(),
                                                   " entries but the batch has ", num_tokens,
                                                   " tokens"));
  }

  // Placement first: under a wrong convention positions are off too, but this
  // is the message that says why.
  absl::Span<const int32_t> table = pool.req_to_token();
  size_t k = 0;  // token index in the batch
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    const RequestEntry& r = batch.requests[i];
    const size_t row_base = static_cast<size_t>(r.row) * pool.row_width();
    for (int32_t j = 0; j < r.new_tokens; ++j, ++k) {
      const int32_t expected = table[row_base + r.prefix_len + j];
      if (batch.out_cache_loc[k] != expected) {
        return absl::InvalidArgumentError(absl::StrCat(
            "request ", i, ": out_cache_loc[", k, "] = ", batch.out_cache_loc[k],
            " but req_to_token[row ", r.row, "][", r.prefix_len + j, "] = ", expected, " ",
            PlacementHint(context, i, r), ": the rows written this step are not where ",
            context == nullptr ? "prefix_len says" : "the convention says"));
      }
    }
  }
  k = 0;
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    const RequestEntry& r = batch.requests[i];
    for (int32_t j = 0; j < r.new_tokens; ++j, ++k) {
      const int64_t expected = ExpectedPosition(r, j, tree, k);
      if (batch.positions[k] != expected) {
        return absl::InvalidArgumentError(absl::StrCat(
            "request ", i, ": positions[", k, "] = ", batch.positions[k], " but ",
            tree.draft_keys == 0 ? absl::StrCat("prefix_len ", r.prefix_len, " + token ", j)
                                 : absl::StrCat("committed length ", r.kv_len() - tree.draft_keys,
                                                " + the depth of its tree node, ", tree.depths[k]),
            " = ", expected));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchTree> ValidateImpl(const BatchDescriptor& batch, const KvPagePool& pool,
                                       const ConventionContext* context) {
  ASSIGN_OR_RETURN(const int64_t num_tokens, ValidateRequests(batch, pool, context));
  ASSIGN_OR_RETURN(BatchTree tree, TreeOf(batch));
  RETURN_IF_ERROR(ValidateTokens(batch, pool, context, num_tokens, tree));
  return tree;
}

}  // namespace

absl::string_view SeqLensConventionName(SeqLensConvention convention) {
  switch (convention) {
    case SeqLensConvention::kPrefixOnly:
      return "prefix_only";
    case SeqLensConvention::kIncludesNewTokens:
      return "includes_new_tokens";
  }
  return "unknown";
}

bool operator==(const SpecInfo& a, const SpecInfo& b) {
  return a.num_draft_tokens == b.num_draft_tokens && a.draft_step == b.draft_step &&
         a.topk == b.topk && a.accept_lengths == b.accept_lengths &&
         a.tree_parents == b.tree_parents;
}

bool operator==(const RequestEntry& a, const RequestEntry& b) {
  return a.row == b.row && a.prefix_len == b.prefix_len && a.new_tokens == b.new_tokens;
}

bool operator==(const BatchDescriptor& a, const BatchDescriptor& b) {
  return a.mode == b.mode && a.page_size == b.page_size && a.requests == b.requests &&
         a.positions == b.positions && a.out_cache_loc == b.out_cache_loc && a.spec == b.spec;
}

int32_t BatchDescriptor::num_tokens() const {
  // int64 so an unvalidated descriptor cannot overflow here; a validated one
  // fits int32 (its tokens fit the pool's int32-indexed table).
  int64_t total = 0;
  for (const RequestEntry& r : requests) total += r.new_tokens;
  return static_cast<int32_t>(total);
}

ValidatedBatch::ValidatedBatch(BatchDescriptor batch, const KvPagePool& pool,
                               int32_t tree_draft_keys, std::vector<uint64_t> tree_masks)
    : batch_(std::move(batch)),
      row_width_(pool.row_width()),
      pool_rows_(pool.max_requests()),
      tree_draft_keys_(tree_draft_keys),
      tree_masks_(std::move(tree_masks)) {}

std::vector<int32_t> ValidatedBatch::tree_parents() const {
  if (!has_tree()) return {};
  if (IsTargetVerify(batch_.mode)) return batch_.spec.tree_parents;
  const std::vector<int32_t> step = DraftDecodeParents(batch_.spec.topk, batch_.spec.draft_step);
  std::vector<int32_t> parents;
  parents.reserve(step.size() * batch_.requests.size());
  for (size_t i = 0; i < batch_.requests.size(); ++i) {
    parents.insert(parents.end(), step.begin(), step.end());
  }
  return parents;
}

absl::StatusOr<ValidatedBatch> BuildBatchDescriptor(const EngineBatchInputs& inputs,
                                                    const KvPagePool& pool) {
  const std::string mode_name = ModeName(inputs.mode);
  if (!inputs.seq_lens_convention.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seq_lens_convention must be named (prefix_only or includes_new_tokens) for this ",
        mode_name,
        " batch: what seq_lens means differs between engine paths (see "
        "spec_decode/batch_descriptor.h), so there is no default"));
  }
  const SeqLensConvention convention = *inputs.seq_lens_convention;
  if (convention != SeqLensConvention::kPrefixOnly &&
      convention != SeqLensConvention::kIncludesNewTokens) {
    // Anything else would be read as prefix_only below.
    return absl::InvalidArgumentError(
        absl::StrCat("seq_lens_convention = ", static_cast<int64_t>(convention),
                     " is not a SeqLensConvention value (prefix_only or includes_new_tokens)"));
  }
  const size_t batch_size = inputs.req_pool_indices.size();
  RETURN_IF_ERROR(CheckSpec(inputs.mode, inputs.spec, batch_size));
  if (IsIdle(inputs.mode) &&
      (batch_size > 0 || !inputs.seq_lens.empty() || !inputs.extend_seq_lens.empty() ||
       !inputs.out_cache_loc.empty() || !inputs.positions.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("an IDLE batch must be empty, got ", batch_size, " req_pool_indices, ",
                     inputs.seq_lens.size(), " seq_lens, ", inputs.extend_seq_lens.size(),
                     " extend_seq_lens, ", inputs.out_cache_loc.size(), " out_cache_loc and ",
                     inputs.positions.size(), " positions entries"));
  }
  RETURN_IF_ERROR(CheckCount("seq_lens", inputs.seq_lens.size(), batch_size));

  // New tokens per request, from extend_seq_lens or what the mode implies.
  const std::vector<int32_t>& extend = inputs.extend_seq_lens;
  const bool extend_optional = IsDecode(inputs.mode) || IsTargetVerify(inputs.mode) ||
                               (IsDraftExtend(inputs.mode, DraftExtendV2Policy::kExclude) &&
                                !inputs.spec.accept_lengths.empty());
  if (!(extend.empty() && extend_optional)) {
    if (extend.empty() && IsDraftExtend(inputs.mode, DraftExtendV2Policy::kExclude) &&
        batch_size > 0) {
      return absl::InvalidArgumentError(
          "DRAFT_EXTEND needs extend_seq_lens or spec.accept_lengths; both are empty");
    }
    RETURN_IF_ERROR(CheckCount("extend_seq_lens", extend.size(), batch_size));
  }
  std::vector<int32_t> new_tokens(batch_size);
  for (size_t i = 0; i < batch_size; ++i) {
    const int32_t required = RequiredNewTokens(inputs.mode, inputs.spec, i);
    if (extend.empty()) {
      new_tokens[i] = required;
      continue;
    }
    if (extend[i] < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": extend_seq_lens[", i, "] = ", extend[i], " must be >= 1"));
    }
    if (required >= 0 && extend[i] != required) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": extend_seq_lens[", i, "] = ", extend[i], " but ",
                       RequiredReason(inputs.mode, inputs.spec, i), " = ", required));
    }
    new_tokens[i] = extend[i];
  }

  BatchDescriptor batch;
  batch.mode = inputs.mode;
  batch.page_size = pool.page_size();
  batch.spec = inputs.spec;
  batch.out_cache_loc = inputs.out_cache_loc;
  batch.requests.reserve(batch_size);
  for (size_t i = 0; i < batch_size; ++i) {
    const int32_t seq_len = inputs.seq_lens[i];
    if (seq_len < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": seq_lens[", i, "] = ", seq_len, " is negative"));
    }
    int32_t prefix_len = seq_len;
    if (convention == SeqLensConvention::kIncludesNewTokens) {
      prefix_len = seq_len - new_tokens[i];
      if (prefix_len < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "request ", i, ": seq_lens[", i, "] = ", seq_len, " minus new_tokens ", new_tokens[i],
            " gives prefix_len ", prefix_len,
            " (seq_lens_convention=includes_new_tokens): seq_lens must count this step's "
            "tokens"));
      }
    }
    batch.requests.push_back(RequestEntry{
        .row = inputs.req_pool_indices[i], .prefix_len = prefix_len, .new_tokens = new_tokens[i]});
  }
  // The requests are checked against the pool before positions are derived
  // from them: unchecked lengths could otherwise size (and overflow) the array.
  const ConventionContext context{convention, inputs.seq_lens};
  ASSIGN_OR_RETURN(const int64_t num_tokens, ValidateRequests(batch, pool, &context));
  ASSIGN_OR_RETURN(BatchTree tree, TreeOf(batch));
  if (inputs.positions.empty()) {
    batch.positions.reserve(static_cast<size_t>(num_tokens));
    size_t k = 0;
    for (const RequestEntry& r : batch.requests) {
      for (int32_t j = 0; j < r.new_tokens; ++j, ++k) {
        batch.positions.push_back(static_cast<int32_t>(ExpectedPosition(r, j, tree, k)));
      }
    }
  } else {
    batch.positions = inputs.positions;
  }
  RETURN_IF_ERROR(ValidateTokens(batch, pool, &context, num_tokens, tree));
  return ValidatedBatch(std::move(batch), pool, tree.draft_keys, std::move(tree.masks));
}

absl::StatusOr<ValidatedBatch> ValidateBatchDescriptor(BatchDescriptor batch,
                                                       const KvPagePool& pool) {
  ASSIGN_OR_RETURN(BatchTree tree, ValidateImpl(batch, pool, /*context=*/nullptr));
  return ValidatedBatch(std::move(batch), pool, tree.draft_keys, std::move(tree.masks));
}

}  // namespace paged_attention
