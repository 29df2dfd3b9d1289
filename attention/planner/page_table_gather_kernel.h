// Launcher of the device page-table gather (page_table_gather.cu), shared by
// graph_metadata.cc and the .cu file; no Abseil here.
#ifndef ATTENTION_PLANNER_PAGE_TABLE_GATHER_KERNEL_H_
#define ATTENTION_PLANNER_PAGE_TABLE_GATHER_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace paged_attention {

// page_table[i * stride + j] = req_to_token[rows[i] * row_width + j * page_size] / page_size
// for i < num_requests, j < num_columns. All pointers are device pointers.
cudaError_t LaunchPageTableGather(const int32_t* req_to_token, int32_t row_width,
                                  const int32_t* rows, int32_t num_requests, int32_t page_size,
                                  int32_t num_columns, int32_t stride, int32_t* page_table,
                                  cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_PAGE_TABLE_GATHER_KERNEL_H_
