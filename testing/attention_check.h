// Helpers that check attention results: the plain logical reference of a
// scenario, error metrics, and the comparisons every test shares.
#ifndef TESTING_ATTENTION_CHECK_H_
#define TESTING_ATTENTION_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "attention/base/dtype.h"
#include "attention/kernel/paged_attention_args.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "testing/batch_scenario.h"
#include "testing/host_executor.h"

namespace paged_attention {

// Errors of a result against a float64 reference: max abs, relative L2 and
// the number of non-finite results (counted, not folded into the others).
struct ErrorStats {
  double max_abs = 0.0;
  double rel_l2 = 0.0;
  int64_t non_finite = 0;
  std::string ToString() const;
};

// Errors of `got` against `want` over the first `count` elements.
ErrorStats CompareToReference(absl::Span<const float> got, absl::Span<const double> want,
                              int64_t count);
ErrorStats CompareToReference(absl::Span<const double> got, absl::Span<const double> want,
                              int64_t count);

// Each request's keys/values 0 .. prefix + new - 1 as one contiguous sequence,
// read through the pool's own slot mapping (not through any planner output),
// and its query tokens.
std::vector<LogicalRequest> LogicalRequestsOf(const KvPagePool& pool, const ValidatedBatch& batch,
                                              const AttentionData& data);

// Arguments for RunHostPagedAttention over `data` with host `metadata`.
PagedAttentionArgs HostArgs(const AttentionData& data, const AttentionMetadata& metadata,
                            const AttentionOptions& options);

// Scale 1/sqrt(head_dim), causal, no window, no softcap.
AttentionOptions DefaultOptions(int32_t head_dim);

// "" when the first `count` elements of `a` and `b` are bit-identical (NaN
// included); else where and how they first differ. For "replay equals eager"
// and "the same plan in two kernels gives the same bits".
std::string FirstDifference(absl::Span<const double> a, absl::Span<const double> b, int64_t count);
std::string FirstDifference(absl::Span<const float> a, absl::Span<const float> b, int64_t count);

// max |a - b| over the first `count` elements (all when count < 0); NaN in
// either counts as infinity, so unread or poisoned values fail loudly.
double MaxAbsDiff(absl::Span<const double> a, absl::Span<const double> b, int64_t count = -1);

// The spacing of `dtype` values at `magnitude`: one output rounding step.
double RoundingStep(DType dtype, double magnitude);

// The bound on a low-precision attention output's max abs error (against the
// float64 reference, or between two plans): twice the error of the same
// computation in PyTorch-style low-precision math (FlashAttention-3's
// criterion), and at least one rounding step at the largest output, plus
// `slack`. Where the low-precision error is below one step (short decode
// batches can be), an output may still round either way: one step apart.
double LowPrecisionErrorBound(DType dtype, double low_precision_max_abs, double largest_output,
                              double slack);

// max |values| over the first `count` elements.
double LargestMagnitude(absl::Span<const double> values, int64_t count);

}  // namespace paged_attention

#endif  // TESTING_ATTENTION_CHECK_H_
