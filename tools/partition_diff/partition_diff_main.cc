// Compares the plans of two PartitionWork implementations (partition_diff.sh)
// on random batches: decode to prefill lengths, uniform and mixed, every head
// dim, causal with and without a window, non-causal, pinned splits, and now
// and then a batch both must reject with the same error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

std::vector<int64_t> RunBase(const std::vector<int32_t>&, const std::vector<int32_t>&,
                             const int32_t[8], std::string*);
std::vector<int64_t> RunWorking(const std::vector<int32_t>&, const std::vector<int32_t>&,
                                const int32_t[8], std::string*);

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::mt19937_64 rng(argc > 2 ? std::atoll(argv[2]) : 1);
  auto pick = [&](std::vector<int32_t> values) { return values[rng() % values.size()]; };
  int mismatches = 0, errors = 0;
  for (int it = 0; it < cases; ++it) {
    const int32_t batch = pick({1, 1, 2, 3, 4, 7, 16, 32, 64, 128, 200});
    int32_t config[8] = {pick({1, 2, 4, 8, 16}),           // num_kv_heads
                         pick({1, 2, 3, 4, 5, 7, 8, 16}),  // group
                         pick({64, 128, 256}),             // head_dim
                         pick({1, 2, 7, 64, 132, 264, 528}),
                         rng() % 6 == 0 ? pick({1, 2, 3, 8}) : 0,  // pinned_splits
                         rng() % 5 != 0,                           // causal
                         -1,
                         0};
    if (config[5] && rng() % 4 == 0) config[6] = pick({0, 1, 31, 100, 1000, 5000});
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
            "pinned %d causal %d window %d max_q %d max_k %d\n",
            it, batch, config[0], config[1], config[2], config[3], config[4], config[5], config[6],
            max_q, max_k);
      }
    }
  }
  std::printf("%d batches: %d plans differ (%d rejected by both with the same error)\n", cases,
              mismatches, errors);
  return mismatches == 0 ? 0 : 1;
}
