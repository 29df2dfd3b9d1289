// Helpers that check attention results against the plain logical reference.
#ifndef TESTING_ATTENTION_CHECK_H_
#define TESTING_ATTENTION_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "attention/kernel/paged_attention_args.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "testing/host_executor.h"
#include "tools/batch_scenario.h"

namespace paged_attention {

// Each request's keys/values 0 .. prefix + new - 1 as one contiguous sequence,
// read through the pool's own slot mapping (not through any planner output),
// and its query tokens.
std::vector<LogicalRequest> LogicalRequestsOf(const KvPagePool& pool, const BatchDescriptor& batch,
                                              const AttentionData& data);

// Arguments for RunHostPagedAttention over `data` with host `metadata`.
PagedAttentionArgs HostArgs(const AttentionData& data, const AttentionMetadata& metadata,
                            const AttentionOptions& options);

// Scale 1/sqrt(head_dim), causal, no window, no softcap.
AttentionOptions DefaultOptions(int32_t head_dim);

// max |a - b| over the first `count` elements (all when count < 0); NaN in
// either counts as infinity, so unread or poisoned values fail loudly.
double MaxAbsDiff(absl::Span<const double> a, absl::Span<const double> b, int64_t count = -1);

}  // namespace paged_attention

#endif  // TESTING_ATTENTION_CHECK_H_
