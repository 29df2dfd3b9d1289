// The device side of the paged attention kernels as seen from host code: the
// params struct and the functions each .cu file defines. Includes no Abseil or
// glog (the .cu files include it) and no nvcc-only headers (the host launcher
// includes it). Host code should use paged_attention.h; this header is the
// contract between paged_attention.cc and the .cu files.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_H_
#define ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "attention/base/dtype.h"
#include "attention/planner/work_plan.h"

namespace paged_attention {

// A TMA tensor map: the driver's CUtensorMap (128 opaque bytes, 128-byte
// aligned), kept opaque here so host code needs no driver header.
struct alignas(128) TmaDescriptor {
  uint64_t opaque[16];
};

// Key rows per TMA box of K/V for `page_size` and a key tile of
// `keys_per_tile` keys, or 0 when tiles do not split into whole boxes of at
// least 8 rows (the 128-byte swizzle's period): then every tile goes by
// cp.async. A box is the tile's part of one page (page_size a multiple of the
// tile) or one whole page (the tile a multiple of page_size).
constexpr int32_t TmaBoxRows(int32_t page_size, int32_t keys_per_tile) {
  if (page_size >= keys_per_tile) return page_size % keys_per_tile == 0 ? keys_per_tile : 0;
  return page_size >= 8 && keys_per_tile % page_size == 0 ? page_size : 0;
}

// Kernel params: device pointers and the scalars the kernels read, built by the
// host launcher from PagedAttentionArgs. Passed by value.
struct PagedAttentionParams {
  const void* q = nullptr;        // [total_q_tokens, num_q_heads, head_dim]
  const void* k_cache = nullptr;  // [num_pages, page_size, num_kv_heads, head_dim]
  const void* v_cache = nullptr;  // [num_pages, page_size, num_kv_heads, head_dim]
  void* out = nullptr;            // [total_q_tokens, num_q_heads, head_dim]
  float* lse = nullptr;           // [num_q_heads, total_q_tokens] or null
  // Segments of cut units, in the caller's workspace (plan.max_partials slots):
  float* partial_out = nullptr;  // [max_partials, kUnitRows, head_dim], normalized
  float* partial_lse = nullptr;  // [max_partials, kUnitRows], natural log

  const int32_t* cache_seqlens = nullptr;  // [batch_size]
  const int32_t* cu_seqlens_q = nullptr;   // [batch_size + 1]
  const int32_t* page_table = nullptr;     // [batch_size, max_pages_per_request]
  const uint64_t* tree_mask = nullptr;     // [total_q_tokens] or null (attention_metadata.h)
  WorkPlanView plan;
  // Whole-page K/V copies with TMA (interior key tiles; page sizes that tile
  // evenly): 3-D maps (head_dim, kv_head, slot) of the two pools, filled by
  // LaunchPagedAttentionKernel when use_tma != 0 and the geometry allows.
  TmaDescriptor k_tma;
  TmaDescriptor v_tma;
  int32_t tma_box_rows = 0;  // key rows per TMA box; 0: every tile by cp.async

  int32_t total_q_tokens = 0;  // row stride of lse
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t group = 0;  // num_q_heads / num_kv_heads
  int32_t page_size = 0;
  int32_t max_pages_per_request = 0;
  int32_t num_pages = 0;  // pages in each pool (the tensor maps' extent)

  int32_t use_wgmma = 1;            // 64-row units: Q K^T with wgmma (sm_90a builds)
  int32_t use_tma = 1;              // 0: K/V by cp.async only (A/B runs)
  int32_t causal = 1;               // 1: bottom-right causal; 0: non-causal
  int32_t window_left = -1;         // causal only; -1 = no window
  float scale_log2 = 0.0f;          // softmax_scale * log2(e)         (no softcap)
  float scale_over_softcap = 0.0f;  // softmax_scale / softcap          (softcap)
  float softcap_log2 = 0.0f;        // softcap * log2(e); 0 = no softcap

  // Host only: rows of the plan's largest unit, or a bound on them
  // (min(kUnitRows, max_seq_len_q x group)); picks the decode kernel when
  // small enough.
  int32_t max_unit_rows = kUnitRows;
  // 1: the grid was launched cooperatively (every CTA resident at once), so
  // the decode kernel may have the pieces of a unit wait for each other
  // (WorkSegment::merge_by_all). Set by LaunchPagedAttentionKernel.
  int32_t cooperative = 0;
  // Host only (after the fields the kernels read, whose offsets it leaves
  // as they were): query rows of the plan's largest request (max_seq_len_q x
  // group, saturated to int32), or a bound on them. Above kUnitRows a
  // request's units may share K/V (compute-bound): the paired-tiles kernels
  // then take their deep ring.
  int32_t max_request_rows = kUnitRows;
  // Host only. 2: the plan's units are pairs of KV heads
  // (WorkPlanView::kv_heads_per_unit), which the head_dim 64 launcher gives
  // the head_dim 128 decode kernel's pairs instantiation, on the pools viewed
  // as rows of 128 (num_kv_heads and group above are then the units': half
  // the call's KV heads, twice its group); q, out and the partials keep
  // head_dim 64. 1: one KV head per unit.
  int32_t kv_heads_per_unit = 1;
};

static_assert(std::is_trivially_copyable<PagedAttentionParams>::value,
              "PagedAttentionParams is passed by value to CUDA kernels");

// The attention kernel for one (dtype, head_dim), one instantiation per .cu
// file. Grid: params.plan.num_workers CTAs; each runs its plan segments and
// writes out/lse (uncut units) or its partial (cut units); the worker that
// finishes the last piece of a cut unit of <= kFusedMergeMaxRows rows (twice
// that for KV head pairs: MergedByAttentionKernel) merges it (or, for a decode plan whose merges
// all stay in the kernel and whose grid fits on the GPU at once, launched cooperatively, the unit's
// pieces merge a slice each). Every CTA also zero-fills its share of the CUDA-graph padding tokens.
// Returns the launch error.
template <DType kDType, int kHeadDim>
cudaError_t LaunchPagedAttentionKernel(const PagedAttentionParams& params, cudaStream_t stream);

// CTAs of that kernel one SM holds (occupancy calculator). Also raises the
// kernel's dynamic shared-memory limit, once per process.
template <DType kDType, int kHeadDim>
cudaError_t PagedAttentionKernelOccupancy(int* ctas_per_sm);

#define PA_DECLARE_ATTENTION_KERNEL(dtype, head_dim)                       \
  extern template cudaError_t LaunchPagedAttentionKernel<dtype, head_dim>( \
      const PagedAttentionParams&, cudaStream_t);                          \
  extern template cudaError_t PagedAttentionKernelOccupancy<dtype, head_dim>(int*)
PA_DECLARE_ATTENTION_KERNEL(DType::kBFloat16, 64);
PA_DECLARE_ATTENTION_KERNEL(DType::kBFloat16, 128);
PA_DECLARE_ATTENTION_KERNEL(DType::kBFloat16, 256);
PA_DECLARE_ATTENTION_KERNEL(DType::kFloat16, 64);
PA_DECLARE_ATTENTION_KERNEL(DType::kFloat16, 128);
PA_DECLARE_ATTENTION_KERNEL(DType::kFloat16, 256);
#undef PA_DECLARE_ATTENTION_KERNEL

// The merge kernel: combines the partials of the plan's merge tasks whose
// units have more than kFusedMergeMaxRows rows (MergedByAttentionKernel; the attention
// kernel merges the others itself), LSE-weighted in partial order. Its
// `merge_blocks` blocks take one (task, row) item per warp, or two adjacent
// rows when the items outnumber the warps, for rows < rows_per_task (an
// upper bound on any unit's rows); 0 blocks launch nothing. `row_pairs`
// picks the instantiation with the two-row path, for plans whose capacity
// can hold more items than the grid has warps.
// Launch right after the attention kernel on the same stream: it is launched
// as its programmatic dependent and waits for it on the device.
cudaError_t LaunchPagedAttentionMerge(DType dtype, int32_t head_dim, int32_t rows_per_task,
                                      const PagedAttentionParams& params, int32_t merge_blocks,
                                      bool row_pairs, cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_H_
