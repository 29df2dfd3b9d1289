// Turns CUDA runtime errors into absl::Status.
//
//   RETURN_IF_ERROR(CudaCall(cudaMemcpyAsync(...), "cudaMemcpyAsync"));
//
// The message names the failed call and cudaGetErrorString's text, e.g.
// "cudaMalloc failed: out of memory (cudaErrorMemoryAllocation)". Host code
// only: safe to use anywhere, including around calls made during CUDA-graph
// capture (it never synchronizes).
#ifndef ATTENTION_BASE_CUDA_STATUS_H_
#define ATTENTION_BASE_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paged_attention {

// OK for cudaSuccess, otherwise Internal naming `call` and the CUDA error.
absl::Status CudaCall(cudaError_t error, absl::string_view call);

}  // namespace paged_attention

#endif  // ATTENTION_BASE_CUDA_STATUS_H_
