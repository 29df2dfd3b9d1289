// The device side of the paged attention kernel, as seen from host code: the
// kernel params struct, the launch functions each .cu file defines, and the
// split-KV arithmetic that the kernel, the combine step and the host launcher
// must agree on. Includes no Abseil and no glog (the .cu files include it), and
// no nvcc-only headers (the host launcher includes it).
//
// Host code should use paged_attention.h; this header is the contract between
// paged_attention.cc and the .cu files.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_H_
#define ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "attention/base/dtype.h"

#if defined(__CUDACC__)
#define PA_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define PA_HOST_DEVICE inline
#endif

namespace paged_attention {

// Packed query rows (query token x query head of one KV head) per CTA.
inline constexpr int32_t kAttentionBlockM = 64;
// A split's key range is a multiple of this many keys (a multiple of every
// key-tile size, so no key tile straddles two splits).
inline constexpr int32_t kSplitKeyGranularity = 64;
// Largest num_kv_splits the combine step supports (its shared-memory table).
inline constexpr int32_t kMaxSupportedKvSplits = 128;

// Kernel params: device pointers and the scalars the kernel reads, built by
// the host launcher from PagedAttentionArgs. Trivially copyable (passed by
// value to the kernels).
struct PagedAttentionParams {
  const void* q = nullptr;        // [total_q_tokens, num_q_heads, head_dim]
  const void* k_cache = nullptr;  // [num_pages, page_size, num_kv_heads, head_dim]
  const void* v_cache = nullptr;  // [num_pages, page_size, num_kv_heads, head_dim]
  void* out = nullptr;            // [total_q_tokens, num_q_heads, head_dim]
  float* lse = nullptr;           // [num_q_heads, total_q_tokens] or null
  // Split-KV partials (num_kv_splits > 1 only), in the caller's workspace:
  float* partial_out = nullptr;  // [num_kv_splits, total_q_tokens, num_q_heads, head_dim]
  float* partial_lse = nullptr;  // [num_kv_splits, total_q_tokens, num_q_heads]

  const int32_t* cache_seqlens = nullptr;  // [batch_size]
  const int32_t* cu_seqlens_q = nullptr;   // [batch_size + 1]
  const int32_t* page_table = nullptr;     // [batch_size, max_pages_per_request]

  int32_t batch_size = 0;      // rows of the per-request arrays (capacity on graphs)
  int32_t total_q_tokens = 0;  // capacity: stride of lse and the partials
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t group = 0;  // num_q_heads / num_kv_heads
  int32_t head_dim = 0;
  int32_t page_size = 0;
  int32_t max_pages_per_request = 0;
  int32_t num_kv_splits = 1;
  int32_t num_m_tiles = 0;  // ceil(max_seq_len_q * group / kAttentionBlockM)

  int32_t causal = 1;               // 1: bottom-right causal; 0: non-causal
  int32_t window_left = -1;         // causal only; -1 = no window
  float scale_log2 = 0.0f;          // softmax_scale * log2(e)         (no softcap)
  float scale_over_softcap = 0.0f;  // softmax_scale / softcap          (softcap)
  float softcap_log2 = 0.0f;        // softcap * log2(e); 0 = no softcap
};

static_assert(std::is_trivially_copyable<PagedAttentionParams>::value,
              "PagedAttentionParams is passed by value to CUDA kernels");

// Keys per split for a request with `k_len` keys cut into `num_kv_splits`:
// ceil(k_len / num_kv_splits) rounded up to kSplitKeyGranularity (at least one
// granule). Computed per request in the kernel, so a graph captured with short
// keys splits long replayed keys correctly.
PA_HOST_DEVICE int32_t SplitKeyChunk(int32_t k_len, int32_t num_kv_splits) {
  const int32_t per_split = (k_len + num_kv_splits - 1) / num_kv_splits;
  const int32_t granules = (per_split + kSplitKeyGranularity - 1) / kSplitKeyGranularity;
  return (granules > 0 ? granules : 1) * kSplitKeyGranularity;
}

// Splits that hold at least one key (1 for an empty request). A request with
// one active split writes its output directly and skips the combine step.
PA_HOST_DEVICE int32_t NumActiveSplits(int32_t k_len, int32_t chunk) {
  return k_len <= 0 ? 1 : (k_len + chunk - 1) / chunk;
}

// Launches the attention kernel for one (dtype, head_dim); each instantiation
// lives in its own .cu file. Writes `out`/`lse` directly for requests with one
// active split and the partials otherwise. Returns the launch error.
template <DType kDType, int kHeadDim>
cudaError_t LaunchPagedAttentionKernel(const PagedAttentionParams& params, cudaStream_t stream);

#define PA_DECLARE_ATTENTION_KERNEL(dtype, head_dim)                       \
  extern template cudaError_t LaunchPagedAttentionKernel<dtype, head_dim>( \
      const PagedAttentionParams&, cudaStream_t)
PA_DECLARE_ATTENTION_KERNEL(DType::kBFloat16, 64);
PA_DECLARE_ATTENTION_KERNEL(DType::kBFloat16, 128);
PA_DECLARE_ATTENTION_KERNEL(DType::kBFloat16, 256);
PA_DECLARE_ATTENTION_KERNEL(DType::kFloat16, 64);
PA_DECLARE_ATTENTION_KERNEL(DType::kFloat16, 128);
PA_DECLARE_ATTENTION_KERNEL(DType::kFloat16, 256);
#undef PA_DECLARE_ATTENTION_KERNEL

// Merges the split partials (LSE-weighted) into `out` and `lse` for requests
// with more than one active split. Launch after the attention kernel.
cudaError_t LaunchPagedAttentionCombine(DType dtype, const PagedAttentionParams& params,
                                        cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_H_
