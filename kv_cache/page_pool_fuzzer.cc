// libFuzzer target: random KvPagePool operation sequences against a shadow
// model (see tools/FUZZING.md). Every call must succeed exactly when the model
// says it may, fail with the code the header documents otherwise, and leave
// the pool's invariants intact: no page leaked or shared, the table matches
// the slots handed out, the reserved page 0 and row 0 untouched.
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "kv_cache/page_pool.h"
#include "testing/fuzz_input.h"

namespace paged_attention {
namespace {

struct ModelRow {
  bool active = false;
  int64_t length = 0;
  int64_t draft = 0;
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void CheckInvariants(const KvPagePool& pool, const std::vector<ModelRow>& model) {
  const int32_t page_size = pool.page_size();
  const int32_t width = pool.row_width();
  FUZZ_CHECK(pool.free_pages() + pool.used_pages() == pool.num_pages() - 1);
  absl::Span<const int32_t> table = pool.req_to_token();
  FUZZ_CHECK(static_cast<int64_t>(table.size()) == int64_t{pool.max_requests()} * width);
  int64_t pages_in_use = 0, active = 0;
  std::set<int32_t> pages_seen;
  for (int32_t row = 0; row < pool.max_requests(); ++row) {
    const ModelRow& m = model[row];
    const int32_t* entries = table.data() + int64_t{row} * width;
    const int64_t written = m.active ? m.length + m.draft : 0;
    if (m.active) {
      ++active;
      FUZZ_CHECK(pool.Length(row).value() == m.length);
      FUZZ_CHECK(pool.DraftLength(row).value() == m.draft);
      pages_in_use += CeilDiv(written, page_size);
    } else if (row > 0) {
      FUZZ_CHECK(pool.Length(row).status().code() == absl::StatusCode::kFailedPrecondition);
    }
    for (int64_t t = 0; t < width; ++t) {
      if (t >= written) {
        FUZZ_CHECK(entries[t] == 0);  // past the written length, and rows 0 / inactive
        continue;
      }
      if (t % page_size == 0 || t == written - 1) {  // Slot is slow-ish; sample it
        FUZZ_CHECK(pool.Slot(row, static_cast<int32_t>(t)).value() == entries[t]);
      }
      const int32_t page = entries[t] / page_size;
      FUZZ_CHECK(entries[t] % page_size == t % page_size);  // layout invariant
      FUZZ_CHECK(page >= 1 && page < pool.num_pages());     // never the sink page
      if (t % page_size == 0) {
        FUZZ_CHECK(pages_seen.insert(page).second);  // no page shared between requests
      } else {
        FUZZ_CHECK(page == entries[t - 1] / page_size);  // one page per logical page
      }
    }
  }
  FUZZ_CHECK(pool.used_pages() == pages_in_use);
  FUZZ_CHECK(pool.active_requests() == active);
}

// Expected outcome of a call on `row` per the header's contract.
absl::StatusCode RowCode(const KvPagePool& pool, const std::vector<ModelRow>& model, int32_t row) {
  if (row <= 0 || row >= pool.max_requests()) return absl::StatusCode::kInvalidArgument;
  if (!model[row].active) return absl::StatusCode::kFailedPrecondition;
  return absl::StatusCode::kOk;
}

absl::StatusCode GrowCode(const KvPagePool& pool, const ModelRow& m, int32_t num_tokens) {
  if (num_tokens < 0) return absl::StatusCode::kInvalidArgument;
  const int64_t total = m.length + m.draft;
  if (total + num_tokens > pool.row_width()) return absl::StatusCode::kOutOfRange;
  const int64_t new_pages =
      CeilDiv(total + num_tokens, pool.page_size()) - CeilDiv(total, pool.page_size());
  if (new_pages > pool.free_pages()) return absl::StatusCode::kResourceExhausted;
  return absl::StatusCode::kOk;
}

void Run(FuzzInput& in) {
  PagePoolConfig config;
  config.page_size = static_cast<int32_t>(in.IntInRange(1, 8));
  config.num_pages = static_cast<int32_t>(in.IntInRange(2, 40));
  config.max_requests = static_cast<int32_t>(in.IntInRange(2, 9));
  config.max_context_len = static_cast<int32_t>(in.IntInRange(1, 64));
  config.num_draft_tokens = static_cast<int32_t>(in.IntInRange(0, 8));
  absl::StatusOr<KvPagePool> created = KvPagePool::Create(config);
  FUZZ_CHECK(created.ok());
  KvPagePool& pool = *created;
  std::vector<ModelRow> model(config.max_requests);
  const int32_t width = pool.row_width();

  for (int step = 0; step < 200 && !in.empty(); ++step) {
    // Rows: mostly inside the table, sometimes the dummy row or far outside.
    const int32_t row = in.Bool() ? static_cast<int32_t>(in.IntInRange(-1, config.max_requests))
                                  : in.Length(0, config.max_requests);
    const absl::StatusCode row_code = RowCode(pool, model, row);
    const int32_t count = in.Length(0, width);
    switch (in.Byte() % 9) {
      case 0: {
        absl::StatusOr<int32_t> made = pool.CreateRequest();
        int32_t free_rows = 0;
        for (int32_t r = 1; r < config.max_requests; ++r) free_rows += !model[r].active;
        FUZZ_CHECK(made.ok() == (free_rows > 0));
        if (made.ok()) {
          FUZZ_CHECK(*made >= 1 && *made < config.max_requests && !model[*made].active);
          model[*made] = ModelRow{true, 0, 0};
        } else {
          FUZZ_CHECK(made.status().code() == absl::StatusCode::kResourceExhausted);
        }
        break;
      }
      case 1: {
        absl::StatusCode want = row_code;  // from the state before the call
        if (want == absl::StatusCode::kOk && count < 0) want = absl::StatusCode::kInvalidArgument;
        if (want == absl::StatusCode::kOk && model[row].draft > 0) {
          want = absl::StatusCode::kFailedPrecondition;
        }
        if (want == absl::StatusCode::kOk) want = GrowCode(pool, model[row], count);
        const absl::Status status = pool.Extend(row, count);
        FUZZ_CHECK(status.code() == want);
        if (status.ok()) model[row].length += count;
        break;
      }
      case 2: {
        absl::StatusCode want = row_code;
        if (want == absl::StatusCode::kOk) want = GrowCode(pool, model[row], count);
        const absl::Status status = pool.ReserveDraft(row, count);
        FUZZ_CHECK(status.code() == want);
        if (status.ok()) model[row].draft += count;
        break;
      }
      case 3: {
        const absl::Status status = pool.CommitDraft(row, count);
        absl::StatusCode want = row_code;
        if (want == absl::StatusCode::kOk && count < 0) want = absl::StatusCode::kInvalidArgument;
        if (want == absl::StatusCode::kOk && count > model[row].draft) {
          want = absl::StatusCode::kOutOfRange;
        }
        FUZZ_CHECK(status.code() == want);
        if (status.ok()) {
          model[row].length += count;
          model[row].draft = 0;
        }
        break;
      }
      case 4: {
        const absl::Status status = pool.RollbackDraft(row);
        FUZZ_CHECK(status.code() == row_code);
        if (status.ok()) model[row].draft = 0;
        break;
      }
      case 5: {
        const absl::Status status = pool.FreeRequest(row);
        FUZZ_CHECK(status.code() == row_code);
        if (status.ok()) model[row] = ModelRow{};
        break;
      }
      case 6: {
        const absl::Status status = pool.ShufflePageOrder(in.Uint32());
        FUZZ_CHECK(status.ok() == (pool.used_pages() == 0));
        if (!status.ok()) FUZZ_CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
        break;
      }
      case 7: {
        const absl::StatusOr<int32_t> slot = pool.Slot(row, count);
        absl::StatusCode want = row_code;
        if (want == absl::StatusCode::kOk &&
            (count < 0 || count >= model[row].length + model[row].draft)) {
          want = absl::StatusCode::kOutOfRange;
        }
        FUZZ_CHECK(slot.status().code() == want);
        break;
      }
      default: {
        FUZZ_CHECK(pool.Length(row).status().code() == row_code);
        FUZZ_CHECK(pool.DraftLength(row).status().code() == row_code);
        break;
      }
    }
    CheckInvariants(pool, model);
  }
  // Freeing every request returns every page: nothing leaks.
  for (int32_t r = 1; r < config.max_requests; ++r) {
    if (model[r].active) FUZZ_CHECK(pool.FreeRequest(r).ok());
    model[r] = ModelRow{};
  }
  CheckInvariants(pool, model);
  FUZZ_CHECK(pool.used_pages() == 0 && pool.active_requests() == 0);
}

}  // namespace
}  // namespace paged_attention

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paged_attention::FuzzInput in(data, size);
  paged_attention::Run(in);
  return 0;
}
