// The batches the work partition's host time is measured on, in one list for
// planner_benchmark's BM_PartitionWork and tools/partition_diff.sh's `time`
// mode (both with 32/8 heads, head_dim 128 and 264 workers): decode (one
// request; many short; the CUDA-graph batch 256), verify q8, q64 verify
// (co-read groups) and prefill.
#ifndef ATTENTION_PLANNER_PARTITION_BENCHMARK_SHAPES_H_
#define ATTENTION_PLANNER_PARTITION_BENCHMARK_SHAPES_H_

#include <cstdint>

namespace paged_attention {

struct PartitionBenchmarkShape {
  int32_t batch;
  int32_t q_len;
  int32_t context;  // every request's keys
};

inline constexpr PartitionBenchmarkShape kPartitionBenchmarkShapes[] = {
    {1, 1, 32768},  {128, 1, 1024}, {256, 1, 4096}, {16, 8, 8192},   {1, 64, 32768},
    {16, 64, 8192}, {64, 64, 4096}, {4, 512, 4096}, {1, 2048, 2048},
};

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_PARTITION_BENCHMARK_SHAPES_H_
