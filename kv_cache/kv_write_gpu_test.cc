// The GPU KV write against the host write, bit for bit, on a NaN-poisoned
// cache with slots from a shuffled page pool (non-contiguous pages), padding
// tokens included. Skips without a GPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attention/base/device_buffer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kv_cache/kv_cache.h"
#include "kv_cache/page_pool.h"
#include "testing/gpu_test.h"

namespace paged_attention {
namespace {

using ::testing::HasSubstr;

// dtype, page size, {num_kv_heads, head_dim}.
using WriteCase = std::tuple<DType, int32_t, std::tuple<int32_t, int32_t>>;

class KvWriteGpuTest : public GpuTestWithParam<WriteCase> {};

// Slots for one step of a random batch: each request has a random committed
// prefix and writes a random number of new tokens, from a shuffled pool;
// every fifth token is padding (-1).
std::vector<int32_t> RandomStepSlots(KvPagePool& pool, std::mt19937_64& rng) {
  std::vector<int32_t> slots;
  for (int request = 0; request < pool.max_requests() - 1; ++request) {
    absl::StatusOr<int32_t> row = pool.CreateRequest();
    EXPECT_TRUE(row.ok()) << row.status();
    const int32_t prefix = static_cast<int32_t>(rng() % 40);
    const int32_t new_tokens = 1 + static_cast<int32_t>(rng() % 20);
    EXPECT_TRUE(pool.Extend(*row, prefix).ok());
    EXPECT_TRUE(pool.ReserveDraft(*row, new_tokens).ok());
    for (int32_t t = prefix; t < prefix + new_tokens; ++t) {
      if (rng() % 5 == 0) slots.push_back(-1);
      slots.push_back(*pool.Slot(*row, t));
    }
  }
  return slots;
}

TEST_P(KvWriteGpuTest, MatchesHostWriteBitExactlyAndLeavesOtherSlotsPoisoned) {
  const auto [dtype, page_size, shape] = GetParam();
  const auto [num_kv_heads, head_dim] = shape;
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);

  const int32_t num_pages = 1 + (8 * 60 + page_size - 1) / page_size + 8;
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(PagePoolConfig{.num_pages = num_pages,
                                                                      .page_size = page_size,
                                                                      .max_requests = 9,
                                                                      .max_context_len = 64,
                                                                      .num_draft_tokens = 0});
  ASSERT_TRUE(pool.ok()) << pool.status();
  ASSERT_TRUE(pool->ShufflePageOrder(seed).ok());
  const std::vector<int32_t> slots = RandomStepSlots(*pool, rng);
  const int32_t num_tokens = static_cast<int32_t>(slots.size());

  const KvCacheLayout layout{.num_pages = num_pages,
                             .page_size = page_size,
                             .num_kv_heads = num_kv_heads,
                             .head_dim = head_dim,
                             .dtype = dtype};
  absl::StatusOr<HostKvCache> expected = HostKvCache::Create(layout);
  ASSERT_TRUE(expected.ok()) << expected.status();
  expected->Fill(std::nanf(""));
  absl::StatusOr<DeviceKvCache> device = DeviceKvCache::Create(layout);
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE(device->Upload(*expected).ok());

  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k_values(num_tokens * layout.row_elements());
  std::vector<float> v_values(k_values.size());
  for (float& x : k_values) x = normal(rng);
  for (float& x : v_values) x = normal(rng);
  const std::vector<uint8_t> new_k = EncodeElements(dtype, k_values);
  const std::vector<uint8_t> new_v = EncodeElements(dtype, v_values);
  ASSERT_TRUE(expected->WriteRows(new_k.data(), new_v.data(), slots).ok());

  absl::StatusOr<DeviceBuffer> d_new_k = DeviceBuffer::Allocate(new_k.size(), "new_k");
  absl::StatusOr<DeviceBuffer> d_new_v = DeviceBuffer::Allocate(new_v.size(), "new_v");
  absl::StatusOr<DeviceBuffer> d_slots =
      DeviceBuffer::Allocate(slots.size() * sizeof(int32_t), "slots");
  ASSERT_TRUE(d_new_k.ok() && d_new_v.ok() && d_slots.ok());
  ASSERT_TRUE(d_new_k->Upload(new_k).ok());
  ASSERT_TRUE(d_new_v->Upload(new_v).ok());
  ASSERT_TRUE(d_slots->Upload(slots).ok());
  const absl::Status write = device->WriteRows(d_new_k->data(), d_new_v->data(), slots,
                                               d_slots->as<int32_t>(), /*stream=*/nullptr);
  ASSERT_TRUE(write.ok()) << write;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  absl::StatusOr<HostKvCache> actual = HostKvCache::Create(layout);
  ASSERT_TRUE(actual.ok());
  ASSERT_TRUE(device->Download(&*actual).ok());
  ASSERT_EQ(std::memcmp(actual->k_data(), expected->k_data(), actual->size_bytes()), 0);
  ASSERT_EQ(std::memcmp(actual->v_data(), expected->v_data(), actual->size_bytes()), 0);

  // The comparison above would also pass if neither side wrote anything: check
  // written slots hold the data and all others are still NaN.
  std::vector<int32_t> token_of_slot(layout.num_slots(), -1);
  for (int32_t i = 0; i < num_tokens; ++i) {
    if (slots[i] >= 0) token_of_slot[slots[i]] = i;
  }
  int64_t written = 0;
  for (int32_t slot = 0; slot < layout.num_slots(); ++slot) {
    const int32_t token = token_of_slot[slot];
    written += token >= 0;
    for (int32_t h = 0; h < num_kv_heads; ++h) {
      for (int32_t d = 0; d < head_dim; ++d) {
        const float k = actual->At(KvTensor::kKey, slot, h, d);
        const float v = actual->At(KvTensor::kValue, slot, h, d);
        if (token < 0) {
          ASSERT_TRUE(std::isnan(k) && std::isnan(v)) << "slot " << slot << " was written";
        } else {
          const int64_t i = (int64_t{token} * num_kv_heads + h) * head_dim + d;
          ASSERT_EQ(k, RoundTrip(dtype, k_values[i])) << "slot " << slot;
          ASSERT_EQ(v, RoundTrip(dtype, v_values[i])) << "slot " << slot;
        }
      }
    }
  }
  EXPECT_GT(written, 8);
  std::cout << DTypeName(dtype) << " page_size " << page_size << " heads " << num_kv_heads
            << " head_dim " << head_dim << ": " << written << " rows written, " << num_tokens
            << " tokens, bit-exact" << std::endl;
}

INSTANTIATE_TEST_SUITE_P(
    DtypesPageSizesShapes, KvWriteGpuTest,
    ::testing::Combine(::testing::Values(DType::kBFloat16, DType::kFloat16, DType::kFloat32),
                       ::testing::Values(1, 3, 16, 64, 256),
                       // 16-byte multiples, plus 3 x 5 elements (30 or 60 bytes) for
                       // the 2- and 4-byte access paths.
                       ::testing::Values(std::make_tuple(8, 128), std::make_tuple(1, 64),
                                         std::make_tuple(3, 5))),
    [](const ::testing::TestParamInfo<WriteCase>& info) {
      return absl::StrCat(DTypeName(std::get<0>(info.param)), "_page", std::get<1>(info.param),
                          "_heads", std::get<0>(std::get<2>(info.param)), "_dim",
                          std::get<1>(std::get<2>(info.param)));
    });

class KvWriteErrorGpuTest : public GpuTest {};

TEST_F(KvWriteErrorGpuTest, WriteRowsFailsOnSlotPastCacheBeforeLaunching) {
  const KvCacheLayout layout{
      .num_pages = 2, .page_size = 4, .num_kv_heads = 1, .head_dim = 8, .dtype = DType::kFloat16};
  absl::StatusOr<DeviceKvCache> device = DeviceKvCache::Create(layout);
  ASSERT_TRUE(device.ok()) << device.status();
  const std::vector<int32_t> slots = {1, 8};
  // Never dereferenced: validation fails first.
  const absl::Status status =
      device->WriteRows(device->k_data(), device->v_data(), slots,
                        static_cast<const int32_t*>(device->k_data()), nullptr);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("slots[token 1] = 8 is outside the cache's 8 slots"));
}

TEST_F(KvWriteErrorGpuTest, UploadFailsOnLayoutMismatch) {
  const KvCacheLayout layout{
      .num_pages = 2, .page_size = 4, .num_kv_heads = 1, .head_dim = 8, .dtype = DType::kFloat16};
  KvCacheLayout other = layout;
  other.dtype = DType::kBFloat16;
  absl::StatusOr<DeviceKvCache> device = DeviceKvCache::Create(layout);
  absl::StatusOr<HostKvCache> host = HostKvCache::Create(other);
  ASSERT_TRUE(device.ok() && host.ok());
  const absl::Status status = device->Upload(*host);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("dtype=bfloat16} differs from device"));
  EXPECT_EQ(device->Download(&*host).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paged_attention
