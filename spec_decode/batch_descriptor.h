// The batch descriptor: an explicit, self-checking statement of what one
// forward step reads and writes, which the planner consumes instead of
// engine-style `seq_lens`.
//
// Why. Upstream SGLang could not agree what `seq_lens` means in
// DRAFT_EXTEND_V2: PR #26512 added the extend lengths, PR #26628 reverted it
// (production had already added them: a double count), PR #26651 moved the
// fix. A planner that guesses is silently wrong for someone (~0.55 max abs
// error, or reads past the written rows). Here every request carries its
// prefix length and its new-token count as two separate fields, and building
// a descriptor from engine inputs requires the caller to *name* the seq_lens
// convention; the result is then checked against the page pool: the slots
// this step writes must be exactly req_to_token[row][prefix .. prefix + new).
// A wrong convention fails that check with an error naming the request.
//
//   EngineBatchInputs in;            // filled from the engine's batch
//   in.mode = ForwardMode::kDraftExtendV2;
//   in.seq_lens_convention = SeqLensConvention::kIncludesNewTokens;
//   ...
//   ASSIGN_OR_RETURN(BatchDescriptor batch, BuildBatchDescriptor(in, pool));
//
// What seq_lens means on each upstream engine path (name it accordingly):
//
// | mode | new tokens per request | upstream seq_lens |
// |---|---|---|
// | EXTEND, MIXED | extend_seq_lens[i] (>= 1) | includes new tokens |
// | DECODE | 1 | includes new tokens (scheduler bumps it first) |
// | DECODE, draft step s | 1 (topk K > 1: K) | committed length L only; see below |
// | TARGET_VERIFY | spec.num_draft_tokens | prefix only; the planner adds the draft tokens |
// | DRAFT_EXTEND (V1) | spec.accept_lengths[i] + 1 | includes new tokens (after acceptance) |
// | DRAFT_EXTEND_V2 | spec.num_draft_tokens | both occur in the wild (*) |
// | IDLE | (no requests) | (empty) |
//
// (*) Production raises seq_lens by num_draft_tokens before the forward
// (includes new tokens); the pre-#26651 test fixture and the multi-layer
// EAGLE harness pass the prefix only.
//
// Draft decode step s (DECODE with spec.draft_step = s >= 0): upstream passes
// the committed length L and the backend adds s + 1. We do not special-case
// it: the caller passes this step's seq_lens under the named convention, i.e.
// seq_lens = L + s with kPrefixOnly or L + s + 1 with kIncludesNewTokens
// (the step writes token L + s, reserved as a draft slot in the pool). With
// topk = K > 1 each step writes K tokens (one per branch), so the step's
// prefix is L + s*K and seq_lens = L + s*K or L + (s+1)*K.
//
// Trees (TARGET_VERIFY with spec.tree_parents, draft DECODE with topk > 1):
// each query token sees the committed keys and its tree ancestors among the
// request's last draft keys (spec_decode/draft_tree.h); its position is
// committed length + depth in the tree. The validated batch carries the
// per-token masks the planner hands to the kernel.
//
// Host arrays are the source of truth; device copies are derived from them by
// the planner. Host-only; nothing here is used inside CUDA-graph capture.
#ifndef SPEC_DECODE_BATCH_DESCRIPTOR_H_
#define SPEC_DECODE_BATCH_DESCRIPTOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/draft_tree.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {

// What engine-style seq_lens[i] counts.
enum class SeqLensConvention {
  kPrefixOnly,         // tokens in the cache before this step
  kIncludesNewTokens,  // prefix + this step's new tokens
};

// "prefix_only" / "includes_new_tokens", as used in error messages.
absl::string_view SeqLensConventionName(SeqLensConvention convention);

// Speculative-decoding information of a step.
struct SpecInfo {
  // Draft tokens per request: what TARGET_VERIFY verifies and DRAFT_EXTEND_V2
  // extends, and the bound on DRAFT_EXTEND's accept_lengths and on draft
  // steps; >= 1 in those modes, 0 outside speculative decoding.
  int32_t num_draft_tokens = 0;
  // Draft decode step index s of a DECODE batch, 0 <= s < num_draft_tokens
  // (step s writes draft token s); -1: not a draft step.
  int32_t draft_step = -1;
  // EAGLE tree top-k: branches per draft step, and the most children any tree
  // node (or the root) may have. > 1 makes a draft decode step a tree step
  // (spec_decode/draft_tree.h: K = topk query tokens per request, each
  // seeing its own branch) and requires tree_parents in TARGET_VERIFY.
  int32_t topk = 1;
  // TARGET_VERIFY only: [batch, num_draft_tokens] request-major, the parent of
  // each draft node (-1: the last committed token; else an earlier node), at
  // most kMaxDraftTreeKeys nodes per request. Draft node k is the request's
  // key prefix_len + k and query token k. Empty: a chain (causal verify).
  std::vector<int32_t> tree_parents;
  // [batch] DRAFT_EXTEND only: accepted draft tokens per request, without the
  // bonus token (the request extends accept_lengths[i] + 1 tokens), each in
  // [0, num_draft_tokens]. Empty elsewhere.
  std::vector<int32_t> accept_lengths;
};

bool operator==(const SpecInfo& a, const SpecInfo& b);

struct RequestEntry {
  int32_t row = 0;         // row of req_to_token in the pool (>= 1)
  int32_t prefix_len = 0;  // KV rows in the cache before this step
  int32_t new_tokens = 0;  // K/V rows this step writes == query tokens (>= 1)

  // KV rows attention reads after this step's write: prefix_len + new_tokens.
  int32_t kv_len() const { return prefix_len + new_tokens; }
};

bool operator==(const RequestEntry& a, const RequestEntry& b);

struct BatchDescriptor {
  ForwardMode mode = ForwardMode::kIdle;
  int32_t page_size = 0;               // the pool's page size
  std::vector<RequestEntry> requests;  // [batch]
  // [num_tokens] absolute position of each query token: prefix_len + j for
  // the j-th new token of its request, request-major.
  std::vector<int32_t> positions;
  // [num_tokens] slot each new K/V row is written to, request-major:
  // req_to_token[row][prefix_len + j].
  std::vector<int32_t> out_cache_loc;
  SpecInfo spec;

  // Sum of new_tokens.
  int32_t num_tokens() const;
  int32_t batch_size() const { return static_cast<int32_t>(requests.size()); }
};

bool operator==(const BatchDescriptor& a, const BatchDescriptor& b);

// Engine-style inputs (like SGLang's ForwardBatch), all host arrays.
struct EngineBatchInputs {
  ForwardMode mode = ForwardMode::kIdle;
  // REQUIRED, no default: what seq_lens means (see the table above).
  std::optional<SeqLensConvention> seq_lens_convention;
  std::vector<int32_t> req_pool_indices;  // [batch] pool rows
  std::vector<int32_t> seq_lens;          // [batch] per seq_lens_convention
  // [batch] new tokens per request. May be empty for DECODE (1 each) and
  // TARGET_VERIFY (num_draft_tokens each); for DRAFT_EXTEND it may be empty
  // when spec.accept_lengths is given.
  std::vector<int32_t> extend_seq_lens;
  std::vector<int32_t> out_cache_loc;  // [num_tokens] slots written, request-major
  std::vector<int32_t> positions;      // [num_tokens] or empty: derived as prefix + j
  SpecInfo spec;
};

// A batch descriptor that passed validation against a pool. Only
// ValidateBatchDescriptor (and BuildBatchDescriptor, which validates) makes
// one, and the planner takes only this type: an unchecked batch cannot be
// planned, and a checked one is never checked twice. It describes the pool as
// it was when validated; it stays valid while the rows it names keep their
// slots (the engine's next step changes them: validate each step's batch).
class ValidatedBatch {
 public:
  const BatchDescriptor& descriptor() const { return batch_; }
  ForwardMode mode() const { return batch_.mode; }
  int32_t page_size() const { return batch_.page_size; }
  int32_t batch_size() const { return batch_.batch_size(); }
  const std::vector<RequestEntry>& requests() const { return batch_.requests; }
  // The validating pool's request-to-token table: [pool_rows, row_width].
  int32_t row_width() const { return row_width_; }
  int32_t pool_rows() const { return pool_rows_; }

  // Tree batches (TARGET_VERIFY with spec.tree_parents, draft DECODE with
  // topk > 1): every request's last tree_draft_keys() keys are its draft keys
  // and tree_masks()[t] says which of them query token t may see (bit k: draft
  // key k, i.e. key kv_len - tree_draft_keys() + k). 0 and empty otherwise.
  bool has_tree() const { return tree_draft_keys_ > 0; }
  int32_t tree_draft_keys() const { return tree_draft_keys_; }
  const std::vector<uint64_t>& tree_masks() const { return tree_masks_; }
  // The parents of every request's draft keys, [batch, tree_draft_keys()]
  // request-major: spec.tree_parents in TARGET_VERIFY, DraftDecodeParents for
  // each request of a tree draft step. Empty without a tree.
  std::vector<int32_t> tree_parents() const;

 private:
  ValidatedBatch(BatchDescriptor batch, const KvPagePool& pool, int32_t tree_draft_keys,
                 std::vector<uint64_t> tree_masks);
  friend absl::StatusOr<ValidatedBatch> ValidateBatchDescriptor(BatchDescriptor batch,
                                                                const KvPagePool& pool);
  friend absl::StatusOr<ValidatedBatch> BuildBatchDescriptor(const EngineBatchInputs& inputs,
                                                             const KvPagePool& pool);

  BatchDescriptor batch_;
  int32_t row_width_ = 0;
  int32_t pool_rows_ = 0;
  int32_t tree_draft_keys_ = 0;
  std::vector<uint64_t> tree_masks_;  // [num_tokens] for tree batches
};

// Derives prefix_len / new_tokens per request from `inputs` under its named
// convention, then checks the result as ValidateBatchDescriptor does. Errors:
// InvalidArgument naming the field, the request index and the value
// (including "seq_lens_convention must be named", a mode or convention value
// outside its enum, and, for a wrong convention, the request whose written
// rows are not where the convention puts them, and a tree whose
// tree_parents are malformed, naming the request and the node).
absl::StatusOr<ValidatedBatch> BuildBatchDescriptor(const EngineBatchInputs& inputs,
                                                    const KvPagePool& pool);

// Checks a descriptor against the pool: the mode is a ForwardMode value; the
// page size; per mode, the spec fields (num_draft_tokens >= 1 for
// TARGET_VERIFY, DRAFT_EXTEND and DRAFT_EXTEND_V2; draft_step <
// num_draft_tokens; accept_lengths[i] <= num_draft_tokens; tree_parents:
// TARGET_VERIFY only, required there when topk > 1, batch x num_draft_tokens
// entries forming a forest whose nodes have at most topk children; a tree
// draft step's (draft_step + 1) x topk draft keys <= 64) and each request's
// new_tokens (DRAFT_EXTEND: at most num_draft_tokens + 1; for TARGET_VERIFY
// and DRAFT_EXTEND_V2 a row with another number of reserved drafts is named
// as such); every row is an active request (not
// the dummy row 0, no row twice); prefix_len >= 0 and new_tokens >= 1;
// prefix_len + new_tokens within the row width and within the row's written
// slots (Length + DraftLength); positions[k] = prefix_len + j (trees:
// committed length + the node's depth); and out_cache_loc of each request ==
// req_to_token[row][prefix_len .. prefix_len + new_tokens). InvalidArgument.
absl::StatusOr<ValidatedBatch> ValidateBatchDescriptor(BatchDescriptor batch,
                                                       const KvPagePool& pool);

}  // namespace paged_attention

#endif  // SPEC_DECODE_BATCH_DESCRIPTOR_H_
