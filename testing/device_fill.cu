#include <algorithm>

#include "testing/device_fill_kernel.h"

namespace paged_attention {
namespace {

template <typename Word>
__global__ void FillKernel(Word* data, int64_t count, Word value) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = value;
  }
}

}  // namespace

cudaError_t LaunchFillKernel(void* data, int64_t count, int element_bytes, uint32_t bits,
                             cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 4096));
  if (element_bytes == 2) {
    FillKernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint16_t*>(data), count,
                                                static_cast<uint16_t>(bits));
  } else {
    FillKernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint32_t*>(data), count, bits);
  }
  return cudaGetLastError();
}

}  // namespace paged_attention
