// main() for our Google Benchmark binaries: adds the GPU, CUDA versions and
// (when the runner passes it) the git revision to the JSON context, so a
// dashboard can chart runs over time and across machines.
//   --benchmark_context=git_revision=abc123 (set by gpu_bundle/run_benchmarks.sh)
#include <string>

#include "absl/strings/str_cat.h"
#include "attention/base/device_info.h"
#include "benchmark/benchmark.h"

int main(int argc, char** argv) {
  using namespace paged_attention;
  benchmark::AddCustomContext("cuda_runtime", CudaRuntimeVersionString());
  absl::StatusOr<DeviceInfo> device = QueryDevice(0);
  if (device.ok()) {
    benchmark::AddCustomContext("gpu", device->name);
    benchmark::AddCustomContext("gpu_sms", absl::StrCat(device->multiprocessor_count));
    benchmark::AddCustomContext("cuda_driver", absl::StrCat(device->driver_version / 1000, ".",
                                                            (device->driver_version % 1000) / 10));
  } else {
    benchmark::AddCustomContext("gpu", "none");
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
