// Device-side random fill for benchmarks (testonly): multi-GB K/V pools are
// too slow to fill from the host, and timing on zeros or constants is not
// representative.
#ifndef ATTENTION_KERNEL_RANDOM_FILL_H_
#define ATTENTION_KERNEL_RANDOM_FILL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/base/dtype.h"

namespace paged_attention {

// Fills `count` 16-bit `dtype` elements with hash-random values in [-1, 1).
cudaError_t FillRandom16(void* data, int64_t count, DType dtype, uint64_t seed,
                         cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_RANDOM_FILL_H_
