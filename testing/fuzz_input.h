// FuzzInput: turns a fuzzer's bytes into bounded choices, and FUZZ_CHECK, the
// invariant check of our libFuzzer targets (see tools/fuzz.bzl).
//
//   FuzzInput in(data, size);
//   const int32_t page_size = in.IntInRange(1, 8);
//   const int32_t row = in.Pick({0, 1, 2, -1, INT32_MAX});
//   FUZZ_CHECK(pool.free_pages() + pool.used_pages() == pool.num_pages() - 1);
//
// Header-only and compiler-neutral (clang's FuzzedDataProvider is not visible
// to the gcc builds that replay the seed corpus in the test suite). Once the
// bytes run out every call returns its smallest choice, so each input is a
// finite, deterministic program.
#ifndef TESTING_FUZZ_INPUT_H_
#define TESTING_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>

namespace paged_attention {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return offset_ >= size_; }

  uint8_t Byte() { return empty() ? 0 : data_[offset_++]; }

  uint32_t Uint32() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value = (value << 8) | Byte();
    return value;
  }

  // A value in [lo, hi] (lo <= hi), from as few bytes as the range needs.
  int64_t IntInRange(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo);
    uint64_t value = 0;
    for (uint64_t seen = 0; seen < span && !empty(); seen = (seen << 8) | 0xff) {
      value = (value << 8) | Byte();
    }
    return lo + static_cast<int64_t>(
                    span == std::numeric_limits<uint64_t>::max() ? value : value % (span + 1));
  }

  bool Bool() { return (Byte() & 1) != 0; }

  template <typename T>
  T Pick(std::initializer_list<T> choices) {
    return choices.begin()[IntInRange(0, static_cast<int64_t>(choices.size()) - 1)];
  }

  // Mostly a small value in [lo, hi]; sometimes an edge of int32 or a sign
  // flip, the values that find overflow and missing checks.
  int32_t Length(int32_t lo, int32_t hi) {
    switch (Byte() % 16) {
      case 0:
        return Pick<int32_t>({-1, 0, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max(),
                              std::numeric_limits<int32_t>::max() - 1, 1 << 30, -(1 << 30)});
      case 1:
        return static_cast<int32_t>(Uint32());
      default:
        return static_cast<int32_t>(IntInRange(lo, hi));
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

}  // namespace paged_attention

// An invariant of a fuzz target: prints where and aborts, which libFuzzer (and
// the corpus replay test) report as a crash with this input.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

#endif  // TESTING_FUZZ_INPUT_H_
