#include "attention/planner/page_table_gather_kernel.h"

namespace paged_attention {
namespace {

// One block row per request; threads stride over the page columns.
__global__ void PageTableGatherKernel(const int32_t* __restrict__ req_to_token, int32_t row_width,
                                      const int32_t* __restrict__ rows, int32_t page_size,
                                      int32_t num_columns, int32_t stride,
                                      int32_t* __restrict__ page_table) {
  const int32_t request = blockIdx.x;
  const int32_t* slots = req_to_token + int64_t{rows[request]} * row_width;
  int32_t* out = page_table + int64_t{request} * stride;
  for (int32_t j = threadIdx.x; j < num_columns; j += blockDim.x) {
    out[j] = slots[int64_t{j} * page_size] / page_size;
  }
}

}  // namespace

cudaError_t LaunchPageTableGather(const int32_t* req_to_token, int32_t row_width,
                                  const int32_t* rows, int32_t num_requests, int32_t page_size,
                                  int32_t num_columns, int32_t stride, int32_t* page_table,
                                  cudaStream_t stream) {
  if (num_requests == 0 || num_columns == 0) return cudaSuccess;
  const int threads = num_columns >= 256 ? 256 : ((num_columns + 31) / 32) * 32;
  PageTableGatherKernel<<<num_requests, threads, 0, stream>>>(
      req_to_token, row_width, rows, page_size, num_columns, stride, page_table);
  return cudaGetLastError();
}

}  // namespace paged_attention
