// The consumer loop of the general, tree and paired-tiles kernels
// (paged_attention_kernel.cuh): units of up to 64 rows, each segment's tiles
// split over the four warps as row blocks x key ways (ConsumeSegments), and,
// with two consumer warpgroups, a member pair's two workers over one K/V
// stream.
#ifndef ATTENTION_KERNEL_GENERAL_CONSUMERS_CUH_
#define ATTENTION_KERNEL_GENERAL_CONSUMERS_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "attention/kernel/attend_tile.cuh"
#include "attention/kernel/consumer_steps.cuh"
#include "attention/kernel/kernel_traits.cuh"
#include "attention/kernel/kv_producer.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

// Member pairs (kGroups 2): stream tiles [from, to) of the segment starting
// at CTA tile `tile_counter` belong to the partner's keys only; every warp of
// this group waits for each (its stage's earlier round must be over before
// the stage is released again: the parity argument in ConsumeSegments) and
// releases it unread.
template <typename Traits>
__device__ __forceinline__ void ReleaseUnread(uint32_t tile_counter, int from, int to,
                                              uint64_t* full, uint64_t* empty) {
  for (int t = from; t < to; ++t) {
    const uint32_t g = tile_counter + t;
    const int stage = g % Traits::kStages;
    MbarrierWait(&full[stage], (g / Traits::kStages) & 1);
    WarpArrive(&empty[stage], 1);
  }
}

// The consumer warps of the general, tree and paired-tiles kernels (the
// decode kernel's are ConsumeDecodeSegments).
//
// With kGroups 2 each consumer warpgroup runs this for its own worker
// (segment_begin .. segment_end; the other's: partner_begin .. partner_end),
// on its own query tile, scratch, merge state and flag, over the CTA's one
// K/V stream of both workers' segments (PairWalk): it computes its own
// segment's tiles, which start where the step's stream does, exactly as a CTA
// of its own would, and releases the rest of the stream unread.
template <typename T, int kHeadDim, bool kTreeMasks, bool kPairedTiles, bool kDeepRing,
          int kGroups = 1>
__device__ __forceinline__ void ConsumeSegments(const PagedAttentionParams& p, int segment_begin,
                                                int segment_end, int partner_begin, int partner_end,
                                                T* q_smem, T* k_ring, T* v_ring, float* scratch,
                                                float* merge_state, uint64_t* full, uint64_t* empty,
                                                FusedMergeFlag* merge_flag) {
  using Traits = KernelTraits<kHeadDim, false, kDeepRing, kGroups>;
  static_assert(kGroups == 1 || (kDeepRing && !kTreeMasks), "member pairs: the general deep ring");
  static_assert(!kPairedTiles || HasPairedTilesKernel(kHeadDim),
                "paired tiles: general and tree kernels at head_dim 128");
  static_assert(!kDeepRing || kPairedTiles, "the deep ring is the paired-tiles kernels'");
  constexpr int kQueryRows = Traits::kQueryRows;
  constexpr int kKeysPerTile = Traits::kKeysPerTile;
  const int warp = GroupThread<kGroups>() / 32;
  const int lane = threadIdx.x % 32;
  RowState<kHeadDim> state;
  // This lane's ldmatrix offsets, kept in registers at head_dim 64 only.
  LaneTileOffsets<kHeadDim> lane_offsets;
  const LaneTileOffsets<kHeadDim>* kept_offsets = nullptr;
  if constexpr (kHeadDim == 64) {
    lane_offsets = KeptLaneTileOffsets<kHeadDim>();
    kept_offsets = &lane_offsets;
  }
  // This warp's Q fragments, kept for each segment by the head_dim 64
  // general kernel only (QueryFragments).
  QueryFragments<kHeadDim> query_fragments;
  const QueryFragments<kHeadDim>* kept_query = nullptr;
  if constexpr (kHeadDim == 64 && !kTreeMasks) kept_query = &query_fragments;
  uint32_t tile_counter = 0;  // tiles consumed by this CTA so far: same sequence as the producer's
  // With two query tiles, each segment's queries are loaded into the other
  // tile while the segment before it runs (`prefetched`: the segment whose
  // queries are in flight to, or in, tile `query_tile`).
  int query_tile = 0;
  int prefetched = -1;

  // Segment s; with kGroups 2 the step's stream has `stream_tiles` tiles, of
  // which this segment's come first.
  auto consume_segment = [&](int s, int stream_tiles) {
    const WorkSegment segment = LoadSegment(p.plan.segments + s);
    const SegmentTiles tiles = TilesOf<kKeysPerTile>(segment);
    UnitView unit = UnitOf(segment, p.group);
    const int q_len = segment.q_len;
    // Warp layout for this unit: row_blocks x key_ways = 4 warps.
    const int row_blocks = RowBlocks(unit.rows);
    const int key_ways = Traits::kConsumerWarps / row_blocks;
    const int row_block = warp % row_blocks;
    const int key_way = warp / row_blocks;
    SetDiagonals(unit, segment, p.group, row_block, lane);

    T* q_tile = q_smem + query_tile * Traits::kQElems;
    // Through a shuffle from lane 0 in the paired kernels (see the paired
    // loop), except the shallow-ring tree one, where it spills (24 bytes at
    // 168 registers; the deep ring's consumers have 184).
    const uint32_t q_base = kPairedTiles && (!kTreeMasks || kDeepRing)
                                ? __shfl_sync(kFullMask, SmemAddress(q_tile), 0)
                                : SmemAddress(q_tile);
    // The query tile, once it is no longer read, else the scratch.
    float* merge_o = Traits::kScratchInQueryTile ? reinterpret_cast<float*>(q_tile) : scratch;
    // The previous segment is done with the query tiles (and merge scratch).
    GroupBarrier<kGroups>();
    if (tiles.num_tiles > 0) {
      if (prefetched != s) {
        IssueQueryTile<T, kHeadDim, kQueryRows, kGroups>(p, unit, row_blocks, q_tile);
      }
      bool prefetching = false;
      if (Traits::kQueryTiles > 1 && s + 1 < segment_end) {
        const WorkSegment following = LoadSegment(p.plan.segments + s + 1);
        if (following.key_end > following.key_begin) {
          const UnitView next_unit = UnitOf(following, p.group);
          IssueQueryTile<T, kHeadDim, kQueryRows>(p, next_unit, RowBlocks(next_unit.rows),
                                                  q_smem + (query_tile ^ 1) * Traits::kQElems);
          prefetching = true;
        }
      }
      if (prefetching) {
        CpAsyncWaitAllButLast();  // this segment's queries, not the next one's
        prefetched = s + 1;
      } else {
        CpAsyncWaitAll();
      }
      FenceProxyAsync();  // wgmma may read the query tile
    }
    GroupBarrier<kGroups>();
    if (prefetched == s + 1) query_tile ^= 1;  // the next segment reads the tile it went to

    state.Reset();
    // wgmma takes the whole warpgroup: only units of four row blocks, where
    // every warp reads every tile (warps of padding rows compute and discard).
    const bool use_wgmma = PA_HAS_WGMMA && p.use_wgmma != 0 && row_blocks == 4;
    const bool has_rows = row_block * 16 < unit.rows;
    const bool computes = has_rows || use_wgmma;
    int t = key_way;
    if constexpr (kPairedTiles) {
      // (Only with a positive logit scale: the scale-in-exponent form below
      // scales the row max instead of every logit.)
      if (use_wgmma && ScaleInExponentAllowed(p)) {
        // Tiles two at a time (key_ways is 1: the warpgroup takes every tile):
        // one softmax step per 64 keys. An odd last tile takes the loop below.
        // (This loop repeats the one below on purpose, without its `computes`
        // and `use_wgmma` tests: sharing one body between them made the
        // paired units 17-21% slower on the H200, NOTES.md `PAIR`.)
        // The stage index (and, in all but the shallow-ring tree kernel, the
        // query tile's address q_base) come through a shuffle from lane 0: every lane
        // holds the same values, but ptxas cannot prove it for values derived
        // from loaded segment words, so it built every wgmma descriptor in
        // regular registers and moved each to uniform registers before its
        // wgmma (72 R2UR per pair step, NOTES.md). From a shuffle they are
        // known warp-uniform.
        //
        // The softmax form is the request's: with the scale in the exponent
        // (one FFMA and one MUFU per probability) when its units share their
        // K/V, else as the single-tile loop. Only units that share K/V are
        // compute-bound; on the memory-bound ones (64/8 q8, 32/8 q16 verify)
        // the shorter softmax was 1-4% slower at free clocks (NOTES.md
        // `FUSED`, `UgF`), for reasons not yet known. The request decides,
        // not the plan, so eager and replayed launches agree bit for bit.
        auto attend_pairs = [&](auto scale_in_exp) {
          constexpr bool kScaleInExp = decltype(scale_in_exp)::value;
          auto plain_pairs = [&] {
            for (; t + 1 < tiles.num_tiles; t += 2) {
              const uint32_t g = __shfl_sync(kFullMask, tile_counter + t, 0);
              const int stages[2] = {static_cast<int>(g % Traits::kStages),
                                     static_cast<int>((g + 1) % Traits::kStages)};
              MbarrierWait(&full[stages[0]], (g / Traits::kStages) & 1);
              MbarrierWait(&full[stages[1]], ((g + 1) / Traits::kStages) & 1);
              FenceProxyAsync();  // as below: cp.async tiles, read by wgmma
              const uint32_t k_base[2] = {SmemAddress(k_ring + stages[0] * Traits::kTileElems),
                                          SmemAddress(k_ring + stages[1] * Traits::kTileElems)};
              const uint32_t v_base[2] = {SmemAddress(v_ring + stages[0] * Traits::kTileElems),
                                          SmemAddress(v_ring + stages[1] * Traits::kTileElems)};
              const int key0 = (tiles.first_tile + t) * kKeysPerTile;
              if (kTreeMasks && key0 + 2 * kKeysPerTile > unit.tree_base) {
                AttendTile<T, kHeadDim, kQueryRows, true, 2, kScaleInExp>(
                    p, unit, row_block, key0, true, q_base, k_base, v_base, state);
              } else {
                AttendTile<T, kHeadDim, kQueryRows, false, 2, kScaleInExp>(
                    p, unit, row_block, key0, true, q_base, k_base, v_base, state);
              }
              WarpArrive(&empty[stages[0]], key_ways);
              WarpArrive(&empty[stages[1]], key_ways);
            }
          };
          if constexpr (PA_HAS_WGMMA && kGroups > 1 && kScaleInExp && !kTreeMasks) {
#if PA_HAS_WGMMA
            // Member pairs with a softcap: FlashAttention-3's overlap within
            // the group. A step issues its Q K^T, then the step before it's
            // P V, waits for its own S only, and runs its softmax while that
            // P V is on the tensor cores; then it waits for the P V, releases
            // those tiles and rescales O. The same operations on O in the
            // same order as AttendTile's steps, so the same bits. A step's
            // tiles stay held until the next step's P V completes: two pairs
            // of the ten stages (the two groups read the same ones). It pays
            // where the softmax is long (the cap's tanh: 6.5% faster, `OVL2C`)
            // and lost up to 1.2% without one (`OVL2`): the hold alone costs
            // uncapped steps 3-4% (`HOLD`, NOTES.md), so only capped requests
            // take it.
            if (p.softcap_log2 == 0.0f) {
              plain_pairs();
              return;
            }
            constexpr int kKeys = 2 * kKeysPerTile;
            float s[kKeys / 8][4];
            uint32_t a[kKeys / 16][4];  // P of the step whose P V is pending
            int pending_stages[2];
            // Waits for step t's two tiles and issues its Q K^T (no wait).
            auto issue_query_key = [&](int(&stages)[2]) {
              const uint32_t g = __shfl_sync(kFullMask, tile_counter + t, 0);
              stages[0] = g % Traits::kStages;
              stages[1] = (g + 1) % Traits::kStages;
              MbarrierWait(&full[stages[0]], (g / Traits::kStages) & 1);
              MbarrierWait(&full[stages[1]], ((g + 1) / Traits::kStages) & 1);
              FenceProxyAsync();  // cp.async tiles, read by wgmma
              const uint32_t k_base[2] = {SmemAddress(k_ring + stages[0] * Traits::kTileElems),
                                          SmemAddress(k_ring + stages[1] * Traits::kTileElems)};
              QueryKeyWgmma<T, kHeadDim, 2, false>(q_base, k_base, s);
            };
            auto values_of = [&](const int(&stages)[2]) {
              const uint32_t v_base[2] = {SmemAddress(v_ring + stages[0] * Traits::kTileElems),
                                          SmemAddress(v_ring + stages[1] * Traits::kTileElems)};
              IssueValuesWgmma<T, kHeadDim>(state, a, v_base);
            };
            if (t + 1 < tiles.num_tiles) {
              // The first step: nothing pending (peeled, so that no wgmma
              // sits behind a branch: ptxas serialises those, C7520).
              issue_query_key(pending_stages);
              WgmmaWaitAll();
              float rescale[2];
              SoftmaxStep<kHeadDim, false, kKeys, true>(
                  p, unit, (tiles.first_tile + t) * kKeysPerTile, s, state, rescale);
              RescaleO(state, rescale);
#pragma unroll
              for (int kb = 0; kb < kKeys / 16; ++kb) PackProbabilities<T, kKeys>(s, kb, a[kb]);
              for (t += 2; t + 1 < tiles.num_tiles; t += 2) {
                int stages[2];
                issue_query_key(stages);
                values_of(pending_stages);
                WgmmaWait<1>();  // this step's S; the P V may still run
                SoftmaxStep<kHeadDim, false, kKeys, true>(
                    p, unit, (tiles.first_tile + t) * kKeysPerTile, s, state, rescale);
                WgmmaWaitAll();
                OLanded(state);
                WarpArrive(&empty[pending_stages[0]], key_ways);
                WarpArrive(&empty[pending_stages[1]], key_ways);
                RescaleO(state, rescale);
#pragma unroll
                for (int kb = 0; kb < kKeys / 16; ++kb) PackProbabilities<T, kKeys>(s, kb, a[kb]);
                pending_stages[0] = stages[0];
                pending_stages[1] = stages[1];
              }
              WgmmaFence();  // O's rescale and P were written by this thread
              values_of(pending_stages);
              WgmmaWaitAll();
              OLanded(state);
              WarpArrive(&empty[pending_stages[0]], key_ways);
              WarpArrive(&empty[pending_stages[1]], key_ways);
            }
#endif
          } else {
            plain_pairs();
          }
        };
        if (q_len * p.group > kUnitRows) {
          attend_pairs(std::true_type{});
        } else {
          attend_pairs(std::false_type{});
        }
      }
    }
    if (kept_query != nullptr && computes && !use_wgmma) {
      LoadQueryFragments<kHeadDim, kQueryRows>(query_fragments, row_block, q_base);
    }
    for (; t < tiles.num_tiles; t += key_ways) {
      const uint32_t g = tile_counter + t;
      const int stage = g % Traits::kStages;
      // Parity (g / kStages) & 1 names this round of the stage unambiguously
      // only if the stage's previous round has completed: tiles land out of
      // order (TMA tiles complete independently of each other), so that must
      // not depend on other tiles having landed. It holds because kStages is a
      // multiple of key_ways: within a segment every round of this stage is
      // consumed by this warp's key way, so this warp waited for the previous
      // round itself, or it was consumed before the segment's first
      // ConsumerBarrier. (The stage cannot be a round ahead either: its next
      // round waits for this warp's release.) The deep ring's five stages
      // are no multiple of 2 or 4; there, units of several key ways
      // stream by cp.async only, whose tiles land in issue order per producer
      // lane, so this warp's own previous tile (a stage or more back) having
      // landed means the stage's previous round has, as in the decode kernel.
      MbarrierWait(&full[stage], (g / Traits::kStages) & 1);
      if (computes) {
        // The tile arrived through cp.async (generic proxy); wgmma reads it
        // through the async proxy.
        if (use_wgmma) FenceProxyAsync();
        const uint32_t k_base[1] = {SmemAddress(k_ring + stage * Traits::kTileElems)};
        const uint32_t v_base[1] = {SmemAddress(v_ring + stage * Traits::kTileElems)};
        const int key0 = (tiles.first_tile + t) * kKeysPerTile;
        // Only the last tiles of a tree request meet its mask words: the
        // others take the plain tile code, which the mask would slow down.
        if (kTreeMasks && key0 + kKeysPerTile > unit.tree_base) {
          AttendSingleTile<T, kHeadDim, kQueryRows, true>(p, unit, row_block, key0, use_wgmma,
                                                          q_base, k_base, v_base, state,
                                                          kept_offsets, kept_query);
        } else {
          AttendSingleTile<T, kHeadDim, kQueryRows, false>(p, unit, row_block, key0, use_wgmma,
                                                           q_base, k_base, v_base, state,
                                                           kept_offsets, kept_query);
        }
      }
      // The stage's "empty" barrier counts every consumer lane once per round:
      // each lane of the row_blocks warps that read it arrives for its key-way
      // siblings' lanes too.
      WarpArrive(&empty[stage], key_ways);
    }
    if constexpr (kGroups > 1) {
      stream_tiles = max(stream_tiles, tiles.num_tiles);
      ReleaseUnread<Traits>(tile_counter, tiles.num_tiles, stream_tiles, full, empty);
      tile_counter += stream_tiles;
    } else {
      tile_counter += tiles.num_tiles;
    }

    // Fold the key ways into way 0 through the query tile (two 16-row fp32
    // states fit).
    FoldKeyWaysWithBarriers<kHeadDim, false, 16, kGroups>(state, merge_o, merge_state, key_ways,
                                                          key_way, row_blocks, row_block,
                                                          tiles.num_tiles, lane);
    if (key_way == 0 && has_rows) {
      WriteRows<T, kHeadDim>(p, unit, row_block, segment.partial, state);
    }
    // (The general kernel never runs plans of KV head pairs.)
    if (segment.partial >= 0 && MergedByAttentionKernel(unit.rows, 1)) {
      MergeIfLastPiece<T, kHeadDim, false, kHeadDim, kGroups>(p, segment.merge_task, unit.rows,
                                                              merge_o, merge_flag, segment, q_smem);
    }
  };

  if constexpr (kGroups == 1) {
    for (int s = segment_begin; s < segment_end; ++s) consume_segment(s, 0);
  } else {
    // Group 0 runs list a's segments, group 1 list b's (PairWalk).
    const bool group_b = threadIdx.x >= Traits::kConsumerThreads;
    PairWalk walk = group_b ? PairWalk{partner_begin, partner_end, segment_begin, segment_end}
                            : PairWalk{segment_begin, segment_end, partner_begin, partner_end};
    while (walk.a < walk.a_end || walk.b < walk.b_end) {
      const PairStep step = NextPairStep<kKeysPerTile>(p, walk);
      const int own = group_b ? step.b : step.a;
      if (own >= 0) {
        consume_segment(own, step.tiles.num_tiles);
      } else {  // the partner's segment alone
        ReleaseUnread<Traits>(tile_counter, 0, step.tiles.num_tiles, full, empty);
        tile_counter += step.tiles.num_tiles;
      }
    }
  }
}

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_GENERAL_CONSUMERS_CUH_
