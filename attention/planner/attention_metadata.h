// AttentionMetadata: what the metadata planner writes and the paged attention
// kernel (and the float64 host executor) reads.
//
// Plain data only (no CUDA, Abseil or STL), so host planner, host executor and
// device kernel share one definition. The pointers are either all host or all
// device pointers; the planner says which. On the CUDA-graph path they point
// into buffers fixed at capture, and the scalars hold capacities, so a captured
// kernel stays valid on every replay: the kernel takes exact per-request
// lengths from the arrays, never from the scalars.
#ifndef ATTENTION_PLANNER_ATTENTION_METADATA_H_
#define ATTENTION_PLANNER_ATTENTION_METADATA_H_

#include <cstdint>
#include <type_traits>

namespace paged_attention {

struct AttentionMetadata {
  // Rows in the per-request arrays. Eager: the batch size. Graph: the captured
  // batch capacity; rows past the live batch are padding (k length 1 on the
  // reserved sink page, 0 query tokens or the padded ones), harmless to read.
  int32_t batch_size = 0;
  // Query tokens over all rows: cu_seqlens_q[batch_size]. Graph: the capacity.
  int32_t total_q_tokens = 0;
  // Upper bound on any row's query tokens (eager: exact max; graph: capacity).
  // Sizes the kernel grid; exact counts come from cu_seqlens_q.
  int32_t max_seq_len_q = 0;
  // max_i cache_seqlens[i]: per-request sums (prefix + new), never
  // max(prefix) + max(new). Graph: the capacity (the request-to-token row
  // width); the replay's own maximum is reported by the graph state.
  int32_t max_seq_len_k = 0;
  // Token slots per page of the KV pool.
  int32_t page_size = 0;
  // Columns of page_table (its row stride). Eager: ceil(max_seq_len_k /
  // page_size). Graph: the captured capacity (full request-to-token row width).
  int32_t max_pages_per_request = 0;
  // Split-KV plan: each (request, KV head) is cut into this many key ranges of
  // equal length (decided per request inside the kernel from cache_seqlens),
  // combined afterwards. 1 = no split. Graph: fixed at capture for the
  // capacity, so a longer replayed KV only lengthens each split's range.
  int32_t num_kv_splits = 1;

  const int32_t* cache_seqlens = nullptr;  // [batch_size] K/V rows read = prefix + new tokens
  const int32_t* cu_seqlens_q = nullptr;   // [batch_size + 1] exclusive prefix sum of query tokens
  const int32_t* cu_seqlens_k = nullptr;   // [batch_size + 1] exclusive prefix sum of cache_seqlens
  // [batch_size, max_pages_per_request] page ids: page_table[i][j] holds key
  // rows j*page_size .. (j+1)*page_size-1 of request i. Only the first
  // ceil(cache_seqlens[i] / page_size) entries of a row are meaningful.
  const int32_t* page_table = nullptr;
};

static_assert(std::is_trivially_copyable<AttentionMetadata>::value,
              "AttentionMetadata is passed by value to CUDA kernels");

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_ATTENTION_METADATA_H_
