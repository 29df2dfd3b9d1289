#include "attention/planner/split_plan.h"

#include <algorithm>

namespace paged_attention {

int32_t ChooseNumKvSplits(int32_t batch_size, int32_t num_kv_heads, int32_t max_seq_len_q,
                          int32_t max_seq_len_k, int32_t num_sms) {
  if (batch_size <= 0 || num_kv_heads <= 0 || max_seq_len_k <= kMinKeysPerSplit) return 1;
  // Long query runs (prefill) already give every SM work through query tiles.
  constexpr int32_t kQueryTile = 64;
  const int64_t query_tiles = (std::max(max_seq_len_q, 1) + kQueryTile - 1) / kQueryTile;
  const int64_t blocks = int64_t{batch_size} * num_kv_heads * query_tiles;
  // Aim for about two waves of blocks over the SMs.
  const int64_t target_blocks = 2 * int64_t{std::max(num_sms, 1)};
  if (blocks >= target_blocks) return 1;
  const int64_t wanted = (target_blocks + blocks - 1) / blocks;
  const int64_t by_length = max_seq_len_k / kMinKeysPerSplit;
  return static_cast<int32_t>(std::clamp<int64_t>(std::min(wanted, by_length), 1, kMaxKvSplits));
}

}  // namespace paged_attention
