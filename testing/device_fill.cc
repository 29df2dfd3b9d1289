#include "testing/device_fill.h"

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "testing/device_fill_kernel.h"

namespace paged_attention {

absl::Status FillDevice(void* data, int64_t count, DType dtype, float value, cudaStream_t stream) {
  if (count < 0) return absl::InvalidArgumentError(absl::StrCat("count ", count, " is negative"));
  uint32_t bits = FloatBits(value);
  if (dtype == DType::kFloat16) bits = FloatToFloat16(value);
  if (dtype == DType::kBFloat16) bits = FloatToBFloat16(value);
  return CudaCall(LaunchFillKernel(data, count, DTypeSize(dtype), bits, stream), "FillKernel");
}

}  // namespace paged_attention
