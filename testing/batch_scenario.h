// A batch made as an engine would make it, with random attention inputs:
// shared by the demo, the plan CLI, benchmarks and tests.
//
// BuildScenario creates the requests in a fresh pool whose free pages are
// shuffled by `seed` (so page tables are non-contiguous), commits each
// request's prefix, allocates this step's new tokens the way the mode's engine
// path does (spec_decode/engine_batch.h), and builds the validated descriptor.
// MakeAttentionData then writes random K/V for every row the batch may attend
// to (prefix rows as earlier steps wrote them, new rows through the
// set_kv_buffer step at out_cache_loc), finite values on the sink page 0, and
// NaN in every other slot of the pool, so reading too little or too much shows.
#ifndef TESTING_BATCH_SCENARIO_H_
#define TESTING_BATCH_SCENARIO_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "attention/base/dtype.h"
#include "attention/kernel/paged_attention_args.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/kv_cache.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {

struct ScenarioSpec {
  ForwardMode mode = ForwardMode::kIdle;
  SeqLensConvention convention = SeqLensConvention::kIncludesNewTokens;
  int32_t page_size = 16;
  std::vector<int32_t> prefix_lens;  // [batch] tokens in the cache before this step
  std::vector<int32_t> new_tokens;   // [batch] tokens this step writes (= query tokens)
  SpecInfo spec;                     // num_draft_tokens, draft_step, ...
  uint64_t seed = 0;
  // Pool size; 0 picks the smallest that fits (plus slack for other requests).
  int32_t max_context_len = 0;
  int32_t num_pages = 0;
  int32_t max_requests = 0;
  int32_t draft_headroom = 0;  // slots past max_context_len; 0: spec.num_draft_tokens
};

struct Scenario {
  std::unique_ptr<KvPagePool> pool;
  EngineBatchInputs inputs;  // seq_lens in spec.convention
  ValidatedBatch batch;      // validated against *pool
};

absl::StatusOr<Scenario> BuildScenario(const ScenarioSpec& spec);

// A planner config for host-only plans in tests and tools: the given heads,
// head_dim and mask on an H200-like geometry (132 SMs, 2 CTAs per SM). Code
// that launches the kernels asks the GPU instead (GpuPlannerConfig).
PlannerConfig HostPlannerConfig(int32_t num_q_heads, int32_t num_kv_heads, int32_t head_dim,
                                const AttentionOptions& options = AttentionOptions{});

// Q/K/V for one attention call over a scenario's pool and batch.
struct AttentionData {
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  DType dtype = DType::kBFloat16;
  HostKvCache kv;          // [num_pages, page_size, num_kv_heads, head_dim], NaN-poisoned
  std::vector<uint8_t> q;  // [num_tokens, num_q_heads, head_dim] in dtype
};

// PagedAttentionArgs over `data`'s shapes with the given tensors (host copies
// of data's own, or their device twins) and metadata.
PagedAttentionArgs ArgsFor(const AttentionData& data, const void* q, const void* k_cache,
                           const void* v_cache, void* out, float* lse,
                           const AttentionMetadata& metadata, const AttentionOptions& options);

// InvalidArgument for non-positive heads or head_dim, num_q_heads not a
// multiple of num_kv_heads, or a batch ValidateBatchDescriptor refuses;
// ResourceExhausted when Q or the K/V cache would
// pass the host budget (kMaxHostKvCacheBytes each), before allocating.
absl::StatusOr<AttentionData> MakeAttentionData(const KvPagePool& pool, const ValidatedBatch& batch,
                                                int32_t num_q_heads, int32_t num_kv_heads,
                                                int32_t head_dim, DType dtype, uint64_t seed);

}  // namespace paged_attention

#endif  // TESTING_BATCH_SCENARIO_H_
