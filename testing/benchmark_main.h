// Shared by our Google Benchmark binaries (main in benchmark_main.cc): the
// device-to-device copy rate of this GPU, measured once per process, which the
// JSON context records as copy_tbps and the kernel benchmarks divide by (E),
// and the idle time between timed replays (--replay_gap_us).
#ifndef TESTING_BENCHMARK_MAIN_H_
#define TESTING_BENCHMARK_MAIN_H_

namespace paged_attention {

// TB/s of a 2 GiB cudaMemcpy device-to-device (bytes read + written), median
// of 20 copies timed with CUDA events; 0 without a GPU.
double DeviceCopyTbps();

// Microseconds the host (and so the GPU) idles after each timed replay:
// --replay_gap_us=N, default 0. Back to back, compute-bound cases hold the
// board at its power cap and run at whatever clock that leaves (verify q64
// b64 4k: 757-807 us at 1635-1830 MHz, by process and by the cases before
// it); 2000 us of idle keeps the clock at 1980 MHz and the time at 695 us
// within 0.3% (NOTES.md). Use a gap to compare builds on compute-bound
// cases, not on latency-bound ones (a one-tile call after 2 ms of idle takes
// 10-14 us instead of 7); the default is the sustained load that peers run
// under too.
int ReplayGapMicroseconds();

}  // namespace paged_attention

#endif  // TESTING_BENCHMARK_MAIN_H_
