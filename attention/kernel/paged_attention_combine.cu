// Split-KV combine: out = sum_s w_s * O_s with w_s = exp(lse_s - lse) and
// lse = log sum_s exp(lse_s), per (query token, query head). Same grid as the
// attention kernel minus the split axis; requests with one active split were
// written directly by the attention kernel and are skipped here.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/paged_attention_kernel.h"

namespace paged_attention {
namespace {

constexpr int kCombineThreads = 128;

template <typename T>
__device__ __forceinline__ void StoreFour(T* out, float4 value);

template <>
__device__ __forceinline__ void StoreFour<__nv_bfloat16>(__nv_bfloat16* out, float4 value) {
  __nv_bfloat162 lo = __floats2bfloat162_rn(value.x, value.y);
  __nv_bfloat162 hi = __floats2bfloat162_rn(value.z, value.w);
  uint2 bits = make_uint2(*reinterpret_cast<uint32_t*>(&lo), *reinterpret_cast<uint32_t*>(&hi));
  *reinterpret_cast<uint2*>(out) = bits;
}

template <>
__device__ __forceinline__ void StoreFour<__half>(__half* out, float4 value) {
  __half2 lo = __floats2half2_rn(value.x, value.y);
  __half2 hi = __floats2half2_rn(value.z, value.w);
  uint2 bits = make_uint2(*reinterpret_cast<uint32_t*>(&lo), *reinterpret_cast<uint32_t*>(&hi));
  *reinterpret_cast<uint2*>(out) = bits;
}

template <typename T>
__global__ void __launch_bounds__(kCombineThreads) CombineKernel(const PagedAttentionParams p) {
  __shared__ float weights[kAttentionBlockM][kMaxSupportedKvSplits];

  int block = blockIdx.x;
  const int m_tile = block % p.num_m_tiles;
  block /= p.num_m_tiles;
  const int kv_head = block % p.num_kv_heads;
  const int request = block / p.num_kv_heads;

  const int q_begin = p.cu_seqlens_q[request];
  const int q_len = p.cu_seqlens_q[request + 1] - q_begin;
  const int k_len = p.cache_seqlens[request];
  const int group = p.group;
  const int num_rows = q_len * group;
  const int row0 = m_tile * kAttentionBlockM;
  if (row0 >= num_rows) return;
  const int splits = NumActiveSplits(k_len, SplitKeyChunk(k_len, p.num_kv_splits));
  if (splits <= 1) return;

  const int tid = threadIdx.x;
  if (tid < kAttentionBlockM && row0 + tid < num_rows) {
    const int packed = row0 + tid;
    const int token = q_begin + packed / group;
    const int head = kv_head * group + packed % group;
    const int64_t split_stride = int64_t{p.total_q_tokens} * p.num_q_heads;
    const int64_t base = int64_t{token} * p.num_q_heads + head;
    float max_lse = -INFINITY;
    for (int s = 0; s < splits; ++s) {
      const float lse = p.partial_lse[s * split_stride + base];
      weights[tid][s] = lse;
      max_lse = fmaxf(max_lse, lse);
    }
    float sum = 0.0f;
    for (int s = 0; s < splits; ++s) {
      const float w = max_lse == -INFINITY ? 0.0f : __expf(weights[tid][s] - max_lse);
      weights[tid][s] = w;
      sum += w;
    }
    const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int s = 0; s < splits; ++s) weights[tid][s] *= inv_sum;
    if (p.lse != nullptr) {
      p.lse[int64_t{head} * p.total_q_tokens + token] =
          sum > 0.0f ? max_lse + logf(sum) : -INFINITY;
    }
  }
  __syncthreads();

  const int quads_per_row = p.head_dim / 4;
  const int rows = min(kAttentionBlockM, num_rows - row0);
  const int64_t split_stride = int64_t{p.total_q_tokens} * p.num_q_heads * p.head_dim;
  for (int item = tid; item < rows * quads_per_row; item += kCombineThreads) {
    const int row = item / quads_per_row;
    const int quad = item % quads_per_row;
    const int packed = row0 + row;
    const int token = q_begin + packed / group;
    const int head = kv_head * group + packed % group;
    const int64_t offset = (int64_t{token} * p.num_q_heads + head) * p.head_dim + quad * 4;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int s = 0; s < splits; ++s) {
      const float w = weights[row][s];
      if (w == 0.0f) continue;  // empty split: skip its bytes
      const float4 part =
          *reinterpret_cast<const float4*>(p.partial_out + s * split_stride + offset);
      acc.x += w * part.x;
      acc.y += w * part.y;
      acc.z += w * part.z;
      acc.w += w * part.w;
    }
    StoreFour<T>(static_cast<T*>(p.out) + offset, acc);
  }
}

}  // namespace

cudaError_t LaunchPagedAttentionCombine(DType dtype, const PagedAttentionParams& params,
                                        cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(params.num_m_tiles) * params.batch_size *
                  params.num_kv_heads);
  if (dtype == DType::kBFloat16) {
    CombineKernel<__nv_bfloat16><<<grid, kCombineThreads, 0, stream>>>(params);
  } else if (dtype == DType::kFloat16) {
    CombineKernel<__half><<<grid, kCombineThreads, 0, stream>>>(params);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace paged_attention
