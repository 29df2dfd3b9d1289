#include "testing/host_executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace paged_attention {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Keys query j may see: [first, last] (inclusive), possibly empty.
struct KeyRange {
  int64_t first;
  int64_t last;
};

KeyRange VisibleKeys(int64_t j, int64_t q_len, int64_t k_len, const AttentionOptions& options) {
  if (options.mask == MaskMode::kNonCausal) return {0, k_len - 1};
  const int64_t diagonal = j + k_len - q_len;
  int64_t first = 0;
  if (options.window_left >= 0) first = std::max<int64_t>(0, diagonal - options.window_left);
  return {first, std::min(diagonal, k_len - 1)};
}

double Logit(double dot, const AttentionOptions& options) {
  double s = dot * options.softmax_scale;
  if (options.softcap > 0) s = options.softcap * std::tanh(s / options.softcap);
  return s;
}

}  // namespace

double ReadElement(const void* data, DType dtype, int64_t index) {
  switch (dtype) {
    case DType::kFloat32: {
      float value;
      std::memcpy(&value, static_cast<const char*>(data) + index * 4, 4);
      return value;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const char*>(data) + index * 2, 2);
      return dtype == DType::kFloat16 ? Float16ToFloat(bits) : BFloat16ToFloat(bits);
    }
  }
  return std::nan("");
}

absl::StatusOr<HostAttentionResult> RunHostPagedAttention(const PagedAttentionArgs& args) {
  const AttentionMetadata& md = args.metadata;
  const int64_t hq = args.num_q_heads, hkv = args.num_kv_heads, d = args.head_dim;
  if (hq <= 0 || hkv <= 0 || d <= 0 || hq % hkv != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad head shape: num_q_heads=", hq, " num_kv_heads=", hkv, " head_dim=", d));
  }
  if (md.page_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("page_size ", md.page_size, " must be >= 1"));
  }
  const int64_t group = hq / hkv;
  const int64_t total_q = md.total_q_tokens;
  HostAttentionResult result;
  result.out.assign(total_q * hq * d, 0.0);
  result.lse.assign(hq * total_q, kNegInf);

  std::vector<double> scores, accum(d);
  for (int32_t i = 0; i < md.batch_size; ++i) {
    const int64_t q_begin = md.cu_seqlens_q[i];
    const int64_t q_len = md.cu_seqlens_q[i + 1] - q_begin;
    const int64_t k_len = md.cache_seqlens[i];
    if (q_len < 0 || k_len < 0 || q_begin + q_len > total_q) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": q_len ", q_len, " at ", q_begin, ", k_len ", k_len));
    }
    if ((k_len + md.page_size - 1) / md.page_size > md.max_pages_per_request) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": cache_seqlens ", k_len, " needs more than max_pages_per_request ",
          md.max_pages_per_request, " pages of ", md.page_size));
    }
    // Pool row index of each logical key, through the page table.
    std::vector<int64_t> key_slot(k_len);
    for (int64_t t = 0; t < k_len; ++t) {
      const int32_t page = md.page_table[i * int64_t{md.max_pages_per_request} + t / md.page_size];
      if (page < 0 || page >= args.num_pages) {
        return absl::OutOfRangeError(
            absl::StrCat("request ", i, ": page_table[", i, "][", t / md.page_size, "] = ", page,
                         " is outside the pool of ", args.num_pages, " pages"));
      }
      key_slot[t] = int64_t{page} * md.page_size + t % md.page_size;
    }
    for (int64_t j = 0; j < q_len; ++j) {
      const KeyRange keys = VisibleKeys(j, q_len, k_len, args.options);
      const int64_t token = q_begin + j;
      for (int64_t h = 0; h < hq; ++h) {
        const int64_t kv_head = h / group;
        double* out = &result.out[(token * hq + h) * d];
        if (keys.first > keys.last) continue;  // nothing visible: zeros, lse -inf
        scores.assign(keys.last - keys.first + 1, 0.0);
        double max_score = kNegInf;
        for (int64_t t = keys.first; t <= keys.last; ++t) {
          double dot = 0;
          const int64_t k_base = (key_slot[t] * hkv + kv_head) * d;
          const int64_t q_base = (token * hq + h) * d;
          for (int64_t c = 0; c < d; ++c) {
            dot += ReadElement(args.q, args.dtype, q_base + c) *
                   ReadElement(args.k_cache, args.dtype, k_base + c);
          }
          scores[t - keys.first] = Logit(dot, args.options);
          max_score = std::max(max_score, scores[t - keys.first]);
        }
        double sum = 0;
        std::fill(accum.begin(), accum.end(), 0.0);
        for (int64_t t = keys.first; t <= keys.last; ++t) {
          const double p = std::exp(scores[t - keys.first] - max_score);
          sum += p;
          const int64_t v_base = (key_slot[t] * hkv + kv_head) * d;
          for (int64_t c = 0; c < d; ++c) {
            accum[c] += p * ReadElement(args.v_cache, args.dtype, v_base + c);
          }
        }
        for (int64_t c = 0; c < d; ++c) out[c] = accum[c] / sum;
        result.lse[h * total_q + token] = max_score + std::log(sum);
      }
    }
  }
  return result;
}

HostAttentionResult AttendLogicalSequences(absl::Span<const LogicalRequest> requests,
                                           int32_t num_q_heads, int32_t num_kv_heads,
                                           int32_t head_dim, const AttentionOptions& options) {
  int64_t total_q = 0;
  for (const LogicalRequest& request : requests) total_q += request.q_len;
  const int64_t hq = num_q_heads, hkv = num_kv_heads, d = head_dim, group = hq / hkv;
  HostAttentionResult result;
  result.out.assign(total_q * hq * d, 0.0);
  result.lse.assign(hq * total_q, kNegInf);
  int64_t token = 0;
  for (const LogicalRequest& request : requests) {
    for (int64_t j = 0; j < request.q_len; ++j, ++token) {
      for (int64_t h = 0; h < hq; ++h) {
        // Direct softmax over every key with masked ones at -inf.
        std::vector<double> logits(request.k_len, kNegInf);
        for (int64_t t = 0; t < request.k_len; ++t) {
          const int64_t diagonal = j + request.k_len - request.q_len;
          const bool visible =
              options.mask == MaskMode::kNonCausal ||
              (t <= diagonal && (options.window_left < 0 || t >= diagonal - options.window_left));
          if (!visible) continue;
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) {
            dot += request.q[(j * hq + h) * d + c] * request.k[(t * hkv + h / group) * d + c];
          }
          logits[t] = Logit(dot, options);
        }
        const double max_logit = *std::max_element(logits.begin(), logits.end());
        if (max_logit == kNegInf) continue;
        double sum = 0;
        for (double logit : logits) sum += std::exp(logit - max_logit);
        for (int64_t t = 0; t < request.k_len; ++t) {
          const double p = std::exp(logits[t] - max_logit) / sum;
          if (p == 0) continue;
          for (int64_t c = 0; c < d; ++c) {
            result.out[(token * hq + h) * d + c] += p * request.v[(t * hkv + h / group) * d + c];
          }
        }
        result.lse[h * total_q + token] = max_logit + std::log(sum);
      }
    }
  }
  return result;
}

}  // namespace paged_attention
