// The plan CLI's batch file format (documented in README.md) and its output.
//
// A batch file holds one batch object or an array of them:
//   {"mode": "DRAFT_EXTEND_V2", "page_size": 4,
//    "seq_lens_convention": "prefix_only" | "includes_new_tokens",
//    "seq_lens": [...], "new_tokens": [...], "num_draft_tokens": n,
//    "draft_step": s, "accept_lengths": [...], "topk": K,
//    "tree_parents": [[...], ...], "seed": k}
// Tree speculation (spec_decode/draft_tree.h): "topk" K > 1 in TARGET_VERIFY
// needs "tree_parents", per request the parent of each of its
// num_draft_tokens draft tokens (-1: the last committed token, else an
// earlier draft token; at most K children each, at most 64 tokens); in a draft
// DECODE step (draft_step >= 0) it makes K branches, K new tokens per request.
// Errors name the batch, the field, the request and the value, in one line.
//
// The text must be exactly one JSON value: no UTF-8 byte order mark (the
// parser would skip it where a byte-level look would not), no NUL byte (the
// parser stops there and would ignore the rest), no key twice in one object
// (the parser would keep the last silently). Each is rejected by name.
#ifndef TOOLS_BATCH_JSON_H_
#define TOOLS_BATCH_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "testing/batch_scenario.h"

namespace paged_attention {

// Limits on a batch file, so that no input can make the tool allocate more
// than a few hundred MiB or recurse deeply. Errors name the limit and the field.
inline constexpr int64_t kMaxBatchFileBytes = 1 << 20;
inline constexpr int kMaxBatchFileDepth = 8;  // nested arrays and objects
inline constexpr int32_t kMaxBatchesPerFile = 256;
inline constexpr int32_t kMaxRequestsPerBatch = 4096;  // entries of each array field
inline constexpr int64_t kMaxLength = 1 << 24;         // any one length; keeps sums in int32
// req_to_token entries of the common pool (UseCommonPool): 256 MiB of int32.
inline constexpr int64_t kMaxCommonPoolTableEntries = int64_t{1} << 26;

// A parsed batch file.
struct BatchFile {
  std::vector<ScenarioSpec> specs;  // one per batch, in file order
  bool is_array = false;            // the file holds an array (even of one batch)
};

// Parses a batch file into scenario specs (prefix lengths derived from
// seq_lens under the named convention). InvalidArgument on any bad input,
// including a file past the limits above, and every speculative-decoding
// field that disagrees with the mode: new_tokens other than the mode's fixed
// count (DECODE 1, a tree draft step topk, TARGET_VERIFY and DRAFT_EXTEND_V2
// num_draft_tokens, DRAFT_EXTEND accept_lengths[i] + 1), a speculative mode or
// draft step without num_draft_tokens, accept_lengths[i] > num_draft_tokens,
// draft_step >= num_draft_tokens, topk > 1 outside TARGET_VERIFY and draft
// steps or a draft step of more than 64 draft keys, tree_parents outside
// TARGET_VERIFY or missing there with topk > 1, and a tree_parents list that
// is not num_draft_tokens parents forming a tree (AncestorMasks' errors).
absl::StatusOr<BatchFile> ParseBatchFile(absl::string_view text);

// Whether a batch ParseBatchFile accepted is a tree batch (topk > 1, or
// tree_parents given): a CUDA graph that replays it is captured with
// TreeMasks::kPerQueryToken.
bool IsTreeSpec(const ScenarioSpec& spec);

// The tree masks one captured graph state for `specs` needs: per query token
// when any batch is a tree batch.
TreeMasks TreeMasksFor(absl::Span<const ScenarioSpec> specs);

// Gives every batch of a file one common pool layout, the largest any batch
// needs: one captured CUDA-graph state can then serve them all, and eager and
// graph plans of a file see the same pages. ResourceExhausted when that pool's
// request-to-token table would exceed kMaxCommonPoolTableEntries (the message
// names the largest batch and the longest request that set it).
absl::Status UseCommonPool(std::vector<ScenarioSpec>& specs);

// Receives output text in pieces of at most about kTextSinkChunkBytes.
using TextSink = absl::FunctionRef<void(absl::string_view)>;
inline constexpr size_t kTextSinkChunkBytes = 1 << 16;

// The metadata of the live requests as one JSON object (compact, keys in
// sorted order): cache_seqlens, cu_seqlens_k (prefix sums of cache_seqlens),
// cu_seqlens_q, max_seq_len_k, max_seq_len_q, mode, page_size, page_table
// (each request's used entries), `run` (a JSON object's text, e.g. the
// attention run's errors) if given, token_slots (each request's slots
// 0..cache_seqlens-1; -1 past what the pool has written), for a tree batch
// `tree` (draft_keys D, each request's D parents, each request's query_keys:
// per query row the keys its mask lets it see, committed keys + its tree
// ancestors-or-self, before any sliding window; and topk) and work_plan (the
// partition: workers, active_workers, segments as [worker, request, kv_head,
// unit_tile, key_begin, key_end, partial], merge_tasks as [request, kv_head,
// unit_tile, first_partial, num_partials]). Written to `sink` piece by piece, so a
// batch of millions of token slots never sits in memory as text.
// InvalidArgument, before anything is written, when `metadata` does not cover
// `batch`'s requests (array sizes, page counts) or `run` is not a JSON object.
absl::Status WriteMetadataJson(const HostMetadata& metadata, const ValidatedBatch& batch,
                               const KvPagePool& pool, absl::string_view run, TextSink sink);

// WriteMetadataJson into one string.
absl::StatusOr<std::string> MetadataJson(const HostMetadata& metadata, const ValidatedBatch& batch,
                                         const KvPagePool& pool, absl::string_view run = "");

}  // namespace paged_attention

#endif  // TOOLS_BATCH_JSON_H_
