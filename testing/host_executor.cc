#include "testing/host_executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/status_macros.h"

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

// Whether draft node `node` of a tree given by `parents` descends from (or
// is) draft node `key`: a walk up the parent links, independent of any mask.
bool IsAncestorOrSelf(const std::vector<int32_t>& parents, int64_t key, int64_t node) {
  for (int64_t at = node; at >= 0; at = parents[at]) {
    if (at == key) return true;
  }
  return false;
}

double Logit(double dot, const AttentionOptions& options) {
  double s = dot * options.softmax_scale;
  if (options.softcap > 0) s = options.softcap * std::tanh(s / options.softcap);
  return s;
}

}  // namespace

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
          if (!TreeMaskAllows(md.tree_mask, token, k_len, t)) {
            scores[t - keys.first] = kNegInf;
            continue;
          }
          double dot = 0;
          const int64_t k_base = (key_slot[t] * hkv + kv_head) * d;
          const int64_t q_base = (token * hq + h) * d;
          for (int64_t c = 0; c < d; ++c) {
            dot += DecodeElement(args.dtype, args.q, q_base + c) *
                   DecodeElement(args.dtype, args.k_cache, k_base + c);
          }
          scores[t - keys.first] = Logit(dot, args.options);
          max_score = std::max(max_score, scores[t - keys.first]);
        }
        if (max_score == kNegInf) continue;  // the tree mask hid every key
        double sum = 0;
        std::fill(accum.begin(), accum.end(), 0.0);
        for (int64_t t = keys.first; t <= keys.last; ++t) {
          if (scores[t - keys.first] == kNegInf) continue;
          const double p = std::exp(scores[t - keys.first] - max_score);
          sum += p;
          const int64_t v_base = (key_slot[t] * hkv + kv_head) * d;
          for (int64_t c = 0; c < d; ++c) {
            accum[c] += p * DecodeElement(args.dtype, args.v_cache, v_base + c);
          }
        }
        for (int64_t c = 0; c < d; ++c) out[c] = accum[c] / sum;
        result.lse[h * total_q + token] = max_score + std::log(sum);
      }
    }
  }
  return result;
}

namespace {

// Softmax statistics of one query row over a key range: out normalised by
// sum, lse = max + log(sum) (-inf and zeros when no key is visible).
struct RowResult {
  std::vector<double> out;
  double lse = kNegInf;
};

}  // namespace

absl::StatusOr<HostAttentionResult> RunHostPlannedAttention(const PagedAttentionArgs& args) {
  const AttentionMetadata& md = args.metadata;
  const WorkPlanView& plan = md.plan;
  const int64_t hq = args.num_q_heads, hkv = args.num_kv_heads, d = args.head_dim;
  if (hq <= 0 || hkv <= 0 || d <= 0 || hq % hkv != 0 || md.page_size <= 0) {
    return absl::InvalidArgumentError("bad head shape or page size");
  }
  const int64_t group = hq / hkv;
  if (plan.num_kv_heads != hkv || plan.group != group || plan.head_dim != d ||
      (plan.kv_heads_per_unit != 1 && plan.kv_heads_per_unit != 2) ||
      hkv % plan.kv_heads_per_unit != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan made for ", plan.num_kv_heads, " KV heads, group ", plan.group, ", head_dim ",
        plan.head_dim, ", ", plan.kv_heads_per_unit, " KV heads per unit"));
  }
  // A unit's packed rows: those of a group of kv_heads_per_unit x group query
  // heads (KV head pairs, work_plan.h); segment.kv_head names the unit's first
  // KV head / kv_heads_per_unit.
  const int64_t unit_group = group * plan.kv_heads_per_unit;
  const int64_t total_q = md.total_q_tokens;
  HostAttentionResult result;
  result.out.assign(total_q * hq * d, 0.0);
  result.lse.assign(hq * total_q, kNegInf);
  std::vector<int32_t> writes(total_q * hq, 0);  // times each (token, head) row was written
  std::vector<RowResult> partials(int64_t{std::max(plan.max_partials, 0)} * kUnitRows);
  std::vector<int32_t> partial_uses(partials.size(), 0);

  // Attention of packed row `packed` of (request, kv_head) over keys [lo, hi).
  auto attend = [&](int32_t request, int32_t kv_head, int64_t packed, int64_t lo,
                    int64_t hi) -> absl::StatusOr<RowResult> {
    const int64_t q_begin = md.cu_seqlens_q[request];
    const int64_t q_len = md.cu_seqlens_q[request + 1] - q_begin;
    const int64_t k_len = md.cache_seqlens[request];
    const int64_t j = packed / unit_group, h = kv_head * unit_group + packed % unit_group;
    kv_head = static_cast<int32_t>(h / group);  // the row's own KV head
    const KeyRange visible = VisibleKeys(j, q_len, k_len, args.options);
    lo = std::max(lo, visible.first);
    hi = std::min(hi, visible.last + 1);
    RowResult row;
    row.out.assign(d, 0.0);
    if (hi > std::min<int64_t>(k_len, int64_t{md.max_pages_per_request} * md.page_size)) {
      return absl::OutOfRangeError(absl::StrCat("request ", request, ": key range ends at ", hi,
                                                " past its ", k_len, " keys"));
    }
    std::vector<double> scores;
    double max_score = kNegInf;
    for (int64_t t = lo; t < hi; ++t) {
      if (!TreeMaskAllows(md.tree_mask, q_begin + j, k_len, t)) {
        scores.push_back(kNegInf);
        continue;
      }
      const int32_t page =
          md.page_table[request * int64_t{md.max_pages_per_request} + t / md.page_size];
      if (page < 0 || page >= args.num_pages) {
        return absl::OutOfRangeError(
            absl::StrCat("request ", request, ": page ", page, " outside the pool"));
      }
      const int64_t slot = int64_t{page} * md.page_size + t % md.page_size;
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) {
        dot += DecodeElement(args.dtype, args.q, ((q_begin + j) * hq + h) * d + c) *
               DecodeElement(args.dtype, args.k_cache, (slot * hkv + kv_head) * d + c);
      }
      scores.push_back(Logit(dot, args.options));
      max_score = std::max(max_score, scores.back());
    }
    if (max_score == kNegInf) return row;
    double sum = 0;
    for (int64_t t = lo; t < hi; ++t) {
      if (scores[t - lo] == kNegInf) continue;
      const double p = std::exp(scores[t - lo] - max_score);
      sum += p;
      const int32_t page =
          md.page_table[request * int64_t{md.max_pages_per_request} + t / md.page_size];
      const int64_t slot = int64_t{page} * md.page_size + t % md.page_size;
      for (int64_t c = 0; c < d; ++c) {
        row.out[c] += p * DecodeElement(args.dtype, args.v_cache, (slot * hkv + kv_head) * d + c);
      }
    }
    for (double& value : row.out) value /= sum;
    row.lse = max_score + std::log(sum);
    return row;
  };
  auto write = [&](int32_t request, int32_t kv_head, int64_t packed, const RowResult& row) {
    const int64_t token = md.cu_seqlens_q[request] + packed / unit_group;
    const int64_t h = kv_head * unit_group + packed % unit_group;
    std::copy(row.out.begin(), row.out.end(), result.out.begin() + (token * hq + h) * d);
    result.lse[h * total_q + token] = row.lse;
    ++writes[token * hq + h];
  };
  auto unit_rows = [&](int32_t request, int32_t unit_tile) {
    const int64_t q_len = md.cu_seqlens_q[request + 1] - md.cu_seqlens_q[request];
    return std::min<int64_t>(kUnitRows, q_len * unit_group - int64_t{unit_tile} * kUnitRows);
  };

  for (int32_t w = 0; w < plan.num_workers; ++w) {
    for (int32_t s = plan.worker_begin[w]; s < plan.worker_begin[w + 1]; ++s) {
      const WorkSegment& segment = plan.segments[s];
      if (segment.request < 0 || segment.request >= md.batch_size) {
        return absl::InternalError(absl::StrCat("segment ", s, ": request ", segment.request));
      }
      if (segment.kv_head < 0 || segment.kv_head >= hkv / plan.kv_heads_per_unit) {
        return absl::InternalError(absl::StrCat("segment ", s, ": kv_head ", segment.kv_head,
                                                " of ", hkv / plan.kv_heads_per_unit, " units"));
      }
      const int64_t rows = unit_rows(segment.request, segment.unit_tile);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t packed = int64_t{segment.unit_tile} * kUnitRows + r;
        ASSIGN_OR_RETURN(RowResult row, attend(segment.request, segment.kv_head, packed,
                                               segment.key_begin, segment.key_end));
        if (segment.partial < 0) {
          write(segment.request, segment.kv_head, packed, row);
        } else {
          if (segment.partial >= plan.max_partials) {
            return absl::InternalError(absl::StrCat("segment ", s, ": partial ", segment.partial,
                                                    " past ", plan.max_partials));
          }
          partials[int64_t{segment.partial} * kUnitRows + r] = std::move(row);
          ++partial_uses[int64_t{segment.partial} * kUnitRows + r];
        }
      }
    }
  }
  for (int32_t m = 0; m < plan.counters[kPlanNumMergeTasks]; ++m) {
    const MergeTask& task = plan.merge_tasks[m];
    const int64_t rows = unit_rows(task.request, task.unit_tile);
    for (int64_t r = 0; r < rows; ++r) {
      double max_lse = kNegInf;
      for (int32_t p = 0; p < task.num_partials; ++p) {
        max_lse = std::max(max_lse, partials[int64_t{task.first_partial + p} * kUnitRows + r].lse);
      }
      RowResult merged;
      merged.out.assign(d, 0.0);
      double sum = 0;
      for (int32_t p = 0; p < task.num_partials; ++p) {
        const int64_t at = int64_t{task.first_partial + p} * kUnitRows + r;
        if (partial_uses[at] != 1) {
          return absl::InternalError(absl::StrCat("merge task ", m, ": partial ",
                                                  task.first_partial + p, " row ", r, " written ",
                                                  partial_uses[at], " times"));
        }
        partial_uses[at] = 2;  // consumed
        if (max_lse == kNegInf || partials[at].lse == kNegInf) continue;
        const double weight = std::exp(partials[at].lse - max_lse);
        sum += weight;
        for (int64_t c = 0; c < d; ++c) merged.out[c] += weight * partials[at].out[c];
      }
      if (sum > 0) {
        for (double& value : merged.out) value /= sum;
        merged.lse = max_lse + std::log(sum);
      }
      write(task.request, task.kv_head, int64_t{task.unit_tile} * kUnitRows + r, merged);
    }
  }
  for (int64_t t = plan.counters[kPlanZeroFillBegin]; t < plan.counters[kPlanZeroFillEnd]; ++t) {
    for (int64_t h = 0; h < hq; ++h) ++writes[t * hq + h];  // zeros, lse -inf already
  }
  for (size_t at = 0; at < partial_uses.size(); ++at) {
    if (partial_uses[at] == 1) {
      return absl::InternalError(absl::StrCat("partial ", at / kUnitRows, " row ", at % kUnitRows,
                                              " was written but never merged"));
    }
  }
  const int64_t planned_tokens = md.cu_seqlens_q[md.batch_size];
  for (int64_t t = 0; t < planned_tokens; ++t) {
    for (int64_t h = 0; h < hq; ++h) {
      if (writes[t * hq + h] != 1) {
        return absl::InternalError(absl::StrCat("token ", t, " head ", h, " was written ",
                                                writes[t * hq + h], " times (plan coverage)"));
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
          bool visible =
              options.mask == MaskMode::kNonCausal ||
              (t <= diagonal && (options.window_left < 0 || t >= diagonal - options.window_left));
          if (!request.draft_parents.empty()) {
            // Query j is tree node D - q_len + j; key t is draft node t - (k_len - D).
            const int64_t draft_keys = static_cast<int64_t>(request.draft_parents.size());
            const int64_t draft_key = t - (request.k_len - draft_keys);
            visible =
                visible && (draft_key < 0 || IsAncestorOrSelf(request.draft_parents, draft_key,
                                                              draft_keys - request.q_len + j));
          }
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
