// The streaming K/V read of kv_read_pattern_kernels.h.
#include "attention/kernel/kv_read_pattern_kernels.h"

namespace paged_attention {
namespace {

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

// kChunksPerRow: 16-byte loads per (key, head) row (KvReadArgs::row_bytes / 16).
template <Layout kLayout, int kChunksPerRow>
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

// The bulk-copy reader (KvReadArgs::bulk): one warp per CTA. Each 16 KB
// stage holds 64 consecutive (key, head) rows of an item in pool order, sent
// as runs of `run_rows` rows that are contiguous in memory (a whole 8-key x
// 8-head block of a page for all-heads items, 64 keys of one head in the
// contiguous layout, one head's page in HND, otherwise one key's item.z
// adjacent heads: single 256-byte rows for one-head items);
// the lanes issue one cp.async.bulk per run, lane 0 counts the stage's bytes
// on its mbarrier. Nothing reads the shared memory: the time is the copies'.
constexpr int kRowsPerStage = kKvBulkStageBytes / kKvReadRowBytes;

__device__ __forceinline__ void BulkWait(uint32_t barrier, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}\n" ::"r"(barrier),
      "r"(parity)
      : "memory");
}

template <Layout kLayout>
__global__ void __launch_bounds__(32) KvBulkReadKernel(const KvReadArgs a) {
  extern __shared__ __align__(128) uint8_t ring[];
  __shared__ __align__(8) uint64_t full[kKvBulkStages];
  const int lane = threadIdx.x;
  const uint32_t ring_base = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  const uint32_t full_base = static_cast<uint32_t>(__cvta_generic_to_shared(full));
  if (lane == 0) {
    for (int s = 0; s < kKvBulkStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full_base + 8 * s));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncwarp();
  uint32_t committed = 0;  // stages filled so far
  for (int32_t it = a.cta_begin[blockIdx.x]; it < a.cta_begin[blockIdx.x + 1]; ++it) {
    const int4 item = a.items[it];
    const int32_t* pages = a.page_table + int64_t{item.x} * a.max_pages_per_request;
    const int run_rows = kLayout == kContiguous     ? 64
                         : kLayout == kPagedHnd     ? kKvReadPageSize
                         : item.z == a.num_kv_heads ? kRowsPerStage
                                                    : item.z;  // one key's item.z heads
    const int stages_per_tensor = a.keys_per_item * item.z / kRowsPerStage;
    for (int tensor = 0; tensor < 2; ++tensor) {
      const char* base = static_cast<const char*>(tensor == 0 ? a.k : a.v);
      for (int st = 0; st < stages_per_tensor; ++st) {
        const uint32_t stage = committed % kKvBulkStages;
        const uint32_t barrier = full_base + 8 * stage;
        if (committed >= kKvBulkStages) BulkWait(barrier, ((committed / kKvBulkStages) - 1) & 1);
        if (lane == 0) {
          asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(barrier),
                       "r"(kKvBulkStageBytes)
                       : "memory");
        }
        __syncwarp();
        for (int run = lane; run * run_rows < kRowsPerStage; run += 32) {
          const int r = st * kRowsPerStage + run * run_rows;  // first row of the run in the item
          const int key = item.w + r / item.z;
          const int head = item.y + r % item.z;
          int64_t row;
          if constexpr (kLayout == kPagedNhd) {
            row = (int64_t{__ldg(pages + key / kKvReadPageSize)} * kKvReadPageSize +
                   key % kKvReadPageSize) *
                      a.num_kv_heads +
                  head;
          } else if constexpr (kLayout == kPagedHnd) {
            const int64_t page = __ldg(pages + key / kKvReadPageSize);
            row = (page * a.num_kv_heads + head) * kKvReadPageSize + key % kKvReadPageSize;
          } else {
            row = (int64_t{item.x} * a.num_kv_heads + head) * a.seq_len + key;
          }
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
              "[%3];" ::"r"(ring_base + stage * kKvBulkStageBytes +
                            run * run_rows * kKvReadRowBytes),
              "l"(base + row * kKvReadRowBytes), "r"(run_rows * kKvReadRowBytes), "r"(barrier)
              : "memory");
        }
        __syncwarp();
        if (lane == 0) {
          asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(barrier) : "memory");
        }
        ++committed;
      }
    }
  }
  // Every copy lands before the CTA exits.
  for (uint32_t c = committed > kKvBulkStages ? committed - kKvBulkStages : 0; c < committed; ++c) {
    BulkWait(full_base + 8 * (c % kKvBulkStages), (c / kKvBulkStages) & 1);
  }
  a.out[blockIdx.x * kKvReadThreads + lane] = ring[lane * 4];
}

template <Layout kLayout>
cudaError_t LaunchBulk(const KvReadArgs& args, cudaStream_t stream) {
  constexpr int kSmem = kKvBulkStages * kKvBulkStageBytes;
  static const cudaError_t configured = cudaFuncSetAttribute(
      KvBulkReadKernel<kLayout>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (configured != cudaSuccess) return configured;
  KvBulkReadKernel<kLayout><<<args.num_ctas, 32, kSmem, stream>>>(args);
  return cudaGetLastError();
}

template <int kChunksPerRow>
cudaError_t LaunchLoads(const KvReadArgs& args, cudaStream_t stream) {
  if (args.page_table == nullptr) {
    KvReadKernel<kContiguous, kChunksPerRow><<<args.num_ctas, kKvReadThreads, 0, stream>>>(args);
  } else if (args.heads_outside_pages_rows != 0) {
    KvReadKernel<kPagedHnd, kChunksPerRow><<<args.num_ctas, kKvReadThreads, 0, stream>>>(args);
  } else {
    KvReadKernel<kPagedNhd, kChunksPerRow><<<args.num_ctas, kKvReadThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
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
  if (args.bulk != 0) {
    if (args.row_bytes != kKvReadRowBytes) return cudaErrorInvalidValue;
    return args.page_table == nullptr           ? LaunchBulk<kContiguous>(args, stream)
           : args.heads_outside_pages_rows != 0 ? LaunchBulk<kPagedHnd>(args, stream)
                                                : LaunchBulk<kPagedNhd>(args, stream);
  }
  switch (args.row_bytes) {
    case kKvReadRowBytes:
      return LaunchLoads<kKvReadRowBytes / 16>(args, stream);
    case kKvReadRowBytes / 2:
      return LaunchLoads<kKvReadRowBytes / 2 / 16>(args, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace paged_attention
