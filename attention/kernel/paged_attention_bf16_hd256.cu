// One instantiation per file so nvcc builds them in parallel.
#include "attention/kernel/paged_attention_kernel.cuh"

namespace paged_attention {

template cudaError_t LaunchPagedAttentionKernel<DType::kBFloat16, 256>(const PagedAttentionParams&,
                                                                       cudaStream_t);

}  // namespace paged_attention
