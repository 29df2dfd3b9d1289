// Compares the plans of two PartitionWork implementations (partition_diff.sh)
// on random batches: decode to prefill lengths, uniform and mixed, every head
// dim, causal with and without a window, non-causal, pinned splits, units of
// KV head pairs (kv_heads_per_unit 2), and now and then a batch or buffers too
// small that both must reject with the same error.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "attention/kernel/benchmark_shapes.h"
#include "attention/planner/partition_benchmark_shapes.h"
#include "attention/planner/work_plan.h"

std::vector<int64_t> RunBase(const std::vector<int32_t>&, const std::vector<int32_t>&,
                             const int32_t[9], std::string*, int repeats = 1);
std::vector<int64_t> RunWorking(const std::vector<int32_t>&, const std::vector<int32_t>&,
                                const int32_t[9], std::string*, int repeats = 1);

// `time`: both implementations' host time on planner_benchmark's
// BM_PartitionWork shapes (kPartitionBenchmarkShapes), calls of
// the two interleaved in one process so that the machine's drift cancels
// (median of 40 rounds of 20 partitions on the same buffers; the times include
// 1/20 of the buffers' allocation and the plan's copy, the same for both).
int TimeBoth() {
  const int32_t config[9] = {8, 4, 128, 264, 0, 1, -1, 100, 1};
  std::printf("%-28s %10s %10s %8s\n", "batch / q_len / context", "base us", "working us", "ratio");
  for (const paged_attention::PartitionBenchmarkShape& shape :
       paged_attention::kPartitionBenchmarkShapes) {
    std::vector<int32_t> cu_seqlens_q(shape.batch + 1), cache_seqlens(shape.batch, shape.context);
    for (int32_t i = 0; i <= shape.batch; ++i) cu_seqlens_q[i] = i * shape.q_len;
    std::vector<double> times[2];
    for (int round = 0; round < 40; ++round) {
      for (int which = 0; which < 2; ++which) {
        std::string error;
        const auto start = std::chrono::steady_clock::now();
        const auto plan = which == 0 ? RunBase(cu_seqlens_q, cache_seqlens, config, &error, 20)
                                     : RunWorking(cu_seqlens_q, cache_seqlens, config, &error, 20);
        if (plan.empty()) {
          std::printf("plan failed: %s\n", error.c_str());
          return 1;
        }
        times[which].push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count() /
            20);
      }
    }
    for (auto& t : times) std::sort(t.begin(), t.end());
    const double base = times[0][20], working = times[1][20];
    std::printf("%-28s %10.1f %10.1f %8.3f\n",
                (std::to_string(shape.batch) + " / " + std::to_string(shape.q_len) + " / " +
                 std::to_string(shape.context))
                    .c_str(),
                base, working, working / base);
  }
  return 0;
}

// `bench`: the plans of paged_attention_benchmark's shapes
// (attention/kernel/benchmark_shapes.h, 264 workers: 132 SMs x 2, causal
// with the shape's window, as the benchmark plans them; shapes that differ
// only in what the partition does not see, such as page size or L2, once),
// each with both implementations: the shapes whose plan changes, with the
// busiest worker's cost and the active workers of each (a partition change's
// reach on the benchmark, read before a GPU run). Exits 1 if a shape does
// not plan.
int BenchShapes() {
  std::set<std::string> seen;
  int planned = 0, changed = 0, failed = 0;
  std::printf("%-36s %12s %12s\n", "heads / hd / batch / q / kv", "base busiest", "working");
  for (const paged_attention::AttentionBenchmarkShape& shape :
       paged_attention::AttentionBenchmarkShapes()) {
    const std::string name =
        std::to_string(shape.num_q_heads) + "_" + std::to_string(shape.num_kv_heads) + " / " +
        std::to_string(shape.head_dim) + " / " + std::to_string(shape.batch) + " / " +
        std::to_string(shape.q_len) + " / " + shape.KvLabel() +
        (shape.window_left >= 0 ? " w" + std::to_string(shape.window_left) : std::string());
    if (!seen.insert(name).second) continue;
    ++planned;
    // The unit geometry the planner gives the shape (KvHeadsPerUnit: KV head
    // pairs by default, never beside tree masks).
    const int32_t group = shape.num_q_heads / shape.num_kv_heads;
    const int32_t kv_heads_per_unit =
        shape.tree == paged_attention::BenchmarkTree::kNone &&
                paged_attention::CanPairKvHeads(shape.head_dim, shape.num_kv_heads, group,
                                                shape.q_len)
            ? 2
            : 1;
    const paged_attention::UnitGeometry unit = paged_attention::UnitGeometryOf(
        shape.num_kv_heads, group, shape.head_dim, kv_heads_per_unit);
    const int32_t config[9] = {unit.num_kv_heads, unit.group, unit.head_dim,    264, 0, 1,
                               shape.window_left, 100,        kv_heads_per_unit};
    std::vector<int32_t> cu_seqlens_q(shape.batch + 1);
    for (int32_t i = 0; i <= shape.batch; ++i) cu_seqlens_q[i] = i * shape.q_len;
    const std::vector<int32_t> cache_seqlens = shape.KvLens();
    std::string error;
    const auto base = RunBase(cu_seqlens_q, cache_seqlens, config, &error);
    const auto working = RunWorking(cu_seqlens_q, cache_seqlens, config, &error);
    if (base.empty() || working.empty()) {
      std::printf("%-36s does not plan: %s\n", name.c_str(), error.c_str());
      ++failed;
      continue;
    }
    if (base == working) continue;
    ++changed;
    // plan[4]: active workers, plan[7]: the busiest worker's cost (tiles + overhead).
    std::printf("%-36s %6lld (%3lld) %6lld (%3lld)\n", name.c_str(),
                static_cast<long long>(base[7]), static_cast<long long>(base[4]),
                static_cast<long long>(working[7]), static_cast<long long>(working[4]));
  }
  std::printf("%d shapes: %d plans differ, %d do not plan\n", planned, changed, failed);
  return failed == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "time") return TimeBoth();
  if (argc > 1 && std::string(argv[1]) == "bench") return BenchShapes();
  const int cases = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::mt19937_64 rng(argc > 2 ? std::atoll(argv[2]) : 1);
  auto pick = [&](std::vector<int32_t> values) { return values[rng() % values.size()]; };
  // PARTITION_DIFF_HEAD_DIM=64: every case at that head_dim (the same batches
  // and other fields), for changes that must leave one head_dim's plans alone.
  const char* head_dim_env = std::getenv("PARTITION_DIFF_HEAD_DIM");
  const int32_t only_head_dim = head_dim_env != nullptr ? std::atoi(head_dim_env) : 0;
  int mismatches = 0, errors = 0;
  for (int it = 0; it < cases; ++it) {
    const int32_t batch = pick({1, 1, 2, 3, 4, 7, 16, 32, 64, 128, 200});
    int32_t config[9] = {pick({1, 2, 4, 8, 16}),           // num_kv_heads
                         pick({1, 2, 3, 4, 5, 7, 8, 16}),  // group
                         pick({64, 128, 256}),             // head_dim
                         pick({1, 2, 7, 64, 132, 264, 528}),
                         rng() % 6 == 0 ? pick({1, 2, 3, 8}) : 0,         // pinned_splits
                         rng() % 5 != 0,                                  // causal
                         -1,                                              // window_left
                         rng() % 10 == 0 ? pick({25, 50, 90, 99}) : 100,  // % of capacity
                         rng() % 4 == 0 ? 2 : 1};                         // kv_heads_per_unit
    if (config[5] && rng() % 4 == 0) config[6] = pick({0, 1, 31, 100, 1000, 5000});
    if (only_head_dim > 0) config[2] = only_head_dim;
    const int32_t max_q = pick({1, 2, 4, 8, 16, 64, 300, 2048});
    const int32_t max_k = pick({0, 1, 64, 1000, 4096, 32768, 131072});
    std::vector<int32_t> cu_seqlens_q(batch + 1, 0), cache_seqlens(batch);
    const bool uniform = rng() % 3 == 0;
    const int32_t uniform_q = 1 + rng() % max_q, uniform_k = rng() % (max_k + 1);
    for (int32_t i = 0; i < batch; ++i) {
      const int32_t q = uniform ? uniform_q : (rng() % 8 == 0 ? 0 : 1 + rng() % max_q);
      int32_t k = uniform ? uniform_k : rng() % (max_k + 1);
      if (config[5] && k < q && rng() % 2) k = q;
      cu_seqlens_q[i + 1] = cu_seqlens_q[i] + q;
      cache_seqlens[i] = k;
    }
    if (rng() % 50 == 0) cache_seqlens[rng() % batch] = -1;  // both must reject it alike
    std::string base_error, working_error;
    const auto base = RunBase(cu_seqlens_q, cache_seqlens, config, &base_error);
    const auto working = RunWorking(cu_seqlens_q, cache_seqlens, config, &working_error);
    errors += !base_error.empty();
    if (base != working || base_error != working_error) {
      if (++mismatches <= 5) {
        std::printf(
            "mismatch: case %d batch %d kv_heads %d group %d head_dim %d workers %d "
            "pinned %d causal %d window %d kv_heads_per_unit %d max_q %d max_k %d\n",
            it, batch, config[0], config[1], config[2], config[3], config[4], config[5], config[6],
            config[8], max_q, max_k);
        if (base_error != working_error) {
          std::printf("  base: %s\n  working: %s\n", base_error.c_str(), working_error.c_str());
        }
      }
    }
  }
  std::printf("%d batches: %d plans differ (%d rejected by both with the same error)\n", cases,
              mismatches, errors);
  return mismatches == 0 ? 0 : 1;
}
