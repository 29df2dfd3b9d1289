// The split-KV plan: how many key ranges each (request, KV head) is cut into.
//
// Few queries over long keys leave most SMs idle unless the keys are split
// (flash-decoding); many queries or short keys do not need it. The planner
// decides once per plan (eager) or once at capture for the capacity (graph),
// and the kernel derives each split's key range from the request's actual
// length, so a graph captured with short keys stays correct for long ones.
#ifndef ATTENTION_PLANNER_SPLIT_PLAN_H_
#define ATTENTION_PLANNER_SPLIT_PLAN_H_

#include <cstdint>

namespace paged_attention {

// Keys a split should at least cover: below this the combine step costs more
// than the extra parallelism gains.
inline constexpr int32_t kMinKeysPerSplit = 512;
// Upper bound on splits (bounds the combine workspace).
inline constexpr int32_t kMaxKvSplits = 64;
// Rows of the kernel's query tile (query tokens x query heads of one KV head).
inline constexpr int32_t kKernelTileRows = 64;

// Splits per (request, KV head) for a batch of `batch_size` requests with at
// most `max_seq_len_q` queries and `max_seq_len_k` keys each, on a GPU with
// `num_sms` multiprocessors: 1 when the (request, KV head, query tile) blocks
// already fill the GPU or keys are short; otherwise the fewest splits whose
// wave efficiency is within 85% of the best (FlashAttention-2's rule), each
// keeping >= kMinKeysPerSplit keys. Always in [1, kMaxKvSplits].
int32_t ChooseNumKvSplits(int32_t batch_size, int32_t num_kv_heads, int32_t max_seq_len_q,
                          int32_t max_seq_len_k, int32_t num_sms);

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_SPLIT_PLAN_H_
