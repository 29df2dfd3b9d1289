#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "testing/random_fill.h"

namespace paged_attention {
namespace {

__device__ __forceinline__ uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

template <typename T>
__global__ void FillRandomKernel(T* data, int64_t count, uint64_t seed) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    const float u =
        static_cast<float>(Mix(seed ^ (i * 0x9e3779b97f4a7c15ull)) >> 40) * (1.0f / 16777216.0f);
    data[i] = static_cast<T>(2.0f * u - 1.0f);
  }
}

// Sums every 16-byte word; the (never true) store keeps the loads alive.
__global__ void ReadThroughKernel(const uint4* __restrict__ data, int64_t words, int* sink) {
  uint32_t acc = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < words; i += stride) {
    const uint4 v = data[i];  // normal-priority loads: they must displace what is cached
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u && sink != nullptr) *sink = static_cast<int>(acc);
}

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void HoldKernel(uint64_t nanoseconds) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < nanoseconds) __nanosleep(500);
}

}  // namespace

cudaError_t HoldStream(int microseconds, cudaStream_t stream) {
  HoldKernel<<<1, 1, 0, stream>>>(uint64_t{1000} * static_cast<uint64_t>(microseconds));
  return cudaGetLastError();
}

cudaError_t FlushL2(const void* data, size_t bytes, cudaStream_t stream) {
  ReadThroughKernel<<<1024, 256, 0, stream>>>(static_cast<const uint4*>(data),
                                              static_cast<int64_t>(bytes / 16), nullptr);
  return cudaGetLastError();
}

cudaError_t FillRandom16(void* data, int64_t count, DType dtype, uint64_t seed,
                         cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 8192));
  if (dtype == DType::kBFloat16) {
    FillRandomKernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count,
                                                      seed);
  } else if (dtype == DType::kFloat16) {
    FillRandomKernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(data), count, seed);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace paged_attention
