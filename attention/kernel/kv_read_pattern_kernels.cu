// The streaming K/V read of kv_read_pattern_kernels.h.
#include "attention/kernel/kv_read_pattern_kernels.h"

namespace paged_attention {
namespace {

constexpr int kChunksPerRow = kKvReadRowBytes / 16;  // 16-byte loads per (key, head)
constexpr int kUnroll = 8;  // 8 K + 8 V independent loads in flight per thread

// Read-only, streamed past L1: the data is read exactly once.
__device__ __forceinline__ int4 LoadStreaming(const int4* p) {
  int4 r;
  asm("ld.global.nc.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
}

// kLayout: kContiguous, kPagedNhd or kPagedHnd (kv_read_pattern_kernels.h).
// A template argument so that the unrolled loads have no branch between them. The
// min-blocks bound of 2 matters: without it ptxas (CUDA 13.0) picked 32
// registers, too few to keep 16 x 16-byte loads in flight; with it, ~84.
enum Layout { kContiguous, kPagedNhd, kPagedHnd };

template <Layout kLayout>
__global__ void __launch_bounds__(kKvReadThreads, 2) KvReadKernel(const KvReadArgs a) {
  const int4* k = static_cast<const int4*>(a.k);
  const int4* v = static_cast<const int4*>(a.v);
  int4 acc = make_int4(0, 0, 0, 0);
  for (int32_t it = a.cta_begin[blockIdx.x]; it < a.cta_begin[blockIdx.x + 1]; ++it) {
    const int4 item = a.items[it];  // {request, head_begin, head_count, key_begin}
    const int32_t* pages = a.page_table + int64_t{item.x} * a.max_pages_per_request;
    // Chunk i of the item: key i >> key_shift, then head, then 16-byte chunk,
    // the order of the pool's bytes, so consecutive threads read consecutive
    // addresses within a key's row of heads.
    const int key_shift = __ffs(item.z * kChunksPerRow) - 1;
    const int total = a.keys_per_item * item.z * kChunksPerRow;
    for (int base = threadIdx.x; base < total; base += kKvReadThreads * kUnroll) {
      int4 data[2 * kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kKvReadThreads;
        const int key = item.w + (i >> key_shift);
        const int head = item.y + ((i & ((1 << key_shift) - 1)) / kChunksPerRow);
        const int chunk = i % kChunksPerRow;
        int64_t row;  // (key, head) row index in the tensor
        if constexpr (kLayout == kPagedNhd) {
          const int64_t slot = int64_t{__ldg(pages + key / kKvReadPageSize)} * kKvReadPageSize +
                               key % kKvReadPageSize;
          row = slot * a.num_kv_heads + head;
        } else if constexpr (kLayout == kPagedHnd) {
          const int64_t page = __ldg(pages + key / kKvReadPageSize);
          row = (page * a.num_kv_heads + head) * kKvReadPageSize + key % kKvReadPageSize;
        } else {
          row = (int64_t{item.x} * a.num_kv_heads + head) * a.seq_len + key;
        }
        data[2 * u] = LoadStreaming(k + row * kChunksPerRow + chunk);
        data[2 * u + 1] = LoadStreaming(v + row * kChunksPerRow + chunk);
      }
#pragma unroll
      for (int u = 0; u < 2 * kUnroll; ++u) {
        acc.x ^= data[u].x;
        acc.y ^= data[u].y;
        acc.z ^= data[u].z;
        acc.w ^= data[u].w;
      }
    }
  }
  a.out[blockIdx.x * kKvReadThreads + threadIdx.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}

}  // namespace

int KvReadNumCtas() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  return 2 * sms;
}

cudaError_t LaunchKvRead(const KvReadArgs& args, cudaStream_t stream) {
  if (args.num_ctas <= 0 || args.keys_per_item <= 0) return cudaErrorInvalidValue;
  if (args.page_table == nullptr) {
    KvReadKernel<kContiguous><<<args.num_ctas, kKvReadThreads, 0, stream>>>(args);
  } else if (args.heads_outside_pages_rows != 0) {
    KvReadKernel<kPagedHnd><<<args.num_ctas, kKvReadThreads, 0, stream>>>(args);
  } else {
    KvReadKernel<kPagedNhd><<<args.num_ctas, kKvReadThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

}  // namespace paged_attention
