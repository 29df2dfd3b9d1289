// The work partition: which worker (persistent CTA) of the attention kernel
// computes which key range of which unit (work_plan.h explains the terms).
//
//   PartitionConfig config{.num_kv_heads = 8, .group = 4, .head_dim = 128,
//                          .num_workers = 132 * 2};
//   ASSIGN_OR_RETURN(PartitionCounts counts,
//                    PartitionWork(cu_seqlens_q, cache_seqlens, config, buffers));
//
// Why a partition and not a grid. One CTA per (request, KV head) leaves most
// SMs idle for a single long request and lets one 128k request set the time of
// a batch of short ones; a split count per batch (flash-decoding) fixes the
// first but not the second. Here every unit's cost (its key tiles plus a fixed
// overhead) is laid end to end and cut into `num_workers` nearly equal shares,
// so every worker streams about the same number of bytes whatever the length
// mix; a unit is cut at key-tile boundaries only where a share ends inside it,
// and its pieces are merged through their LSEs. A share's end falls anywhere in
// a unit, and pieces of decode units cost the kernel more than their tiles (the
// fused merge's fence, count and merge), so two more plans are scored: whole
// units (one piece each), which may finish sooner when units are short, and
// even pieces (each unit into as many near-equal pieces as it holds average
// shares), which keeps one long request's workers within a tile of each other.
// The partition writes whichever plan's busiest worker ends first by that cost;
// a tie goes to the plan with fewer cuts, whose workers end together. At
// head_dim 128 and 256 it plans KV head 0's units alone and gives each KV head
// a copy of that plan on a block of workers of its own (head lanes), so the
// heads of a request read the same token rows of the pool at the same time.
//
// Deterministic and allocation-free: eager plans and CUDA-graph replays call it
// with the same live lengths and get the same partition, bit for bit.
#ifndef ATTENTION_PLANNER_WORK_PARTITION_H_
#define ATTENTION_PLANNER_WORK_PARTITION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attention/planner/attention_metadata.h"
#include "attention/planner/work_plan.h"

namespace paged_attention {

struct PartitionConfig {
  int32_t num_kv_heads = 0;  // [1, kMaxKvHeads]
  int32_t group = 0;         // query heads per KV head, [1, kMaxGroup]
  int32_t head_dim = 0;      // 64, 128 or 256: sets the key tile
  // The three fields above are the units' (UnitGeometryOf): 2 for plans of KV
  // head pairs, whose cut units of up to twice kFusedMergeMaxRows rows the
  // attention kernel merges (MergedByAttentionKernel); 1 otherwise.
  int32_t kv_heads_per_unit = 1;
  int32_t num_workers = 0;  // CTAs the kernel runs: SMs x CTAs per SM
  // > 0: cut every unit into this many segments (fewer when it has fewer key
  // tiles), ignoring balance: for tests and batch-invariant serving. 0: balance.
  int32_t pinned_splits = 0;
  MaskMode mask = MaskMode::kCausal;
  int32_t window_left = -1;  // causal only; -1: no window
};

// Where the partition goes: caller-owned, sized with the Max* functions below.
struct PartitionBuffers {
  absl::Span<int32_t> worker_begin;  // [num_workers + 1]
  absl::Span<WorkSegment> segments;
  absl::Span<MergeTask> merge_tasks;
};

struct PartitionCounts {
  int32_t num_units = 0;
  int32_t num_segments = 0;
  int32_t num_merge_tasks = 0;
  int32_t num_partials = 0;
  int32_t num_active_workers = 0;  // workers with at least one segment
  int32_t worker_span = 0;  // 1 + the last worker with a segment: the grid an eager launch needs
  int64_t total_cost = 0;   // key tiles + per-segment overhead, all workers
  int64_t max_worker_cost = 0;  // the busiest worker's share (balance = total / workers / max)
  // Member pairs. > 0: worker w < member_pair_offset and worker w +
  // member_pair_offset run members m and m + member_pair_unit_offset (unit
  // tiles) of the same co-read groups, piece for piece from the same first
  // key tile, and no worker past 2 x member_pair_offset has a segment. The
  // kernel may then run each such pair of workers as the two consumer
  // warpgroups of one CTA over one K/V stream (WorkPlanView). 0: none.
  int32_t member_pair_offset = 0;
  int32_t member_pair_unit_offset = 0;
};

// InvalidArgument naming the PartitionConfig field for a value out of range.
absl::Status ValidatePartitionConfig(const PartitionConfig& config);

// Capacities that hold the partition of any batch of at most `max_batch_size`
// requests of at most `max_q_len` query tokens (CUDA-graph capture sizes its
// buffers with them). Overflow-safe (int64); the config must be valid.
int64_t MaxUnits(const PartitionConfig& config, int64_t max_batch_size, int64_t max_q_len);
int64_t MaxSegments(const PartitionConfig& config, int64_t max_units);
int64_t MaxMergeTasks(const PartitionConfig& config, int64_t max_units);
int64_t MaxPartials(const PartitionConfig& config, int64_t max_units);

// Partitions the live batch given by cu_seqlens_q ([batch + 1]) and
// cache_seqlens ([batch]). Writes worker_begin[0 .. num_workers] and the
// segments and merge tasks it reports. InvalidArgument for a bad config or
// inconsistent lengths (naming the request); ResourceExhausted naming the
// buffer when one is too small. Host only; allocates nothing.
absl::StatusOr<PartitionCounts> PartitionWork(absl::Span<const int32_t> cu_seqlens_q,
                                              absl::Span<const int32_t> cache_seqlens,
                                              const PartitionConfig& config,
                                              const PartitionBuffers& buffers);

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_WORK_PARTITION_H_
