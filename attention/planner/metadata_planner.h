// The metadata planner: a validated batch in, the attention metadata and the
// work plan the paged kernel reads out, written by ONE routine (WritePlan)
// into caller-provided spans of a given capacity. Eager planning and CUDA-graph
// replay differ only in where those spans live and how many padding rows
// follow the batch:
//
//   host arrays (CPU executor, tests, the plan CLI):
//     ASSIGN_OR_RETURN(HostMetadata plan, PlanEager(batch, pool, config));
//   device buffers (eager GPU launches and CUDA-graph replay alike):
//     see device_metadata.h (DeviceMetadata::Upload calls WritePlan).
//
// One formula for every mode: the descriptor states each request's prefix
// and new tokens, so the kernel reads k = prefix + new rows and q = new
// queries:
//   DECODE                  prefix = length - 1, new = 1   -> k = full length
//   DECODE, draft step s    prefix = committed + s, new = 1 -> committed + s + 1
//   TARGET_VERIFY           prefix = committed, new = nd   -> committed + nd
//   EXTEND / MIXED / DRAFT_EXTEND / DRAFT_EXTEND_V2: k = prefix + extend
// max_seq_len_k is max_i(prefix_i + new_i), never max(prefix) + max(new).
//
// Trees (tree verify, tree draft decode; spec_decode/draft_tree.h) plan like
// chains, plus one 64-bit mask word per query token over the request's last
// 64 keys (AttentionMetadata::tree_mask). Why one masked pass and not
// upstream's cascade (a shared-prefix pass and a per-branch pass merged
// through their LSEs): a tree request's query rows already share their
// 64-row units the way a chain's do, so the single pass reads the prefix's
// K/V once per KV head and unit for all nd (or topk) rows, exactly as the
// chain does, and the mask costs a few predicated ANDs on the last one to
// four key tiles (H200: tree time 1.01-1.05x the chain's). A cascade would add
// a second pass over per-branch page tables (upstream also moves the
// prefix's partial tail page into it when page > 1), its own launch and an
// LSE merge per row. The price is a limit of 64 draft keys per request.
// There is no cu_seqlens_k: nothing here reads it (callers that print or
// dump it take prefix sums of cache_seqlens).
#ifndef ATTENTION_PLANNER_METADATA_PLANNER_H_
#define ATTENTION_PLANNER_METADATA_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attention/planner/attention_metadata.h"
#include "attention/planner/work_partition.h"
#include "attention/planner/work_plan.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {

// What the work plan depends on besides the batch. No defaults for the
// geometry: a plan made for 8 KV heads or 132 SMs is wrong for other values.
// On a GPU, num_sms and ctas_per_sm come from QueryKernelGeometry
// (attention/kernel/paged_attention.h) for the dtype and head_dim launched.
struct PlannerConfig {
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;     // 64, 128 or 256
  int32_t num_sms = 0;      // multiprocessors of the GPU
  int32_t ctas_per_sm = 0;  // resident CTAs of the attention kernel per SM
  // > 0: cut every unit into this many key ranges (work_partition.h); 0: balance.
  int32_t pinned_splits = 0;
  MaskMode mask = MaskMode::kCausal;
  int32_t window_left = -1;  // -1: no sliding window
  // Units of KV head pairs where the shape allows them (KvHeadsPerUnit). The
  // pairing follows the plan's shape, so a batch planned for its exact shape
  // and replayed in a graph of a larger max_q_len may run differently paired
  // (equal to rounding, not bit for bit); false keeps every plan's units to
  // one KV head, for callers that need eager and replay bit for bit across
  // shapes.
  bool kv_head_pairs = true;
};

// InvalidArgument naming the PlannerConfig field and its value.
absl::Status ValidatePlannerConfig(const PlannerConfig& config);

// The partition settings `config` implies, for units of `kv_heads_per_unit`
// KV heads (KvHeadsPerUnit): pairs plan as head_dim 128 units of half the KV
// heads and twice the group, which is what they read.
PartitionConfig PartitionConfigFor(const PlannerConfig& config, int32_t kv_heads_per_unit = 1);

// What a plan's buffers are sized for. Eager: the batch itself
// (ExactShape). CUDA graph: the capture capacity (CaptureShape); rows past the
// live batch are padding requests with max_q_len query tokens and no keys.
// Whether a plan holds a tree mask word per query token
// (AttentionMetadata::tree_mask).
enum class TreeMasks : int32_t {
  kNone,           // chains and ordinary batches only
  kPerQueryToken,  // tree batches (and any other batch: all bits set)
};

struct PlanShape {
  int32_t max_batch_size = 0;
  int32_t max_q_len = 0;  // query tokens per request
  int32_t max_kv_len =
      0;  // keys per request: the page table has ceil(max_kv_len / page_size) columns
  int32_t page_size = 0;
  TreeMasks tree_masks = TreeMasks::kNone;
};

// KV heads per unit of the plans made for `shape` (WorkPlanView::kv_heads_per_unit):
// 2 where config.kv_head_pairs is set, work_plan.h's CanPairKvHeads allows it
// for the shape's max_q_len and the shape has no tree masks (head_dim 64
// decode), else 1. A function of the shape, not of the live batch, like every
// capacity: a CUDA graph replays the kernel it captured, and a batch replayed
// in it plans as it would eagerly with the same shape.
int32_t KvHeadsPerUnit(const PlannerConfig& config, const PlanShape& shape);

// The exact shape of `batch` (at least one page-table column; tree masks iff
// the batch is a tree batch).
PlanShape ExactShape(const ValidatedBatch& batch);
// A capture shape for graphs over `pool` serving up to `max_batch_size`
// requests of up to `max_q_len` query tokens each; keys up to the row width.
// A graph that replays tree batches (tree verify, tree draft decode) needs
// TreeMasks::kPerQueryToken.
PlanShape CaptureShape(const KvPagePool& pool, int32_t max_batch_size, int32_t max_q_len,
                       TreeMasks tree_masks = TreeMasks::kNone);

// Element counts of every plan array for a shape and config; int64 and
// checked: InvalidArgument naming the PlanShape field when a count would not
// fit the int32 indices the kernel uses.
struct PlanLayout {
  int64_t requests = 0;        // rows of the per-request arrays
  int64_t total_q_tokens = 0;  // requests x max_q_len
  int64_t max_pages_per_request = 0;
  int64_t page_table_entries = 0;  // requests x max_pages_per_request
  int64_t num_workers = 0;
  int64_t max_segments = 0;
  int64_t max_merge_tasks = 0;
  int64_t max_partials = 0;
  int64_t tree_mask_words = 0;  // total_q_tokens with tree masks, else 0
};
absl::StatusOr<PlanLayout> LayoutFor(const PlanShape& shape, const PlannerConfig& config);

// Caller-provided destinations, each at least the size the layout names.
struct PlanSpans {
  absl::Span<int32_t> rows;           // [requests] req_to_token row (padding: 0, the dummy row)
  absl::Span<int32_t> cache_seqlens;  // [requests]
  absl::Span<int32_t> cu_seqlens_q;   // [requests + 1]
  absl::Span<int32_t> counters;       // [kNumPlanCounters]
  absl::Span<int32_t> worker_begin;   // [num_workers + 1]
  absl::Span<WorkSegment> segments;   // [max_segments]
  absl::Span<MergeTask> merge_tasks;  // [max_merge_tasks]
  absl::Span<uint64_t> tree_mask;     // [tree_mask_words]
};

// The live batch's scalars and the partition's counts.
struct PlanSummary {
  int32_t batch_size = 0;     // live requests
  int32_t num_q_tokens = 0;   // live query tokens
  int32_t max_seq_len_q = 0;  // over live requests
  int32_t max_seq_len_k = 0;  // max_i(prefix_i + new_i) over live requests
  PartitionCounts partition;
};

// What every view of a plan of `shape` shares, host or device: the scalars of
// AttentionMetadata and its WorkPlanView (capacities from `layout`, heads and
// mask from `config`; total_q_tokens = the layout's capacity). Pointers null.
AttentionMetadata MetadataFrame(const PlanShape& shape, const PlanLayout& layout,
                                const PlannerConfig& config);

// THE planning routine. Writes the per-request arrays (live rows, then padding
// rows up to shape.max_batch_size), the plan counters and the work partition
// for `batch` into `spans`. FailedPrecondition when the batch does not fit the
// shape (more requests, query tokens or keys than it holds, another page
// size, a tree batch on a shape without tree masks); InvalidArgument for a bad config;
// ResourceExhausted naming a span that is too small. Allocation-free; host only (the page table is
// the caller's: GatherPageTableOnHost or the device gather).
absl::StatusOr<PlanSummary> WritePlan(const ValidatedBatch& batch, const PlannerConfig& config,
                                      const PlanShape& shape, const PlanSpans& spans);

// The kernel's tree mask word (AttentionMetadata::tree_mask) of a query token
// that may see the draft keys in `draft_mask` (bit k: draft key k) of a
// request whose last `draft_keys` (1..64) keys are draft keys: the mask moved
// to the top of the word's 64 keys, the committed keys below it all visible.
uint64_t TreeMaskWord(uint64_t draft_mask, int32_t draft_keys);

// A plan in host arrays: the source of truth for the float64 executor, tests
// and the plan CLI. View() gives host pointers for the kernel's struct.
struct HostMetadata {
  ForwardMode mode = ForwardMode::kIdle;
  PlanShape shape;
  PlanLayout layout;
  PlanSummary summary;
  PlannerConfig config;
  std::vector<int32_t> rows;           // [requests]
  std::vector<int32_t> cache_seqlens;  // [requests]
  std::vector<int32_t> cu_seqlens_q;   // [requests + 1]
  std::vector<int32_t> page_table;     // [requests, max_pages_per_request]
  std::vector<int32_t> counters;       // [kNumPlanCounters]
  std::vector<int32_t> worker_begin;   // [num_workers + 1]
  std::vector<WorkSegment> segments;   // [max_segments]
  std::vector<MergeTask> merge_tasks;  // [max_merge_tasks]
  std::vector<uint64_t> tree_mask;     // [tree_mask_words]

  // The metadata with host pointers into this object (valid while it lives).
  AttentionMetadata View() const;
  // The live requests' page counts, ceil(cache_seqlens[i] / page_size).
  int32_t NumPages(int32_t request) const;
};

// Plans `batch` into host arrays of `shape` and gathers its page table from
// `pool` on the host. ExactShape for eager plans; a capture shape gives the
// host twin of a CUDA-graph replay. Errors as WritePlan's, plus
// FailedPrecondition if `pool` is not the table the batch was validated on.
absl::StatusOr<HostMetadata> PlanOnHost(const ValidatedBatch& batch, const KvPagePool& pool,
                                        const PlannerConfig& config, const PlanShape& shape);
absl::StatusOr<HostMetadata> PlanEager(const ValidatedBatch& batch, const KvPagePool& pool,
                                       const PlannerConfig& config);

// page_table[i * page_table_stride + j] = req_to_token[rows[i] * row_width +
// j * page_size] / page_size for i < rows.size() and j < ceil(k_lens[i] /
// page_size): the host twin of the device gather. InvalidArgument (naming
// the request) for a row outside the table, a length past the row width or a
// row of the page table past its end.
absl::Status GatherPageTableOnHost(absl::Span<const int32_t> req_to_token, int32_t row_width,
                                   absl::Span<const int32_t> rows, absl::Span<const int32_t> k_lens,
                                   int32_t page_size, int32_t page_table_stride,
                                   absl::Span<int32_t> page_table);

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_METADATA_PLANNER_H_
