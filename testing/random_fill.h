// Device-side helpers for benchmarks (testonly): random fill (multi-GB K/V
// pools are too slow to fill from the host, and timing on zeros or constants
// is not representative), an L2 flush and a stream hold.
#ifndef TESTING_RANDOM_FILL_H_
#define TESTING_RANDOM_FILL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/base/dtype.h"

namespace paged_attention {

// Fills `count` 16-bit `dtype` elements with hash-random values in [-1, 1).
cudaError_t FillRandom16(void* data, int64_t count, DType dtype, uint64_t seed,
                         cudaStream_t stream);

// Reads `bytes` (a multiple of 16) at `data` on `stream`: evicts the L2
// without leaving dirty lines behind (benchmarks' cold-cache runs).
cudaError_t FlushL2(const void* data, size_t bytes, cudaStream_t stream);

// Keeps `stream` busy for `microseconds` of GPU time (one thread waiting on
// the global timer). What the host enqueues meanwhile (a start event, a graph
// launch, a stop event) then runs back to back, so the events time the GPU's
// work and not the host's submission: a warm-L2 benchmark's hold, as the
// flush is a cold one's.
cudaError_t HoldStream(int microseconds, cudaStream_t stream);

}  // namespace paged_attention

#endif  // TESTING_RANDOM_FILL_H_
