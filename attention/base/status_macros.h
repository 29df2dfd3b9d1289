// RETURN_IF_ERROR / ASSIGN_OR_RETURN: Debian's Abseil (20220623) has neither.
#ifndef ATTENTION_BASE_STATUS_MACROS_H_
#define ATTENTION_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PA_STATUS_CONCAT_INNER(a, b) a##b
#define PA_STATUS_CONCAT(a, b) PA_STATUS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)                                    \
  do {                                                           \
    const ::absl::Status pa_status_ = (expr);                    \
    if (ABSL_PREDICT_FALSE(!pa_status_.ok())) return pa_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` or `ASSIGN_OR_RETURN(x, MakeX());`
#define ASSIGN_OR_RETURN(lhs, expr) \
  PA_ASSIGN_OR_RETURN_IMPL(PA_STATUS_CONCAT(pa_statusor_, __LINE__), lhs, expr)

#define PA_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr)               \
  auto statusor = (expr);                                           \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) return statusor.status(); \
  lhs = std::move(statusor).value()

#endif  // ATTENTION_BASE_STATUS_MACROS_H_
