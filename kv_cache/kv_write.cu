// The set_kv_buffer kernel: scatter new K/V rows into their cache slots.
#include <algorithm>
#include <cstdint>

#include "kv_cache/kv_write_kernel.h"

namespace paged_attention {
namespace {

constexpr int kMaxThreads = 256;
// Enough blocks to fill an H200 many times over; larger batches loop.
constexpr int kMaxBlocks = 65535;

// One block per token (grid-strided); the block's threads copy the K and V
// rows in `Vec`-wide pieces, so consecutive threads touch consecutive bytes.
template <typename Vec>
__global__ void __launch_bounds__(kMaxThreads) KvWriteKernel(KvWriteParams params) {
  const int64_t vecs_per_row = params.row_bytes / static_cast<int64_t>(sizeof(Vec));
  const Vec* __restrict__ new_k = static_cast<const Vec*>(params.new_k);
  const Vec* __restrict__ new_v = static_cast<const Vec*>(params.new_v);
  Vec* __restrict__ k_cache = static_cast<Vec*>(params.k_cache);
  Vec* __restrict__ v_cache = static_cast<Vec*>(params.v_cache);
  // int64: with num_tokens near INT32_MAX, token + gridDim.x would overflow.
  for (int64_t token = blockIdx.x; token < params.num_tokens; token += gridDim.x) {
    const int32_t slot = params.slots[token];
    // Padding, or a slot the host never validated (e.g. a stale graph input):
    // never write outside the cache.
    if (slot < 0 || slot >= params.num_slots) continue;
    const int64_t src = token * vecs_per_row;
    const int64_t dst = int64_t{slot} * vecs_per_row;
    for (int64_t i = threadIdx.x; i < vecs_per_row; i += blockDim.x) {
      k_cache[dst + i] = new_k[src + i];
      v_cache[dst + i] = new_v[src + i];
    }
  }
}

template <typename Vec>
cudaError_t Launch(const KvWriteParams& params, cudaStream_t stream) {
  const int64_t vecs_per_row = params.row_bytes / static_cast<int64_t>(sizeof(Vec));
  const int threads =
      static_cast<int>(std::min<int64_t>(kMaxThreads, (vecs_per_row + 31) / 32 * 32));
  const int blocks = std::min(params.num_tokens, kMaxBlocks);
  KvWriteKernel<Vec><<<blocks, threads, 0, stream>>>(params);
  return cudaGetLastError();
}

// The widest access size (16, 8, 4, 2) dividing every address and the row.
int VectorBytes(const KvWriteParams& params) {
  const uint64_t bits =
      reinterpret_cast<uintptr_t>(params.new_k) | reinterpret_cast<uintptr_t>(params.new_v) |
      reinterpret_cast<uintptr_t>(params.k_cache) | reinterpret_cast<uintptr_t>(params.v_cache) |
      static_cast<uint64_t>(params.row_bytes);
  for (int bytes : {16, 8, 4}) {
    if (bits % bytes == 0) return bytes;
  }
  return 2;
}

}  // namespace

cudaError_t LaunchKvWriteKernel(const KvWriteParams& params, cudaStream_t stream) {
  if (params.num_tokens <= 0 || params.row_bytes <= 0) return cudaSuccess;
  if (params.row_bytes % 2 != 0) return cudaErrorInvalidValue;  // dtypes are 2 or 4 bytes
  switch (VectorBytes(params)) {
    case 16:
      return Launch<uint4>(params, stream);
    case 8:
      return Launch<uint2>(params, stream);
    case 4:
      return Launch<uint32_t>(params, stream);
    default:
      return Launch<uint16_t>(params, stream);
  }
}

}  // namespace paged_attention
