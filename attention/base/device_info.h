// What GPU (if any) this process sees, for logs, benchmark context and the
// GPU-test skip decision.
#ifndef ATTENTION_BASE_DEVICE_INFO_H_
#define ATTENTION_BASE_DEVICE_INFO_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace paged_attention {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;  // e.g. "NVIDIA H200"
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessor_count = 0;
  int64_t global_memory_bytes = 0;
  int64_t l2_cache_bytes = 0;
  int64_t max_shared_memory_per_block_optin = 0;  // bytes, after cudaFuncSetAttribute
  int memory_bus_width_bits = 0;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;

  std::string ToString() const;
};

// Number of usable CUDA devices; 0 (not an error) when there is no GPU or no
// driver, so CPU-only machines can skip GPU work.
int VisibleGpuCount();

// Why no GPU is usable, for skip messages; empty when a GPU is there.
std::string NoGpuReason();

// Properties of device `ordinal`; NotFound when it does not exist.
absl::StatusOr<DeviceInfo> QueryDevice(int ordinal);

// The CUDA runtime this binary was built against (CUDART_VERSION), e.g. "13.0".
std::string CudaRuntimeVersionString();

}  // namespace paged_attention

#endif  // ATTENTION_BASE_DEVICE_INFO_H_
