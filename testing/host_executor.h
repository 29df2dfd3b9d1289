// Float64 host implementations of attention, for checking the planner and the
// CUDA kernel.
//
// RunHostPagedAttention consumes exactly the kernel's inputs (PagedAttentionArgs
// with host pointers: metadata, paged K/V pool, Q) and reads K/V only through
// the page table, rows < cache_seqlens[i]. Tests fill every other pool slot
// with NaN, so a planner that hands out too few or too many rows shows up as a
// wrong or NaN result. Both apply the metadata's tree mask, if any.
//
// AttendLogicalSequences is the plain reference: each request's keys and
// values as one contiguous (unpaged) sequence, no metadata at all; a tree
// request's visibility comes straight from its parent links.
#ifndef TESTING_HOST_EXECUTOR_H_
#define TESTING_HOST_EXECUTOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attention/kernel/paged_attention_args.h"

namespace paged_attention {

struct HostAttentionResult {
  std::vector<double> out;  // [total_q_tokens, num_q_heads, head_dim]
  std::vector<double> lse;  // [num_q_heads, total_q_tokens]; -inf where no key is visible
};

// Float64 paged attention over `args` (all pointers host pointers; out/lse in
// `args` are ignored). OutOfRange if a page id the metadata makes us read is
// outside [0, num_pages); InvalidArgument for inconsistent metadata or shapes.
absl::StatusOr<HostAttentionResult> RunHostPagedAttention(const PagedAttentionArgs& args);

// Float64 paged attention that follows the metadata's work plan the way the
// kernels do: every worker's segments over their key ranges (partials for cut
// units), then the merge tasks, then the zero-filled padding tokens. Checks
// the plan covers every live query row exactly once and merges every partial
// it writes (InternalError naming the row otherwise), so a partition bug shows
// on the CPU. Same inputs and errors as RunHostPagedAttention.
absl::StatusOr<HostAttentionResult> RunHostPlannedAttention(const PagedAttentionArgs& args);

// One request of the plain reference, values already as doubles.
struct LogicalRequest {
  int32_t q_len = 0;
  int32_t k_len = 0;
  std::vector<double> q;  // [q_len, num_q_heads, head_dim]
  std::vector<double> k;  // [k_len, num_kv_heads, head_dim]
  std::vector<double> v;  // [k_len, num_kv_heads, head_dim]
  // Tree speculation (spec_decode/draft_tree.h): the parents of the request's
  // last draft_parents.size() keys, whose last q_len nodes are the queries.
  // Each query sees the earlier keys and its ancestors among the drafts (on
  // top of the causal mask). Empty: no tree.
  std::vector<int32_t> draft_parents;
};

// Plain reference; the result is laid out like RunHostPagedAttention's with the
// requests' query tokens concatenated in order.
HostAttentionResult AttendLogicalSequences(absl::Span<const LogicalRequest> requests,
                                           int32_t num_q_heads, int32_t num_kv_heads,
                                           int32_t head_dim, const AttentionOptions& options);

}  // namespace paged_attention

#endif  // TESTING_HOST_EXECUTOR_H_
