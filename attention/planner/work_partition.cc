#include "attention/planner/work_partition.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/status_macros.h"

namespace paged_attention {
namespace {

// A segment's fixed cost in key tiles: its query load, epilogue and (when cut)
// the partial write and merge read. It keeps many tiny units from piling up on
// one worker and stops cuts that save less than they cost.
constexpr int64_t kSegmentOverheadTiles = 1;
// Below this many tiles per worker the kernel is latency-bound: use fewer
// workers rather than cut the keys finer.
constexpr int64_t kMinTilesPerWorker = 2;
// What a piece of a cut unit that the attention kernel merges itself
// (MergedByAttentionKernel: decode) costs beyond its tiles and the segment
// overhead, in key tiles of kernel time: the release fence and arrival count
// after its partial write, and the merge on the piece that finishes last. On
// the H200 (NOTES.md, the per-CTA timeline of b128 1k decode), workers with
// three whole units and two such pieces (124 tiles) finished ~5.5 us after
// workers with four whole units (128 tiles).
constexpr int64_t kFusedPieceTiles = 4;
// Even pieces win when their busiest worker is within kEvenPiecesSlackPercent
// of the best plan's. The model counts only the busiest worker, but on the H200
// a plan whose workers run one piece each and end together beat plans the
// model put up to 3% ahead, whose workers carry a second segment (a boundary,
// and a unit merged by its last piece instead of by all): 32/32 b1 128k
// decode 2%, draft-extend b8 32k 2-3%, q64 verify b1 4%, tree q64 b1 7%
// (NOTES.md, `EV`).
constexpr int64_t kEvenPiecesSlackPercent = 3;

// The keys one unit (request, unit tile) may see, as a key range and the key
// tiles that cover it (the same for every KV head).
struct UnitKeys {
  int32_t key_begin = 0;
  int32_t key_end = 0;
  int32_t first_tile = 0;
  int32_t num_tiles = 0;  // 0: no visible key; the unit writes zeros
};

// log2 of the key tile (16, 32 or 64 keys). Every walk of the batch maps each
// unit's key range to tiles; as 64-bit divisions that was ~40% of
// PartitionWork's host time (perf over planner_benchmark's BM_PartitionWork).
int TileShift(int32_t head_dim) { return head_dim == 64 ? 6 : head_dim == 128 ? 5 : 4; }
static_assert(KeysPerTile(64) == 1 << 6 && KeysPerTile(128) == 1 << 5 && KeysPerTile(256) == 1 << 4,
              "TileShift matches KeysPerTile");

// Keys [lo, hi) (lo < hi) and the key tiles that cover them.
UnitKeys KeyRange(int64_t lo, int64_t hi, int tile_shift) {
  UnitKeys keys;
  keys.key_begin = static_cast<int32_t>(lo);
  keys.key_end = static_cast<int32_t>(hi);
  keys.first_tile = static_cast<int32_t>(lo >> tile_shift);
  keys.num_tiles =
      static_cast<int32_t>(((hi + (int64_t{1} << tile_shift) - 1) >> tile_shift) - keys.first_tile);
  return keys;
}

UnitKeys VisibleKeys(const PartitionConfig& config, int64_t q_len, int64_t k_len, int64_t rows,
                     int64_t unit_tile) {
  int64_t lo = 0, hi = k_len;
  if (config.mask == MaskMode::kCausal) {
    // rows < 2^31 (CheckLengths), so the divisions by the group are 32-bit.
    const int32_t row_lo = static_cast<int32_t>(unit_tile * kUnitRows);
    const int64_t row_hi = std::min<int64_t>(rows, row_lo + kUnitRows);
    // A request's last unit ends at its last query token: no division.
    const int64_t last_token =
        row_hi == rows ? q_len - 1 : static_cast<int32_t>(row_hi - 1) / config.group;
    const int64_t diagonal_offset = k_len - q_len;  // query j's last key: j + offset
    hi = std::min<int64_t>(k_len, last_token + diagonal_offset + 1);
    if (config.window_left >= 0) {
      const int64_t first_token = row_lo / config.group;
      lo = std::max<int64_t>(0, first_token + diagonal_offset - config.window_left);
    }
  }
  if (hi <= lo) return UnitKeys{};
  return KeyRange(lo, hi, TileShift(config.head_dim));
}

// Units of one (request, KV head) read the same K/V. Up to this many of them
// (consecutive unit tiles) form a *co-read group*: the partition deals the
// group's key range once and gives each member the same pieces on its own
// worker, so the members' workers read each K/V tile at about the same time
// and DRAM serves it once (L2 the rest). Dealt back to back on one worker
// instead, a 64-row unit's re-read came a whole unit later, long after L2
// had dropped the tile: q64 verify read 4.30 GB from DRAM for 1.07 GB of K/V
// (NOTES.md).
constexpr int32_t kMaxCoReadWidth = 4;
// Co-reading is used only when at most this fraction of the workers' time is
// idle members (groups with fewer members than the width, or members that see
// fewer keys than their group).
constexpr int64_t kMaxIdleEighths = 1;

// Up to `width` consecutive unit tiles of one (request, KV head) and the key
// tiles their visible ranges cover together.
struct UnitGroup {
  int32_t request = 0;
  int32_t kv_head = 0;
  int32_t first_unit_tile = 0;
  int32_t members = 0;
  UnitKeys keys;                          // the union of the members' ranges
  UnitKeys member_keys[kMaxCoReadWidth];  // [members]: each member's own range
};

UnitKeys UnionOf(const UnitKeys& a, const UnitKeys& b, int tile_shift) {
  if (a.num_tiles == 0) return b;
  if (b.num_tiles == 0) return a;
  return KeyRange(std::min(a.key_begin, b.key_begin), std::max(a.key_end, b.key_end), tile_shift);
}

// Makes `group` the co-read group of `width` of one request whose first
// member is unit tile `first` (request and kv_head are the caller's), with
// each member's keys, which the plans of members then read instead of
// computing them again. In place, and inlined: on planner_benchmark, a fresh
// group per call (its member array zeroed) made decode plans 20% slower, and
// the call out of line 3%.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void SetMembers(const PartitionConfig& config, int64_t q_len,
                                                    int64_t k_len, int64_t rows, int64_t unit_tiles,
                                                    int32_t width, int64_t first,
                                                    UnitGroup& group) {
  group.first_unit_tile = static_cast<int32_t>(first);
  group.members = static_cast<int32_t>(std::min<int64_t>(width, unit_tiles - first));
  if (group.members == 0) {
    group.keys = UnitKeys{};
    return;
  }
  group.member_keys[0] = VisibleKeys(config, q_len, k_len, rows, first);
  group.keys = group.member_keys[0];
  for (int32_t m = 1; m < group.members; ++m) {
    group.member_keys[m] = VisibleKeys(config, q_len, k_len, rows, first + m);
    group.keys = UnionOf(group.keys, group.member_keys[m], TileShift(config.head_dim));
  }
}

// Calls fn(group, kv_heads) once for every distinct co-read group of `width`
// (1: every unit alone) of the batch: every KV head of a request sees the same
// keys, so each (request, first unit tile) stands for `kv_heads` groups, one
// per head (config.num_kv_heads, or 1 when the walk is of KV head
// `only_kv_head` alone, as ForEachGroup's). For sums over the groups, in no
// particular order; the group's kv_head is 0.
template <typename Fn>
void ForEachDistinctGroup(absl::Span<const int32_t> cu_seqlens_q,
                          absl::Span<const int32_t> cache_seqlens, const PartitionConfig& config,
                          int32_t width, Fn&& fn, int32_t only_kv_head = -1) {
  const int64_t kv_heads = only_kv_head >= 0 ? 1 : config.num_kv_heads;
  UnitGroup group;
  for (size_t request = 0; request < cache_seqlens.size(); ++request) {
    const int64_t q_len = int64_t{cu_seqlens_q[request + 1]} - cu_seqlens_q[request];
    const int64_t rows = q_len * config.group;
    const int64_t unit_tiles = CeilDiv(rows, int64_t{kUnitRows});
    group.request = static_cast<int32_t>(request);
    for (int64_t first = 0; first < unit_tiles; first += width) {
      SetMembers(config, q_len, cache_seqlens[request], rows, unit_tiles, width, first, group);
      fn(group, kv_heads);
    }
  }
}

// Calls fn(group) for every co-read group of `width` (1: every unit alone), in
// the order workers take them: request, then KV head, then unit tile; of KV
// head `only_kv_head` alone when it is >= 0 (head lanes). An fn that returns
// bool stops the walk by returning false.
template <typename Fn>
void ForEachGroup(absl::Span<const int32_t> cu_seqlens_q, absl::Span<const int32_t> cache_seqlens,
                  const PartitionConfig& config, int32_t width, Fn&& fn,
                  int32_t only_kv_head = -1) {
  const int32_t first_kv_head = only_kv_head >= 0 ? only_kv_head : 0;
  const int32_t end_kv_head = only_kv_head >= 0 ? only_kv_head + 1 : config.num_kv_heads;
  UnitGroup group;
  for (size_t request = 0; request < cache_seqlens.size(); ++request) {
    const int64_t q_len = int64_t{cu_seqlens_q[request + 1]} - cu_seqlens_q[request];
    const int64_t k_len = cache_seqlens[request];
    const int64_t rows = q_len * config.group;
    const int64_t unit_tiles = CeilDiv(rows, int64_t{kUnitRows});
    // Every KV head sees the same keys, so a request with one group per head
    // (decode, and verify up to width x 64 rows) computes it once.
    const bool one_group = unit_tiles <= width;
    group.request = static_cast<int32_t>(request);
    if (one_group) SetMembers(config, q_len, k_len, rows, unit_tiles, width, 0, group);
    for (int32_t kv_head = first_kv_head; kv_head < end_kv_head; ++kv_head) {
      for (int64_t first = 0; first < unit_tiles; first += width) {
        if (!one_group) SetMembers(config, q_len, k_len, rows, unit_tiles, width, first, group);
        group.kv_head = kv_head;
        if constexpr (std::is_same_v<decltype(fn(group)), bool>) {
          if (!fn(group)) return;
        } else {
          fn(group);
        }
      }
    }
  }
}

// Appends segments and merge tasks, checking capacities, and scores the plan
// as it goes. A writer made without `write` only scores: the partition compares
// candidate plans by their busiest worker's time before it writes one.
class PlanWriter {
 public:
  PlanWriter(const PartitionConfig& config, const PartitionBuffers& buffers,
             absl::Span<const int32_t> cu_seqlens_q, absl::Span<const int32_t> cache_seqlens,
             bool write)
      : config_(config),
        buffers_(buffers),
        cu_seqlens_q_(cu_seqlens_q),
        cache_seqlens_(cache_seqlens),
        write_(write) {}

  // Starts worker `worker`'s segment list (workers start in increasing order;
  // workers skipped in between get empty lists).
  void BeginWorker(int32_t worker) {
    if (write_) {
      for (int32_t w = next_worker_; w <= worker; ++w) {
        buffers_.worker_begin[w] = counts_.num_segments;
      }
    }
    next_worker_ = worker + 1;
    worker_ = worker;
    worker_cost_ = 0;
    worker_time_ = 0;
  }

  // Tiles [tile_lo, tile_hi) of `keys` (clipped to the visible range) for the
  // current worker; partial -1 writes directly.
  absl::Status AddSegment(int32_t request, int32_t kv_head, int32_t unit_tile, const UnitKeys& keys,
                          int64_t tile_lo, int64_t tile_hi, int32_t partial) {
    const int32_t q_begin = cu_seqlens_q_[request];
    const int32_t q_len = cu_seqlens_q_[request + 1] - q_begin;
    const int64_t cost = tile_hi - tile_lo + kSegmentOverheadTiles;
    const bool fused_piece =
        partial >= 0 && MergedByAttentionKernel(UnitRowCount(q_len, config_.group, unit_tile),
                                                config_.kv_heads_per_unit);
    worker_cost_ += cost;
    worker_time_ += cost + (fused_piece ? kFusedPieceTiles : 0);
    counts_.total_cost += cost;
    counts_.max_worker_cost = std::max(counts_.max_worker_cost, worker_cost_);
    max_worker_time_ = std::max(max_worker_time_, worker_time_);
    if (worker_cost_ == cost) ++counts_.num_active_workers;
    counts_.worker_span = worker_ + 1;
    if (!write_) {
      ++counts_.num_segments;
      return absl::OkStatus();
    }
    if (counts_.num_segments >= static_cast<int64_t>(buffers_.segments.size())) {
      return absl::ResourceExhaustedError(
          absl::StrCat("work plan segments: capacity ", buffers_.segments.size(),
                       " is too small (full at request ", request, ")"));
    }
    WorkSegment& segment = buffers_.segments[counts_.num_segments++];
    const int tile_shift = TileShift(config_.head_dim);
    segment.request = request;
    segment.kv_head = kv_head;
    segment.unit_tile = unit_tile;
    segment.key_begin = 0;
    segment.key_end = 0;
    if (keys.num_tiles > 0) {
      segment.key_begin = static_cast<int32_t>(
          std::max<int64_t>(keys.key_begin, (keys.first_tile + tile_lo) << tile_shift));
      segment.key_end = static_cast<int32_t>(
          std::min<int64_t>(keys.key_end, (keys.first_tile + tile_hi) << tile_shift));
    }
    segment.partial = partial;
    segment.q_begin = q_begin;
    segment.q_len = q_len;
    segment.k_len = cache_seqlens_[request];
    // A cut unit's merge task is appended right after its last segment.
    segment.merge_task = partial >= 0 ? counts_.num_merge_tasks : -1;
    segment.merge_by_all = 0;  // set by Finish once every worker's list is known
    segment.reserved = 0;
    return absl::OkStatus();
  }

  int32_t NewPartial() { return counts_.num_partials++; }

  absl::Status AddMerge(int32_t request, int32_t kv_head, int32_t unit_tile,
                        int32_t first_partial) {
    if (!write_) {
      ++counts_.num_merge_tasks;
      return absl::OkStatus();
    }
    if (counts_.num_merge_tasks >= static_cast<int64_t>(buffers_.merge_tasks.size())) {
      return absl::ResourceExhaustedError(
          absl::StrCat("work plan merge tasks: capacity ", buffers_.merge_tasks.size(),
                       " is too small (full at request ", request, ")"));
    }
    MergeTask& task = buffers_.merge_tasks[counts_.num_merge_tasks++];
    task.request = request;
    task.kv_head = kv_head;
    task.unit_tile = unit_tile;
    task.first_partial = first_partial;
    task.num_partials = counts_.num_partials - first_partial;
    task.q_begin = cu_seqlens_q_[request];
    task.q_len = cu_seqlens_q_[request + 1] - task.q_begin;
    task.arrivals = 0;
    return absl::OkStatus();
  }

  // Workers [from, num_workers] get empty lists; marks the cut units whose
  // pieces all end their workers' lists (WorkSegment::merge_by_all); returns
  // the counts.
  PartitionCounts Finish(int32_t from) {
    if (!write_) return counts_;
    for (int32_t w = from; w <= config_.num_workers; ++w) {
      buffers_.worker_begin[w] = counts_.num_segments;
    }
    absl::Span<WorkSegment> segments = buffers_.segments.subspan(0, counts_.num_segments);
    for (int32_t w = 0; w < config_.num_workers; ++w) {
      const int32_t end = buffers_.worker_begin[w + 1];
      if (end > buffers_.worker_begin[w]) segments[end - 1].merge_by_all = 1;  // for now: "last"
    }
    // A cut unit's pieces are consecutive segments (its merge task follows
    // the last); a unit qualifies when all num_partials of them are last.
    for (size_t s = 0; s < segments.size();) {
      size_t e = s + 1;
      const int32_t task = segments[s].merge_task;
      while (task >= 0 && e < segments.size() && segments[e].merge_task == task) ++e;
      bool all_last =
          task >= 0 && static_cast<int64_t>(e - s) == buffers_.merge_tasks[task].num_partials;
      for (size_t i = s; i < e; ++i) all_last = all_last && segments[i].merge_by_all == 1;
      for (size_t i = s; i < e; ++i) segments[i].merge_by_all = all_last ? 1 : 0;
      s = e;
    }
    return counts_;
  }

  PartitionCounts& counts() { return counts_; }

  // The busiest worker's kernel time so far, in key tiles: its tiles,
  // kSegmentOverheadTiles per segment and kFusedPieceTiles per piece of a unit
  // the attention kernel merges.
  int64_t max_worker_time() const { return max_worker_time_; }

 private:
  const PartitionConfig& config_;
  const PartitionBuffers& buffers_;
  absl::Span<const int32_t> cu_seqlens_q_;
  absl::Span<const int32_t> cache_seqlens_;
  const bool write_;
  PartitionCounts counts_;
  int32_t worker_ = 0;
  int32_t next_worker_ = 0;  // the first worker whose list has not begun
  int64_t worker_cost_ = 0;
  int64_t worker_time_ = 0;
  int64_t max_worker_time_ = 0;
};

// One unit's segments of a dealt group, piece by piece as the dealing hands
// out the group's key tiles: member `member`'s unit (its own keys, where they
// start among the group's tiles), or with member < 0 the group as one unit
// with the union of its members' keys (scoring). Pieces go to the writer's
// current worker; a unit of more than one piece gets its merge task (Finish).
class UnitPieces {
 public:
  ABSL_ATTRIBUTE_ALWAYS_INLINE UnitPieces(PlanWriter& writer, const UnitGroup& group,
                                          int32_t member)
      : writer_(writer),
        group_(group),
        writes_unit_(member < group.members),
        unit_tile_(group.first_unit_tile + std::max(member, 0)),
        keys_(member < 0 || !writes_unit_ ? group.keys : group.member_keys[member]),
        offset_(keys_.num_tiles > 0 ? keys_.first_tile - group.keys.first_tile : 0),
        first_partial_(writer.counts().num_partials) {}

  // Group tiles [lo, hi) on the current worker: the unit's part of them
  // (none for a member the group lacks).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Add(int64_t lo, int64_t hi) {
    if (!writes_unit_) return absl::OkStatus();
    if (keys_.num_tiles == 0) {  // no visible key: one segment that writes zeros
      if (emitted_) return absl::OkStatus();
      emitted_ = true;
      return writer_.AddSegment(group_.request, group_.kv_head, unit_tile_, keys_, 0, 0, -1);
    }
    const int64_t begin = std::max(lo, offset_) - offset_;
    const int64_t end = std::min<int64_t>(hi, offset_ + keys_.num_tiles) - offset_;
    if (begin >= end) return absl::OkStatus();
    if (!emitted_) split_ = end < keys_.num_tiles;  // more pieces follow: merged
    emitted_ = true;
    return writer_.AddSegment(group_.request, group_.kv_head, unit_tile_, keys_, begin, end,
                              split_ ? writer_.NewPartial() : -1);
  }

  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Finish() {
    if (!split_) return absl::OkStatus();
    return writer_.AddMerge(group_.request, group_.kv_head, unit_tile_, first_partial_);
  }

 private:
  PlanWriter& writer_;
  const UnitGroup& group_;
  const bool writes_unit_;
  const int32_t unit_tile_;
  const UnitKeys keys_;
  const int64_t offset_;
  const int32_t first_partial_;
  bool emitted_ = false;
  bool split_ = false;
};

// A co-read plan's dealing, kept from the walk that writes its first member
// so that the other members' units are written from it without walking the
// batch again: each group, and the group tiles [lo, hi) dealt to each group
// worker, in dealing order.
struct DealtPiece {
  int32_t worker;  // group worker
  int64_t lo, hi;
};
struct DealtGroups {
  std::vector<UnitGroup> groups;
  std::vector<size_t> pieces_end;  // [groups]: where each group's pieces end
  std::vector<DealtPiece> pieces;
};

absl::Status CheckLengths(absl::Span<const int32_t> cu_seqlens_q,
                          absl::Span<const int32_t> cache_seqlens, int32_t group) {
  if (cu_seqlens_q.size() != cache_seqlens.size() + 1) {
    return absl::InvalidArgumentError(absl::StrCat("cu_seqlens_q has ", cu_seqlens_q.size(),
                                                   " entries for ", cache_seqlens.size(),
                                                   " requests (need requests + 1)"));
  }
  if (cu_seqlens_q[0] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cu_seqlens_q[0] = ", cu_seqlens_q[0], " is negative"));
  }
  constexpr int64_t kMaxRows = std::numeric_limits<int32_t>::max() - kUnitRows;
  for (size_t i = 0; i < cache_seqlens.size(); ++i) {
    const int64_t q_len = int64_t{cu_seqlens_q[i + 1]} - cu_seqlens_q[i];
    if (q_len < 0 || q_len * group > kMaxRows) {
      return absl::InvalidArgumentError(absl::StrCat("request ", i, ": ", q_len,
                                                     " query tokens x group ", group,
                                                     " is outside [0, ", kMaxRows, "] rows"));
    }
    if (cache_seqlens[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("request ", i, ": cache_seqlens = ", cache_seqlens[i], " is negative"));
    }
  }
  return absl::OkStatus();
}

// Where worker w's share of the cost line ends when `planned_cost` is dealt to
// `workers` workers: cumulative, so rounding never piles up on one worker.
int64_t ShareEnd(int64_t planned_cost, int32_t workers, int32_t w) {
  return planned_cost * (w + 1) / workers;
}

// Whether a piece of `cost` that follows `assigned` cost belongs past the
// share that ends at cumulative cost `share_end`: its middle lies beyond it.
bool MiddlePastShare(int64_t assigned, int64_t cost, int64_t share_end) {
  return assigned + cost / 2 >= share_end;
}

// Head lanes. The pool keeps a token's KV heads side by side (a 2 KB row at 8
// heads x 128 dims) and every KV head of a request sees the same keys, so the
// partition deals KV head 0's units alone, over num_workers / num_kv_heads
// head-0 workers, and runs head h of head-0 worker g's segments on worker
// h x span + g (span: the head-0 workers in use): the workers of one
// request's heads read the same token rows at the same time, whatever the
// batch. Dealt by request, then head, a worker ran several heads of one
// request back to back, so about four times as many requests' pages were
// read at once: on the H200 the decode kernel's loads waited 9% longer (2.33
// against 2.14 us, per-tile timeline) and b128 1k ran 3% behind b32 4k, which
// reads the same bytes. With head lanes b128 1k ran 2.2% faster, 32/32
// decode of several units per worker 1.5%, b1 4k warm 19% (each head's
// pieces alone on their workers), plans of one unit per worker as before
// (NOTES.md, `HL`, `HL2`). Heads in blocks of `span` workers,
// not side by side in the worker order: a head-0 worker left idle then idles
// one worker every `span`, spread over the GPU as the dealing by request
// spreads them; eight idle side by side made b32 16k 1.2% slower (`HL`'s
// first form). A short plan still takes the first workers only. Used when it
// idles at most 1 / kMaxIdleLaneWorkersInverse of the workers (num_workers %
// num_kv_heads), and not beside co-read groups (whose members already deal
// side by side) or pinned splits, nor at head_dim 64: there head lanes made
// decode b32 16k 4.6% and verify b16 q8 8k 2.6% slower (`HL2`; its token rows
// are 1 KB, and the two CTAs of an SM read heads h and h + 4 of the same rows;
// why that costs was not measured), while head_dim 256 ran as before.
constexpr int32_t kMaxIdleLaneWorkersInverse = 16;

int32_t HeadLanes(const PartitionConfig& config, int32_t width) {
  const int32_t heads = config.num_kv_heads;
  if (heads == 1 || width > 1 || config.pinned_splits > 0 || config.num_workers < heads ||
      config.head_dim < 128) {
    return 1;
  }
  const int32_t idle = config.num_workers % heads;
  return int64_t{idle} * kMaxIdleLaneWorkersInverse <= config.num_workers ? heads : 1;
}

// Turns the plan of KV head 0 in `buffers` (`head0`: its counts, over head-0
// workers 0 .. head0.worker_span - 1) into every head's: head h's copy of it
// follows head h - 1's, on workers h x span .. (h + 1) x span - 1, with head
// h's partials and merge tasks after head h - 1's. Head 0's plan stays where
// it is and the copies land past it, so nothing is overwritten before it is
// read. merge_by_all carries over: whether a unit's pieces all end their
// workers' lists is the same for every head.
absl::StatusOr<PartitionCounts> SpreadOverHeadLanes(const PartitionConfig& config,
                                                    const PartitionBuffers& buffers,
                                                    const PartitionCounts& head0, int32_t lanes) {
  const int64_t segments = int64_t{head0.num_segments} * lanes;
  const int64_t merge_tasks = int64_t{head0.num_merge_tasks} * lanes;
  if (segments > static_cast<int64_t>(buffers.segments.size())) {
    return absl::ResourceExhaustedError(
        absl::StrCat("work plan segments: capacity ", buffers.segments.size(),
                     " is too small (the plan has ", segments, ")"));
  }
  if (merge_tasks > static_cast<int64_t>(buffers.merge_tasks.size())) {
    return absl::ResourceExhaustedError(
        absl::StrCat("work plan merge tasks: capacity ", buffers.merge_tasks.size(),
                     " is too small (the plan has ", merge_tasks, ")"));
  }
  const int32_t segments0 = head0.num_segments;
  const int32_t tasks0 = head0.num_merge_tasks;
  const int32_t partials0 = head0.num_partials;
  const int32_t span = head0.worker_span;
  for (int32_t h = 1; h < lanes; ++h) {
    for (int32_t t = 0; t < tasks0; ++t) {
      MergeTask& task = buffers.merge_tasks[h * tasks0 + t];
      task = buffers.merge_tasks[t];
      task.kv_head = h;
      task.first_partial += h * partials0;
    }
    for (int32_t i = 0; i < segments0; ++i) {
      WorkSegment& segment = buffers.segments[h * segments0 + i];
      segment = buffers.segments[i];
      segment.kv_head = h;
      if (segment.partial >= 0) segment.partial += h * partials0;
      if (segment.merge_task >= 0) segment.merge_task += h * tasks0;
    }
    // Reads entries < span; writes entries >= span (the one at span, head 1's
    // first, is head 0's end: segments0 either way).
    for (int32_t g = 0; g < span; ++g) {
      buffers.worker_begin[h * span + g] = h * segments0 + buffers.worker_begin[g];
    }
  }
  for (int32_t w = span * lanes; w <= config.num_workers; ++w) {
    buffers.worker_begin[w] = static_cast<int32_t>(segments);
  }
  PartitionCounts counts = head0;
  counts.num_segments = static_cast<int32_t>(segments);
  counts.num_merge_tasks = static_cast<int32_t>(merge_tasks);
  counts.num_partials = partials0 * lanes;
  counts.num_active_workers = head0.num_active_workers * lanes;
  counts.worker_span = span * lanes;
  counts.total_cost = head0.total_cost * lanes;
  return counts;
}

// How a candidate plan cuts units.
struct CutRule {
  enum Kind {
    kAtShareEnds,  // where a worker's share of the cost line ends inside a unit
    kFixedPieces,  // every unit into `pieces` near-equal pieces (fewer if it has fewer tiles)
    kEvenPieces,   // every unit into as many near-equal pieces as it holds average shares
  };
  Kind kind = kAtShareEnds;
  int32_t pieces = 0;  // kFixedPieces
};

// A plan's counts and its busiest worker's time (PlanWriter::max_worker_time);
// `written`: the plan is in the buffers, whole.
struct ScoredPlan {
  PartitionCounts counts;
  int64_t max_worker_time = 0;
  bool written = false;
};

}  // namespace

absl::Status ValidatePartitionConfig(const PartitionConfig& config) {
  auto in_range = [](const char* field, int64_t value, int64_t lo, int64_t hi) -> absl::Status {
    if (value >= lo && value <= hi) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("PartitionConfig.", field, " = ", value, " is outside [", lo, ", ", hi, "]"));
  };
  RETURN_IF_ERROR(in_range("num_kv_heads", config.num_kv_heads, 1, kMaxKvHeads));
  RETURN_IF_ERROR(in_range("group", config.group, 1, kMaxGroup));
  if (!IsSupportedHeadDim(config.head_dim)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PartitionConfig.head_dim = ", config.head_dim, " is not 64, 128 or 256"));
  }
  RETURN_IF_ERROR(in_range("kv_heads_per_unit", config.kv_heads_per_unit, 1, 2));
  RETURN_IF_ERROR(in_range("num_workers", config.num_workers, 1, 1 << 20));
  RETURN_IF_ERROR(in_range("pinned_splits", config.pinned_splits, 0, 1 << 16));
  if (config.mask != MaskMode::kCausal && config.mask != MaskMode::kNonCausal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PartitionConfig.mask = ", static_cast<int32_t>(config.mask), " is not a MaskMode"));
  }
  return in_range("window_left", config.window_left, -1, std::numeric_limits<int32_t>::max());
}

int64_t MaxUnits(const PartitionConfig& config, int64_t max_batch_size, int64_t max_q_len) {
  return max_batch_size * config.num_kv_heads *
         CeilDiv(max_q_len * config.group, int64_t{kUnitRows});
}

int64_t MaxSegments(const PartitionConfig& config, int64_t max_units) {
  // Balanced: every cut adds one segment, and a cut ends a worker's share.
  if (config.pinned_splits == 0) return max_units + config.num_workers - 1;
  return max_units * config.pinned_splits;
}

int64_t MaxMergeTasks(const PartitionConfig& config, int64_t max_units) {
  // Balanced: a unit is merged only if a worker's share ends inside it.
  if (config.pinned_splits == 0) return config.num_workers - 1;
  return config.pinned_splits > 1 ? max_units : 0;
}

int64_t MaxPartials(const PartitionConfig& config, int64_t max_units) {
  // Balanced: a unit cut c times has c + 1 <= 2c pieces.
  if (config.pinned_splits == 0) return 2 * (int64_t{config.num_workers} - 1);
  return config.pinned_splits > 1 ? max_units * config.pinned_splits : 0;
}

absl::StatusOr<PartitionCounts> PartitionWork(absl::Span<const int32_t> cu_seqlens_q,
                                              absl::Span<const int32_t> cache_seqlens,
                                              const PartitionConfig& config,
                                              const PartitionBuffers& buffers) {
  RETURN_IF_ERROR(ValidatePartitionConfig(config));
  RETURN_IF_ERROR(CheckLengths(cu_seqlens_q, cache_seqlens, config.group));
  if (buffers.worker_begin.size() < static_cast<size_t>(config.num_workers) + 1) {
    return absl::ResourceExhaustedError(
        absl::StrCat("work plan worker_begin: ", buffers.worker_begin.size(), " entries for ",
                     config.num_workers, " workers (need workers + 1)"));
  }

  // Units alone: their cost, and the most unit tiles one (request, KV head) has.
  int64_t total_cost = 0, longest_group_tiles = 0, most_unit_tiles = 0;
  int32_t num_units = 0;
  for (size_t i = 0; i < cache_seqlens.size(); ++i) {
    const int64_t rows = (int64_t{cu_seqlens_q[i + 1]} - cu_seqlens_q[i]) * config.group;
    most_unit_tiles = std::max(most_unit_tiles, CeilDiv(rows, int64_t{kUnitRows}));
  }
  ForEachDistinctGroup(
      cu_seqlens_q, cache_seqlens, config, 1, [&](const UnitGroup& group, int64_t kv_heads) {
        total_cost += (group.keys.num_tiles + kSegmentOverheadTiles) * kv_heads;
        longest_group_tiles = std::max<int64_t>(longest_group_tiles, group.keys.num_tiles);
        num_units += static_cast<int32_t>(kv_heads);
      });
  // Co-read groups (kMaxCoReadWidth) when units share K/V and few members
  // would idle: a group's workers are busy for its whole range, members or not.
  // From here on the cost line is the groups' (one unit each when width is 1),
  // dealt to workers / width group workers; group worker g's member m runs on
  // worker m * workers + g.
  int32_t width = 1;
  if (config.pinned_splits == 0 && most_unit_tiles > 1) {
    const int32_t candidate = static_cast<int32_t>(
        std::min<int64_t>({kMaxCoReadWidth, most_unit_tiles, config.num_workers}));
    int64_t group_cost = 0, longest_candidate_tiles = 0;
    ForEachDistinctGroup(cu_seqlens_q, cache_seqlens, config, candidate,
                         [&](const UnitGroup& group, int64_t kv_heads) {
                           group_cost += (group.keys.num_tiles + kSegmentOverheadTiles) * kv_heads;
                           longest_candidate_tiles =
                               std::max<int64_t>(longest_candidate_tiles, group.keys.num_tiles);
                         });
    const int64_t occupied = int64_t{candidate} * group_cost;
    if ((occupied - total_cost) * 8 <= occupied * kMaxIdleEighths) {
      width = candidate;
      total_cost = group_cost;
      longest_group_tiles = longest_candidate_tiles;
    }
  }
  // Head lanes (HeadLanes): from here on the walks see KV head 0's units only,
  // which cost 1 / lanes of every head's (each head sees the same keys).
  const int32_t lanes = HeadLanes(config, width);
  const int32_t walk_kv_head = lanes > 1 ? 0 : -1;
  if (lanes > 1) total_cost /= lanes;
  const int32_t max_workers = config.num_workers / (width * lanes);
  int32_t workers = max_workers;
  if (config.pinned_splits == 0) {
    workers = static_cast<int32_t>(
        std::clamp<int64_t>(CeilDiv(total_cost, kMinTilesPerWorker), 1, max_workers));
  }
  // Worker w's share ends at cumulative cost ShareEnd(w) of the cost line;
  // the last takes the rest. A share that ends inside a unit cuts it, and the
  // extra piece costs one more overhead: count one per share boundary, or the
  // last worker would collect all of them.
  const int64_t planned_cost = total_cost + int64_t{workers - 1} * kSegmentOverheadTiles;
  const int64_t per_worker = planned_cost / workers;
  // A worker may run this far past its share rather than cut a unit...
  const int64_t tolerance = std::max<int64_t>(1, per_worker / 16);
  // ...and no piece of a cut unit is shorter than this.
  const int64_t min_piece = std::clamp<int64_t>(per_worker / 4, 1, 4);

  // Pieces of a group of `tiles` key tiles under `rule` (kAtShareEnds: 0, the
  // shares decide).
  auto pieces_of = [&](const CutRule& rule, int64_t tiles) -> int64_t {
    const int64_t most = std::max<int64_t>(tiles, 1);
    switch (rule.kind) {
      case CutRule::kFixedPieces:
        return std::min<int64_t>(rule.pieces, most);
      case CutRule::kEvenPieces:
        return std::clamp<int64_t>((tiles + kSegmentOverheadTiles) * workers / total_cost, 1, most);
      case CutRule::kAtShareEnds:
        break;
    }
    return 0;
  };

  // Deals the groups' cost line (shares of `cost_line`) by `rule` and writes,
  // through `writer`, either each group as one unit with its union range
  // (member < 0: scoring; with width 1 the plan itself) or member `member` of
  // every group on its group workers, keeping the dealing in
  // `dealt` (a DealtGroups*) when given. A scoring pass stops as soon as its
  // busiest worker's time passes `stop_above` (it cannot win then); its
  // counts are then partial.
  auto plan = [&](PlanWriter& writer, const CutRule& rule, int64_t cost_line, int32_t member,
                  int64_t stop_above, auto dealt) -> absl::Status {
    // (`dealt` is nullptr_t where nothing is kept, every walk but a co-read
    // plan's member 0: those, the scoring walks among them, test nothing.)
    constexpr bool kKeepsDealing = !std::is_same_v<decltype(dealt), std::nullptr_t>;
    int32_t worker = 0;
    int64_t assigned = 0;
    int64_t share_end = ShareEnd(cost_line, workers, 0);  // the current worker's
    writer.BeginWorker(0);
    auto next_worker = [&] {
      writer.BeginWorker(++worker);
      share_end = ShareEnd(cost_line, workers, worker);
    };
    absl::Status status = absl::OkStatus();

    ForEachGroup(
        cu_seqlens_q, cache_seqlens, config, width,
        [&](const UnitGroup& group) -> bool {
          const int64_t tiles = group.keys.num_tiles;
          UnitPieces unit(writer, group, member);
          auto emit = [&](int64_t lo, int64_t hi) {
            if constexpr (kKeepsDealing) dealt->pieces.push_back({worker, lo, hi});
            if (status.ok()) status = unit.Add(lo, hi);
          };
          if (const int64_t pieces = pieces_of(rule, tiles); pieces > 0) {
            // Near-equal pieces, each to the worker whose share holds the
            // piece's middle; the first tiles % pieces are one tile longer (one
            // 32-bit division per group: tiles < 2^31).
            const int32_t shorter = static_cast<int32_t>(tiles) / static_cast<int32_t>(pieces);
            const int32_t longer =
                static_cast<int32_t>(tiles) - shorter * static_cast<int32_t>(pieces);
            int64_t begin = 0;
            for (int64_t piece = 0; piece < pieces && status.ok(); ++piece) {
              const int64_t length = shorter + (piece < longer ? 1 : 0);
              const int64_t cost = length + kSegmentOverheadTiles;
              while (worker < workers - 1 && MiddlePastShare(assigned, cost, share_end))
                next_worker();
              emit(begin, begin + length);
              assigned += cost;
              begin += length;
            }
          } else {
            int64_t begin = 0;
            while (status.ok()) {
              const int64_t rest = tiles - begin;
              const int64_t room = share_end - assigned;
              int64_t take = rest;
              if (worker < workers - 1 && rest + kSegmentOverheadTiles > room + tolerance) {
                const int64_t fits = room - kSegmentOverheadTiles;
                if (fits < min_piece) {  // this worker is full: the next one starts the group
                  next_worker();
                  continue;
                }
                if (rest - fits >= min_piece)
                  take = fits;  // else: the tail is too short to cut off
              }
              emit(begin, begin + take);
              assigned += take + kSegmentOverheadTiles;
              begin += take;
              if (take == rest) break;
              next_worker();
            }
          }
          if (status.ok()) status = unit.Finish();
          if constexpr (kKeepsDealing) {
            dealt->groups.push_back(group);
            dealt->pieces_end.push_back(dealt->pieces.size());
          }
          return status.ok() && writer.max_worker_time() <= stop_above;
        },
        walk_kv_head);
    return status;
  };
  // The counts of a plan written whole (every worker's span closed).
  auto finish_written = [&](PlanWriter& writer) {
    PartitionCounts counts = writer.Finish(writer.counts().worker_span);
    counts.num_units = num_units;
    return counts;
  };
  // Scores the plan of `rule` (groups as units) and returns it. With `write`
  // (width 1 only) the plan is written as it is scored: a plan walked to its
  // end then is the best so far (a later candidate wins ties), so when it is
  // also the one chosen it need not be walked again; one that stops early has
  // overwritten the buffers in part. A plan that does not fit the buffers is
  // scored again without writing, so that an error, if any, is the chosen
  // plan's own (from `write`).
  auto score = [&](const CutRule& rule, int64_t cost_line, int64_t stop_above,
                   bool write) -> absl::StatusOr<ScoredPlan> {
    if (write && width == 1 && lanes == 1) {
      PlanWriter writer(config, buffers, cu_seqlens_q, cache_seqlens, true);
      const absl::Status status = plan(writer, rule, cost_line, -1, stop_above, nullptr);
      if (status.ok()) {
        ScoredPlan scored{writer.counts(), writer.max_worker_time(), false};
        if (scored.max_worker_time <= stop_above) {  // walked to its end
          scored.counts = finish_written(writer);
          scored.written = true;
        }
        return scored;
      }
      if (!absl::IsResourceExhausted(status)) return status;
    }
    PlanWriter writer(config, buffers, cu_seqlens_q, cache_seqlens, false);
    RETURN_IF_ERROR(plan(writer, rule, cost_line, -1, stop_above, nullptr));
    return ScoredPlan{writer.Finish(0), writer.max_worker_time(), false};
  };
  // Writes the plan of `rule`: each member of every group on its own workers.
  auto write = [&](const CutRule& rule, int64_t cost_line) -> absl::StatusOr<PartitionCounts> {
    PlanWriter writer(config, buffers, cu_seqlens_q, cache_seqlens, true);
    if (width == 1) {
      RETURN_IF_ERROR(
          plan(writer, rule, cost_line, -1, std::numeric_limits<int64_t>::max(), nullptr));
    } else {
      // Member 0's units as the batch is dealt, then each other member's from
      // that dealing: walking the batch once per member (its groups, their
      // keys, the shares) was about half of a co-read plan's host time
      // (NOTES.md `WALK1`: b64 q64 4k 84.5 -> 61.1 us, prefill b4 q512
      // 71.1 -> 47.4 on planner_benchmark).
      DealtGroups dealt;
      RETURN_IF_ERROR(
          plan(writer, rule, cost_line, 0, std::numeric_limits<int64_t>::max(), &dealt));
      for (int32_t m = 1; m < width; ++m) {
        int32_t worker = 0;
        writer.BeginWorker(m * workers);
        size_t piece = 0;
        for (size_t i = 0; i < dealt.groups.size(); ++i) {
          UnitPieces unit(writer, dealt.groups[i], m);
          for (; piece < dealt.pieces_end[i]; ++piece) {
            const DealtPiece& dealt_piece = dealt.pieces[piece];
            if (dealt_piece.worker != worker) {
              worker = dealt_piece.worker;
              writer.BeginWorker(m * workers + worker);
            }
            RETURN_IF_ERROR(unit.Add(dealt_piece.lo, dealt_piece.hi));
          }
          RETURN_IF_ERROR(unit.Finish());
        }
      }
      PartitionCounts counts = finish_written(writer);
      // Member pairs (PartitionCounts::member_pair_offset): members m and m +
      // width / 2 of each group worker. Without a window every member's piece
      // of a group starts at the same key tile, so their segments pair up;
      // with one, later members' windows start later and would pair rarely.
      if (width % 2 == 0 && config.window_left < 0) {
        counts.member_pair_offset = width / 2 * workers;
        counts.member_pair_unit_offset = width / 2;
      }
      return counts;
    }
    if (lanes > 1) {
      PartitionCounts counts = writer.Finish(writer.counts().worker_span);
      ASSIGN_OR_RETURN(counts, SpreadOverHeadLanes(config, buffers, counts, lanes));
      counts.num_units = num_units;
      return counts;
    }
    return finish_written(writer);
  };
  if (config.pinned_splits > 0) {
    return write(CutRule{CutRule::kFixedPieces, config.pinned_splits}, planned_cost);
  }
  // Cutting at share ends spreads the work over every worker, but a share's
  // end falls anywhere in a unit, and the tolerance and minimum-piece rules
  // let a worker run past its share (one long request: 35 key tiles where the
  // average is 31). Each piece of a unit merged in the kernel also costs
  // kFusedPieceTiles. So when the balanced plan cuts units, two more
  // candidates are scored: even pieces (each unit into as many near-equal
  // pieces as it holds average shares), which ends sooner when units are long,
  // and whole units (one piece each), which ends sooner when they are short.
  // The plan whose busiest worker finishes first is written; a tie goes to the
  // plan with fewer cuts (the later candidate), whose workers all end with the
  // busiest one instead of a few finishing alone (NOTES.md: b16 32k and b8
  // 16k ran 3% faster with all workers equal than with a tail of a few), and
  // even pieces count as a tie up to kEvenPiecesSlackPercent.
  // (Co-read groups are scored as units: their members run side by side.)
  // Whole units, the last candidate, is written as it is scored (without head
  // lanes, whose plan is head 0's until SpreadOverHeadLanes): it wins for
  // most large decode batches (b128 1k, b256 4k), which then take one walk
  // fewer. (Writing the balanced plan as it is scored too cost the batches it
  // wins, b1 32k and b16 q8 verify, more than it saved: planner_benchmark.)
  CutRule best{CutRule::kAtShareEnds, 0};
  int64_t best_cost_line = planned_cost;
  ASSIGN_OR_RETURN(ScoredPlan best_plan,
                   score(best, best_cost_line, std::numeric_limits<int64_t>::max(), false));
  bool best_in_buffers = false;
  // Scores `candidate` and makes it the best plan if its busiest worker ends
  // no later than the best one's plus `slack` (negative: strictly sooner).
  auto try_candidate = [&](const CutRule& candidate, int64_t cost_line, int64_t slack,
                           bool write) -> absl::Status {
    const int64_t bar = best_plan.max_worker_time + slack;
    ASSIGN_OR_RETURN(ScoredPlan scored, score(candidate, cost_line, bar, write));
    if (scored.max_worker_time <= bar) {
      best = candidate;
      best_cost_line = cost_line;
      best_plan = scored;
      best_in_buffers = scored.written;
    } else if (write) {
      best_in_buffers = false;  // it stopped as it lost, over the best plan's start
    }
    return absl::OkStatus();
  };
  const CutRule whole_units{CutRule::kFixedPieces, 1};
  if (best_plan.counts.num_merge_tasks > 0) {
    // Even pieces are whole units when no unit holds two average shares.
    const CutRule even{CutRule::kEvenPieces, 0};
    if (pieces_of(even, longest_group_tiles) > 1) {
      // Even pieces are dealt over shares of their own total cost, so that
      // pieces of about one share each land one per worker.
      int64_t even_cost_line = 0;
      ForEachDistinctGroup(
          cu_seqlens_q, cache_seqlens, config, width,
          [&](const UnitGroup& group, int64_t kv_heads) {
            even_cost_line += (group.keys.num_tiles +
                               pieces_of(even, group.keys.num_tiles) * kSegmentOverheadTiles) *
                              kv_heads;
          },
          walk_kv_head);
      RETURN_IF_ERROR(try_candidate(
          even, even_cost_line, best_plan.max_worker_time * kEvenPiecesSlackPercent / 100, false));
    }
    RETURN_IF_ERROR(try_candidate(whole_units, planned_cost, 0, true));
  } else if (best_plan.max_worker_time > per_worker) {
    // An uncut balanced plan whose busiest worker ran past its share: the
    // tolerance let a worker take a whole unit that began just before its
    // share ended (32/32 b128 decode, 16 units a worker: worker 0 took 17,
    // the last 15, and the 17-unit workers ended ~5% after the rest; NOTES.md
    // `MID`). Whole units dealt by their middles give every worker 16. Only a
    // plan that ends strictly sooner replaces it.
    RETURN_IF_ERROR(try_candidate(whole_units, planned_cost, -1, true));
  }
  if (best_in_buffers) return best_plan.counts;
  return write(best, best_cost_line);
}

}  // namespace paged_attention
