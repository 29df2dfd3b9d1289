// main() for our Google Benchmark binaries: adds the GPU, CUDA versions, the
// measured copy rate and (when the runner passes it) the git revision to the
// JSON context, so a dashboard can chart runs over time and across machines.
//   --benchmark_context=git_revision=abc123 (set by gpu_bundle/run_benchmarks.sh)
//   --replay_gap_us=N   idle after each timed replay (benchmark_main.h)
#include "testing/benchmark_main.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "attention/base/device_info.h"
#include "benchmark/benchmark.h"

namespace paged_attention {

double DeviceCopyTbps() {
  static const double tbps = [] {
    if (VisibleGpuCount() == 0) return 0.0;
    constexpr size_t kBytes = size_t{2} << 30;
    void *src = nullptr, *dst = nullptr;
    if (cudaMalloc(&src, kBytes) != cudaSuccess || cudaMalloc(&dst, kBytes) != cudaSuccess) {
      cudaFree(src);
      return 0.0;
    }
    cudaMemset(src, 1, kBytes);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> ms(20);
    cudaMemcpy(dst, src, kBytes, cudaMemcpyDeviceToDevice);  // warm-up
    for (float& t : ms) {
      cudaEventRecord(start);
      cudaMemcpy(dst, src, kBytes, cudaMemcpyDeviceToDevice);
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      cudaEventElapsedTime(&t, start, stop);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(src);
    cudaFree(dst);
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return 2.0 * kBytes / (ms[ms.size() / 2] * 1e-3) * 1e-12;
  }();
  return tbps;
}

namespace {
int replay_gap_us = 0;

// Takes --replay_gap_us=N out of argv (Google Benchmark rejects flags it does
// not know). False, with a message, when N is not a number in [0, 1e6].
bool TakeReplayGapFlag(int& argc, char** argv) {
  constexpr absl::string_view kFlag = "--replay_gap_us=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (!absl::StartsWith(arg, kFlag)) {
      argv[kept++] = argv[i];
      continue;
    }
    if (!absl::SimpleAtoi(arg.substr(kFlag.size()), &replay_gap_us) || replay_gap_us < 0 ||
        replay_gap_us > 1000000) {
      std::fprintf(stderr,
                   "--replay_gap_us: '%s' is not a whole number of microseconds in [0, 1e6]\n",
                   std::string(arg.substr(kFlag.size())).c_str());
      return false;
    }
  }
  argc = kept;
  return true;
}
}  // namespace

int ReplayGapMicroseconds() { return replay_gap_us; }

}  // namespace paged_attention

int main(int argc, char** argv) {
  using namespace paged_attention;
  if (!TakeReplayGapFlag(argc, argv)) return 1;
  benchmark::AddCustomContext("replay_gap_us", absl::StrCat(ReplayGapMicroseconds()));
  benchmark::AddCustomContext("cuda_runtime", CudaRuntimeVersionString());
  absl::StatusOr<DeviceInfo> device = QueryDevice(0);
  if (device.ok()) {
    benchmark::AddCustomContext("gpu", device->name);
    benchmark::AddCustomContext("gpu_sms", absl::StrCat(device->multiprocessor_count));
    benchmark::AddCustomContext("cuda_driver", absl::StrCat(device->driver_version / 1000, ".",
                                                            (device->driver_version % 1000) / 10));
    benchmark::AddCustomContext("copy_tbps", absl::StrCat(DeviceCopyTbps()));
  } else {
    benchmark::AddCustomContext("gpu", "none");
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
