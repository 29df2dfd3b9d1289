// Launcher of the device page-table gather (page_table_gather.cu), used by
// DeviceMetadata; no Abseil here.
#ifndef ATTENTION_PLANNER_PAGE_TABLE_GATHER_KERNEL_H_
#define ATTENTION_PLANNER_PAGE_TABLE_GATHER_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace paged_attention {

// For i < num_requests and j < ceil(k_lens[i] / page_size):
//   page_table[i * stride + j] = req_to_token[rows[i] * row_width + j * page_size] / page_size.
// All pointers are device pointers; rows and k_lens were checked on the host
// (rows inside the table, k_lens <= row_width, ceil(k_len / page_size) <= stride).
cudaError_t LaunchPageTableGather(const int32_t* req_to_token, int32_t row_width,
                                  const int32_t* rows, const int32_t* k_lens, int32_t num_requests,
                                  int32_t page_size, int32_t stride, int32_t* page_table,
                                  cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_PAGE_TABLE_GATHER_KERNEL_H_
