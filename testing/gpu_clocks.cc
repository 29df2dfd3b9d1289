#include "testing/gpu_clocks.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace paged_attention {
namespace {

// The few NVML entry points we read, declared here: the toolkit on our build
// machines ships no nvml.h, and the library comes with the driver, so it is
// opened at run time rather than linked.
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  int (*get_clock)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*get_power_mw)(NvmlDevice, unsigned int*) = nullptr;
  NvmlDevice device = nullptr;
};

// NVML's handle of the current CUDA device (matched by PCI bus id: NVML and
// CUDA may number GPUs differently), or nullptr fields when unavailable.
Nvml OpenNvml() {
  Nvml nvml;
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return nvml;
  auto init = reinterpret_cast<int (*)()>(dlsym(library, "nvmlInit_v2"));
  auto by_bus_id = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(
      dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml.get_clock = reinterpret_cast<int (*)(NvmlDevice, int, unsigned int*)>(
      dlsym(library, "nvmlDeviceGetClockInfo"));
  nvml.get_power_mw = reinterpret_cast<int (*)(NvmlDevice, unsigned int*)>(
      dlsym(library, "nvmlDeviceGetPowerUsage"));
  int cuda_device = 0;
  char bus_id[32] = {};
  if (init == nullptr || by_bus_id == nullptr || nvml.get_clock == nullptr ||
      nvml.get_power_mw == nullptr || init() != kNvmlSuccess ||
      cudaGetDevice(&cuda_device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device) != cudaSuccess ||
      by_bus_id(bus_id, &nvml.device) != kNvmlSuccess) {
    nvml.device = nullptr;
  }
  return nvml;  // the library stays open for the process's lifetime
}

}  // namespace

GpuClockSample SampleGpuClock() {
  static const Nvml nvml = OpenNvml();
  GpuClockSample sample;
  if (nvml.device == nullptr) return sample;
  unsigned int mhz = 0, milliwatts = 0;
  if (nvml.get_clock(nvml.device, kNvmlClockSm, &mhz) == kNvmlSuccess) sample.sm_mhz = mhz;
  if (nvml.get_power_mw(nvml.device, &milliwatts) == kNvmlSuccess) {
    sample.power_w = milliwatts * 1e-3;
  }
  return sample;
}

}  // namespace paged_attention
