#include "tools/run_config.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "absl/strings/str_cat.h"
#include "attention/base/quoted.h"

namespace paged_attention {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Saturating arithmetic on non-negative sizes: a product or sum past int64
// is reported as INT64_MAX, which fails every limit, instead of wrapping.
int64_t Mul(int64_t a, int64_t b) {
  int64_t product;
  return __builtin_mul_overflow(a, b, &product) ? kInt64Max : product;
}
int64_t Mul(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors) product = Mul(product, factor);
  return product;
}
int64_t Add(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? kInt64Max : sum;
}
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

absl::Status OutOfRange(const char* flag, int64_t value, int64_t lo, int64_t hi,
                        absl::string_view why = "") {
  return absl::InvalidArgumentError(absl::StrCat(flag, " = ", value, " must be in [", lo, ", ", hi,
                                                 "]", why.empty() ? "" : " (", why,
                                                 why.empty() ? "" : ")"));
}

}  // namespace

absl::StatusOr<RunConfig> ValidateRunFlags(const RunFlags& flags) {
  RunConfig config;
  if (flags.graph_max_batch < 0 || flags.graph_max_batch > kMaxGraphMaxBatch) {
    return OutOfRange("--graph_max_batch", flags.graph_max_batch, 0, kMaxGraphMaxBatch,
                      "0: eager; no batch has more requests than the upper bound");
  }
  config.graph_max_batch = static_cast<int32_t>(flags.graph_max_batch);
  config.dump_dir = flags.dump_dir;
  config.run = flags.run || !flags.dump_dir.empty();
  if (flags.num_q_heads < 1 || flags.num_q_heads > kMaxNumHeads) {
    return OutOfRange("--num_q_heads", flags.num_q_heads, 1, kMaxNumHeads);
  }
  if (flags.num_kv_heads < 1 || flags.num_kv_heads > kMaxNumHeads) {
    return OutOfRange("--num_kv_heads", flags.num_kv_heads, 1, kMaxNumHeads);
  }
  if (flags.num_q_heads % flags.num_kv_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num_q_heads = ", flags.num_q_heads,
                     " must be a multiple of --num_kv_heads = ", flags.num_kv_heads));
  }
  config.num_q_heads = static_cast<int32_t>(flags.num_q_heads);
  config.num_kv_heads = static_cast<int32_t>(flags.num_kv_heads);
  if (flags.head_dim != 64 && flags.head_dim != 128 && flags.head_dim != 256) {
    return absl::UnimplementedError(
        absl::StrCat("--head_dim = ", flags.head_dim, " is not supported: use 64, 128 or 256"));
  }
  config.head_dim = static_cast<int32_t>(flags.head_dim);
  if (flags.dtype == "bfloat16") {
    config.dtype = DType::kBFloat16;
  } else if (flags.dtype == "float16") {
    config.dtype = DType::kFloat16;
  } else {
    // Quote at most a prefix, escaped: the value may be anything, and the
    // message stays one printable line.
    const std::string shown =
        flags.dtype.size() > 32 ? flags.dtype.substr(0, 32) + "..." : flags.dtype;
    return absl::InvalidArgumentError(
        absl::StrCat("--dtype = ", Quoted(shown), " must be bfloat16 or float16"));
  }
  if (flags.window_left < -1 || flags.window_left > kInt32Max) {
    return OutOfRange("--window_left", flags.window_left, -1, kInt32Max, "-1: no window");
  }
  config.window_left = static_cast<int32_t>(flags.window_left);
  // The kernel takes a float: a softcap must survive the conversion, or inf
  // (1e39) or 0 (1e-50, i.e. "off") would be used instead of what was asked.
  const float softcap = static_cast<float>(flags.softcap);
  if (!std::isfinite(flags.softcap) || flags.softcap < 0 || !std::isfinite(softcap) ||
      (flags.softcap > 0 && softcap <= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--softcap = ", flags.softcap,
                     " must be 0 (off) or a positive number that is finite and nonzero as a "
                     "float"));
  }
  config.softcap = softcap;
  return config;
}

RunCost EstimateRunCost(const ScenarioSpec& spec, const RunConfig& config, int32_t max_q_len) {
  RunCost cost;
  const int64_t page_size = std::max<int64_t>(spec.page_size, 1);
  int64_t prefix_rows = 0, new_rows = 0, pages_needed = 0, longest = 1, work = 0;
  const size_t bs = std::min(spec.prefix_lens.size(), spec.new_tokens.size());
  for (size_t i = 0; i < bs; ++i) {
    const int64_t prefix = std::max<int32_t>(spec.prefix_lens[i], 0);
    const int64_t fresh = std::max<int32_t>(spec.new_tokens[i], 0);
    prefix_rows = Add(prefix_rows, prefix);
    new_rows = Add(new_rows, fresh);
    longest = std::max(longest, prefix + fresh);
    pages_needed = Add(pages_needed, CeilDiv(prefix + fresh, page_size) + 1);
    work = Add(work, Mul({fresh, prefix + fresh, config.num_q_heads, config.head_dim}));
  }
  // The pool BuildScenario makes (batch_scenario.cc): the spec's sizes, or
  // the smallest that fit.
  const int64_t num_pages =
      spec.num_pages > 0 ? spec.num_pages : Add(pages_needed, static_cast<int64_t>(bs) + 9);
  const int64_t context = spec.max_context_len > 0 ? spec.max_context_len : longest;
  const int64_t headroom =
      spec.draft_headroom > 0 ? spec.draft_headroom : std::max(spec.spec.num_draft_tokens, 1);
  const int64_t row_width = Add(context, headroom);

  int64_t query_tokens = new_rows;
  if (config.graph_max_batch > 0) {
    const int64_t capacity = config.graph_max_batch;
    cost.graph_query_tokens = Mul(capacity, std::max<int32_t>(max_q_len, 1));
    cost.graph_key_rows = Mul(capacity, row_width);
    cost.graph_page_table_entries = Mul(capacity, CeilDiv(row_width, page_size));
    // Replay pads to the capacity; both backends attend every padded row
    // (one key each, the sink).
    query_tokens = std::max(query_tokens, cost.graph_query_tokens);
    work = Add(work, Mul({cost.graph_query_tokens, config.num_q_heads, config.head_dim}));
  }
  const int64_t element_bytes = DTypeSize(config.dtype);
  const int64_t row_elements = Mul(config.num_kv_heads, config.head_dim);
  const int64_t kv_bytes = Mul({2, num_pages, page_size, row_elements, element_bytes});
  const int64_t key_bytes = Mul({40, Add(Add(prefix_rows, new_rows), page_size), row_elements});
  const int64_t query_bytes = Mul({48, query_tokens, config.num_q_heads, Add(config.head_dim, 1)});
  cost.host_bytes = Add(Add(kv_bytes, key_bytes), query_bytes);
  cost.attention_work = work;
  if (!config.dump_dir.empty()) cost.dump_mask_bytes = Mul(new_rows, longest);
  return cost;
}

absl::Status CheckRunLimits(absl::Span<const ScenarioSpec> specs, const RunConfig& config) {
  int32_t max_q_len = 1;
  for (const ScenarioSpec& spec : specs) {
    for (int32_t n : spec.new_tokens) max_q_len = std::max(max_q_len, n);
  }
  for (size_t b = 0; b < specs.size(); ++b) {
    const ScenarioSpec& spec = specs[b];
    const RunCost cost = EstimateRunCost(spec, config, max_q_len);
    const std::string where = absl::StrCat("batch ", b, ": ");
    if (config.graph_max_batch > 0) {
      if (spec.page_size != specs[0].page_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "page_size = ", spec.page_size, " differs from batch 0's ", specs[0].page_size,
            ": with --graph_max_batch one captured state serves every batch, so they share one "
            "page size"));
      }
      // The graph metadata is int32 (cu_seqlens sum query tokens and key rows).
      if (cost.graph_query_tokens > kInt32Max) {
        return absl::ResourceExhaustedError(absl::StrCat(
            where, "--graph_max_batch = ", config.graph_max_batch, " * the longest new_tokens ",
            max_q_len, " = ", cost.graph_query_tokens, " query tokens exceed int32"));
      }
      if (cost.graph_key_rows > kInt32Max) {
        return absl::ResourceExhaustedError(absl::StrCat(
            where, "--graph_max_batch = ", config.graph_max_batch,
            " * the pool's row width = ", cost.graph_key_rows, " key rows exceed int32"));
      }
      if (cost.graph_page_table_entries > kMaxGraphPageTableEntries) {
        return absl::ResourceExhaustedError(absl::StrCat(
            where, "--graph_max_batch = ", config.graph_max_batch, " * ceil(row width / page_size ",
            spec.page_size, ") = ", cost.graph_page_table_entries, " graph page table entries (",
            Mul(cost.graph_page_table_entries, 4), " bytes) exceed the limit of ",
            kMaxGraphPageTableEntries));
      }
    }
    if (!config.run) continue;
    if (cost.host_bytes > kMaxRunHostBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(where, "--run would take about ", cost.host_bytes, " bytes of host memory (",
                       "num_kv_heads ", config.num_kv_heads, ", num_q_heads ", config.num_q_heads,
                       ", head_dim ", config.head_dim, ", page_size ", spec.page_size,
                       config.graph_max_batch > 0 ? ", padded to --graph_max_batch" : "",
                       "), more than the limit of ", kMaxRunHostBytes));
    }
    if (cost.attention_work > kMaxRunAttentionWork) {
      return absl::ResourceExhaustedError(absl::StrCat(
          where, "--run attention work (query tokens * key rows * num_q_heads * head_dim) is ",
          cost.attention_work, ", more than the limit of ", kMaxRunAttentionWork));
    }
    if (cost.dump_mask_bytes > kMaxDumpMaskBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(where,
                       "--dump_dir tree_mask.npy (live query tokens * the longest request's keys) "
                       "would be ",
                       cost.dump_mask_bytes, " bytes, more than the limit of ", kMaxDumpMaskBytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace paged_attention
