// One (dtype, head_dim) instantiation per file so nvcc builds them in parallel.
#include "attention/kernel/paged_attention_kernel.cuh"

namespace paged_attention {

PA_DEFINE_ATTENTION_KERNEL(DType::kFloat16, 64);

}  // namespace paged_attention
