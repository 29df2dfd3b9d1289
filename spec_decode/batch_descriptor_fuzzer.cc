// libFuzzer target: BuildBatchDescriptor, ValidateBatchDescriptor and the
// planners (PlanEager, the capacity-shaped graph twin) on fuzzer-made engine inputs against
// a small pool holding a few requests (see tools/FUZZING.md).
//
// Each input sets up a pool with MakeEngineBatch (an engine-like, mostly valid
// batch), then mutates the engine inputs field by field. Whatever comes out,
// nothing may crash, and:
// - a failed MakeEngineBatch leaves the pool exactly as it was: no leak, and
//   the same rows and pages come out of it next, in the same order;
// - a built descriptor validates, states every request's slots as the pool
//   has them, and plans to metadata whose arrays are consistent with it;
// - the host graph replay of a built batch matches the eager plan on the live
//   rows, and rejects (with a status) what it cannot hold;
// - nothing here changes the pool.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/engine_batch.h"
#include "spec_decode/forward_mode.h"
#include "testing/fuzz_input.h"

namespace paged_attention {
namespace {

constexpr int32_t kMaxBatch = 6;

void MutateArray(FuzzInput& in, std::vector<int32_t>& values, int32_t hi) {
  switch (in.Byte() % 4) {
    case 0:
      if (!values.empty()) values[in.IntInRange(0, values.size() - 1)] = in.Length(0, hi);
      break;
    case 1:
      values.push_back(in.Length(0, hi));
      break;
    case 2:
      if (!values.empty()) values.pop_back();
      break;
    default:
      values.clear();
      break;
  }
}

// Parents of `nodes` draft nodes: mostly a valid forest (each parent -1 or an
// earlier node), sometimes not.
std::vector<int32_t> FuzzParents(FuzzInput& in, int64_t nodes) {
  nodes = std::clamp<int64_t>(nodes, 0,
                              1024);  // a bigger count (num_draft_tokens = 2^30) mismatches anyway
  std::vector<int32_t> parents;
  for (int64_t k = 0; k < nodes; ++k) {
    parents.push_back(in.Byte() % 16 == 0 ? static_cast<int32_t>(in.IntInRange(0, 8)) - 2
                                          : static_cast<int32_t>(in.IntInRange(0, k)) - 1);
  }
  return parents;
}

void Mutate(FuzzInput& in, EngineBatchInputs& inputs, int32_t width) {
  switch (in.Byte() % 13) {
    case 0:
      inputs.mode = in.Pick({ForwardMode::kExtend, ForwardMode::kDecode, ForwardMode::kMixed,
                             ForwardMode::kIdle, ForwardMode::kTargetVerify,
                             ForwardMode::kDraftExtend, ForwardMode::kDraftExtendV2});
      break;
    case 1:
      switch (in.Byte() % 3) {
        case 0:
          inputs.seq_lens_convention.reset();
          break;
        case 1:
          inputs.seq_lens_convention = SeqLensConvention::kPrefixOnly;
          break;
        default:
          inputs.seq_lens_convention = SeqLensConvention::kIncludesNewTokens;
          break;
      }
      break;
    case 2:
      MutateArray(in, inputs.req_pool_indices, kMaxBatch + 2);
      break;
    case 3:
      MutateArray(in, inputs.seq_lens, width);
      break;
    case 4:
      MutateArray(in, inputs.extend_seq_lens, width);
      break;
    case 5:
      MutateArray(in, inputs.out_cache_loc, 512);
      break;
    case 6:
      MutateArray(in, inputs.positions, width);
      break;
    case 7:
      inputs.spec.num_draft_tokens = in.Length(0, 6);
      break;
    case 8:
      inputs.spec.draft_step = in.Length(-1, 4);
      break;
    case 9:
      inputs.spec.topk = in.Length(1, 4);
      break;
    case 11:
      if (in.Bool()) {
        inputs.spec.tree_parents =
            FuzzParents(in, static_cast<int64_t>(inputs.req_pool_indices.size()) *
                                    std::max(inputs.spec.num_draft_tokens, 0) +
                                in.Length(0, 1));
      } else if (!inputs.spec.tree_parents.empty()) {
        inputs.spec.tree_parents[in.IntInRange(0, inputs.spec.tree_parents.size() - 1)] =
            static_cast<int32_t>(in.IntInRange(0, 10)) - 2;
      }
      break;
    case 10:
      MutateArray(in, inputs.spec.accept_lengths, 6);
      break;
    default:
      if (!inputs.req_pool_indices.empty() && in.Bool()) {
        // A row of another live request: a repeat, or a request of the pool
        // that the batch does not own.
        inputs.req_pool_indices[in.IntInRange(0, inputs.req_pool_indices.size() - 1)] =
            static_cast<int32_t>(in.IntInRange(0, kMaxBatch + 2));
      }
      break;
  }
}

PlannerConfig Planner() {
  PlannerConfig config;
  config.num_q_heads = 8;
  config.num_kv_heads = 2;
  config.head_dim = 64;
  config.num_sms = 3;  // few workers: plans cut and merge
  config.ctas_per_sm = 2;
  return config;
}

void CheckPlan(const HostMetadata& plan, const BatchDescriptor& batch, const KvPagePool& pool) {
  const int32_t bs = batch.batch_size();
  FUZZ_CHECK(plan.summary.batch_size == bs);
  FUZZ_CHECK(static_cast<int32_t>(plan.cache_seqlens.size()) >= bs);
  FUZZ_CHECK(static_cast<int32_t>(plan.cu_seqlens_q.size()) >= bs + 1);
  FUZZ_CHECK(plan.summary.num_q_tokens == batch.num_tokens());
  FUZZ_CHECK(plan.summary.partition.num_segments <= plan.layout.max_segments);
  for (int32_t i = 0; i < bs; ++i) {
    const RequestEntry& r = batch.requests[i];
    FUZZ_CHECK(plan.cache_seqlens[i] == r.prefix_len + r.new_tokens);
    FUZZ_CHECK(plan.cu_seqlens_q[i + 1] - plan.cu_seqlens_q[i] == r.new_tokens);
    FUZZ_CHECK(plan.cache_seqlens[i] <= plan.summary.max_seq_len_k);
    for (int32_t j = 0; j < plan.NumPages(i); ++j) {
      const int32_t page = plan.page_table[int64_t{i} * plan.layout.max_pages_per_request + j];
      FUZZ_CHECK(page >= 1 && page < pool.num_pages());
      FUZZ_CHECK(page == pool.Slot(r.row, j * pool.page_size()).value() / pool.page_size());
    }
  }
}

void CheckBuilt(const ValidatedBatch& validated, const KvPagePool& pool) {
  const BatchDescriptor& batch = validated.descriptor();
  FUZZ_CHECK(ValidateBatchDescriptor(batch, pool).ok());
  // Trees: every token sees its own node, positions are committed + depth.
  const int32_t draft_keys = validated.tree_draft_keys();
  FUZZ_CHECK(validated.tree_masks().size() ==
             (validated.has_tree() ? batch.out_cache_loc.size() : 0));
  size_t k = 0;
  for (const RequestEntry& r : batch.requests) {
    for (int32_t j = 0; j < r.new_tokens; ++j, ++k) {
      FUZZ_CHECK(batch.out_cache_loc[k] == pool.Slot(r.row, r.prefix_len + j).value());
      if (validated.has_tree()) {
        const int32_t node = draft_keys - r.new_tokens + j;
        FUZZ_CHECK(((validated.tree_masks()[k] >> node) & 1) == 1);
        FUZZ_CHECK(validated.tree_masks()[k] >> node == 1);  // no later node
        FUZZ_CHECK(batch.positions[k] >= r.kv_len() - draft_keys);
        FUZZ_CHECK(batch.positions[k] <= r.prefix_len + j);
      } else {
        FUZZ_CHECK(batch.positions[k] == r.prefix_len + j);
      }
    }
  }
  FUZZ_CHECK(k == batch.out_cache_loc.size());
  absl::StatusOr<HostMetadata> plan = PlanEager(validated, pool, Planner());
  FUZZ_CHECK(plan.ok());
  CheckPlan(*plan, batch, pool);
  for (size_t t = 0; t < validated.tree_masks().size(); ++t) {
    FUZZ_CHECK(plan->tree_mask[t] == TreeMaskWord(validated.tree_masks()[t], draft_keys));
  }

  // A graph without tree masks refuses trees by name.
  if (validated.has_tree()) {
    FUZZ_CHECK(
        PlanOnHost(validated, pool, Planner(), CaptureShape(pool, kMaxBatch, 64)).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  }
  // The CUDA-graph twin (built batches may hold more than kMaxBatch requests
  // or 4 queries: FailedPrecondition) plans the live rows as the eager plan.
  const PlanShape capture = CaptureShape(pool, kMaxBatch, 4, TreeMasks::kPerQueryToken);
  const absl::StatusOr<HostMetadata> graph = PlanOnHost(validated, pool, Planner(), capture);
  int32_t max_q = 0;
  for (const RequestEntry& r : batch.requests) max_q = std::max(max_q, r.new_tokens);
  FUZZ_CHECK(graph.ok() ==
             (max_q <= capture.max_q_len && batch.batch_size() <= capture.max_batch_size));
  if (!graph.ok()) {
    FUZZ_CHECK(graph.status().code() == absl::StatusCode::kFailedPrecondition);
    return;
  }
  // The twin pairs KV heads as its shape does (KvHeadsPerUnit: this capture,
  // with tree masks, never does): its work plan equals the eager plan of the
  // same pairing.
  absl::StatusOr<HostMetadata> single_heads = plan;
  if (KvHeadsPerUnit(Planner(), capture) != plan->View().plan.kv_heads_per_unit) {
    PlannerConfig config = Planner();
    config.kv_head_pairs = false;
    single_heads = PlanEager(validated, pool, config);
    FUZZ_CHECK(single_heads.ok());
  }
  FUZZ_CHECK(graph->worker_begin == single_heads->worker_begin);
  for (size_t t = 0; t < plan->tree_mask.size(); ++t) {
    FUZZ_CHECK(graph->tree_mask[t] == plan->tree_mask[t]);
  }
  for (int32_t i = 0; i < batch.batch_size(); ++i) {
    FUZZ_CHECK(graph->cache_seqlens[i] == plan->cache_seqlens[i]);
    FUZZ_CHECK(graph->cu_seqlens_q[i + 1] == plan->cu_seqlens_q[i + 1]);
    for (int32_t j = 0; j < plan->NumPages(i); ++j) {
      FUZZ_CHECK(graph->page_table[int64_t{i} * graph->layout.max_pages_per_request + j] ==
                 plan->page_table[int64_t{i} * plan->layout.max_pages_per_request + j]);
    }
  }
}

// Every row and page `pool` would hand out from now on, in order.
std::vector<int32_t> FutureAllocations(KvPagePool pool) {
  std::vector<int32_t> taken;
  for (absl::StatusOr<int32_t> row = pool.CreateRequest(); row.ok(); row = pool.CreateRequest()) {
    taken.push_back(-*row);
    while (pool.Extend(*row, pool.page_size()).ok()) {
      taken.push_back(pool.Slot(*row, *pool.Length(*row) - 1).value());
    }
  }
  return taken;
}

void Run(FuzzInput& in) {
  PagePoolConfig config;
  config.page_size = in.Pick<int32_t>({1, 2, 3, 4, 16});
  config.num_pages = static_cast<int32_t>(in.IntInRange(2, 80));
  config.max_requests = kMaxBatch + 3;
  config.max_context_len = static_cast<int32_t>(in.IntInRange(1, 96));
  config.num_draft_tokens = static_cast<int32_t>(in.IntInRange(0, 6));
  KvPagePool pool = KvPagePool::Create(config).value();
  FUZZ_CHECK(pool.ShufflePageOrder(in.Uint32()).ok());

  // Another live request the batch does not own.
  const int32_t other = pool.CreateRequest().value();
  if (pool.Extend(other, static_cast<int32_t>(in.IntInRange(0, 8))).ok() && in.Bool()) {
    pool.ReserveDraft(other, static_cast<int32_t>(in.IntInRange(0, 4))).IgnoreError();
  }

  const ForwardMode mode =
      in.Pick({ForwardMode::kExtend, ForwardMode::kDecode, ForwardMode::kMixed, ForwardMode::kIdle,
               ForwardMode::kTargetVerify, ForwardMode::kDraftExtend, ForwardMode::kDraftExtendV2});
  const SeqLensConvention convention =
      in.Bool() ? SeqLensConvention::kPrefixOnly : SeqLensConvention::kIncludesNewTokens;
  SpecInfo spec;
  spec.num_draft_tokens = static_cast<int32_t>(in.IntInRange(0, 4));
  if (mode == ForwardMode::kDecode && in.Bool())
    spec.draft_step = static_cast<int32_t>(in.IntInRange(0, 3));
  if ((mode == ForwardMode::kTargetVerify || spec.draft_step >= 0) && in.Bool()) {
    spec.topk = static_cast<int32_t>(in.IntInRange(1, 4));  // trees
  }
  const int32_t bs =
      mode == ForwardMode::kIdle ? 0 : static_cast<int32_t>(in.IntInRange(1, kMaxBatch));
  std::vector<int32_t> prefix_lens, new_tokens;
  for (int32_t i = 0; i < bs; ++i) {
    prefix_lens.push_back(in.Length(0, config.max_context_len));
    new_tokens.push_back(in.Length(1, 4));
  }
  if (mode == ForwardMode::kDraftExtend && in.Bool()) {
    for (int32_t n : new_tokens) spec.accept_lengths.push_back(n >= 1 ? n - 1 : -1);
  }
  // Mostly the count the mode fixes (MakeEngineBatch refuses others by name),
  // so the descriptor paths below see every mode.
  if (in.Bool()) {
    for (int32_t& n : new_tokens) {
      if (mode == ForwardMode::kDecode) n = spec.draft_step >= 0 ? spec.topk : 1;
      if (mode == ForwardMode::kTargetVerify || mode == ForwardMode::kDraftExtendV2) {
        n = spec.num_draft_tokens;
      }
    }
  }

  if (mode == ForwardMode::kTargetVerify && (spec.topk > 1 || in.Bool())) {
    spec.tree_parents = FuzzParents(in, int64_t{bs} * spec.num_draft_tokens);
  }

  const KvPagePool before = pool;
  absl::StatusOr<EngineBatchInputs> made =
      MakeEngineBatch(pool, mode, convention, prefix_lens, new_tokens, spec);
  if (!made.ok()) {
    // Exactly as it was: counts, table, and the order rows and pages come out.
    FUZZ_CHECK(pool.used_pages() == before.used_pages());
    FUZZ_CHECK(pool.active_requests() == before.active_requests());
    FUZZ_CHECK(std::equal(pool.req_to_token().begin(), pool.req_to_token().end(),
                          before.req_to_token().begin()));
    FUZZ_CHECK(FutureAllocations(pool) == FutureAllocations(before));
    return;
  }
  EngineBatchInputs inputs = *std::move(made);
  const std::vector<int32_t> table_before(pool.req_to_token().begin(), pool.req_to_token().end());
  const int32_t used_after_make = pool.used_pages();

  // Unmutated first, then a few mutations each built again.
  for (int round = 0; round < 4; ++round) {
    absl::StatusOr<ValidatedBatch> batch = BuildBatchDescriptor(inputs, pool);
    if (batch.ok()) {
      CheckBuilt(*batch, pool);
      // Tamper with the built descriptor: validation must still answer with a
      // status, and what it accepts plans.
      BatchDescriptor tampered = batch->descriptor();
      if (!tampered.requests.empty()) {
        RequestEntry& r = tampered.requests[in.IntInRange(0, tampered.requests.size() - 1)];
        switch (in.Byte() % 3) {
          case 0:
            r.row = in.Length(0, kMaxBatch + 3);
            break;
          case 1:
            r.prefix_len = in.Length(0, config.max_context_len);
            break;
          default:
            r.new_tokens = in.Length(1, 4);
            break;
        }
      }
      const absl::StatusOr<ValidatedBatch> valid = ValidateBatchDescriptor(tampered, pool);
      if (valid.ok()) {
        const absl::StatusOr<HostMetadata> plan = PlanEager(*valid, pool, Planner());
        FUZZ_CHECK(plan.ok());
        CheckPlan(*plan, tampered, pool);
      } else {
        FUZZ_CHECK(!valid.status().message().empty());
      }
    } else {
      FUZZ_CHECK(batch.status().code() == absl::StatusCode::kInvalidArgument ||
                 batch.status().code() == absl::StatusCode::kUnimplemented);
      FUZZ_CHECK(!batch.status().message().empty());
    }
    if (in.empty()) break;
    const int mutations = static_cast<int>(in.IntInRange(1, 3));
    for (int m = 0; m < mutations; ++m) Mutate(in, inputs, pool.row_width());
  }
  // Building, validating and planning never change the pool.
  FUZZ_CHECK(pool.used_pages() == used_after_make);
  FUZZ_CHECK(std::equal(table_before.begin(), table_before.end(), pool.req_to_token().begin()));
}

}  // namespace
}  // namespace paged_attention

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paged_attention::FuzzInput in(data, size);
  paged_attention::Run(in);
  return 0;
}
