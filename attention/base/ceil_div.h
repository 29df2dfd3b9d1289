// CeilDiv: the one rounding-up division the planner, the kernels and the pool
// share (host and device). Callers keep operands non-negative and the divisor
// positive; use the int64 overload wherever a product or sum may pass int32.
#ifndef ATTENTION_BASE_CEIL_DIV_H_
#define ATTENTION_BASE_CEIL_DIV_H_

#include <cstdint>

#if defined(__CUDACC__)
#define PA_CEIL_DIV_QUALIFIERS __host__ __device__ __forceinline__ constexpr
#else
#define PA_CEIL_DIV_QUALIFIERS inline constexpr
#endif

namespace paged_attention {

PA_CEIL_DIV_QUALIFIERS int32_t CeilDiv(int32_t a, int32_t b) { return (a + b - 1) / b; }
PA_CEIL_DIV_QUALIFIERS int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace paged_attention

#undef PA_CEIL_DIV_QUALIFIERS

#endif  // ATTENTION_BASE_CEIL_DIV_H_
