#include "kv_cache/page_pool.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

PagePoolConfig SmallConfig(int32_t page_size) {
  return PagePoolConfig{.num_pages = 9,
                        .page_size = page_size,
                        .max_requests = 4,
                        .max_context_len = 8 * page_size,
                        .num_draft_tokens = 2};
}

KvPagePool MakePool(const PagePoolConfig& config) {
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(config);
  EXPECT_TRUE(pool.ok()) << pool.status();
  return *std::move(pool);
}

int32_t NewRequest(KvPagePool& pool) {
  absl::StatusOr<int32_t> row = pool.CreateRequest();
  EXPECT_TRUE(row.ok()) << row.status();
  return row.ok() ? *row : -1;
}

std::vector<int32_t> RowSlots(const KvPagePool& pool, int32_t row) {
  const int32_t written = *pool.Length(row) + *pool.DraftLength(row);
  std::vector<int32_t> slots;
  for (int32_t t = 0; t < written; ++t) slots.push_back(*pool.Slot(row, t));
  return slots;
}

// The layout invariant: one physical page per logical page of the request.
void ExpectSlotInvariant(const KvPagePool& pool, int32_t row) {
  const std::vector<int32_t> slots = RowSlots(pool, row);
  const int32_t p = pool.page_size();
  for (size_t t = 0; t < slots.size(); ++t) {
    const int32_t page = slots[t - t % p] / p;
    EXPECT_NE(page, 0) << "row " << row << " token " << t;
    EXPECT_EQ(slots[t], page * p + static_cast<int32_t>(t % p)) << "row " << row << " token " << t;
  }
}

class KvPagePoolPageSizeTest : public ::testing::TestWithParam<int32_t> {};

INSTANTIATE_TEST_SUITE_P(PageSizes, KvPagePoolPageSizeTest, ::testing::Values(1, 3, 16, 64, 256));

TEST_P(KvPagePoolPageSizeTest, StartsEmptyWithReservedPageAndRow) {
  const KvPagePool pool = MakePool(SmallConfig(GetParam()));
  EXPECT_EQ(pool.page_size(), GetParam());
  EXPECT_EQ(pool.num_pages(), 9);
  EXPECT_EQ(pool.row_width(), 8 * GetParam() + 2);
  EXPECT_EQ(pool.max_requests(), 4);
  EXPECT_EQ(pool.free_pages(), 8);
  EXPECT_EQ(pool.used_pages(), 0);
  EXPECT_EQ(pool.active_requests(), 0);
  EXPECT_EQ(pool.req_to_token().size(), static_cast<size_t>(4 * pool.row_width()));
  for (int32_t slot : pool.req_to_token()) EXPECT_EQ(slot, 0);
}

TEST_P(KvPagePoolPageSizeTest, ExtendFillsPartialPageBeforeTakingNewPages) {
  const int32_t p = GetParam();
  KvPagePool pool = MakePool(SmallConfig(p));
  const int32_t row = NewRequest(pool);
  ASSERT_GE(row, 1);
  // 1 token, then enough to cross one page boundary, then exactly to a boundary.
  ASSERT_TRUE(pool.Extend(row, 1).ok());
  EXPECT_EQ(pool.used_pages(), 1);
  ASSERT_TRUE(pool.Extend(row, p).ok());
  EXPECT_EQ(*pool.Length(row), p + 1);
  EXPECT_EQ(pool.used_pages(), 2);
  ASSERT_TRUE(pool.Extend(row, p - 1).ok());
  EXPECT_EQ(pool.used_pages(), 2);
  ExpectSlotInvariant(pool, row);
  // Pages of a fresh pool come out in order 1, 2, ...
  EXPECT_EQ(*pool.Slot(row, 0), p);
  EXPECT_EQ(*pool.Slot(row, 2 * p - 1), 3 * p - 1);
  // The table row holds the same slots and zeros past the length.
  absl::Span<const int32_t> table =
      pool.req_to_token().subspan(row * pool.row_width(), pool.row_width());
  for (int32_t t = 0; t < pool.row_width(); ++t) {
    EXPECT_EQ(table[t], t < 2 * p ? *pool.Slot(row, t) : 0) << t;
  }
}

TEST_P(KvPagePoolPageSizeTest, DraftReserveCommitAndRollback) {
  const int32_t p = GetParam();
  KvPagePool pool = MakePool(SmallConfig(p));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, p).ok());  // exactly one full page
  ASSERT_TRUE(pool.ReserveDraft(row, 2).ok());
  EXPECT_EQ(*pool.Length(row), p);
  EXPECT_EQ(*pool.DraftLength(row), 2);
  EXPECT_EQ(pool.used_pages(), p == 1 ? 3 : 2);
  ExpectSlotInvariant(pool, row);
  const int32_t first_draft_slot = *pool.Slot(row, p);

  ASSERT_TRUE(pool.CommitDraft(row, 1).ok());
  EXPECT_EQ(*pool.Length(row), p + 1);
  EXPECT_EQ(*pool.DraftLength(row), 0);
  EXPECT_EQ(*pool.Slot(row, p), first_draft_slot);  // accepted tokens keep their slot
  EXPECT_EQ(pool.used_pages(), 2);
  EXPECT_EQ(pool.req_to_token()[row * pool.row_width() + p + 1], 0);

  ASSERT_TRUE(pool.ReserveDraft(row, 2).ok());
  ASSERT_TRUE(pool.RollbackDraft(row).ok());
  EXPECT_EQ(*pool.Length(row), p + 1);
  EXPECT_EQ(pool.used_pages(), 2);
  ExpectSlotInvariant(pool, row);
}

TEST_P(KvPagePoolPageSizeTest, FreeRequestReturnsPagesAndZeroesRow) {
  const int32_t p = GetParam();
  KvPagePool pool = MakePool(SmallConfig(p));
  const int32_t a = NewRequest(pool);
  const int32_t b = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(a, 3 * p).ok());
  ASSERT_TRUE(pool.Extend(b, 2 * p + 1).ok());
  EXPECT_EQ(pool.used_pages(), 6);
  ASSERT_TRUE(pool.FreeRequest(a).ok());
  EXPECT_EQ(pool.used_pages(), 3);
  EXPECT_EQ(pool.active_requests(), 1);
  for (int32_t t = 0; t < pool.row_width(); ++t) {
    EXPECT_EQ(pool.req_to_token()[a * pool.row_width() + t], 0);
  }
  // The freed row and pages are reused.
  EXPECT_EQ(NewRequest(pool), a);
  ASSERT_TRUE(pool.Extend(a, 5 * p).ok());
  EXPECT_EQ(pool.free_pages(), 0);
}

TEST_P(KvPagePoolPageSizeTest, RowWidthIncludesDraftHeadroom) {
  const int32_t p = GetParam();
  KvPagePool pool = MakePool(PagePoolConfig{.num_pages = 64,
                                            .page_size = p,
                                            .max_requests = 2,
                                            .max_context_len = 5 * p + 1,
                                            .num_draft_tokens = 3});
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, 5 * p + 1).ok());
  ASSERT_TRUE(pool.ReserveDraft(row, 3).ok());
  EXPECT_TRUE(pool.Slot(row, 5 * p + 3).ok());
  ExpectSlotInvariant(pool, row);
  EXPECT_EQ(pool.ReserveDraft(row, 1).code(), absl::StatusCode::kOutOfRange);
}

TEST(KvPagePoolTest, ShufflePageOrderHandsOutNonContiguousPagesDeterministically) {
  const PagePoolConfig config{.num_pages = 257,
                              .page_size = 4,
                              .max_requests = 2,
                              .max_context_len = 1024,
                              .num_draft_tokens = 0};
  std::vector<int32_t> orders[2];
  for (std::vector<int32_t>& order : orders) {
    KvPagePool pool = MakePool(config);
    ASSERT_TRUE(pool.ShufflePageOrder(42).ok());
    const int32_t row = NewRequest(pool);
    ASSERT_TRUE(pool.Extend(row, 1024).ok());
    for (int32_t j = 0; j < 256; ++j) order.push_back(*pool.Slot(row, 4 * j) / 4);
    ExpectSlotInvariant(pool, row);
  }
  EXPECT_EQ(orders[0], orders[1]);
  const std::set<int32_t> pages(orders[0].begin(), orders[0].end());
  EXPECT_EQ(pages.size(), 256u);
  EXPECT_EQ(*pages.begin(), 1);
  int32_t contiguous = 0;
  for (size_t j = 1; j < orders[0].size(); ++j) contiguous += orders[0][j] == orders[0][j - 1] + 1;
  EXPECT_LT(contiguous, 32);
}

// ----- Error paths: one test each, code and message.

TEST(KvPagePoolTest, CreateFailsNamingEveryBadField) {
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(PagePoolConfig{.num_pages = 1,
                                                                      .page_size = 0,
                                                                      .max_requests = 1,
                                                                      .max_context_len = 0,
                                                                      .num_draft_tokens = -1});
  ASSERT_EQ(pool.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(pool.status().message()),
      AllOf(HasSubstr("num_pages = 1"), HasSubstr("page_size = 0"), HasSubstr("max_requests = 1"),
            HasSubstr("max_context_len = 0"), HasSubstr("num_draft_tokens = -1")));
}

TEST(KvPagePoolTest, CreateFailsWhenSlotIdsOverflowInt32) {
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(PagePoolConfig{.num_pages = 1 << 20,
                                                                      .page_size = 4096,
                                                                      .max_requests = 2,
                                                                      .max_context_len = 16,
                                                                      .num_draft_tokens = 0});
  ASSERT_EQ(pool.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(pool.status().message()), HasSubstr("int32 slot ids"));
}

TEST(KvPagePoolTest, CreateFailsWhenTableIsTooLarge) {
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(PagePoolConfig{.num_pages = 16,
                                                                      .page_size = 16,
                                                                      .max_requests = 1 << 20,
                                                                      .max_context_len = 1 << 20,
                                                                      .num_draft_tokens = 0});
  ASSERT_EQ(pool.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(pool.status().message()),
              AllOf(HasSubstr("req_to_token: max_requests = 1048576 * row width 1048576 * 4 = "
                              "4398046511104"),
                    HasSubstr("more than the budget of 8589934592 bytes")));
}

// Regression: the table limit alone let max_requests near INT32_MAX through
// with a one-token row: an 8 GiB table plus ~90 GB of per-row state.
TEST(KvPagePoolTest, CreateCountsPerRowStateAgainstTheBudget) {
  absl::StatusOr<KvPagePool> pool =
      KvPagePool::Create(PagePoolConfig{.num_pages = 2,
                                        .page_size = 1,
                                        .max_requests = std::numeric_limits<int32_t>::max() - 1,
                                        .max_context_len = 1,
                                        .num_draft_tokens = 0});
  ASSERT_EQ(pool.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(pool.status().message()),
              AllOf(HasSubstr("per-row state: max_requests = 2147483646 * "),
                    HasSubstr("more than the budget of 8589934592 bytes")));
  // Many pages of one slot each: the free lists count too.
  pool = KvPagePool::Create(PagePoolConfig{.num_pages = std::numeric_limits<int32_t>::max(),
                                           .page_size = 1,
                                           .max_requests = 2,
                                           .max_context_len = 1,
                                           .num_draft_tokens = 0});
  ASSERT_EQ(pool.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(pool.status().message()),
              HasSubstr("page lists: num_pages = 2147483647 * 8 = 17179869176"));
}

TEST(KvPagePoolTest, CreateRequestFailsWhenRowsAreExhausted) {
  KvPagePool pool = MakePool(SmallConfig(16));
  for (int i = 0; i < 3; ++i) NewRequest(pool);
  absl::StatusOr<int32_t> row = pool.CreateRequest();
  ASSERT_EQ(row.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(row.status().message()), HasSubstr("all 3 request rows are in use"));
}

TEST(KvPagePoolTest, ExtendFailsWhenPoolIsExhausted) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t a = NewRequest(pool);
  const int32_t b = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(a, 100).ok());  // 7 pages, 12 slots left on the last
  const std::vector<int32_t> before(pool.req_to_token().begin(), pool.req_to_token().end());
  const absl::Status status = pool.Extend(b, 17);  // needs 2 pages, 1 free
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("Extend(row=2, num_tokens=17)"), HasSubstr("needs 2 new pages"),
                    HasSubstr("only 1 of 8 pages are free")));
  // Unchanged: no partial allocation.
  EXPECT_EQ(pool.free_pages(), 1);
  EXPECT_EQ(*pool.Length(b), 0);
  EXPECT_EQ(std::vector<int32_t>(pool.req_to_token().begin(), pool.req_to_token().end()), before);
  // The partial page is still usable without a new page.
  EXPECT_TRUE(pool.Extend(a, 12).ok());
  EXPECT_EQ(pool.free_pages(), 1);
}

TEST(KvPagePoolTest, ReserveDraftFailsWhenPoolIsExhausted) {
  KvPagePool pool = MakePool(SmallConfig(3));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, 24).ok());  // all 8 pages
  const absl::Status status = pool.ReserveDraft(row, 1);
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("ReserveDraft(row=1, num_tokens=1): needs 1 new pages but only 0"));
  EXPECT_EQ(*pool.DraftLength(row), 0);
}

TEST(KvPagePoolTest, ExtendFailsPastRowWidth) {
  KvPagePool pool = MakePool(PagePoolConfig{.num_pages = 100,
                                            .page_size = 16,
                                            .max_requests = 5,
                                            .max_context_len = 1020,
                                            .num_draft_tokens = 4});
  for (int i = 0; i < 2; ++i) NewRequest(pool);
  const int32_t row = NewRequest(pool);
  ASSERT_EQ(row, 3);
  ASSERT_TRUE(pool.Extend(row, 1020).ok());
  const absl::Status status = pool.Extend(row, 5);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("Extend(row=3, num_tokens=5): length 1020 + 5 exceeds row width 1024"));
  EXPECT_EQ(*pool.Length(row), 1020);
}

TEST(KvPagePoolTest, ReserveDraftFailsPastRowWidth) {
  KvPagePool pool = MakePool(SmallConfig(1));  // row width 10
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, 7).ok());
  ASSERT_TRUE(pool.ReserveDraft(row, 1).ok());
  const absl::Status status = pool.ReserveDraft(row, 3);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("length 7 + draft 1 + 3 exceeds row width 10"));
}

TEST(KvPagePoolTest, ExtendFailsWithNegativeCount) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  const absl::Status status = pool.Extend(row, -1);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("Extend(row=1, num_tokens=-1): num_tokens is negative"));
}

TEST(KvPagePoolTest, ReserveDraftFailsWithNegativeCount) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  const absl::Status status = pool.ReserveDraft(row, -2);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("num_tokens is negative"));
}

TEST(KvPagePoolTest, ExtendFailsWhileDraftIsReserved) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, 5).ok());
  ASSERT_TRUE(pool.ReserveDraft(row, 2).ok());
  const absl::Status status = pool.Extend(row, 1);
  ASSERT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("row has 2 reserved draft tokens"));
}

TEST(KvPagePoolTest, CommitDraftFailsWhenAcceptingMoreThanReserved) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.ReserveDraft(row, 2).ok());
  const absl::Status status = pool.CommitDraft(row, 3);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("CommitDraft(row=1, num_accepted=3): only 2 draft tokens are reserved"));
  EXPECT_EQ(*pool.DraftLength(row), 2);
}

TEST(KvPagePoolTest, CommitDraftFailsWithNegativeCount) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  const absl::Status status = pool.CommitDraft(row, -1);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("num_accepted is negative"));
}

TEST(KvPagePoolTest, FreeRequestFailsOnDoubleFree) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.FreeRequest(row).ok());
  const absl::Status status = pool.FreeRequest(row);
  ASSERT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("FreeRequest(row=1): row 1 is not an active request"));
}

TEST(KvPagePoolTest, CallsFailOnInactiveRow) {
  KvPagePool pool = MakePool(SmallConfig(16));
  for (absl::Status status :
       {pool.Extend(2, 1), pool.ReserveDraft(2, 1), pool.CommitDraft(2, 0), pool.RollbackDraft(2),
        pool.Length(2).status(), pool.DraftLength(2).status(), pool.Slot(2, 0).status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("row 2 is not an active request"));
  }
}

TEST(KvPagePoolTest, CallsFailOnRowOutsideTable) {
  KvPagePool pool = MakePool(SmallConfig(16));
  for (int32_t row : {-1, 4, 1000}) {
    for (absl::Status status : {pool.Extend(row, 1), pool.FreeRequest(row),
                                pool.Length(row).status(), pool.Slot(row, 0).status()}) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
      EXPECT_THAT(std::string(status.message()),
                  HasSubstr(absl::StrCat("row ", row, " is outside [1, 4)")));
    }
  }
}

TEST(KvPagePoolTest, CallsFailOnDummyRow) {
  KvPagePool pool = MakePool(SmallConfig(16));
  for (absl::Status status : {pool.Extend(0, 1), pool.FreeRequest(0), pool.Length(0).status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("row 0 is the reserved dummy row"));
  }
}

TEST(KvPagePoolTest, SlotFailsPastWrittenLength) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, 5).ok());
  ASSERT_TRUE(pool.ReserveDraft(row, 2).ok());
  EXPECT_TRUE(pool.Slot(row, 6).ok());
  for (int32_t token : {7, -1}) {
    const absl::Status status = pool.Slot(row, token).status();
    ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr(absl::StrCat("Slot(row=1, token=", token, ")")),
                      HasSubstr("outside the written range [0, 7) (length 5 + draft 2)")));
  }
}

TEST(KvPagePoolTest, ShufflePageOrderFailsWithPagesInUse) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = NewRequest(pool);
  ASSERT_TRUE(pool.Extend(row, 1).ok());
  const absl::Status status = pool.ShufflePageOrder(7);
  ASSERT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("ShufflePageOrder(seed=7): 1 pages are in use"));
}

TEST(KvPagePoolTest, CreateFailsWhenRowWidthOverflowsInt32) {
  absl::StatusOr<KvPagePool> pool =
      KvPagePool::Create(PagePoolConfig{.num_pages = 4,
                                        .page_size = 1,
                                        .max_requests = 2,
                                        .max_context_len = std::numeric_limits<int32_t>::max(),
                                        .num_draft_tokens = 1});
  ASSERT_EQ(pool.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(pool.status().message()),
              HasSubstr("max_context_len = 2147483647 + num_draft_tokens = 1 overflows int32"));
}

TEST(KvPagePoolTest, HugeCountsFailWithoutOverflowOrAllocation) {
  KvPagePool pool = MakePool(SmallConfig(16));
  const int32_t row = pool.CreateRequest().value();
  ASSERT_TRUE(pool.Extend(row, 5).ok());
  const int32_t huge = std::numeric_limits<int32_t>::max();
  for (absl::Status status : {pool.Extend(row, huge), pool.ReserveDraft(row, huge)}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("length 5 + 2147483647 exceeds row width 130"));
  }
  const absl::Status commit = pool.CommitDraft(row, huge);
  EXPECT_EQ(commit.code(), absl::StatusCode::kOutOfRange) << commit;
  EXPECT_THAT(std::string(commit.message()), HasSubstr("num_accepted=2147483647"));
  EXPECT_EQ(pool.used_pages(), 1);
}

}  // namespace
}  // namespace paged_attention
