// One consumer warp's attention over key tiles (paged_attention_kernel.cuh):
// the running softmax state of its rows (RowState) and how two combine, the
// unit a segment belongs to (UnitView), and AttendTile: S = Q K^T (mma.sync,
// or wgmma for 64-row units), the logit scale, softcap and masks, the online
// softmax and O += P V.
#ifndef ATTENTION_KERNEL_ATTEND_TILE_CUH_
#define ATTENTION_KERNEL_ATTEND_TILE_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/kernel_traits.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

// How two running softmax states of one row combine (RowState::Merge): the
// new running max and each side's factor.
struct MergeWeights {
  float max;
  float mine;
  float theirs;
};

__device__ __forceinline__ MergeWeights MergeWeightsOf(float my_max, float other_max) {
  const float new_max = fmaxf(my_max, other_max);
  const float reference = new_max == -INFINITY ? 0.0f : new_max;
  return {new_max, exp2f(my_max - reference), exp2f(other_max - reference)};
}

// x * x_weight + y * y_weight, rounded the same way wherever it is written: the key ways' fold runs
// in registers (ConsumeSegments) and from shared memory (FoldKeyWays), and a unit must come out bit
// for bit the same from either kernel (VariantFor), so the contraction into an FMA is spelled out
// rather than left to the compiler.
__device__ __forceinline__ float Weighted(float x, float x_weight, float y, float y_weight) {
  return __fmaf_rn(x_weight, x, __fmul_rn(y_weight, y));
}

// The running softmax state of one warp's kRows rows over the keys it has
// seen: 16 (this thread's two rows: lane / 4 and lane / 4 + 8), or 8 (row
// lane / 4 only: the head_dim 256 decode kernel, KernelTraits::kStateRows),
// whose O is then half as many registers (64 at head_dim 256).
template <int kHeadDim, int kRows = 16>
struct RowState {
  static_assert(kRows == 8 || kRows == 16, "one or both of a thread's rows");
  static constexpr int kHalves = kRows / 8;  // this thread's rows
  float o[kHeadDim / 8][2 * kHalves];        // unnormalised O, mma accumulator layout
  float max[kHalves];  // running max of the logits, log2 units (-inf: no key yet)
  float sum[kHalves];  // this thread's share of the running sum of exp2(s - max)

  __device__ __forceinline__ void Reset() {
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
      for (int e = 0; e < 2 * kHalves; ++e) o[d][e] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kHalves; ++i) {
      max[i] = -INFINITY;
      sum[i] = 0.0f;
    }
  }

  // Folds another state of the same rows in (LSE-weighted).
  __device__ __forceinline__ void Merge(const float* other_o, const float* other_ml, int lane) {
#pragma unroll
    for (int i = 0; i < kHalves; ++i) {
      const MergeWeights w = MergeWeightsOf(max[i], other_ml[i * 32 + lane]);
      max[i] = w.max;
      // (The sum's terms in the other order: the compiler's choice before
      // the rounding was spelled out, kept so the code stays the same.)
      sum[i] = Weighted(other_ml[(2 + i) * 32 + lane], w.theirs, sum[i], w.mine);
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
        o[d][2 * i] =
            Weighted(o[d][2 * i], w.mine, other_o[(d * 2 * kHalves + 2 * i) * 32 + lane], w.theirs);
        o[d][2 * i + 1] = Weighted(o[d][2 * i + 1], w.mine,
                                   other_o[(d * 2 * kHalves + 2 * i + 1) * 32 + lane], w.theirs);
      }
    }
  }

  __device__ __forceinline__ void Store(float* to_o, float* to_ml, int lane) const {
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
      for (int e = 0; e < 2 * kHalves; ++e) to_o[(d * 2 * kHalves + e) * 32 + lane] = o[d][e];
    }
#pragma unroll
    for (int i = 0; i < kHalves; ++i) to_ml[i * 32 + lane] = max[i];
#pragma unroll
    for (int i = 0; i < kHalves; ++i) to_ml[(2 + i) * 32 + lane] = sum[i];
  }
};

// What a consumer warp needs to know about the unit of the current segment.
struct UnitView {
  int q_begin;    // first query token of the request
  int unit_row0;  // first packed row of the unit
  int rows;       // packed rows of the unit (<= kUnitRows)
  int kv_head;
  int key_begin;  // segment keys
  int key_end;
  int row_diag[2];  // this thread's rows' last visible key (causal)
  int min_diag;     // over the unit's rows
  int max_diag;
  // Tree masks (AttentionMetadata::tree_mask): the first key a mask word
  // covers, and the query token of a row whose last visible key is `diag`:
  // diag + diag_to_token.
  int tree_base;
  int diag_to_token;
};

// The UnitView fields that do not depend on the thread.
__device__ __forceinline__ UnitView UnitOf(const WorkSegment& segment, int group) {
  UnitView unit;
  unit.q_begin = segment.q_begin;
  unit.unit_row0 = segment.unit_tile * kUnitRows;
  unit.rows = UnitRowCount(segment.q_len, group, segment.unit_tile);
  unit.kv_head = segment.kv_head;
  unit.key_begin = segment.key_begin;
  unit.key_end = segment.key_end;
  return unit;
}

// The UnitView fields of this thread's rows (row block `row_block`) and the
// unit's causal diagonals and tree-mask positions.
__device__ __forceinline__ void SetDiagonals(UnitView& unit, const WorkSegment& segment, int group,
                                             int row_block, int lane) {
  // Query j's last visible key: j + diagonal_offset.
  const int diagonal_offset = segment.k_len - segment.q_len;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = min(row_block * 16 + lane / 4 + 8 * i, unit.rows - 1);
    unit.row_diag[i] = (unit.unit_row0 + row) / group + diagonal_offset;
  }
  unit.tree_base = segment.k_len - kTreeMaskKeys;
  unit.diag_to_token = unit.q_begin - diagonal_offset;
  unit.min_diag = unit.unit_row0 / group + diagonal_offset;
  unit.max_diag = (unit.unit_row0 + unit.rows - 1) / group + diagonal_offset;
}

// 16-row blocks of a unit of `rows` rows; the other factor of the four
// consumer warps are its key ways. (The decode kernel's units are one block.)
__device__ __forceinline__ int RowBlocks(int rows) { return rows <= 16 ? 1 : rows <= 32 ? 2 : 4; }

// This lane's ldmatrix offsets (bytes) inside a key tile: K's for each k-step
// of Q K^T and V's for each column block of P V, at key block 0 (key block b
// adds TileOffset(b * 16, 0): the swizzle depends on the row only through
// row % 8, so 16-row blocks are a fixed stride apart). They depend on the
// lane alone, yet ptxas recomputes them from the stage base at every tile
// rather than keep 8 registers live; the head_dim 64 general and tree
// kernels, whose consumer warps' instructions per tile cap a CTA's read
// rate, compute them once and hide them behind an empty asm so that they stay
// in registers (general 162 -> 168 registers, no spills; one CTA per SM on an
// H100 reads 1.01x faster, NOTES.md `LO`). At head_dim 128 / 256 (16 / 32 registers) the
// kernels keep computing them per tile.
template <int kHeadDim>
struct LaneTileOffsets {
  uint32_t k[kHeadDim / 16];
  uint32_t v[kHeadDim / 16];
};

template <int kHeadDim>
__device__ __forceinline__ LaneTileOffsets<kHeadDim> KeptLaneTileOffsets() {
  static_assert(kHeadDim == 64, "kept offsets: head_dim 64 only (see LaneTileOffsets)");
  constexpr int kKeys = KeysPerTile(kHeadDim);
  const int lane = threadIdx.x % 32;
  const int ldm_row = lane % 8;
  const int ldm_hi8 = (lane / 8) % 2;
  const int ldm_hi16 = lane / 16;
  LaneTileOffsets<kHeadDim> offsets;
#pragma unroll
  for (int i = 0; i < kHeadDim / 16; ++i) {
    offsets.k[i] = 2 * TileOffset<kHeadDim, kKeys>(ldm_row + ldm_hi16 * 8, i * 2 + ldm_hi8);
    offsets.v[i] = 2 * TileOffset<kHeadDim, kKeys>(ldm_row + ldm_hi8 * 8, i * 2 + ldm_hi16);
    asm volatile("" : "+r"(offsets.k[i]));  // opaque: ptxas cannot recompute it
    asm volatile("" : "+r"(offsets.v[i]));
  }
  return offsets;
}

// This warp's Q A fragments for its row block of the unit, which
// QueryKeyMmaSync otherwise loads by kHeadDim / 16 ldmatrix.x4 at every key
// tile: the head_dim 64 general kernel loads them once per segment (16
// registers, no spills; one CTA per SM on an H100 reads 1.01x faster,
// NOTES.md `QR`). The tree kernel keeps loading them per tile: holding them
// it spills.
template <int kHeadDim>
struct QueryFragments {
  uint32_t a[kHeadDim / 16][4];
};

// One k-step's A fragment (columns ks * 16 .. + 15) of a warp's 16 rows of
// the query tile, for the lane whose ldmatrix row and halves are ldm_row,
// ldm_hi8 and ldm_hi16.
template <int kHeadDim, int kQueryRows>
__device__ __forceinline__ void LoadQueryFragment(uint32_t (&a)[4], uint32_t q_base, int row_block,
                                                  int ks, int ldm_row, int ldm_hi8, int ldm_hi16) {
  LdMatrixX4(a, q_base + 2 * TileOffset<kHeadDim, kQueryRows>(
                             row_block * 16 + ldm_row + ldm_hi8 * 8, ks * 2 + ldm_hi16));
}

template <int kHeadDim, int kQueryRows>
__device__ __forceinline__ void LoadQueryFragments(QueryFragments<kHeadDim>& fragments,
                                                   int row_block, uint32_t q_base) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int ks = 0; ks < kHeadDim / 16; ++ks) {
    LoadQueryFragment<kHeadDim, kQueryRows>(fragments.a[ks], q_base, row_block, ks, lane % 8,
                                            (lane / 8) % 2, lane / 16);
  }
}

// S = Q K^T for one warp's 16 rows (row block `row_block` of the unit) with
// mma.sync. (Splitting the k-steps over two accumulator sets was tried: the
// extra registers spilled and every mma.sync shape ran 5-7% slower.)
// With kRows 8 (RowState), rows 8-15 of the A fragments are zeros: one
// ldmatrix.x2 per k-step instead of x4, and half the fragment registers.
// `kept_offsets`: this lane's K offsets kept in registers, or null to compute
// them here (LaneTileOffsets); `kept_query`: this warp's Q fragments, or
// null to load them here (QueryFragments; 16-row states only).
template <typename T, int kHeadDim, int kQueryRows, int kRows = 16>
__device__ __forceinline__ void QueryKeyMmaSync(
    int row_block, uint32_t q_base, uint32_t k_base, float (&s)[KeysPerTile(kHeadDim) / 8][4],
    const LaneTileOffsets<kHeadDim>* kept_offsets = nullptr,
    const QueryFragments<kHeadDim>* kept_query = nullptr) {
  constexpr int kKeys = KeysPerTile(kHeadDim);
  const int lane = threadIdx.x % 32;
  const int ldm_row = lane % 8;
  const int ldm_hi8 = (lane / 8) % 2;
  const int ldm_hi16 = lane / 16;
#pragma unroll
  for (int ks = 0; ks < kHeadDim / 16; ++ks) {
    uint32_t a[4];
    if (kRows == 16 && kept_query != nullptr) {
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] = kept_query->a[ks][e];
    } else if constexpr (kRows == 16) {
      LoadQueryFragment<kHeadDim, kQueryRows>(a, q_base, row_block, ks, ldm_row, ldm_hi8, ldm_hi16);
    } else {  // lanes 0-7: rows 0-7 at k 0-7; lanes 8-15: at k 8-15
      uint32_t top[2];
      LdMatrixX2(top, q_base + 2 * TileOffset<kHeadDim, kQueryRows>(row_block * 16 + ldm_row,
                                                                    ks * 2 + ldm_hi8));
      a[0] = top[0];
      a[1] = 0u;
      a[2] = top[1];
      a[3] = 0u;
    }
#pragma unroll
    for (int nb = 0; nb < kKeys / 16; ++nb) {
      uint32_t b[4];
      if (kept_offsets != nullptr) {
        LdMatrixX4(b, k_base + kept_offsets->k[ks] + 2 * TileOffset<kHeadDim, kKeys>(nb * 16, 0));
      } else {
        LdMatrixX4(b, k_base + 2 * TileOffset<kHeadDim, kKeys>(nb * 16 + ldm_row + ldm_hi16 * 8,
                                                               ks * 2 + ldm_hi8));
      }
      Mma16816<T>(s[2 * nb], a, b[0], b[1]);
      Mma16816<T>(s[2 * nb + 1], a, b[2], b[3]);
    }
  }
}

// S = Q K^T for all 64 rows of the unit with one warpgroup wgmma per k-step
// (the four consumer warps together; each gets its 16 rows in the mma.sync
// accumulator layout). Asynchronous tensor-core work at twice mma.sync's rate:
// what 64-row verify tiles need to stay memory-bound. kTiles key tiles (ring
// stages, `k_base` each) land in consecutive column blocks of S, all issued
// before the one wait (none with kWait false: the caller waits, WgmmaWait).
template <typename T, int kHeadDim, int kTiles, bool kWait = true>
__device__ __forceinline__ void QueryKeyWgmma(uint32_t q_base, const uint32_t (&k_base)[kTiles],
                                              float (&s)[kTiles * KeysPerTile(kHeadDim) / 8][4]) {
#if PA_HAS_WGMMA
  constexpr int kKeys = KeysPerTile(kHeadDim);
  // Descriptors per tile; each k-step's is one of them plus its offset.
  const uint64_t q_descriptor = WgmmaDescriptor(q_base);
  uint64_t k_descriptors[kTiles];
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile) k_descriptors[tile] = WgmmaDescriptor(k_base[tile]);
  WgmmaFence();
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile) {
    const uint64_t k_descriptor = k_descriptors[tile];
    auto& s_tile = *reinterpret_cast<float(*)[kKeys / 8][4]>(&s[tile * (kKeys / 8)]);
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      // k-step ks: 64-column block ks / 4, 32 bytes per k-step inside it.
      const uint32_t q_offset = (ks / 4) * (kUnitRows * 128) + (ks % 4) * 32;
      const uint32_t k_offset = (ks / 4) * (kKeys * 128) + (ks % 4) * 32;
      Wgmma<T, kKeys>::Run(s_tile, WgmmaDescriptorPlus(q_descriptor, q_offset),
                           WgmmaDescriptorPlus(k_descriptor, k_offset), ks > 0 ? 1 : 0);
    }
  }
  WgmmaCommit();
  if constexpr (kWait) WgmmaWaitAll();
#endif
}

// Scales O's values of this thread's row i (0: lane / 4, 1: lane / 4 + 8).
template <int kHeadDim, int kRows>
__device__ __forceinline__ void RescaleRow(RowState<kHeadDim, kRows>& state, int i, float factor) {
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) {
    state.o[d][2 * i] *= factor;
    state.o[d][2 * i + 1] *= factor;
  }
}

// Keys kb * 16 .. + 15 of P (the probabilities in S's accumulators) as one
// bf16/fp16 A fragment of m16n8k16 (two n8 blocks of S); wgmma's register A
// fragment has the same layout.
// With kRows 8, rows 8-15 are zeros (their products are discarded).
template <typename T, int kKeys, int kRows = 16>
__device__ __forceinline__ void PackProbabilities(const float (&s)[kKeys / 8][4], int kb,
                                                  uint32_t (&a)[4]) {
  a[0] = PackPair<T>(s[2 * kb][0], s[2 * kb][1]);
  a[1] = kRows == 16 ? PackPair<T>(s[2 * kb][2], s[2 * kb][3]) : 0u;
  a[2] = PackPair<T>(s[2 * kb + 1][0], s[2 * kb + 1][1]);
  a[3] = kRows == 16 ? PackPair<T>(s[2 * kb + 1][2], s[2 * kb + 1][3]) : 0u;
}

// Whether a request may take the scale-in-exponent softmax (SoftmaxStep's
// kScaleInExp): with a softcap the scale is applied before the tanh anyway,
// and without one the form needs a positive scale (the max of the raw logits
// is then the max of the scaled ones). A property of the request, not of the
// plan, so eager and replayed launches take the same form and agree bit for bit.
__device__ __forceinline__ bool ScaleInExponentAllowed(const PagedAttentionParams& p) {
  return p.softcap_log2 != 0.0f || p.scale_log2 > 0.0f;
}

// The softmax half of a step (AttendTile's, and the member pairs' overlapped
// steps' in ConsumeSegments, where a step's softmax runs while the step
// before it's P V is in flight): the thread's kKeys raw logits per row
// (S = Q K^T) become probabilities in place (scaled, capped, masked), each
// row's running max and sum move on, and `rescale` gets the factor O takes
// before this step's P V (RescaleO; head_dim 256 rescales here, every step).
template <int kHeadDim, bool kTreeMasks, int kKeys, bool kScaleInExp, int kRows = 16>
__device__ __forceinline__ void SoftmaxStep(const PagedAttentionParams& p, const UnitView& unit,
                                            int key0, float (&s)[kKeys / 8][4],
                                            RowState<kHeadDim, kRows>& state, float (&rescale)[2]) {
  constexpr int kHalves = kRows / 8;  // this thread's rows (RowState)
  const int lane = threadIdx.x % 32;
  // Logits in log2 units, then the mask (only on tiles that need one). Each
  // choice is the same for the whole warp (a parameter, or a property of the
  // tile), so each is one branch around a loop over the tile: written as one
  // loop with the choices inside, ptxas branched per element (ncu at
  // 929cbfd: 132 instructions per tile and 40% of the consumer warps' stall
  // samples on 64-row units, for 16 multiplies).
  // kScaleInExp leaves the scale to the softmax: the max of the raw logits
  // times a positive scale is the max of the scaled ones, bit for bit, and
  // each exponent is then one FFMA instead of a multiply and a subtraction
  // (callers take this form only when logit_scale > 0: ConsumeSegments'
  // paired loops, AttendSingleTile at head_dim 64), with 2^x flushing
  // subnormals (one MUFU).
  static_assert(!kScaleInExp || kKeys > KeysPerTile(kHeadDim) || kHeadDim == 64,
                "the scale in the exponent: paired steps, and head_dim 64's single tiles");
  const bool softcap = p.softcap_log2 != 0.0f;
  const float logit_scale = kScaleInExp && !softcap ? p.scale_log2 : 1.0f;
  if (softcap) {
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[n][e] = p.softcap_log2 * TanhApprox(s[n][e] * p.scale_over_softcap);
    }
  } else if constexpr (!kScaleInExp) {
    const float scale_log2 = p.scale_log2;
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] *= scale_log2;
    }
  }
  const bool causal = p.causal != 0;
  const int window = causal ? p.window_left : -1;
  // Tree masks touch only the last kTreeMaskKeys keys; their words are read
  // here, on the few tiles that need them, to keep them out of the registers
  // of the main loop. (A separate instantiation: the runtime check alone cost
  // chain verify 5-12% on the H200.)
  const bool tree_tile = kTreeMasks && key0 + kKeys > unit.tree_base;
  const bool needs_mask = key0 < unit.key_begin || key0 + kKeys > unit.key_end || tree_tile ||
                          (causal && (key0 + kKeys - 1 > unit.min_diag ||
                                      (window >= 0 && key0 < unit.max_diag - window)));
  if (needs_mask) {
    // A row's visible keys are one range (the segment, the causal diagonal,
    // the window), cut by the row's mask word on tree tiles: a bit mask per
    // row over the tile, then one select per element.
#pragma unroll
    for (int i = 0; i < kHalves; ++i) {
      int first = unit.key_begin - key0;  // tile-relative, inclusive
      int last = unit.key_end - 1 - key0;
      if (causal) {
        last = min(last, unit.row_diag[i] - key0);
        if (window >= 0) first = max(first, unit.row_diag[i] - window - key0);
      }
      first = max(first, 0);
      last = min(last, kKeys - 1);
      uint64_t visible = last >= first ? (~0ull >> (63 - (last - first))) << first : 0ull;
      if (tree_tile) {
        // The word covers keys tree_base.. (bit j: key tree_base + j); keys
        // before it are not in the tree. tree_base - key0 is in (-64, kKeys).
        const uint64_t word = __ldg(p.tree_mask + unit.row_diag[i] + unit.diag_to_token);
        const int shift = unit.tree_base - key0;
        visible &= shift >= 0 ? (word << shift) | ((1ull << shift) - 1) : word >> -shift;
      }
      visible >>= (lane % 4) * 2;  // this thread's keys: n * 8 + (lane % 4) * 2 + {0, 1}
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (((visible >> (n * 8 + e)) & 1) == 0) s[n][2 * i + e] = -INFINITY;
        }
      }
    }
  }

  // Online softmax; a row that has seen no key yet keeps max -inf and uses 0
  // as its reference so no -inf - -inf appears.
#pragma unroll
  for (int i = 0; i < kHalves; ++i) {
    float tile_max;
    if constexpr (kScaleInExp) {
      float raw_max = -INFINITY;
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
        raw_max = fmaxf(raw_max, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      }
      raw_max = fmaxf(raw_max, __shfl_xor_sync(kFullMask, raw_max, 1));
      raw_max = fmaxf(raw_max, __shfl_xor_sync(kFullMask, raw_max, 2));
      tile_max = fmaxf(state.max[i], raw_max * logit_scale);
    } else {
      tile_max = state.max[i];
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
        tile_max = fmaxf(tile_max, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, 2));
    }
    const float reference = tile_max == -INFINITY ? 0.0f : tile_max;
    const float row_rescale = kScaleInExp ? Exp2FlushSubnormal(state.max[i] - reference)
                                          : exp2f(state.max[i] - reference);
    rescale[i] = row_rescale;
    state.max[i] = tile_max;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& x = s[n][2 * i + e];
        x = kScaleInExp ? Exp2FlushSubnormal(fmaf(x, logit_scale, -reference))
                        : exp2f(x - reference);
      }
      sum += s[n][2 * i] + s[n][2 * i + 1];
    }
    state.sum[i] = state.sum[i] * row_rescale + sum;
    if constexpr (kHeadDim > 128) RescaleRow(state, i, row_rescale);
  }
}

// O's rescale by SoftmaxStep's factors, once O is not in flight.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void RescaleO(RowState<kHeadDim, kRows>& state,
                                         const float (&rescale)[2]) {
  // O's rescale (kHeadDim / 2 multiplies per thread) only when a row of the
  // warp raised its max: once the running maxima settle most tiles leave them,
  // and a multiply by exactly 1 changes no bit. It shortens the path into
  // O += P V (64-row units 1-2% faster beside wgmma P V, NOTES.md). Head_dim
  // 256 rescales every tile, above: the branch made its spills 2% slower.
  if constexpr (kHeadDim <= 128) {
    if (__any_sync(kFullMask, rescale[0] != 1.0f || rescale[1] != 1.0f)) {
      RescaleRow(state, 0, rescale[0]);
      RescaleRow(state, 1, rescale[1]);
    }
  }
}

#if PA_HAS_WGMMA
// O += P V for kTiles key tiles (AttendTile's wgmma P V, and the member
// pairs' overlapped steps'), issued and committed as one wgmma group: the
// caller waits (WgmmaWait) before O or `a` is touched again, then pins O
// (OLanded).
template <typename T, int kHeadDim, int kTiles = 2>
__device__ __forceinline__ void IssueValuesWgmma(
    RowState<kHeadDim>& state, const uint32_t (&a)[kTiles * KeysPerTile(kHeadDim) / 16][4],
    const uint32_t (&v_base)[kTiles]) {
  constexpr int kTileKeys = KeysPerTile(kHeadDim);
  constexpr int kStepsPerTile = kTileKeys / 16;
#pragma unroll
  for (int kb = 0; kb < kTiles * kStepsPerTile; ++kb) {
    // Keys kb * 16 .. + 15: 16 rows of 128 bytes into each column block of
    // their tile.
    WgmmaRegisterA<T, kHeadDim>::Run(
        state.o, a[kb],
        WgmmaDescriptorNMajor(v_base[kb / kStepsPerTile] + (kb % kStepsPerTile) * 16 * 128,
                              kTileKeys * 128),
        1);
  }
  WgmmaCommit();
}

// After the wait for a P V wgmma: O's registers hold its result, and no
// later read of them may be moved above the wait.
template <int kHeadDim>
__device__ __forceinline__ void OLanded(RowState<kHeadDim>& state) {
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
    for (int e = 0; e < 4; ++e) PinRegister(state.o[d][e]);
  }
}
#endif

// S = Q K^T, mask, online softmax and O += P V for one warp's 16 rows
// (row block `row_block` of the unit) and kTiles consecutive key tiles from
// key0 (ring stages at k_base / v_base). Two tiles at once (64-row units on
// wgmma) run the softmax's reductions, the rescale test and both wgmma waits
// once per 64 keys instead of once per 32. kScaleInExp (paired steps only):
// the logit scale applied in the exponent (see below). `kept_offsets`,
// `kept_query`: what the mma.sync steps keep in registers, or null
// (LaneTileOffsets, QueryFragments).
template <typename T, int kHeadDim, int kQueryRows, bool kTreeMasks, int kTiles = 1,
          bool kScaleInExp = false, int kRows = 16>
__device__ __forceinline__ void AttendTile(const PagedAttentionParams& p, const UnitView& unit,
                                           int row_block, int key0, bool use_wgmma, uint32_t q_base,
                                           const uint32_t (&k_base)[kTiles],
                                           const uint32_t (&v_base)[kTiles],
                                           RowState<kHeadDim, kRows>& state,
                                           const LaneTileOffsets<kHeadDim>* kept_offsets = nullptr,
                                           const QueryFragments<kHeadDim>* kept_query = nullptr) {
  constexpr int kTileKeys = KeysPerTile(kHeadDim);
  constexpr int kKeys = kTiles * kTileKeys;
  static_assert(kKeys <= 64, "a row's visible keys are one 64-bit mask");
  static_assert(kRows == 16 || (kHeadDim == 256 && kTiles == 1),
                "8-row states: head_dim 256 decode");
  const int lane = threadIdx.x % 32;
  const int ldm_row = lane % 8;
  const int ldm_hi8 = (lane / 8) % 2;
  const int ldm_hi16 = lane / 16;

  float s[kKeys / 8][4];
#pragma unroll
  for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
  }
  if (PA_HAS_WGMMA && use_wgmma) {
    QueryKeyWgmma<T, kHeadDim, kTiles>(q_base, k_base, s);
  } else if constexpr (kTiles == 1) {
    QueryKeyMmaSync<T, kHeadDim, kQueryRows, kRows>(row_block, q_base, k_base[0], s, kept_offsets,
                                                    kept_query);
  }

  // Scale, cap, mask and the online softmax, then O's rescale before O += P V.
  float rescale[2];
  SoftmaxStep<kHeadDim, kTreeMasks, kKeys, kScaleInExp, kRows>(p, unit, key0, s, state, rescale);
  RescaleO(state, rescale);

  // O += P V, P as A fragments (PackProbabilities).
#if PA_HAS_WGMMA
  // (head_dim 256 keeps mma.sync: two 128-column wgmma per k-step spilled
  // more and ran its verify 9% slower, NOTES.md.)
  if constexpr (kHeadDim <= 128) {
    if (use_wgmma) {
      // The warpgroup's 64 rows at once, P from registers (wgmma's A fragment
      // layout is mma.sync's) and V from shared memory.
      uint32_t a[kKeys / 16][4];
#pragma unroll
      for (int kb = 0; kb < kKeys / 16; ++kb) PackProbabilities<T, kKeys>(s, kb, a[kb]);
      WgmmaFence();  // o and a were written by this thread
      IssueValuesWgmma<T, kHeadDim, kTiles>(state, a, v_base);
      WgmmaWaitAll();
      OLanded(state);
      return;
    }
  }
#endif
  if constexpr (kTiles == 1) {
#pragma unroll
    for (int kb = 0; kb < kKeys / 16; ++kb) {
      uint32_t a[4];
      PackProbabilities<T, kKeys, kRows>(s, kb, a);
      const int row = kb * 16 + ldm_row + ldm_hi8 * 8;
#pragma unroll
      for (int db = 0; db < kHeadDim / 16; ++db) {
        uint32_t b[4];
        if (kept_offsets != nullptr) {
          LdMatrixX4Trans(
              b, v_base[0] + kept_offsets->v[db] + 2 * TileOffset<kHeadDim, kKeys>(kb * 16, 0));
        } else {
          LdMatrixX4Trans(b, v_base[0] + 2 * TileOffset<kHeadDim, kKeys>(row, db * 2 + ldm_hi16));
        }
        if constexpr (kRows == 16) {
          Mma16816<T>(state.o[2 * db], a, b[0], b[1]);
          Mma16816<T>(state.o[2 * db + 1], a, b[2], b[3]);
        } else {  // rows 8-15 are padding: only rows 0-7 accumulate
          Mma16816TopRows<T>(state.o[2 * db], a, b[0], b[1]);
          Mma16816TopRows<T>(state.o[2 * db + 1], a, b[2], b[3]);
        }
      }
    }
  }
}

// One key tile's step outside the paired loops (the general, tree and decode
// kernels' single-tile loops). At head_dim 64 the mma.sync steps take the
// scale-in-exponent softmax wherever it applies (a softcap, or a positive
// scale: SoftmaxStep): a head_dim 64 tile holds 64 keys, twice the softmax
// per byte of head_dim 128's 32, and the consumer warps' time per tile is
// what caps a CTA's read rate (NOTES.md `F2`: one CTA per SM on the H100 reads
// 1.20x slower than two, 1.01x with the tile's math skipped, 1.11x with this
// form). Every kernel that runs head_dim 64 units of up to 32 rows takes the
// same rule, so they agree bit for bit. `kept_offsets`, `kept_query`
// (LaneTileOffsets, QueryFragments): used by that form only.
template <typename T, int kHeadDim, int kQueryRows, bool kTreeMasks, int kRows = 16>
__device__ __forceinline__ void AttendSingleTile(
    const PagedAttentionParams& p, const UnitView& unit, int row_block, int key0, bool use_wgmma,
    uint32_t q_base, const uint32_t (&k_base)[1], const uint32_t (&v_base)[1],
    RowState<kHeadDim, kRows>& state, const LaneTileOffsets<kHeadDim>* kept_offsets = nullptr,
    const QueryFragments<kHeadDim>* kept_query = nullptr) {
  if constexpr (kHeadDim == 64) {
    if (!use_wgmma && ScaleInExponentAllowed(p)) {
      AttendTile<T, kHeadDim, kQueryRows, kTreeMasks, 1, true, kRows>(
          p, unit, row_block, key0, false, q_base, k_base, v_base, state, kept_offsets, kept_query);
      return;
    }
  }
  AttendTile<T, kHeadDim, kQueryRows, kTreeMasks, 1, false, kRows>(
      p, unit, row_block, key0, use_wgmma, q_base, k_base, v_base, state);
}

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_ATTEND_TILE_CUH_
