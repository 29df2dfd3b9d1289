// Prints what this build is and what GPU it sees.
#include <cstdio>

#include "attention/base/device_info.h"

int main() {
  using namespace paged_attention;
  std::printf("paged_attention build: CUDA runtime %s, compiled for %s\n",
              CudaRuntimeVersionString().c_str(), "sm_90a + compute_90 PTX (see .bazelrc)");
  const int count = VisibleGpuCount();
  if (count == 0) {
    std::printf("%s\n", NoGpuReason().c_str());
    return 0;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    absl::StatusOr<DeviceInfo> info = QueryDevice(ordinal);
    if (!info.ok()) {
      std::fprintf(stderr, "%s\n", std::string(info.status().message()).c_str());
      return 1;
    }
    std::printf("%s\n", info->ToString().c_str());
  }
  return 0;
}
