#include "attention/base/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace paged_attention {

absl::Status CudaCall(cudaError_t error, absl::string_view call) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, " failed: ", cudaGetErrorString(error), " (",
                                          cudaGetErrorName(error), ")"));
}

}  // namespace paged_attention
