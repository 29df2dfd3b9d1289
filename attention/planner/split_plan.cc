#include "attention/planner/split_plan.h"

#include <algorithm>
#include <cmath>

namespace paged_attention {

int32_t ChooseNumKvSplits(int32_t batch_size, int32_t num_kv_heads, int32_t max_seq_len_q,
                          int32_t max_seq_len_k, int32_t num_sms) {
  if (batch_size <= 0 || num_kv_heads <= 0 || max_seq_len_k <= 0 || num_sms <= 0) return 1;
  // The group size is not known here: assume up to 8 query heads per KV head,
  // so up to 8 query tokens fill one tile.
  constexpr int64_t kAssumedGroup = 8;
  const int64_t query_tiles =
      (std::max<int64_t>(max_seq_len_q, 1) * kAssumedGroup + kKernelTileRows - 1) / kKernelTileRows;
  const int64_t blocks = int64_t{batch_size} * num_kv_heads * query_tiles;
  // Two blocks of the head_dim-128 kernel fit on one SM.
  const int64_t slots = 2 * int64_t{num_sms};
  if (blocks * 10 >= slots * 8) return 1;
  const int64_t max_splits =
      std::min<int64_t>(kMaxKvSplits, std::max<int64_t>(1, max_seq_len_k / kMinKeysPerSplit));
  auto efficiency = [&](int64_t splits) {
    const double waves = double(blocks * splits) / double(slots);
    return waves / std::ceil(waves);
  };
  double best = 0.0;
  for (int64_t s = 1; s <= max_splits; ++s) best = std::max(best, efficiency(s));
  for (int64_t s = 1; s <= max_splits; ++s) {
    if (efficiency(s) >= 0.85 * best) return static_cast<int32_t>(s);
  }
  return 1;
}

}  // namespace paged_attention
