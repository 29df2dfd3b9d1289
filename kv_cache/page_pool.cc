#include "kv_cache/page_pool.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attention/base/status_macros.h"

namespace paged_attention {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

absl::StatusOr<KvPagePool> KvPagePool::Create(const PagePoolConfig& config) {
  std::vector<std::string> problems;
  if (config.num_pages < 2) {
    problems.push_back(absl::StrCat("num_pages = ", config.num_pages,
                                    " must be >= 2 (page 0 is the reserved sink)"));
  }
  if (config.page_size < 1) {
    problems.push_back(absl::StrCat("page_size = ", config.page_size, " must be >= 1"));
  }
  if (config.max_requests < 2) {
    problems.push_back(absl::StrCat("max_requests = ", config.max_requests,
                                    " must be >= 2 (row 0 is the reserved dummy row)"));
  }
  if (config.max_context_len < 1) {
    problems.push_back(absl::StrCat("max_context_len = ", config.max_context_len, " must be >= 1"));
  }
  if (config.num_draft_tokens < 0) {
    problems.push_back(
        absl::StrCat("num_draft_tokens = ", config.num_draft_tokens, " must be >= 0"));
  }
  if (problems.empty()) {
    const int64_t num_slots = int64_t{config.num_pages} * config.page_size;
    if (num_slots > std::numeric_limits<int32_t>::max()) {
      problems.push_back(absl::StrCat("num_pages = ", config.num_pages,
                                      " * page_size = ", config.page_size, " = ", num_slots,
                                      " slots do not fit the int32 slot ids"));
    }
    const int64_t row_width = int64_t{config.max_context_len} + config.num_draft_tokens;
    if (row_width > std::numeric_limits<int32_t>::max()) {
      problems.push_back(absl::StrCat("max_context_len = ", config.max_context_len,
                                      " + num_draft_tokens = ", config.num_draft_tokens,
                                      " overflows int32"));
    }
  }
  if (!problems.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("PagePoolConfig: ", absl::StrJoin(problems, "; ")));
  }
  // Everything the constructor allocates, in int64 (each factor < 2^31, so
  // no product of two overflows; the sum stays far below 2^63).
  const int64_t row_width = int64_t{config.max_context_len} + config.num_draft_tokens;
  const int64_t table_bytes = int64_t{config.max_requests} * row_width * sizeof(int32_t);
  const int64_t row_bytes =
      int64_t{config.max_requests} * static_cast<int64_t>(sizeof(RowState) + sizeof(int32_t));
  const int64_t page_bytes = int64_t{config.num_pages} * 2 * sizeof(int32_t);
  const int64_t total = table_bytes + row_bytes + page_bytes;
  if (total > kMaxPoolHostBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "PagePoolConfig: the pool's host state would take ", total,
        " bytes (req_to_token: ", "max_requests = ", config.max_requests, " * row width ",
        row_width, " * 4 = ", table_bytes, "; per-row state: max_requests = ", config.max_requests,
        " * ", sizeof(RowState) + sizeof(int32_t), " = ", row_bytes,
        "; page lists: num_pages = ", config.num_pages, " * 8 = ", page_bytes,
        "), more than the budget of ", kMaxPoolHostBytes, " bytes"));
  }
  return KvPagePool(config);
}

KvPagePool::KvPagePool(const PagePoolConfig& config)
    : config_(config),
      row_width_(config.max_context_len + config.num_draft_tokens),
      req_to_token_(static_cast<size_t>(config.max_requests) * row_width_, 0),
      rows_(config.max_requests) {
  free_pages_.reserve(config.num_pages - 1);
  for (int32_t page = config.num_pages - 1; page >= 1; --page) free_pages_.push_back(page);
  free_rows_.reserve(config.max_requests - 1);
  for (int32_t row = config.max_requests - 1; row >= 1; --row) free_rows_.push_back(row);
}

int32_t KvPagePool::active_requests() const {
  return config_.max_requests - 1 - static_cast<int32_t>(free_rows_.size());
}

absl::Status KvPagePool::ShufflePageOrder(uint64_t seed) {
  if (used_pages() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("ShufflePageOrder(seed=", seed, "): ", used_pages(),
                     " pages are in use; shuffle only a pool with no pages in use"));
  }
  // Our own Fisher-Yates (not std::shuffle) so a seed gives the same order
  // with every standard library.
  std::mt19937_64 rng(seed);
  for (size_t i = free_pages_.size(); i > 1; --i) {
    std::swap(free_pages_[i - 1], free_pages_[rng() % i]);
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> KvPagePool::CreateRequest() {
  if (free_rows_.empty()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("CreateRequest(): all ", config_.max_requests - 1,
                     " request rows are in use (max_requests ", config_.max_requests,
                     " includes the dummy row 0)"));
  }
  const int32_t row = free_rows_.back();
  free_rows_.pop_back();
  rows_[row] = RowState{};
  rows_[row].active = true;
  return row;
}

absl::Status KvPagePool::CheckActiveRow(const char* call, int32_t row) const {
  if (row == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, ": row 0 is the reserved dummy row, not a request"));
  }
  if (row < 0 || row >= config_.max_requests) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, ": row ", row, " is outside [1, ", config_.max_requests, ")"));
  }
  if (!rows_[row].active) {
    return absl::FailedPreconditionError(
        absl::StrCat(call, ": row ", row, " is not an active request"));
  }
  return absl::OkStatus();
}

absl::Status KvPagePool::Grow(const char* call, int32_t row, int32_t num_tokens) {
  RowState& state = rows_[row];
  const int64_t total = int64_t{state.length} + state.draft_length;
  if (total + num_tokens > row_width_) {
    std::string have = absl::StrCat("length ", state.length);
    if (state.draft_length > 0) absl::StrAppend(&have, " + draft ", state.draft_length);
    return absl::OutOfRangeError(
        absl::StrCat(call, ": ", have, " + ", num_tokens, " exceeds row width ", row_width_,
                     " (max_context_len ", config_.max_context_len, " + num_draft_tokens ",
                     config_.num_draft_tokens, ")"));
  }
  const int32_t page_size = config_.page_size;
  const int64_t new_pages = CeilDiv(total + num_tokens, page_size) - CeilDiv(total, page_size);
  if (new_pages > free_pages()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        call, ": needs ", new_pages, " new pages but only ", free_pages(), " of ",
        config_.num_pages - 1, " pages are free (short by ", new_pages - free_pages(), ")"));
  }
  for (int64_t i = 0; i < new_pages; ++i) {
    state.pages.push_back(free_pages_.back());
    free_pages_.pop_back();
  }
  int32_t* table_row = &req_to_token_[static_cast<size_t>(row) * row_width_];
  for (int64_t t = total; t < total + num_tokens; ++t) {
    table_row[t] = state.pages[t / page_size] * page_size + static_cast<int32_t>(t % page_size);
  }
  return absl::OkStatus();
}

void KvPagePool::ShrinkTo(int32_t row, int32_t new_total) {
  RowState& state = rows_[row];
  const int32_t total = state.length + state.draft_length;
  int32_t* table_row = &req_to_token_[static_cast<size_t>(row) * row_width_];
  for (int32_t t = new_total; t < total; ++t) table_row[t] = 0;
  const size_t keep = static_cast<size_t>(CeilDiv(new_total, config_.page_size));
  while (state.pages.size() > keep) {
    free_pages_.push_back(state.pages.back());
    state.pages.pop_back();
  }
}

absl::Status KvPagePool::Extend(int32_t row, int32_t num_tokens) {
  const std::string call = absl::StrCat("Extend(row=", row, ", num_tokens=", num_tokens, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  if (num_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat(call, ": num_tokens is negative"));
  }
  if (rows_[row].draft_length > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(call, ": row has ", rows_[row].draft_length,
                     " reserved draft tokens; CommitDraft or RollbackDraft first"));
  }
  RETURN_IF_ERROR(Grow(call.c_str(), row, num_tokens));
  rows_[row].length += num_tokens;
  return absl::OkStatus();
}

absl::Status KvPagePool::ReserveDraft(int32_t row, int32_t num_tokens) {
  const std::string call = absl::StrCat("ReserveDraft(row=", row, ", num_tokens=", num_tokens, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  if (num_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat(call, ": num_tokens is negative"));
  }
  RETURN_IF_ERROR(Grow(call.c_str(), row, num_tokens));
  rows_[row].draft_length += num_tokens;
  return absl::OkStatus();
}

absl::Status KvPagePool::CommitDraft(int32_t row, int32_t num_accepted) {
  const std::string call =
      absl::StrCat("CommitDraft(row=", row, ", num_accepted=", num_accepted, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  RowState& state = rows_[row];
  if (num_accepted < 0) {
    return absl::InvalidArgumentError(absl::StrCat(call, ": num_accepted is negative"));
  }
  if (num_accepted > state.draft_length) {
    return absl::OutOfRangeError(
        absl::StrCat(call, ": only ", state.draft_length, " draft tokens are reserved"));
  }
  ShrinkTo(row, state.length + num_accepted);
  state.length += num_accepted;
  state.draft_length = 0;
  return absl::OkStatus();
}

absl::Status KvPagePool::RollbackDraft(int32_t row) {
  const std::string call = absl::StrCat("RollbackDraft(row=", row, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  return CommitDraft(row, 0);
}

absl::Status KvPagePool::FreeRequest(int32_t row) {
  const std::string call = absl::StrCat("FreeRequest(row=", row, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  ShrinkTo(row, 0);
  rows_[row] = RowState{};
  free_rows_.push_back(row);
  return absl::OkStatus();
}

absl::StatusOr<int32_t> KvPagePool::Length(int32_t row) const {
  const std::string call = absl::StrCat("Length(row=", row, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  return rows_[row].length;
}

absl::StatusOr<int32_t> KvPagePool::DraftLength(int32_t row) const {
  const std::string call = absl::StrCat("DraftLength(row=", row, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  return rows_[row].draft_length;
}

absl::StatusOr<int32_t> KvPagePool::Slot(int32_t row, int32_t token) const {
  const std::string call = absl::StrCat("Slot(row=", row, ", token=", token, ")");
  RETURN_IF_ERROR(CheckActiveRow(call.c_str(), row));
  const RowState& state = rows_[row];
  if (token < 0 || token >= state.length + state.draft_length) {
    return absl::OutOfRangeError(absl::StrCat(call, ": token is outside the written range [0, ",
                                              state.length + state.draft_length, ") (length ",
                                              state.length, " + draft ", state.draft_length, ")"));
  }
  return req_to_token_[static_cast<size_t>(row) * row_width_ + token];
}

}  // namespace paged_attention
