// The work plan: how one paged attention launch divides its work among the
// kernel's persistent CTAs ("workers"), and the limits the planner and the
// kernel share. Plain data (no CUDA, Abseil or STL): included by the host
// planner and by the .cu files, so the two cannot disagree.
//
// Vocabulary. A *unit* is (request, KV head, unit tile): up to kUnitRows
// packed query rows (row = query token * group + query head within the group)
// that share every K/V byte of that request and KV head. A unit's visible keys
// (causal / window limits applied) are cut into *segments* at multiples of the
// kernel's key tile; each segment is handed to one worker. A unit with one
// segment writes out/lse directly; a unit cut into several writes one float32
// partial per segment, and a *merge task* combines them (LSE-weighted, in
// partial order, so the result does not depend on which worker finished first).
// Units of at most kFusedMergeMaxRows rows (decode; twice that for units of
// KV head pairs) are merged inside the attention kernel by the worker that
// finishes their last piece; larger units by the separate merge kernel (see
// kFusedMergeMaxRows for why, MergedByAttentionKernel for the rule).
//
// Worker w processes segments [worker_begin[w], worker_begin[w + 1]) in order.
// The planner computes the plan on the host from the live lengths, for eager
// and CUDA-graph launches alike, so a replayed batch gets the same plan (and
// bit-identical output) as the same batch planned eagerly with a shape that
// pairs KV heads alike (kv_heads_per_unit follows the shape's max_q_len: a
// head_dim 64 decode batch pairs eagerly but not in a graph captured for
// longer queries; both are within rounding of each other).
#ifndef ATTENTION_PLANNER_WORK_PLAN_H_
#define ATTENTION_PLANNER_WORK_PLAN_H_

#include <cstdint>
#include <type_traits>

namespace paged_attention {

// Packed query rows of one unit: the kernel's four consumer warps hold 16 rows
// each (mma.sync m16). Units with <= 16 or <= 32 rows split the keys among the
// warps instead, so no warp idles on padding rows.
inline constexpr int32_t kUnitRows = 64;

// Head dims the kernel is built for.
inline constexpr int32_t kSupportedHeadDims[] = {64, 128, 256};
inline constexpr bool IsSupportedHeadDim(int32_t head_dim) {
  return head_dim == 64 || head_dim == 128 || head_dim == 256;
}

// Keys per kernel tile for a head dim: one tile of K plus V is 16 KB
// (64 keys at head_dim 64, 32 at 128, 16 at 256). Segment boundaries are
// multiples of it, so no tile straddles two segments.
inline constexpr int32_t KeysPerTile(int32_t head_dim) { return 4096 / head_dim; }
static_assert(KeysPerTile(64) == 64 && KeysPerTile(128) == 32 && KeysPerTile(256) == 16,
              "16 KB K+V tiles");
static_assert(KeysPerTile(256) % 16 == 0, "a tile is a whole number of mma k16 steps");

// Units of at most this many packed rows are merged by the attention kernel
// itself: the worker that finishes a unit's last piece (MergeTask::arrivals)
// combines the pieces at once, so a split decode needs no second launch. Larger
// units go to the merge kernel, which spreads their rows x pieces over the GPU
// (one CTA merging 64 rows x 30 pieces would take longer than the launch it
// saves).
inline constexpr int32_t kFusedMergeMaxRows = 8;

// Whether a cut unit of `unit_rows` packed rows is merged by the attention
// kernel (else by the merge kernel): the one rule the planner, both kernels
// and the launcher apply. A unit of KV head pairs (kv_heads_per_unit 2, see
// CanPairKvHeads) may have twice the rows: each of its rows merges only its
// own head's half, so 16 of them are the bytes of 8 single-head rows.
inline constexpr int32_t FusedMergeMaxRows(int32_t kv_heads_per_unit) {
  return kFusedMergeMaxRows * kv_heads_per_unit;
}
inline constexpr bool MergedByAttentionKernel(int32_t unit_rows, int32_t kv_heads_per_unit) {
  return unit_rows <= FusedMergeMaxRows(kv_heads_per_unit);
}

// Packed rows of unit `unit_tile` of a request with q_len query tokens.
inline constexpr int32_t UnitRowCount(int32_t q_len, int32_t group, int32_t unit_tile) {
  const int32_t rows = q_len * group - unit_tile * kUnitRows;
  return rows < kUnitRows ? rows : kUnitRows;
}

// KV head pairs. At head_dim 64 a token's row of one KV head is 128 bytes
// of a 1 KB row (8 heads), and a kernel that streams one KV head per CTA
// reads those 128-byte pieces about 5% slower than 256-byte ones (NOTES.md,
// the reader probes). Two adjacent KV heads are one 256-byte run, byte for
// byte a head_dim 128 row of half as many heads, so a decode plan may treat
// heads 2h and 2h + 1 as one unit: KV head `h` of its segments and merge
// tasks names the pair, its packed rows are those of a group twice the size
// (query heads 2h x group .. (2h + 2) x group - 1, the same formula), and
// the head_dim 128 decode kernel runs it, each query in its own head's half
// of a 128-wide row (zeros in the other half: its logits are exact, since
// the other head's keys are finite), each output from its own half. Only
// for units the decode kernel folds and merges by itself
// (MergedByAttentionKernel: <= 2 x kFusedMergeMaxRows rows of a pair), without
// tree masks.
inline constexpr bool CanPairKvHeads(int32_t head_dim, int32_t num_kv_heads, int32_t group,
                                     int32_t max_q_len) {
  return head_dim == 64 && num_kv_heads % 2 == 0 && max_q_len >= 1 &&
         int64_t{max_q_len} * group * 2 <= FusedMergeMaxRows(2);
}

// A plan's units as the partition and the kernel see them: a unit of a KV
// head pair (kv_heads_per_unit 2) is one KV head of half as many, with twice
// the group and twice the head_dim (the 256-byte runs it reads, and the key
// tile of that head_dim).
struct UnitGeometry {
  int32_t num_kv_heads;
  int32_t group;  // packed rows per query token
  int32_t head_dim;
};
inline constexpr UnitGeometry UnitGeometryOf(int32_t num_kv_heads, int32_t group, int32_t head_dim,
                                             int32_t kv_heads_per_unit) {
  return {num_kv_heads / kv_heads_per_unit, group * kv_heads_per_unit,
          head_dim * kv_heads_per_unit};
}

// Keys one tree mask word covers (AttentionMetadata::tree_mask): the last 64
// of a request.
inline constexpr int32_t kTreeMaskKeys = 64;

// Largest GQA group (query heads per KV head) and KV head count the int32
// index arithmetic of plan and kernel is checked for.
inline constexpr int32_t kMaxGroup = 256;
inline constexpr int32_t kMaxKvHeads = 1024;

// One contiguous key range of one unit, processed by one worker. The
// request's lengths ride along, so a worker starts a segment with one load.
struct WorkSegment {
  int32_t request;    // row of the per-request metadata arrays
  int32_t kv_head;    // 0 .. num_kv_heads - 1
  int32_t unit_tile;  // packed rows [unit_tile * kUnitRows, + kUnitRows) of the request
  int32_t key_begin;  // keys [key_begin, key_end) of the request; empty: write zeros
  int32_t key_end;
  int32_t partial;     // -1: write out/lse directly; else the float32 partial slot
  int32_t q_begin;     // cu_seqlens_q[request]
  int32_t q_len;       // query tokens of the request
  int32_t k_len;       // cache_seqlens[request]
  int32_t merge_task;  // the unit's MergeTask when partial >= 0; else -1
  // 1 when every piece of this cut unit is the last segment of its worker
  // (each worker of a one-request decode): no piece's worker has more work
  // after it, so the decode kernel may have all of them wait for the unit's
  // last piece and merge a slice each. 0 otherwise (and for uncut units).
  int32_t merge_by_all;
  int32_t reserved;
};
static_assert(sizeof(WorkSegment) == 48 && std::is_trivially_copyable<WorkSegment>::value,
              "WorkSegment is read as three 16-byte words");

// Member pairs (WorkPlanView::member_pair_offset): where segment `a` of the
// list of member m and segment `b` of the list of member m + `unit_offset`
// of the plan's co-read groups come in a walk over both lists (each in
// dealing order: request, KV head, group, then keys). < 0: `a` first, alone;
// > 0: `b` alone; 0: pieces of one group from the same first key tile (or one
// of them without keys), which the kernel streams once for both.
inline constexpr int MemberPairOrder(const WorkSegment& a, const WorkSegment& b,
                                     int32_t unit_offset, int32_t keys_per_tile) {
  const int32_t a_key[3] = {a.request, a.kv_head, a.unit_tile + unit_offset};
  const int32_t b_key[3] = {b.request, b.kv_head, b.unit_tile};
  for (int i = 0; i < 3; ++i) {
    if (a_key[i] != b_key[i]) return a_key[i] < b_key[i] ? -1 : 1;
  }
  if (a.key_end <= a.key_begin || b.key_end <= b.key_begin) return 0;
  const int32_t a_tile = a.key_begin / keys_per_tile, b_tile = b.key_begin / keys_per_tile;
  return a_tile == b_tile ? 0 : a_tile < b_tile ? -1 : 1;
}

// Combines the partials [first_partial, first_partial + num_partials) of one
// unit into out/lse.
struct MergeTask {
  int32_t request;
  int32_t kv_head;
  int32_t unit_tile;
  int32_t first_partial;
  int32_t num_partials;  // >= 2
  int32_t q_begin;       // cu_seqlens_q[request]
  int32_t q_len;         // query tokens of the request
  // Pieces finished so far, counted by the attention kernel for units it
  // merges itself (kFusedMergeMaxRows): the planner writes 0, the kernel
  // counts atomically and wraps it back to 0 on the last piece, so every
  // launch of a plan finds 0. The one word of a plan a kernel writes: a plan
  // must not run on two streams at once (its workspace must not either).
  int32_t arrivals;
};
static_assert(sizeof(MergeTask) == 32 && std::is_trivially_copyable<MergeTask>::value,
              "MergeTask is read as two 16-byte words");

// Device-side counts of a plan (written by the planner with the arrays), so a
// captured launch reads them at replay time.
enum PlanCounter : int32_t {
  kPlanNumMergeTasks = 0,
  // Query tokens [zero_begin, zero_end) belong to CUDA-graph padding rows:
  // the attention kernel writes zeros to out and -inf to lse there.
  kPlanZeroFillBegin = 1,
  kPlanZeroFillEnd = 2,
  kNumPlanCounters = 4,  // padded to 16 bytes
};

// What the kernels read of a plan. Pointers are host or device like the rest of
// AttentionMetadata. The scalars are capacities (fixed at CUDA-graph capture);
// live counts come from `counters` and worker_begin.
struct WorkPlanView {
  int32_t num_workers = 0;      // CTAs of the attention kernel; worker_begin has num_workers + 1
  int32_t max_segments = 0;     // capacity of `segments`
  int32_t max_merge_tasks = 0;  // capacity of `merge_tasks` (0: no merge step)
  int32_t max_partials = 0;     // float32 partial slots the workspace must hold
  int32_t max_zero_fill_tokens = 0;  // padding query tokens the kernel may zero (graphs)
  // The geometry and mask the plan was made for; the launcher checks them
  // against the call (a plan made for one head_dim or window is wrong for another).
  int32_t num_kv_heads = 0;
  int32_t group = 0;                       // query heads per KV head
  int32_t head_dim = 0;                    // sets the key tile (KeysPerTile)
  int32_t causal = 1;                      // 1: bottom-right causal ranges; 0: all keys
  int32_t window_left = -1;                // causal window the ranges were cut to; -1: none
  const int32_t* worker_begin = nullptr;   // [num_workers + 1] segment offsets
  const WorkSegment* segments = nullptr;   // [max_segments]
  const MergeTask* merge_tasks = nullptr;  // [max_merge_tasks]
  const int32_t* counters = nullptr;       // [kNumPlanCounters], see PlanCounter
  // 2: units are pairs of KV heads (CanPairKvHeads; num_kv_heads and group
  // above are the call's, the units' are num_kv_heads / 2 and 2 x group); 1:
  // one. (Last, so the kernels' offsets of the fields above stay as they were.)
  int32_t kv_heads_per_unit = 1;
  // Eager plans: the live plan's member pairs (PartitionCounts; > 0: workers
  // w and w + member_pair_offset run members m and m + member_pair_unit_offset
  // of the same co-read groups), which lets the launcher run each such pair
  // as one CTA of two consumer warpgroups over one K/V stream
  // (attention/kernel/kernel_traits.cuh, kGroups) when the offset is at least
  // num_workers / 2 (its CTAs cover every worker), else one worker per CTA. A
  // capacity (CUDA-graph capture) leaves them 0: its replays may bring any
  // plan. Both kernels give the same bits, for any offsets (segments that do
  // not pair stream alone).
  int32_t member_pair_offset = 0;
  int32_t member_pair_unit_offset = 0;
};
static_assert(std::is_trivially_copyable<WorkPlanView>::value,
              "WorkPlanView is passed by value to CUDA kernels");

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_WORK_PLAN_H_
