#include "testing/test_seed.h"

#include <cstdlib>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

uint64_t ProcessSeed() {
  static const uint64_t seed = [] {
    const char* fixed = std::getenv("PA_TEST_SEED");
    if (fixed != nullptr && *fixed != '\0') return uint64_t{std::strtoull(fixed, nullptr, 10)};
    std::random_device device;
    return (uint64_t{device()} << 32) | device();
  }();
  return seed;
}

// Prints the seed in front of every failure of the test that asked for it.
class SeedReporter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed() && active_) {
      std::printf("[ SEED ] %llu (re-run: PA_TEST_SEED=%llu)\n",
                  static_cast<unsigned long long>(ProcessSeed()),
                  static_cast<unsigned long long>(ProcessSeed()));
    }
  }
  void OnTestStart(const ::testing::TestInfo&) override { active_ = false; }
  void Activate() { active_ = true; }

 private:
  bool active_ = false;
};

SeedReporter* Reporter() {
  static SeedReporter* reporter = [] {
    auto* listener = new SeedReporter();
    ::testing::UnitTest::GetInstance()->listeners().Append(listener);
    return listener;
  }();
  return reporter;
}

}  // namespace

uint64_t TestSeed() {
  Reporter()->Activate();
  return ProcessSeed();
}

}  // namespace paged_attention
