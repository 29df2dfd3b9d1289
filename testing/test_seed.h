// The one place random tests take their seed from, so a failure can be re-run.
//
//   const uint64_t seed = TestSeed();   // adds "seed N (re-run: PA_TEST_SEED=N)" to failures
//   std::mt19937_64 rng(seed);
//
// The seed is PA_TEST_SEED from the environment when set, otherwise fresh
// per process (random data on every run, as the house rules ask). Each call
// inside a test adds a SCOPED_TRACE-like note to that test's failures.
#ifndef TESTING_TEST_SEED_H_
#define TESTING_TEST_SEED_H_

#include <cstdint>

namespace paged_attention {

// The process's test seed (see above); every failure of the calling test
// prints it.
uint64_t TestSeed();

}  // namespace paged_attention

#endif  // TESTING_TEST_SEED_H_
