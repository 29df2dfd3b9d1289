#include "attention/base/device_info.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"

namespace paged_attention {
namespace {

std::string VersionString(int version) {
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace

std::string DeviceInfo::ToString() const {
  return absl::StrFormat(
      "device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB global memory, %.1f MiB L2, "
      "%d KiB shared memory per block (opt-in), %d-bit memory bus, driver CUDA %s, runtime CUDA %s",
      ordinal, name, compute_capability_major, compute_capability_minor, multiprocessor_count,
      global_memory_bytes / double(1 << 30), l2_cache_bytes / double(1 << 20),
      static_cast<int>(max_shared_memory_per_block_optin / 1024), memory_bus_width_bits,
      VersionString(driver_version), VersionString(runtime_version));
}

int VisibleGpuCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // Clear the sticky "no device"/"no driver" error.
    return 0;
  }
  return count;
}

std::string NoGpuReason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return absl::StrCat("no usable CUDA GPU: cudaGetDeviceCount returned ", cudaGetErrorName(error),
                        " (", cudaGetErrorString(error), ")");
  }
  if (count == 0) return "no CUDA GPU visible (cudaGetDeviceCount returned 0)";
  return "";
}

absl::StatusOr<DeviceInfo> QueryDevice(int ordinal) {
  const int count = VisibleGpuCount();
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(
        absl::StrCat("device ordinal ", ordinal, " not found: ", count, " GPU(s) visible"));
  }
  cudaDeviceProp props;
  RETURN_IF_ERROR(CudaCall(cudaGetDeviceProperties(&props, ordinal), "cudaGetDeviceProperties"));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = props.name;
  info.compute_capability_major = props.major;
  info.compute_capability_minor = props.minor;
  info.multiprocessor_count = props.multiProcessorCount;
  info.global_memory_bytes = static_cast<int64_t>(props.totalGlobalMem);
  info.l2_cache_bytes = props.l2CacheSize;
  info.max_shared_memory_per_block_optin = static_cast<int64_t>(props.sharedMemPerBlockOptin);
  info.memory_bus_width_bits = props.memoryBusWidth;
  RETURN_IF_ERROR(CudaCall(cudaDriverGetVersion(&info.driver_version), "cudaDriverGetVersion"));
  RETURN_IF_ERROR(CudaCall(cudaRuntimeGetVersion(&info.runtime_version), "cudaRuntimeGetVersion"));
  return info;
}

std::string CudaRuntimeVersionString() { return VersionString(CUDART_VERSION); }

}  // namespace paged_attention
