// Launcher of the GPU KV write, shared by kv_cache.cc (host, Abseil) and
// kv_write.cu (nvcc). No Abseil here: .cu files never see it.
#ifndef KV_CACHE_KV_WRITE_KERNEL_H_
#define KV_CACHE_KV_WRITE_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

namespace paged_attention {

// Passed to the kernel by value. All pointers are device pointers.
struct KvWriteParams {
  const void* new_k;     // [num_tokens, row_bytes] new K rows
  const void* new_v;     // [num_tokens, row_bytes] new V rows
  const int32_t* slots;  // [num_tokens] destination slot; < 0 = padding, skipped
  void* k_cache;         // [num_slots, row_bytes]
  void* v_cache;         // [num_slots, row_bytes]
  int32_t num_tokens;    // rows to write
  int32_t num_slots;     // slots in each cache; slots >= this are skipped
  int64_t row_bytes;     // bytes of one token's row: num_kv_heads * head_dim * dtype size
};
static_assert(std::is_trivially_copyable<KvWriteParams>::value,
              "kernel params are passed by value");

// Copies each token's K and V row to its slot with the widest vector access
// (16, 8, 4 or 2 bytes) that row_bytes and every pointer's alignment allow.
// Enqueued on `stream`; returns the launch error. Graph-capture safe.
cudaError_t LaunchKvWriteKernel(const KvWriteParams& params, cudaStream_t stream);

}  // namespace paged_attention

#endif  // KV_CACHE_KV_WRITE_KERNEL_H_
