#include "attention/planner/metadata_planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/status_macros.h"
#include "spec_decode/draft_tree.h"

namespace paged_attention {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The kernel's tree mask words (AttentionMetadata::tree_mask) of every
// planned token: a tree token's draft-key mask moved to the top of the last
// kTreeMaskKeys keys, with the committed keys below it visible; every bit set
// for the tokens of other batches and of padding rows.
void WriteTreeMask(const ValidatedBatch& batch, const PlanLayout& layout,
                   absl::Span<uint64_t> words) {
  std::fill(words.begin(), words.begin() + layout.tree_mask_words, ~uint64_t{0});
  if (!batch.has_tree()) return;
  const std::vector<uint64_t>& masks = batch.tree_masks();
  for (size_t t = 0; t < masks.size(); ++t) {
    words[t] = TreeMaskWord(masks[t], batch.tree_draft_keys());
  }
}

absl::Status CheckSpan(const char* name, size_t size, int64_t needed) {
  if (static_cast<int64_t>(size) >= needed) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("plan span ", name, " has ", size, " entries, needs ", needed));
}

}  // namespace

absl::Status ValidatePlannerConfig(const PlannerConfig& config) {
  auto positive = [](const char* field, int32_t value) -> absl::Status {
    if (value >= 1) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("PlannerConfig.", field, " = ", value, " must be >= 1"));
  };
  RETURN_IF_ERROR(positive("num_q_heads", config.num_q_heads));
  RETURN_IF_ERROR(positive("num_kv_heads", config.num_kv_heads));
  RETURN_IF_ERROR(positive("num_sms", config.num_sms));
  RETURN_IF_ERROR(positive("ctas_per_sm", config.ctas_per_sm));
  if (config.num_q_heads % config.num_kv_heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("PlannerConfig.num_q_heads = ", config.num_q_heads,
                     " is not a multiple of num_kv_heads = ", config.num_kv_heads));
  }
  if (int64_t{config.num_sms} * config.ctas_per_sm > (1 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat("PlannerConfig.num_sms = ", config.num_sms,
                                                   " x ctas_per_sm = ", config.ctas_per_sm,
                                                   " workers is more than 2^20"));
  }
  const absl::Status partition = ValidatePartitionConfig(PartitionConfigFor(config));
  if (!partition.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("PlannerConfig: ", partition.message()));
  }
  return absl::OkStatus();
}

PartitionConfig PartitionConfigFor(const PlannerConfig& config, int32_t kv_heads_per_unit) {
  const UnitGeometry unit = UnitGeometryOf(
      config.num_kv_heads, config.num_kv_heads > 0 ? config.num_q_heads / config.num_kv_heads : 0,
      config.head_dim, kv_heads_per_unit);
  PartitionConfig partition;
  partition.num_kv_heads = unit.num_kv_heads;
  partition.group = unit.group;
  partition.head_dim = unit.head_dim;
  partition.kv_heads_per_unit = kv_heads_per_unit;
  partition.num_workers = config.num_sms * config.ctas_per_sm;
  partition.pinned_splits = config.pinned_splits;
  partition.mask = config.mask;
  partition.window_left = config.window_left;
  return partition;
}

int32_t KvHeadsPerUnit(const PlannerConfig& config, const PlanShape& shape) {
  if (!config.kv_head_pairs || config.num_kv_heads <= 0 || shape.tree_masks != TreeMasks::kNone) {
    return 1;
  }
  const int32_t group = config.num_q_heads / config.num_kv_heads;
  return CanPairKvHeads(config.head_dim, config.num_kv_heads, group, shape.max_q_len) ? 2 : 1;
}

PlanShape ExactShape(const ValidatedBatch& batch) {
  PlanShape shape;
  shape.max_batch_size = batch.batch_size();
  shape.page_size = batch.page_size();
  shape.max_kv_len = 1;
  shape.tree_masks = batch.has_tree() ? TreeMasks::kPerQueryToken : TreeMasks::kNone;
  for (const RequestEntry& request : batch.requests()) {
    shape.max_q_len = std::max(shape.max_q_len, request.new_tokens);
    shape.max_kv_len = std::max(shape.max_kv_len, request.kv_len());
  }
  return shape;
}

PlanShape CaptureShape(const KvPagePool& pool, int32_t max_batch_size, int32_t max_q_len,
                       TreeMasks tree_masks) {
  PlanShape shape;
  shape.tree_masks = tree_masks;
  shape.max_batch_size = max_batch_size;
  shape.max_q_len = max_q_len;
  shape.max_kv_len = pool.row_width();
  shape.page_size = pool.page_size();
  return shape;
}

absl::StatusOr<PlanLayout> LayoutFor(const PlanShape& shape, const PlannerConfig& config) {
  RETURN_IF_ERROR(ValidatePlannerConfig(config));
  auto field = [](const char* name, int64_t value, int64_t lo) -> absl::Status {
    if (value >= lo && value <= kInt32Max) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("PlanShape.", name, " = ", value, " is outside [", lo, ", 2^31)"));
  };
  RETURN_IF_ERROR(field("max_batch_size", shape.max_batch_size, 0));
  RETURN_IF_ERROR(field("max_q_len", shape.max_q_len, 0));
  RETURN_IF_ERROR(field("max_kv_len", shape.max_kv_len, 1));
  RETURN_IF_ERROR(field("page_size", shape.page_size, 1));
  if (shape.tree_masks != TreeMasks::kNone && shape.tree_masks != TreeMasks::kPerQueryToken) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PlanShape.tree_masks = ", static_cast<int32_t>(shape.tree_masks), " is not a TreeMasks"));
  }
  const PartitionConfig partition = PartitionConfigFor(config, KvHeadsPerUnit(config, shape));
  PlanLayout layout;
  layout.requests = shape.max_batch_size;
  layout.total_q_tokens = layout.requests * shape.max_q_len;
  layout.max_pages_per_request = CeilDiv(int64_t{shape.max_kv_len}, int64_t{shape.page_size});
  layout.page_table_entries = layout.requests * layout.max_pages_per_request;
  layout.num_workers = partition.num_workers;
  const int64_t units = MaxUnits(partition, shape.max_batch_size, shape.max_q_len);
  layout.max_segments = MaxSegments(partition, units);
  layout.max_merge_tasks = MaxMergeTasks(partition, units);
  layout.max_partials = MaxPartials(partition, units);
  layout.tree_mask_words =
      shape.tree_masks == TreeMasks::kPerQueryToken ? layout.total_q_tokens : 0;
  // Every count indexes int32 arrays on the device.
  const struct {
    const char* what;
    int64_t value;
  } counts[] = {
      {"max_batch_size x max_q_len query tokens", layout.total_q_tokens},
      {"query tokens x num_q_heads", layout.total_q_tokens * config.num_q_heads},
      {"page-table entries", layout.page_table_entries},
      {"work-plan segment words", layout.max_segments * int64_t{sizeof(WorkSegment) / 4}},
      {"partial rows", layout.max_partials * kUnitRows * config.head_dim},
  };
  for (const auto& count : counts) {
    if (count.value > kInt32Max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PlanShape (max_batch_size ", shape.max_batch_size, ", max_q_len ", shape.max_q_len,
          ", max_kv_len ", shape.max_kv_len, ", page_size ", shape.page_size, "): ", count.what,
          " = ", count.value, " do not fit int32"));
    }
  }
  return layout;
}

absl::StatusOr<PlanSummary> WritePlan(const ValidatedBatch& batch, const PlannerConfig& config,
                                      const PlanShape& shape, const PlanSpans& spans) {
  ASSIGN_OR_RETURN(const PlanLayout layout, LayoutFor(shape, config));
  const int32_t live = batch.batch_size();
  if (live > shape.max_batch_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        "batch of ", live, " requests exceeds the plan capacity of ", shape.max_batch_size));
  }
  if (batch.page_size() != shape.page_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        "batch page_size ", batch.page_size(), " differs from the plan's ", shape.page_size));
  }
  RETURN_IF_ERROR(CheckSpan("rows", spans.rows.size(), layout.requests));
  RETURN_IF_ERROR(CheckSpan("cache_seqlens", spans.cache_seqlens.size(), layout.requests));
  RETURN_IF_ERROR(CheckSpan("cu_seqlens_q", spans.cu_seqlens_q.size(), layout.requests + 1));
  RETURN_IF_ERROR(CheckSpan("counters", spans.counters.size(), kNumPlanCounters));
  RETURN_IF_ERROR(CheckSpan("tree_mask", spans.tree_mask.size(), layout.tree_mask_words));
  if (batch.has_tree() && shape.tree_masks == TreeMasks::kNone) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", ForwardModeName(batch.mode()),
        " batch is a tree (spec.topk = ", batch.descriptor().spec.topk,
        ") but the plan shape has no tree masks (capture with TreeMasks::kPerQueryToken)"));
  }
  // Check every request before writing, so a rejected batch leaves the spans
  // (possibly a live CUDA graph's staging) as they were.
  for (int32_t i = 0; i < live; ++i) {
    const RequestEntry& request = batch.requests()[i];
    if (request.new_tokens > shape.max_q_len) {
      return absl::FailedPreconditionError(
          absl::StrCat("request ", i, ": ", request.new_tokens,
                       " query tokens exceed the plan's max_q_len of ", shape.max_q_len));
    }
    if (request.kv_len() > shape.max_kv_len) {
      return absl::FailedPreconditionError(absl::StrCat("request ", i, ": ", request.kv_len(),
                                                        " keys exceed the plan's max_kv_len of ",
                                                        shape.max_kv_len));
    }
  }

  PlanSummary summary;
  summary.batch_size = live;
  spans.cu_seqlens_q[0] = 0;
  for (int32_t i = 0; i < shape.max_batch_size; ++i) {
    // Padding rows: the dummy row 0, no keys, max_q_len queries (zero-filled).
    int32_t row = 0, q_len = shape.max_q_len, k_len = 0;
    if (i < live) {
      const RequestEntry& request = batch.requests()[i];
      row = request.row;
      q_len = request.new_tokens;
      k_len = request.kv_len();
      summary.max_seq_len_q = std::max(summary.max_seq_len_q, q_len);
      summary.max_seq_len_k = std::max(summary.max_seq_len_k, k_len);
    }
    spans.rows[i] = row;
    spans.cache_seqlens[i] = k_len;
    spans.cu_seqlens_q[i + 1] = spans.cu_seqlens_q[i] + q_len;
  }
  summary.num_q_tokens = spans.cu_seqlens_q[live];
  if (layout.tree_mask_words > 0) WriteTreeMask(batch, layout, spans.tree_mask);

  ASSIGN_OR_RETURN(
      summary.partition,
      PartitionWork(spans.cu_seqlens_q.subspan(0, live + 1), spans.cache_seqlens.subspan(0, live),
                    PartitionConfigFor(config, KvHeadsPerUnit(config, shape)),
                    PartitionBuffers{spans.worker_begin, spans.segments, spans.merge_tasks}));
  spans.counters[kPlanNumMergeTasks] = summary.partition.num_merge_tasks;
  spans.counters[kPlanZeroFillBegin] = summary.num_q_tokens;
  spans.counters[kPlanZeroFillEnd] = spans.cu_seqlens_q[shape.max_batch_size];
  for (int32_t c = kPlanZeroFillEnd + 1; c < kNumPlanCounters; ++c) spans.counters[c] = 0;
  return summary;
}

uint64_t TreeMaskWord(uint64_t draft_mask, int32_t draft_keys) {
  static_assert(kTreeMaskKeys == kMaxDraftTreeKeys, "one word holds a whole tree");
  const int32_t committed_bits = kTreeMaskKeys - draft_keys;
  if (committed_bits == 0) return draft_mask;  // (a shift by 64 is undefined)
  return (draft_mask << committed_bits) | ((uint64_t{1} << committed_bits) - 1);
}

AttentionMetadata MetadataFrame(const PlanShape& shape, const PlanLayout& layout,
                                const PlannerConfig& config) {
  AttentionMetadata view;
  view.batch_size = shape.max_batch_size;
  view.total_q_tokens = static_cast<int32_t>(layout.total_q_tokens);
  view.max_seq_len_q = shape.max_q_len;
  view.max_seq_len_k = shape.max_kv_len;
  view.page_size = shape.page_size;
  view.max_pages_per_request = static_cast<int32_t>(layout.max_pages_per_request);
  WorkPlanView& plan = view.plan;
  plan.num_workers = static_cast<int32_t>(layout.num_workers);
  plan.max_segments = static_cast<int32_t>(layout.max_segments);
  plan.max_merge_tasks = static_cast<int32_t>(layout.max_merge_tasks);
  plan.max_partials = static_cast<int32_t>(layout.max_partials);
  plan.max_zero_fill_tokens = static_cast<int32_t>(layout.total_q_tokens);
  plan.num_kv_heads = config.num_kv_heads;
  plan.group = config.num_q_heads / config.num_kv_heads;
  plan.head_dim = config.head_dim;
  plan.kv_heads_per_unit = KvHeadsPerUnit(config, shape);
  plan.causal = config.mask == MaskMode::kCausal ? 1 : 0;
  plan.window_left = config.window_left;
  return view;
}

AttentionMetadata HostMetadata::View() const {
  AttentionMetadata view = MetadataFrame(shape, layout, config);
  // The planned tokens (live, then padding): the lse row stride. Eager: exact.
  view.total_q_tokens = cu_seqlens_q.empty() ? 0 : cu_seqlens_q[shape.max_batch_size];
  view.cache_seqlens = cache_seqlens.data();
  view.cu_seqlens_q = cu_seqlens_q.data();
  view.page_table = page_table.data();
  view.tree_mask = tree_mask.empty() ? nullptr : tree_mask.data();
  WorkPlanView& plan = view.plan;
  plan.max_zero_fill_tokens =
      counters.empty() ? 0 : counters[kPlanZeroFillEnd] - counters[kPlanZeroFillBegin];
  plan.worker_begin = worker_begin.data();
  plan.segments = segments.data();
  plan.merge_tasks = merge_tasks.data();
  plan.counters = counters.data();
  return view;
}

int32_t HostMetadata::NumPages(int32_t request) const {
  return CeilDiv(cache_seqlens[request], shape.page_size);
}

absl::StatusOr<HostMetadata> PlanOnHost(const ValidatedBatch& batch, const KvPagePool& pool,
                                        const PlannerConfig& config, const PlanShape& shape) {
  if (pool.page_size() != batch.page_size() || pool.row_width() != batch.row_width() ||
      pool.max_requests() != batch.pool_rows()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pool (page_size ", pool.page_size(), ", row_width ", pool.row_width(), ", rows ",
        pool.max_requests(), ") is not the one the batch was validated on (page_size ",
        batch.page_size(), ", row_width ", batch.row_width(), ", rows ", batch.pool_rows(), ")"));
  }
  HostMetadata plan;
  plan.mode = batch.mode();
  plan.shape = shape;
  plan.config = config;
  ASSIGN_OR_RETURN(plan.layout, LayoutFor(shape, config));
  const PlanLayout& layout = plan.layout;
  plan.rows.assign(layout.requests, 0);
  plan.cache_seqlens.assign(layout.requests, 0);
  plan.cu_seqlens_q.assign(layout.requests + 1, 0);
  plan.page_table.assign(std::max<int64_t>(layout.page_table_entries, 1), 0);
  plan.counters.assign(kNumPlanCounters, 0);
  plan.worker_begin.assign(layout.num_workers + 1, 0);
  plan.segments.assign(std::max<int64_t>(layout.max_segments, 1), WorkSegment{});
  plan.merge_tasks.assign(std::max<int64_t>(layout.max_merge_tasks, 1), MergeTask{});
  plan.tree_mask.assign(layout.tree_mask_words, 0);
  ASSIGN_OR_RETURN(
      plan.summary,
      WritePlan(batch, config, shape,
                PlanSpans{absl::MakeSpan(plan.rows), absl::MakeSpan(plan.cache_seqlens),
                          absl::MakeSpan(plan.cu_seqlens_q), absl::MakeSpan(plan.counters),
                          absl::MakeSpan(plan.worker_begin), absl::MakeSpan(plan.segments),
                          absl::MakeSpan(plan.merge_tasks), absl::MakeSpan(plan.tree_mask)}));
  RETURN_IF_ERROR(GatherPageTableOnHost(
      pool.req_to_token(), pool.row_width(), absl::MakeConstSpan(plan.rows),
      absl::MakeConstSpan(plan.cache_seqlens), shape.page_size,
      static_cast<int32_t>(layout.max_pages_per_request), absl::MakeSpan(plan.page_table)));
  return plan;
}

absl::StatusOr<HostMetadata> PlanEager(const ValidatedBatch& batch, const KvPagePool& pool,
                                       const PlannerConfig& config) {
  return PlanOnHost(batch, pool, config, ExactShape(batch));
}

absl::Status GatherPageTableOnHost(absl::Span<const int32_t> req_to_token, int32_t row_width,
                                   absl::Span<const int32_t> rows, absl::Span<const int32_t> k_lens,
                                   int32_t page_size, int32_t page_table_stride,
                                   absl::Span<int32_t> page_table) {
  if (row_width < 1 || page_size < 1 || page_table_stride < 0 || rows.size() != k_lens.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GatherPageTableOnHost: row_width ", row_width, ", page_size ", page_size, ", stride ",
        page_table_stride, ", ", rows.size(), " rows and ", k_lens.size(), " lengths"));
  }
  const int64_t table_rows = static_cast<int64_t>(req_to_token.size()) / row_width;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t columns = CeilDiv(int64_t{k_lens[i]}, int64_t{page_size});
    if (rows[i] < 0 || rows[i] >= table_rows || k_lens[i] < 0 || k_lens[i] > row_width ||
        columns > page_table_stride ||
        int64_t(i) * page_table_stride + columns > static_cast<int64_t>(page_table.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("GatherPageTableOnHost: request ", i, ": row ", rows[i], " of ", table_rows,
                       ", length ", k_lens[i], " (row width ", row_width, ", page table stride ",
                       page_table_stride, ", ", page_table.size(), " entries)"));
    }
    const int32_t* slots = req_to_token.data() + int64_t{rows[i]} * row_width;
    int32_t* out = page_table.data() + int64_t(i) * page_table_stride;
    for (int64_t j = 0; j < columns; ++j) out[j] = slots[j * page_size] / page_size;
  }
  return absl::OkStatus();
}

}  // namespace paged_attention
