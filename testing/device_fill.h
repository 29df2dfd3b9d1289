// Fills device buffers with one value, e.g. NaN to poison memory a kernel must
// not read or must overwrite. Enqueued on `stream`; graph-capture safe.
#ifndef TESTING_DEVICE_FILL_H_
#define TESTING_DEVICE_FILL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "attention/base/dtype.h"

namespace paged_attention {

// Sets `count` elements of type `dtype` at `data` to `value` (rounded to dtype).
absl::Status FillDevice(void* data, int64_t count, DType dtype, float value,
                        cudaStream_t stream = nullptr);

}  // namespace paged_attention

#endif  // TESTING_DEVICE_FILL_H_
