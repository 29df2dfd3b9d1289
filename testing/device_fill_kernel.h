// Launcher shared by device_fill.cc (host, Abseil) and device_fill.cu (nvcc).
#ifndef TESTING_DEVICE_FILL_KERNEL_H_
#define TESTING_DEVICE_FILL_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace paged_attention {

// Writes `count` copies of the `element_bytes`-wide (2 or 4) pattern `bits`.
cudaError_t LaunchFillKernel(void* data, int64_t count, int element_bytes, uint32_t bits,
                             cudaStream_t stream);

}  // namespace paged_attention

#endif  // TESTING_DEVICE_FILL_KERNEL_H_
