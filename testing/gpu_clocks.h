// The SM clock and board power of the current CUDA device while a benchmark
// runs, read through NVML. Compute-bound cases run as fast as the clock the
// GPU holds under their load, which moves with power and temperature from
// one process to the next (NOTES.md: co-read verify took 716-881 us in the
// benchmark's loop where its own kernel took 698-707 us under ncu), so their
// records carry it beside the time.
#ifndef TESTING_GPU_CLOCKS_H_
#define TESTING_GPU_CLOCKS_H_

namespace paged_attention {

struct GpuClockSample {
  double sm_mhz = 0;   // 0: NVML unavailable
  double power_w = 0;  // board power draw, as the driver averages it (~1 s)
};

// One reading of the current CUDA device's SM clock and power. NVML
// (libnvidia-ml.so.1, the driver's) is loaded at first use; without it, or
// without a GPU, every sample is zeros.
GpuClockSample SampleGpuClock();

}  // namespace paged_attention

#endif  // TESTING_GPU_CLOCKS_H_
