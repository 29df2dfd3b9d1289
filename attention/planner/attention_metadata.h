// AttentionMetadata: what the metadata planner writes and the paged attention
// kernel (and the float64 host executor) reads.
//
// Plain data only (no CUDA, Abseil or STL), so host planner, host executor and
// device kernel share one definition. The pointers are either all host or all
// device pointers; the planner says which. For a CUDA graph they point into
// buffers fixed at capture and the scalars are capacities, so a captured launch
// stays valid on every replay: the kernels take exact per-request lengths and
// the work plan from the arrays, never from the scalars.
#ifndef ATTENTION_PLANNER_ATTENTION_METADATA_H_
#define ATTENTION_PLANNER_ATTENTION_METADATA_H_

#include <cstdint>
#include <type_traits>

#include "attention/planner/work_plan.h"

namespace paged_attention {

enum class MaskMode : int32_t {
  kCausal = 0,     // bottom-right aligned causal mask (the default for every mode)
  kNonCausal = 1,  // every query sees all cache_seqlens[i] keys (cascade passes)
};

struct AttentionMetadata {
  // Rows of the per-request arrays. Eager: the batch size. CUDA graph: the
  // captured capacity; rows past the live batch are padding requests with no
  // keys (their query tokens get zeros and lse = -inf).
  int32_t batch_size = 0;
  // Query tokens over all rows, cu_seqlens_q[batch_size]: the row stride of
  // lse. CUDA graph: capacity x max_seq_len_q.
  int32_t total_q_tokens = 0;
  // Upper bound on any row's query tokens (eager: exact max; graph: capacity).
  // Trusted, as FlashAttention's max_seqlen_q is: the kernels size their query
  // tiles (the decode kernel's 16 rows) and merge rows by it, so a value below
  // a row's query tokens gives wrong outputs for that row, not an error.
  int32_t max_seq_len_q = 0;
  // max_i cache_seqlens[i]: per-request sums (prefix + new), never
  // max(prefix) + max(new). CUDA graph: the capacity (request-to-token row width).
  int32_t max_seq_len_k = 0;
  // Token slots per page of the KV pool.
  int32_t page_size = 0;
  // Columns of page_table (its row stride): ceil(max_seq_len_k / page_size).
  int32_t max_pages_per_request = 0;

  const int32_t* cache_seqlens = nullptr;  // [batch_size] K/V rows read = prefix + new tokens
  const int32_t* cu_seqlens_q = nullptr;   // [batch_size + 1] exclusive prefix sum of query tokens
  // [batch_size, max_pages_per_request] page ids: page_table[i][j] holds key
  // rows j*page_size .. (j+1)*page_size-1 of request i. Only the first
  // ceil(cache_seqlens[i] / page_size) entries of a row are meaningful.
  const int32_t* page_table = nullptr;

  // [total_q_tokens] or null (no tree). Tree speculation (spec_decode/
  // draft_tree.h): bit b of query token t's word says whether t may see key
  // k_len - kTreeMaskKeys + b of its request (k_len = cache_seqlens[i]); keys
  // before that are unaffected. Applied on top of the causal mask, which every
  // tree row's keys already satisfy (a node's ancestors precede it). A chain
  // (or a token of a non-tree batch) has every bit set: exactly causal.
  const uint64_t* tree_mask = nullptr;

  // Who computes what (work_plan.h).
  WorkPlanView plan;
};

// Whether `tree_mask` (AttentionMetadata::tree_mask, null: no tree) lets query
// token `token` of a request with k_len keys see key `key`. Host side; the
// kernel applies the same rule per tile.
inline bool TreeMaskAllows(const uint64_t* tree_mask, int64_t token, int64_t k_len, int64_t key) {
  if (tree_mask == nullptr) return true;
  const int64_t bit = key - (k_len - kTreeMaskKeys);
  return bit < 0 || ((tree_mask[token] >> bit) & 1) != 0;
}

static_assert(std::is_trivially_copyable<AttentionMetadata>::value,
              "AttentionMetadata is passed by value to CUDA kernels");

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_ATTENTION_METADATA_H_
