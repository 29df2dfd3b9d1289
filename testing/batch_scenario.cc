#include "testing/batch_scenario.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/status_macros.h"
#include "spec_decode/engine_batch.h"

namespace paged_attention {
namespace {

// `rows` rows of random N(0, 1) values in `dtype`, [rows, row_elements].
std::vector<uint8_t> RandomRows(int64_t rows, int64_t row_elements, DType dtype,
                                std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(rows * row_elements);
  for (float& value : values) value = normal(rng);
  return EncodeElements(dtype, values);
}

}  // namespace

absl::StatusOr<Scenario> BuildScenario(const ScenarioSpec& spec) {
  const int32_t bs = static_cast<int32_t>(spec.prefix_lens.size());
  if (spec.new_tokens.size() != spec.prefix_lens.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("new_tokens has ", spec.new_tokens.size(), " entries, prefix_lens has ", bs));
  }
  if (spec.page_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size = ", spec.page_size, " must be >= 1"));
  }
  int64_t longest = 1, pages_needed = 0;
  for (int32_t i = 0; i < bs; ++i) {
    if (spec.prefix_lens[i] < 0 || spec.new_tokens[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("request ", i, ": prefix ",
                                                     spec.prefix_lens[i], ", new tokens ",
                                                     spec.new_tokens[i], " must be >= 0"));
    }
    const int64_t total = int64_t{spec.prefix_lens[i]} + spec.new_tokens[i];
    longest = std::max(longest, total);
    pages_needed += CeilDiv(total, int64_t{spec.page_size}) + 1;
  }
  // Sizes the pool would need, in int64: past int32 is the caller's mistake.
  const int64_t max_requests = spec.max_requests > 0 ? spec.max_requests : int64_t{bs} + 2;
  const int64_t num_pages = spec.num_pages > 0 ? spec.num_pages : pages_needed + bs + 9;
  if (num_pages > std::numeric_limits<int32_t>::max() ||
      max_requests > std::numeric_limits<int32_t>::max() ||
      longest > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("the scenario needs ", num_pages, " pages, ",
                                                   max_requests, " request rows and a context of ",
                                                   longest, "; each must fit int32"));
  }
  PagePoolConfig config;
  config.page_size = spec.page_size;
  config.max_requests = static_cast<int32_t>(max_requests);
  config.num_draft_tokens =
      spec.draft_headroom > 0 ? spec.draft_headroom : std::max(spec.spec.num_draft_tokens, 1);
  config.max_context_len = spec.max_context_len > 0
                               ? spec.max_context_len
                               : static_cast<int32_t>(std::max<int64_t>(longest, 1));
  config.num_pages = static_cast<int32_t>(num_pages);
  ASSIGN_OR_RETURN(KvPagePool created, KvPagePool::Create(config));
  auto pool = std::make_unique<KvPagePool>(std::move(created));
  RETURN_IF_ERROR(pool->ShufflePageOrder(spec.seed));
  ASSIGN_OR_RETURN(EngineBatchInputs inputs,
                   MakeEngineBatch(*pool, spec.mode, spec.convention, spec.prefix_lens,
                                   spec.new_tokens, spec.spec));
  ASSIGN_OR_RETURN(ValidatedBatch batch, BuildBatchDescriptor(inputs, *pool));
  return Scenario{std::move(pool), std::move(inputs), std::move(batch)};
}

PlannerConfig HostPlannerConfig(int32_t num_q_heads, int32_t num_kv_heads, int32_t head_dim,
                                const AttentionOptions& options) {
  PlannerConfig config;
  config.num_q_heads = num_q_heads;
  config.num_kv_heads = num_kv_heads;
  config.head_dim = head_dim;
  config.num_sms = 132;
  config.ctas_per_sm = 2;
  config.mask = options.mask;
  config.window_left = options.mask == MaskMode::kCausal ? options.window_left : -1;
  return config;
}

PagedAttentionArgs ArgsFor(const AttentionData& data, const void* q, const void* k_cache,
                           const void* v_cache, void* out, float* lse,
                           const AttentionMetadata& metadata, const AttentionOptions& options) {
  PagedAttentionArgs args;
  args.dtype = data.dtype;
  args.num_q_heads = data.num_q_heads;
  args.num_kv_heads = data.num_kv_heads;
  args.head_dim = data.head_dim;
  args.num_pages = data.kv.layout().num_pages;
  args.q = q;
  args.k_cache = k_cache;
  args.v_cache = v_cache;
  args.out = out;
  args.lse = lse;
  args.metadata = metadata;
  args.options = options;
  return args;
}

absl::StatusOr<AttentionData> MakeAttentionData(const KvPagePool& pool,
                                                const ValidatedBatch& validated,
                                                int32_t num_q_heads, int32_t num_kv_heads,
                                                int32_t head_dim, DType dtype, uint64_t seed) {
  const BatchDescriptor& batch = validated.descriptor();
  // Checked before anything is sized by them: a negative or huge count would
  // otherwise reach std::vector (length_error, bad_alloc).
  if (num_q_heads < 1 || num_kv_heads < 1 || head_dim < 1 || num_q_heads % num_kv_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MakeAttentionData: num_q_heads = ", num_q_heads,
                     ", num_kv_heads = ", num_kv_heads, ", head_dim = ", head_dim,
                     ": need positive values with num_q_heads a multiple of num_kv_heads"));
  }
  // Validated against some pool at some time; checked again against this
  // one, now, since the pool may have changed since (a freed request).
  RETURN_IF_ERROR(ValidateBatchDescriptor(batch, pool).status());
  // Q as float while drawn, then in dtype; int64, each factor < 2^31.
  const int64_t q_bytes = int64_t{batch.num_tokens()} * num_q_heads * head_dim *
                          (static_cast<int64_t>(sizeof(float)) + DTypeSize(dtype));
  if (q_bytes > kMaxHostKvCacheBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("MakeAttentionData: q of ", batch.num_tokens(), " tokens * num_q_heads ",
                     num_q_heads, " * head_dim ", head_dim, " would take ", q_bytes,
                     " bytes, more than the host budget of ", kMaxHostKvCacheBytes));
  }
  KvCacheLayout layout;
  layout.num_pages = pool.num_pages();
  layout.page_size = pool.page_size();
  layout.num_kv_heads = num_kv_heads;
  layout.head_dim = head_dim;
  layout.dtype = dtype;
  ASSIGN_OR_RETURN(HostKvCache kv, HostKvCache::Create(layout));
  kv.Fill(std::nanf(""));
  std::mt19937_64 rng(seed);

  // The sink page takes padded writes in an engine: finite, like real data.
  std::vector<int32_t> slots;
  for (int32_t s = 0; s < layout.page_size; ++s) slots.push_back(s);
  // Prefix rows, as earlier steps wrote them.
  for (const RequestEntry& request : batch.requests) {
    for (int32_t t = 0; t < request.prefix_len; ++t) {
      ASSIGN_OR_RETURN(int32_t slot, pool.Slot(request.row, t));
      slots.push_back(slot);
    }
  }
  const int64_t row_elements = layout.row_elements();
  std::vector<uint8_t> k = RandomRows(slots.size(), row_elements, dtype, rng);
  std::vector<uint8_t> v = RandomRows(slots.size(), row_elements, dtype, rng);
  RETURN_IF_ERROR(kv.WriteRows(k.data(), v.data(), slots));
  // This step's rows, through the set_kv_buffer step.
  const int64_t num_new = batch.out_cache_loc.size();
  k = RandomRows(num_new, row_elements, dtype, rng);
  v = RandomRows(num_new, row_elements, dtype, rng);
  RETURN_IF_ERROR(kv.WriteRows(k.data(), v.data(), batch.out_cache_loc));

  std::vector<uint8_t> q =
      RandomRows(batch.num_tokens(), int64_t{num_q_heads} * head_dim, dtype, rng);
  return AttentionData{num_q_heads, num_kv_heads, head_dim, dtype, std::move(kv), std::move(q)};
}

}  // namespace paged_attention
