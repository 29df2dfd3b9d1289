#include "attention/base/ceil_div.h"
#include "attention/planner/page_table_gather_kernel.h"

namespace paged_attention {
namespace {

constexpr int kGatherThreads = 256;

// One block per request; threads stride over its page columns.
__global__ void __launch_bounds__(kGatherThreads)
    PageTableGatherKernel(const int32_t* __restrict__ req_to_token, int32_t row_width,
                          const int32_t* __restrict__ rows, const int32_t* __restrict__ k_lens,
                          int32_t page_size, int32_t stride, int32_t* __restrict__ page_table) {
  const int32_t request = blockIdx.x;
  const int32_t columns = CeilDiv(k_lens[request], page_size);
  const int32_t* slots = req_to_token + int64_t{rows[request]} * row_width;
  int32_t* out = page_table + int64_t{request} * stride;
  for (int32_t j = threadIdx.x; j < columns; j += kGatherThreads) {
    out[j] = slots[int64_t{j} * page_size] / page_size;
  }
}

}  // namespace

cudaError_t LaunchPageTableGather(const int32_t* req_to_token, int32_t row_width,
                                  const int32_t* rows, const int32_t* k_lens, int32_t num_requests,
                                  int32_t page_size, int32_t stride, int32_t* page_table,
                                  cudaStream_t stream) {
  if (num_requests == 0) return cudaSuccess;
  PageTableGatherKernel<<<num_requests, kGatherThreads, 0, stream>>>(
      req_to_token, row_width, rows, k_lens, page_size, stride, page_table);
  return cudaGetLastError();
}

}  // namespace paged_attention
