#include "kv_cache/kv_cache.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

KvCacheLayout SmallLayout(DType dtype) {
  return KvCacheLayout{
      .num_pages = 4, .page_size = 3, .num_kv_heads = 2, .head_dim = 5, .dtype = dtype};
}

// Distinct, exactly representable values: token t, head h, dim d.
std::vector<float> RowValues(int32_t num_tokens, const KvCacheLayout& layout, float base) {
  std::vector<float> values;
  for (int32_t t = 0; t < num_tokens; ++t) {
    for (int32_t h = 0; h < layout.num_kv_heads; ++h) {
      for (int32_t d = 0; d < layout.head_dim; ++d) values.push_back(base + t * 16 + h * 8 + d);
    }
  }
  return values;
}

TEST(KvCacheLayoutTest, OffsetsFollowPagesSlotsHeadsDims) {
  const KvCacheLayout layout{.num_pages = 8,
                             .page_size = 16,
                             .num_kv_heads = 4,
                             .head_dim = 128,
                             .dtype = DType::kBFloat16};
  EXPECT_EQ(layout.num_slots(), 128);
  EXPECT_EQ(layout.row_elements(), 512);
  EXPECT_EQ(layout.row_bytes(), 1024);
  EXPECT_EQ(layout.num_elements(), 128 * 512);
  EXPECT_EQ(layout.size_bytes(), 128 * 1024);
  EXPECT_EQ(layout.ElementOffset(0, 0, 0, 1), 1);
  EXPECT_EQ(layout.ElementOffset(0, 0, 1, 0), 128);
  EXPECT_EQ(layout.ElementOffset(0, 1, 0, 0), 512);
  EXPECT_EQ(layout.ElementOffset(1, 0, 0, 0), 16 * 512);
  EXPECT_EQ(layout.ElementOffset(3, 5, 2, 7), layout.SlotElementOffset(3 * 16 + 5, 2, 7));
  EXPECT_EQ(layout.ElementOffset(7, 15, 3, 127), layout.num_elements() - 1);
}

TEST(KvCacheLayoutTest, ValidateFailsNamingEveryBadField) {
  const absl::Status status = ValidateKvCacheLayout(KvCacheLayout{
      .num_pages = 0, .page_size = -1, .num_kv_heads = 0, .head_dim = 0, .dtype = DType::kFloat16});
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("num_pages = 0"), HasSubstr("page_size = -1"),
                    HasSubstr("num_kv_heads = 0"), HasSubstr("head_dim = 0")));
}

TEST(KvCacheLayoutTest, ValidateFailsWhenSlotsOverflowInt32) {
  const absl::Status status = ValidateKvCacheLayout(KvCacheLayout{.num_pages = 1 << 20,
                                                                  .page_size = 4096,
                                                                  .num_kv_heads = 1,
                                                                  .head_dim = 1,
                                                                  .dtype = DType::kFloat16});
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("int32 slot ids"));
}

TEST(KvCacheLayoutTest, ValidateFailsOnUnknownDtype) {
  KvCacheLayout layout = SmallLayout(DType::kFloat16);
  layout.dtype = static_cast<DType>(9);
  const absl::Status status = ValidateKvCacheLayout(layout);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("dtype = 9"));
}

TEST(KvCacheLayoutTest, LayoutStringNamesEveryField) {
  EXPECT_EQ(KvCacheLayoutString(SmallLayout(DType::kBFloat16)),
            "KvCacheLayout{num_pages=4, page_size=3, num_kv_heads=2, head_dim=5, "
            "dtype=bfloat16}");
}

TEST(EncodeElementsTest, RoundsToDtypeAndDecodesBack) {
  const std::vector<float> values = {1.0f, -2.5f, 3.14159f, 65504.0f, 1e-3f};
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const std::vector<uint8_t> bytes = EncodeElements(dtype, values);
    ASSERT_EQ(bytes.size(), values.size() * DTypeSize(dtype));
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(DecodeElement(dtype, bytes.data(), i), RoundTrip(dtype, values[i]))
          << DTypeName(dtype) << " " << values[i];
    }
  }
}

class HostKvCacheDtypeTest : public ::testing::TestWithParam<DType> {};

INSTANTIATE_TEST_SUITE_P(Dtypes, HostKvCacheDtypeTest,
                         ::testing::Values(DType::kFloat32, DType::kFloat16, DType::kBFloat16));

TEST_P(HostKvCacheDtypeTest, WriteRowsStoresEachTokenAtItsSlotAndSkipsPadding) {
  const KvCacheLayout layout = SmallLayout(GetParam());
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(layout);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->size_bytes(), static_cast<size_t>(layout.size_bytes()));
  cache->Fill(std::nanf(""));
  const std::vector<int32_t> slots = {7, -1, 3, 11};
  const std::vector<uint8_t> new_k = EncodeElements(GetParam(), RowValues(4, layout, 0.0f));
  const std::vector<uint8_t> new_v = EncodeElements(GetParam(), RowValues(4, layout, -100.0f));
  ASSERT_TRUE(cache->WriteRows(new_k.data(), new_v.data(), slots).ok());
  for (int32_t slot = 0; slot < layout.num_slots(); ++slot) {
    int32_t token = -1;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] == slot) token = static_cast<int32_t>(i);
    }
    for (int32_t h = 0; h < layout.num_kv_heads; ++h) {
      for (int32_t d = 0; d < layout.head_dim; ++d) {
        const float k = cache->At(KvTensor::kKey, slot, h, d);
        const double v = cache->At(KvTensor::kValue, slot, h, d);
        if (token < 0) {
          EXPECT_TRUE(std::isnan(k) && std::isnan(v)) << "untouched slot " << slot;
        } else {
          EXPECT_EQ(k, token * 16 + h * 8 + d) << "slot " << slot;
          EXPECT_EQ(v, -100.0 + token * 16 + h * 8 + d) << "slot " << slot;
        }
      }
    }
  }
  EXPECT_EQ(*cache->Read(KvTensor::kKey, 3, 1, 4), 2 * 16 + 8 + 4);
}

TEST(HostKvCacheTest, CreateIsZeroFilled) {
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(SmallLayout(DType::kBFloat16));
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ(cache->At(KvTensor::kKey, 11, 1, 4), 0.0f);
  EXPECT_EQ(cache->At(KvTensor::kValue, 0, 0, 0), 0.0f);
}

// Regression: a valid layout of terabytes went straight to std::vector and
// aborted with std::bad_alloc (or exhausted the machine).
TEST(HostKvCacheTest, CreateRefusesLayoutsPastTheHostBudgetBeforeAllocating) {
  const KvCacheLayout layout{.num_pages = 1 << 20,
                             .page_size = 1 << 10,
                             .num_kv_heads = 8,
                             .head_dim = 128,
                             .dtype = DType::kBFloat16};
  ASSERT_TRUE(ValidateKvCacheLayout(layout).ok());
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(layout);
  ASSERT_EQ(cache.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(cache.status().message()),
              AllOf(HasSubstr("num_pages=1048576, page_size=1024, num_kv_heads=8, head_dim=128"),
                    HasSubstr("would take 2 * 2199023255552 bytes, more than the host budget of "
                              "8589934592 bytes")));
  // Just inside the budget is not refused for its size (not allocated here).
  KvCacheLayout small = layout;
  small.num_pages = 1;
  EXPECT_TRUE(HostKvCache::Create(small).ok());
}

TEST(HostKvCacheTest, CreateFailsOnBadLayout) {
  KvCacheLayout layout = SmallLayout(DType::kFloat16);
  layout.head_dim = 0;
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(layout);
  ASSERT_EQ(cache.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(cache.status().message()), HasSubstr("head_dim = 0"));
}

TEST(HostKvCacheTest, WriteRowsFailsOnSlotPastCacheNamingToken) {
  const KvCacheLayout layout = SmallLayout(DType::kFloat16);  // 12 slots
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(layout);
  ASSERT_TRUE(cache.ok());
  const std::vector<uint8_t> rows = EncodeElements(layout.dtype, RowValues(3, layout, 1.0f));
  const std::vector<int32_t> slots = {0, 5, 12};
  const absl::Status status = cache->WriteRows(rows.data(), rows.data(), slots);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("slots[token 2] = 12 is outside the cache's 12 slots (4 pages of 3)"));
  // Validation runs before any write.
  EXPECT_EQ(cache->At(KvTensor::kKey, 5, 0, 0), 0.0f);
}

TEST(HostKvCacheTest, WriteRowsFailsOnRepeatedSlot) {
  const KvCacheLayout layout = SmallLayout(DType::kFloat16);
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(layout);
  ASSERT_TRUE(cache.ok());
  const std::vector<uint8_t> rows = EncodeElements(layout.dtype, RowValues(4, layout, 1.0f));
  const std::vector<int32_t> slots = {4, -1, -1, 4};  // padding may repeat, real slots not
  const absl::Status status = cache->WriteRows(rows.data(), rows.data(), slots);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("slots[token 3] = 4 repeats slots[token 0]"));
}

TEST(HostKvCacheTest, WriteRowsFailsOnNullRows) {
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(SmallLayout(DType::kFloat32));
  ASSERT_TRUE(cache.ok());
  const std::vector<int32_t> slots = {1};
  const std::vector<float> rows(10, 1.0f);
  const absl::Status status = cache->WriteRows(rows.data(), nullptr, slots);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("new_v is null with 1 tokens to write"));
  // Nothing to write: null is fine.
  EXPECT_TRUE(cache->WriteRows(nullptr, nullptr, {}).ok());
}

TEST(HostKvCacheTest, WriteRowsFailsOnMisalignedRows) {
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(SmallLayout(DType::kFloat32));
  ASSERT_TRUE(cache.ok());
  const std::vector<float> rows(20, 1.0f);
  const std::vector<int32_t> slots = {1};
  const char* misaligned = reinterpret_cast<const char*>(rows.data()) + 2;
  const absl::Status status = cache->WriteRows(misaligned, rows.data(), slots);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("new_k is not aligned to its float32"));
}

TEST(HostKvCacheTest, ReadFailsOutsideLayout) {
  absl::StatusOr<HostKvCache> cache = HostKvCache::Create(SmallLayout(DType::kFloat32));
  ASSERT_TRUE(cache.ok());
  for (auto [slot, head, dim] :
       {std::tuple<int64_t, int32_t, int32_t>{12, 0, 0}, {0, 2, 0}, {0, 0, 5}, {-1, 0, 0}}) {
    const absl::Status status = cache->Read(KvTensor::kValue, slot, head, dim).status();
    ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr(absl::StrCat("Read(V, slot=", slot, ", head=", head)),
                      HasSubstr("outside [12, 2, 5]")));
  }
}

TEST(KvSlotsTest, NegativeSlotsArePaddingAndValid) {
  EXPECT_TRUE(ValidateKvSlots(SmallLayout(DType::kFloat16), {-1, -5, 0, 11, -1}).ok());
}

TEST(KvCacheLayoutTest, ValidateFailsWhenBytesOverflowInt64) {
  const KvCacheLayout layout{.num_pages = 1 << 20,
                             .page_size = 1 << 10,
                             .num_kv_heads = 1 << 30,
                             .head_dim = 1 << 30,
                             .dtype = DType::kFloat32};
  const absl::Status status = ValidateKvCacheLayout(layout);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("num_pages * page_size = 1073741824 slots of num_kv_heads * head_dim = "
                        "1152921504606846976 elements overflow int64 bytes"));
}

// The device write validates everything on the host before it touches the
// GPU, so its errors are testable without one.
TEST(WriteKvRowsOnDeviceTest, FailsOnNullDeviceSlotsBeforeLaunching) {
  const KvCacheLayout layout = SmallLayout(DType::kFloat32);
  std::vector<float> rows(layout.row_elements() * 2), cache(layout.num_elements());
  const std::vector<int32_t> slots = {1, 2};
  const absl::Status status =
      WriteKvRowsOnDevice(layout, rows.data(), rows.data(), slots,
                          /*device_slots=*/nullptr, cache.data(), cache.data(), /*stream=*/nullptr);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("device_slots is null with 2 tokens"));
}

TEST(WriteKvRowsOnDeviceTest, FailsOnSlotPastCacheBeforeLaunching) {
  const KvCacheLayout layout = SmallLayout(DType::kFloat32);
  std::vector<float> rows(layout.row_elements() * 2), cache(layout.num_elements());
  const std::vector<int32_t> slots = {1, 99};
  const absl::Status status =
      WriteKvRowsOnDevice(layout, rows.data(), rows.data(), slots, slots.data(), cache.data(),
                          cache.data(), /*stream=*/nullptr);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()), HasSubstr("slots[token 1] = 99 is outside"));
}

TEST(WriteKvRowsOnDeviceTest, FailsOnBadLayoutNamingTheField) {
  KvCacheLayout layout = SmallLayout(DType::kFloat32);
  layout.num_kv_heads = -3;
  float row = 0;
  const std::vector<int32_t> slots = {1};
  const absl::Status status =
      WriteKvRowsOnDevice(layout, &row, &row, slots, slots.data(), &row, &row, /*stream=*/nullptr);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("num_kv_heads = -3 must be >= 1"));
}

TEST(HostKvCacheTest, WriteRowsFailsOnMoreTokensThanInt32) {
  HostKvCache cache = HostKvCache::Create(SmallLayout(DType::kFloat32)).value();
  const int32_t slot = 0;
  float row = 0;
  // Only the span's size is read before the check rejects it.
  const absl::Span<const int32_t> slots(&slot, size_t{1} << 31);
  const absl::Status status = cache.WriteRows(&row, &row, slots);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("2147483648 tokens exceed int32"));
}

}  // namespace
}  // namespace paged_attention
