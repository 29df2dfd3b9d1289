// The KV page pool: which physical KV slots each request's tokens live in.
//
// The pool owns `num_pages` pages of `page_size` token slots and a
// request-to-token table `req_to_token[max_requests, row_width]` of int32 slot
// ids (slot = page * page_size + offset in page). The planner turns a row of
// that table into a page table, and the KV write (set_kv_buffer) stores new
// K/V rows at the slots this pool hands out.
//
//   ASSIGN_OR_RETURN(KvPagePool pool, KvPagePool::Create({.num_pages = 1024,
//       .page_size = 16, .max_requests = 65, .max_context_len = 4096,
//       .num_draft_tokens = 4}));
//   ASSIGN_OR_RETURN(int32_t row, pool.CreateRequest());
//   RETURN_IF_ERROR(pool.Extend(row, prompt_len));        // prefill
//   RETURN_IF_ERROR(pool.ReserveDraft(row, 4));           // verify slots
//   RETURN_IF_ERROR(pool.CommitDraft(row, accepted));     // keep the accepted prefix
//   RETURN_IF_ERROR(pool.FreeRequest(row));
//
// Reserved entries, so padded work always has somewhere harmless to go:
// - Page 0 is the sink for padded writes and is never handed out, so
//   `free_pages() + used_pages() == num_pages() - 1` always.
// - Row 0 of req_to_token is the dummy row for padded batch entries: it is
//   never handed out and all its entries are 0 (page 0, slot 0). Rows
//   1 .. max_requests-1 are handed out, so at most `max_requests - 1`
//   requests are live at once.
// - Every entry past a row's written length (Length + DraftLength) is 0.
//
// Layout invariant the planner relies on: all tokens of one logical page of a
// request share one physical page, i.e.
//   Slot(r, t) == page(r, t / page_size) * page_size + t % page_size.
// Extend fills the partial last page first, then takes whole new pages.
//
// Row width. Speculative decoding reads and writes up to `num_draft_tokens`
// slots past the context length (upstream issues #34239, #29665 were
// out-of-bounds reads there), so every row is
// `row_width = max_context_len + num_draft_tokens` wide and anything past it
// is rejected.
//
// Memory. The pool's host state is allocated in Create: the table
// (max_requests * row_width int32), per-row state for every row and the free
// lists (an int32 per page, twice: free, or held by a row). Create adds these
// up in int64 and refuses a config past kMaxPoolHostBytes with
// ResourceExhausted naming each part, before allocating anything. (A pool of
// 4096 requests of 128K tokens is a 2 GiB table.)
//
// Error codes (every message names the call, the row and the values):
// - InvalidArgument: a row id outside [1, max_requests) or a negative count.
// - FailedPrecondition: the row is not an active request (including a double
//   free), Extend while draft tokens are reserved, ShufflePageOrder on a pool
//   with pages in use.
// - OutOfRange: a length past the row width, a token past the written length,
//   accepting more draft tokens than were reserved.
// - ResourceExhausted: not enough free pages or rows. The pool is left exactly
//   as it was (nothing is partially allocated).
//
// Host-only, not thread-safe; nothing here touches the GPU. The table is the
// host source of truth that the planner copies to the device.
#ifndef KV_CACHE_PAGE_POOL_H_
#define KV_CACHE_PAGE_POOL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace paged_attention {

// The most host memory KvPagePool::Create allocates for one pool.
inline constexpr int64_t kMaxPoolHostBytes = int64_t{8} << 30;

struct PagePoolConfig {
  int32_t num_pages = 0;         // pages in the pool, including the sink page 0; >= 2
  int32_t page_size = 0;         // token slots per page; >= 1
  int32_t max_requests = 0;      // rows of req_to_token, including the dummy row 0; >= 2
  int32_t max_context_len = 0;   // committed tokens a request may reach; >= 1
  int32_t num_draft_tokens = 0;  // speculative headroom past max_context_len; >= 0
};

class KvPagePool {
 public:
  // InvalidArgument naming every bad field and its value, e.g.
  // "PagePoolConfig: page_size = 0 must be >= 1", or slot ids / the row
  // width past int32; ResourceExhausted when the host state would exceed
  // kMaxPoolHostBytes (the message names the fields and the bytes).
  static absl::StatusOr<KvPagePool> Create(const PagePoolConfig& config);

  int32_t page_size() const { return config_.page_size; }
  int32_t num_pages() const { return config_.num_pages; }
  // max_context_len + num_draft_tokens: the width of every req_to_token row.
  int32_t row_width() const { return row_width_; }
  // Rows of req_to_token, including the dummy row 0.
  int32_t max_requests() const { return config_.max_requests; }
  int32_t max_context_len() const { return config_.max_context_len; }
  int32_t num_draft_tokens() const { return config_.num_draft_tokens; }
  // Pages that can still be handed out (page 0 never counts).
  int32_t free_pages() const { return static_cast<int32_t>(free_pages_.size()); }
  // Pages held by requests.
  int32_t used_pages() const { return config_.num_pages - 1 - free_pages(); }
  // Requests currently active.
  int32_t active_requests() const;

  // Makes an empty request (length 0) and returns its row (>= 1).
  // ResourceExhausted when all max_requests - 1 rows are in use.
  absl::StatusOr<int32_t> CreateRequest();

  // Permutes the free list with a generator seeded by `seed`, so pages come
  // out in a random, non-contiguous order (tests and tools use it to catch
  // code that assumes page(r, j + 1) == page(r, j) + 1). Deterministic per
  // seed. FailedPrecondition unless no pages are in use.
  absl::Status ShufflePageOrder(uint64_t seed);

  // Appends `num_tokens` (>= 0) committed tokens to `row`: fills the partial
  // last page first, then takes whole new pages. Fails with
  // FailedPrecondition while draft tokens are reserved (commit or roll back
  // first), OutOfRange past the row width, ResourceExhausted when too few
  // pages are free (the pool is then unchanged).
  absl::Status Extend(int32_t row, int32_t num_tokens);

  // Reserves `num_tokens` (>= 0) more slots past Length + DraftLength, up to
  // the row width: draft/verify tokens that are not committed yet. May be
  // called repeatedly (one call per draft decode step). Same errors as Extend.
  absl::Status ReserveDraft(int32_t row, int32_t num_tokens);

  // The first `num_accepted` reserved draft tokens become committed (they keep
  // their slots); the rest are released, and pages no longer used return to
  // the free list. OutOfRange when num_accepted > DraftLength.
  absl::Status CommitDraft(int32_t row, int32_t num_accepted);

  // Releases all reserved draft tokens: CommitDraft(row, 0).
  absl::Status RollbackDraft(int32_t row);

  // Returns all pages of `row` to the free list, zeroes its table row and makes
  // the row available again. FailedPrecondition on a double free.
  absl::Status FreeRequest(int32_t row);

  // Committed tokens of `row`.
  absl::StatusOr<int32_t> Length(int32_t row) const;
  // Reserved draft tokens beyond Length.
  absl::StatusOr<int32_t> DraftLength(int32_t row) const;
  // req_to_token[row][token] for token < Length + DraftLength, else OutOfRange.
  absl::StatusOr<int32_t> Slot(int32_t row, int32_t token) const;

  // Row-major [max_requests, row_width] slot ids; unused entries are 0 (slot 0
  // of the sink page 0). Valid until the next mutating call.
  absl::Span<const int32_t> req_to_token() const { return req_to_token_; }

 private:
  struct RowState {
    bool active = false;
    int32_t length = 0;          // committed tokens
    int32_t draft_length = 0;    // reserved tokens past `length`
    std::vector<int32_t> pages;  // physical page of each logical page in use
  };

  explicit KvPagePool(const PagePoolConfig& config);

  // OK if `row` is a handed-out row; `call` prefixes the error message.
  absl::Status CheckActiveRow(const char* call, int32_t row) const;
  // Shared by Extend and ReserveDraft: grows the written length of `row`.
  absl::Status Grow(const char* call, int32_t row, int32_t num_tokens);
  // Shrinks the written length of `row` to `new_total`, freeing unused pages
  // and zeroing table entries past it.
  void ShrinkTo(int32_t row, int32_t new_total);

  PagePoolConfig config_;
  int32_t row_width_ = 0;
  std::vector<int32_t> req_to_token_;
  std::vector<RowState> rows_;
  // Stacks: the back is handed out next. Initially page 1 / row 1 come first.
  std::vector<int32_t> free_pages_;
  std::vector<int32_t> free_rows_;
};

}  // namespace paged_attention

#endif  // KV_CACHE_PAGE_POOL_H_
