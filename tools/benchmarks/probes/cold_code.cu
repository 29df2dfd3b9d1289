// Probe: what executing never-run kernel code costs (instruction fetch from
// DRAM after an L2 flush, from L2, from the SM's instruction caches).
//
// Why: the fused merge of a one-request decode runs once per unit, on the CTA
// that finishes last, after the L2 was flushed and swept by the K/V stream,
// and takes 4.5-6.7 us (attention/kernel/NOTES.md, "What limits it now":
// the cold-code hypothesis). If first passes after a flush cost microseconds
// per few KB of code, its time is instruction fetch, not data round trips.
// Run on the H200 on 2026-12-01 (tools/benchmarks/h200_2026-12-01_cold_code/
// cold_code_probe.txt): one CTA's first pass after a flush costs 0.25-0.32 us
// more than its second at 4-64 KB (one fetch latency, not microseconds per
// KB), so the hypothesis was dropped (NOTES.md, What limits it now).
//
// Not part of the build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a
// -o cold_code cold_code.cu, then ./cold_code on the GPU machine. Each line:
// the slowest CTA's first and second pass over N straight-line FFMAs
// (16-byte instructions), median of 7 launches, L2 flushed before each
// launch or not.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

template <int N>
__device__ __forceinline__ void Block(float (&acc)[8]) {
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i % 8] = fmaf(acc[i % 8], 1.0001f, float(i) * 1e-3f);
}

// Each CTA's thread 0 records: t_cold (first pass over the block), t_warm (second).
template <int N>
__global__ void __launch_bounds__(160) Cold(const float* in, float* out, long long* times) {
  float acc[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) acc[j] = in[j];
  long long t[3];
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    __syncthreads();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[pass]));
    Block<N>(acc);
    __syncthreads();
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[2]));
  float sum = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) sum += acc[j];
  if (sum == 12345.f) out[0] = sum;
  if (threadIdx.x == 0) {
    times[2 * blockIdx.x] = t[1] - t[0];
    times[2 * blockIdx.x + 1] = t[2] - t[1];
  }
}

__global__ void ReadFlush(const int4* p, size_t n, int* out) {
  int4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    acc.x ^= p[i].x;
  if (acc.x == 0x12345) out[0] = acc.x;
}

template <int N>
void Run(const char* name, float* in, float* out, long long* times, int4* flush, size_t flush_n,
         int* flag, int ctas) {
  std::vector<long long> h(2 * ctas);
  for (int flushed = 1; flushed >= 0; --flushed) {
    std::vector<double> cold, warm;
    for (int rep = 0; rep < 7; ++rep) {
      if (flushed) ReadFlush<<<528, 512>>>(flush, flush_n, flag);
      Cold<N><<<ctas, 160>>>(in, out, times);
      cudaDeviceSynchronize();
      cudaMemcpy(h.data(), times, 16 * ctas, cudaMemcpyDeviceToHost);
      long long mc = 0, mw = 0;
      for (int b = 0; b < ctas; ++b) {
        mc = std::max(mc, h[2 * b]);
        mw = std::max(mw, h[2 * b + 1]);
      }
      cold.push_back(mc / 1e3);
      warm.push_back(mw / 1e3);
    }
    std::sort(cold.begin(), cold.end());
    std::sort(warm.begin(), warm.end());
    printf("%-28s %4d CTAs %s  first pass max-over-CTAs median %7.2f us, second pass %7.2f us\n",
           name, ctas, flushed ? "L2 flushed" : "after a run", cold[3], warm[3]);
  }
}

int main() {
  float *in, *out;
  long long* times;
  int* flag;
  cudaMalloc(&in, 64);
  cudaMemset(in, 0, 64);
  cudaMalloc(&out, 64);
  cudaMalloc(&times, 16 * 1024);
  cudaMalloc(&flag, 4);
  size_t flush_bytes = 256u << 20;
  int4* flush;
  cudaMalloc(&flush, flush_bytes);
  cudaMemset(flush, 0, flush_bytes);
  for (int ctas : {1, 264}) {
    Run<256>("256 FFMA (~4 KB code)", in, out, times, flush, flush_bytes / 16, flag, ctas);
    Run<1024>("1024 FFMA (~16 KB code)", in, out, times, flush, flush_bytes / 16, flag, ctas);
    Run<4096>("4096 FFMA (~64 KB code)", in, out, times, flush, flush_bytes / 16, flag, ctas);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
