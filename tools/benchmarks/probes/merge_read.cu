// Probe: how fast one CTA reads the partials that other CTAs of the same
// launch have just written (the fused merge's tail), by the fused merge's
// batches of loads or with every copy in flight at once.
//
// Why: in the one-request decode the unit's last CTA merges 33 partials
// (2 KB each at 32/8, 4 KB at 64/8) and that tail takes 5-8.7 us; staging
// every partial at once by cp.async made it slower, not faster (NOTES.md,
// Variants `STG`). If one SM pulls freshly written partials at ~20 GB/s
// whatever the issue pattern, the merge must be spread over the unit's CTAs;
// if it pulls them at L2 speed here, the kernel's tail is slow for another
// reason (what else runs at that moment).
//
// Not part of the build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a
// -o merge_read merge_read.cu, then ./merge_read on the GPU machine.
// 264 CTAs of 128 threads in 8 units of 33 "pieces": each CTA writes its
// partial (rows x 128 floats), counts it on its unit (fence, atomicInc,
// fence), and the unit's last CTA reads the 33 partials and sums them.
// Each line: the median over units and 7 launches of that last CTA's read
// (from its acquire to the sum in hand: clock64 cycles and globaltimer us;
// with 2 passes, the second: the same lines read again), the partials in a
// ~1 MB allocation ("small") or inside a 64 MB one ("big", 2 MB pages), with the partials written
// by this launch ("fresh"), by the launch before ("l2": still in L2) or before an L2 flush
// ("dram").
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

constexpr int kUnits = 8;
constexpr int kPieces = 33;
constexpr int kCtas = kUnits * kPieces;
constexpr int kThreads = 128;

__device__ unsigned g_arrivals[kUnits];

__device__ __forceinline__ long long GlobalTimer() {
  long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// kMode 0: one warp per row, 8 loads of 16 bytes per lane in flight (the
// fused merge's MergeRow); 1: every 16-byte piece by cp.async.cg at once into
// shared memory, then summed from there.
template <int kMode>
__global__ void __launch_bounds__(kThreads)
    WriteThenRead(float* partials, int rows, int write, int passes, long long* cycles,
                  long long* nanos, float* sink) {
  extern __shared__ float4 staged[];
  __shared__ int is_last;
  const int unit = blockIdx.x / kPieces;
  const int per_partial = rows * 32;  // float4s
  float4* mine = reinterpret_cast<float4*>(partials) + size_t(blockIdx.x) * per_partial;
  if (write) {
    for (int i = threadIdx.x; i < per_partial; i += kThreads) {
      mine[i] = make_float4(blockIdx.x, i, 1.0f, 2.0f);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    const bool last = atomicInc(&g_arrivals[unit], kPieces - 1) == kPieces - 1;
    if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    is_last = last;
  }
  __syncthreads();
  if (!is_last) return;
  long long c0 = 0, n0 = 0;
  float4 acc = make_float4(0, 0, 0, 0);
  for (int pass = 0; pass < passes; ++pass) {
    if (pass == passes - 1) {
      c0 = clock64();
      n0 = GlobalTimer();
    }
    const float4* unit_base =
        reinterpret_cast<const float4*>(partials) + size_t(unit) * kPieces * per_partial;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (kMode == 0) {
      for (int r = warp; r < rows; r += kThreads / 32) {
        for (int j = 0; j < kPieces; j += 8) {
          float4 v[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            v[u] = j + u < kPieces ? __ldcg(unit_base + (j + u) * per_partial + r * 32 + lane)
                                   : make_float4(0, 0, 0, 0);
          }
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            acc.x += v[u].x;
            acc.y += v[u].y;
            acc.z += v[u].z;
            acc.w += v[u].w;
          }
        }
      }
    } else {
      const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(staged));
      for (int j = 0; j < kPieces; ++j) {
        for (int c = threadIdx.x; c < per_partial; c += kThreads) {
          asm volatile(
              "cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(base + 16 * (j * per_partial + c)),
              "l"(unit_base + j * per_partial + c)
              : "memory");
        }
      }
      asm volatile("cp.async.wait_all;" ::: "memory");
      __syncthreads();
      for (int r = warp; r < rows; r += kThreads / 32) {
        for (int j = 0; j < kPieces; ++j) {
          const float4 v = staged[j * per_partial + r * 32 + lane];
          acc.x += v.x;
          acc.y += v.y;
          acc.z += v.z;
          acc.w += v.w;
        }
      }
    }
    __syncthreads();
  }
  const long long c1 = clock64(), n1 = GlobalTimer();
  sink[blockIdx.x * kThreads + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
  if (threadIdx.x == 0) {
    cycles[unit] = c1 - c0;
    nanos[unit] = n1 - n0;
  }
}

__global__ void Flush(const int4* buffer, size_t count, int* sink) {
  int x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    x ^= buffer[i].x;
  }
  if (x == 0x7fffffff) *sink = x;
}

int main() {
  constexpr size_t kFlushBytes = size_t(256) << 20;
  constexpr size_t kBigBytes = size_t(64) << 20;  // 2 MB pages, like a serving arena
  float *small, *big, *sink;
  long long *cycles, *nanos;
  int4* flush;
  int* flush_sink;
  cudaMalloc(&small, size_t(kCtas) * 8 * 128 * 4);  // ~1 MB: small pages
  cudaMalloc(&big, kBigBytes);
  cudaMalloc(&sink, kCtas * kThreads * 4);
  cudaMalloc(&cycles, kUnits * 8);
  cudaMalloc(&nanos, kUnits * 8);
  cudaMalloc(&flush, kFlushBytes);
  cudaMalloc(&flush_sink, 4);
  cudaMemset(flush, 1, kFlushBytes);
  const int smem = kPieces * 8 * 32 * 16;  // 132 KB: 33 partials of 8 rows
  cudaFuncSetAttribute(WriteThenRead<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const char* freshness[] = {"fresh", "l2", "dram"};
  for (int rows : {4, 8}) {
    for (int mode : {0, 1}) {
      for (int f = 0; f < 3; ++f) {
        for (int in_big : {0, 1}) {
          for (int passes : {1, 2}) {
            float* partials = in_big ? big + (size_t(32) << 20) / 4 : small;
            auto launch_once = [&](int write) {
              (mode ? WriteThenRead<1> : WriteThenRead<0>)<<<kCtas, kThreads, mode ? smem : 0>>>(
                  partials, rows, write, passes, cycles, nanos, sink);
            };
            std::vector<long long> cyc, ns;
            for (int launch = 0; launch < 8; ++launch) {
              if (f > 0) launch_once(1);  // "l2"/"dram": written by the launch before
              if (f == 2) Flush<<<264, 256>>>(flush, kFlushBytes / 16, flush_sink);
              launch_once(f == 0);
              long long c[kUnits], n[kUnits];
              cudaMemcpy(c, cycles, sizeof(c), cudaMemcpyDeviceToHost);
              cudaMemcpy(n, nanos, sizeof(n), cudaMemcpyDeviceToHost);
              if (launch == 0) continue;  // warm-up
              cyc.insert(cyc.end(), c, c + kUnits);
              ns.insert(ns.end(), n, n + kUnits);
            }
            std::sort(cyc.begin(), cyc.end());
            std::sort(ns.begin(), ns.end());
            const double bytes = double(kPieces) * rows * 512;
            const double med_ns = double(ns[ns.size() / 2]);
            printf(
                "rows %d %-7s %-5s %-5s pass %d/%d %6.0f B: median %6lld cycles, %6.2f us "
                "(p10 %.2f, p90 %.2f), %6.1f GB/s\n",
                rows, mode ? "cpasync" : "loads8", freshness[f], in_big ? "big" : "small", passes,
                passes, bytes, cyc[cyc.size() / 2], med_ns * 1e-3, ns[ns.size() / 10] * 1e-3,
                ns[ns.size() * 9 / 10] * 1e-3, bytes / med_ns);
          }
        }
      }
    }
  }
  const cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", e == cudaSuccess ? "no error" : cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
