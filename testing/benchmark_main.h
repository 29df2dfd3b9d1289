// Shared by our Google Benchmark binaries (main in benchmark_main.cc): the
// device-to-device copy rate of this GPU, measured once per process, which the
// JSON context records as copy_tbps and the kernel benchmarks divide by (E).
#ifndef TESTING_BENCHMARK_MAIN_H_
#define TESTING_BENCHMARK_MAIN_H_

namespace paged_attention {

// TB/s of a 2 GiB cudaMemcpy device-to-device (bytes read + written), median
// of 20 copies timed with CUDA events; 0 without a GPU.
double DeviceCopyTbps();

}  // namespace paged_attention

#endif  // TESTING_BENCHMARK_MAIN_H_
