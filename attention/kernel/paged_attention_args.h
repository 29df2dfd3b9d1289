// PagedAttentionArgs: everything one paged attention call reads and writes.
//
// Plain data shared by the CUDA kernel (attention/kernel), its host launcher
// and the float64 host executor (testing/host_executor.h), so the executor
// consumes exactly the kernel's inputs. Layouts (row-major, contiguous):
//   q        [total_q_tokens, num_q_heads, head_dim]        dtype
//   k_cache  [num_pages, page_size, num_kv_heads, head_dim] dtype
//   v_cache  [num_pages, page_size, num_kv_heads, head_dim] dtype
//   out      [total_q_tokens, num_q_heads, head_dim]        dtype
//   lse      [num_q_heads, total_q_tokens] float32, natural log; optional
// Query head h reads KV head h / (num_q_heads / num_kv_heads) (GQA/MQA/MHA).
//
// Masking: query j (0-based) of a request with q length Lq and k length Lk
// sees keys k with k <= j + Lk - Lq (bottom-right causal) and, with a window,
// k >= j + Lk - Lq - window_left. A query that sees no key outputs zeros and
// lse = -inf.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_ARGS_H_
#define ATTENTION_KERNEL_PAGED_ATTENTION_ARGS_H_

#include <cstdint>
#include <type_traits>

#include "attention/base/dtype.h"
#include "attention/planner/attention_metadata.h"

namespace paged_attention {

struct AttentionOptions {
  float softmax_scale = 0.0f;  // usually 1 / sqrt(head_dim)
  MaskMode mask = MaskMode::kCausal;
  // Sliding window: keys within window_left before the diagonal; -1 = off.
  int32_t window_left = -1;
  float softcap = 0.0f;  // logits become softcap * tanh(s / softcap); 0 = off
};

struct PagedAttentionArgs {
  DType dtype = DType::kBFloat16;
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t num_pages = 0;  // pages in the pool (bounds for page_table entries)

  const void* q = nullptr;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  void* out = nullptr;
  float* lse = nullptr;  // optional

  AttentionMetadata metadata;
  AttentionOptions options;
};

static_assert(std::is_trivially_copyable<PagedAttentionArgs>::value,
              "PagedAttentionArgs is passed by value to CUDA kernels");

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_ARGS_H_
