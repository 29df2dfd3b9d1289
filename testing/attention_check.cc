#include "testing/attention_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paged_attention {
std::vector<LogicalRequest> LogicalRequestsOf(const KvPagePool& pool, const ValidatedBatch& batch,
                                              const AttentionData& data) {
  const int64_t q_row = int64_t{data.num_q_heads} * data.head_dim;
  std::vector<LogicalRequest> requests;
  const std::vector<int32_t> parents = batch.tree_parents();  // empty without a tree
  const size_t draft_keys = batch.tree_draft_keys();
  int64_t token = 0;
  for (const RequestEntry& entry : batch.requests()) {
    LogicalRequest request;
    request.q_len = entry.new_tokens;
    request.k_len = entry.prefix_len + entry.new_tokens;
    // Straight from the descriptor's trees, not from any planner output.
    request.draft_parents.assign(parents.begin() + requests.size() * draft_keys,
                                 parents.begin() + (requests.size() + 1) * draft_keys);
    for (int64_t e = 0; e < request.q_len * q_row; ++e) {
      request.q.push_back(DecodeElement(data.dtype, data.q.data(), token * q_row + e));
    }
    token += request.q_len;
    for (int32_t t = 0; t < request.k_len; ++t) {
      const int64_t slot = pool.Slot(entry.row, t).value();
      for (int32_t h = 0; h < data.num_kv_heads; ++h) {
        for (int32_t c = 0; c < data.head_dim; ++c) {
          request.k.push_back(data.kv.At(KvTensor::kKey, slot, h, c));
          request.v.push_back(data.kv.At(KvTensor::kValue, slot, h, c));
        }
      }
    }
    requests.push_back(std::move(request));
  }
  return requests;
}

PagedAttentionArgs HostArgs(const AttentionData& data, const AttentionMetadata& metadata,
                            const AttentionOptions& options) {
  return ArgsFor(data, data.q.data(), data.kv.k_data(), data.kv.v_data(), nullptr, nullptr,
                 metadata, options);
}

AttentionOptions DefaultOptions(int32_t head_dim) {
  AttentionOptions options;
  options.softmax_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  return options;
}

namespace {

template <typename T>
std::string FirstBitDifference(absl::Span<const T> a, absl::Span<const T> b, int64_t count) {
  if (static_cast<int64_t>(a.size()) < count || static_cast<int64_t>(b.size()) < count) {
    return absl::StrCat("sizes ", a.size(), " and ", b.size(), " hold fewer than ", count);
  }
  for (int64_t i = 0; i < count; ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      // %a beside the decimal: the bits, which decimal printing may hide
      // (values an ulp apart).
      return absl::StrFormat("element %d: %.9g (%a) vs %.9g (%a)", i, a[i], a[i], b[i], b[i]);
    }
  }
  return "";
}

}  // namespace

std::string FirstDifference(absl::Span<const double> a, absl::Span<const double> b, int64_t count) {
  return FirstBitDifference(a, b, count);
}

std::string FirstDifference(absl::Span<const float> a, absl::Span<const float> b, int64_t count) {
  return FirstBitDifference(a, b, count);
}

double MaxAbsDiff(absl::Span<const double> a, absl::Span<const double> b, int64_t count) {
  if (count < 0) count = static_cast<int64_t>(std::min(a.size(), b.size()));
  if (a.size() < static_cast<size_t>(count) || b.size() < static_cast<size_t>(count)) {
    return std::numeric_limits<double>::infinity();
  }
  double worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    // Equal infinities (lse = -inf where nothing is visible) agree.
    if (a[i] == b[i]) continue;
    const double diff = std::fabs(a[i] - b[i]);
    if (std::isnan(diff)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, diff);
  }
  return worst;
}

std::string ErrorStats::ToString() const {
  return absl::StrCat("max_abs ", max_abs, " rel_l2 ", rel_l2, " non_finite ", non_finite);
}

namespace {

template <typename T>
ErrorStats Compare(absl::Span<const T> got, absl::Span<const double> want, int64_t count) {
  ErrorStats stats;
  if (static_cast<int64_t>(got.size()) < count || static_cast<int64_t>(want.size()) < count) {
    stats.non_finite = count;  // missing values count as unusable
    return stats;
  }
  double diff2 = 0.0, ref2 = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double g = static_cast<double>(got[i]);
    if (!std::isfinite(g)) {
      ++stats.non_finite;
      continue;
    }
    const double diff = g - want[i];
    stats.max_abs = std::max(stats.max_abs, std::abs(diff));
    diff2 += diff * diff;
    ref2 += want[i] * want[i];
  }
  stats.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return stats;
}

}  // namespace

ErrorStats CompareToReference(absl::Span<const float> got, absl::Span<const double> want,
                              int64_t count) {
  return Compare(got, want, count);
}

ErrorStats CompareToReference(absl::Span<const double> got, absl::Span<const double> want,
                              int64_t count) {
  return Compare(got, want, count);
}

double RoundingStep(DType dtype, double magnitude) {
  if (magnitude <= 0.0) return 0.0;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  const int mantissa_bits = dtype == DType::kBFloat16 ? 7 : 10;
  return std::ldexp(1.0, exponent - 1 - mantissa_bits);
}

double LowPrecisionErrorBound(DType dtype, double low_precision_max_abs, double largest_output,
                              double slack) {
  return std::max(2.0 * low_precision_max_abs, RoundingStep(dtype, largest_output)) + slack;
}

double LargestMagnitude(absl::Span<const double> values, int64_t count) {
  double largest = 0.0;
  for (int64_t i = 0; i < count; ++i) largest = std::max(largest, std::abs(values[i]));
  return largest;
}

}  // namespace paged_attention
