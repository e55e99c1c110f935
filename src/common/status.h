// Status and Result<T>: how errors cross module boundaries.
//
// A Status is a code from a small fixed set (Abseil's canonical codes) and a
// message. Result<T> holds either a T or a non-OK Status. Exceptions from
// third-party parsers are caught at the codec edge and turned into a Status
// there; nothing above the codec throws.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace trainyard {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kAborted,  // a conflicting concurrent change; retry
  kOutOfRange,
  kPermissionDenied,
  kUnauthenticated,
  kResourceExhausted,
  kDeadlineExceeded,
  kUnavailable,
  kUnimplemented,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  bool operator==(const Status&) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status FailedPreconditionError(std::string message);
Status OutOfRangeError(std::string message);
Status InternalError(std::string message);
Status UnavailableError(std::string message);
Status UnimplementedError(std::string message);
Status PermissionDeniedError(std::string message);

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "Result needs a value or an error");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const& {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  // A temporary's status by value: `RETURN_IF_ERROR(Write().status())`
  // binds a reference to it, which must not outlive the Result.
  Status status() && { return ok() ? Status() : std::get<Status>(std::move(state_)); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

namespace internal {
inline const Status& AsStatus(const Status& s) { return s; }
template <typename T>
const Status& AsStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace trainyard

#define TY_CONCAT_INNER(a, b) a##b
#define TY_CONCAT(a, b) TY_CONCAT_INNER(a, b)

// Returns the Status of `expr` (a Status or a Result) from the enclosing
// function when it is not OK.
#define RETURN_IF_ERROR(expr)                                                               \
  do {                                                                                      \
    if (const auto& ty_status_ = (expr); !::trainyard::internal::AsStatus(ty_status_).ok()) \
      return ::trainyard::internal::AsStatus(ty_status_);                                   \
  } while (false)

// `ASSIGN_OR_RETURN(auto x, ComputeResult());` binds the value, or returns the
// error from the enclosing function.
#define ASSIGN_OR_RETURN(lhs, expr) \
  TY_ASSIGN_OR_RETURN_IMPL(TY_CONCAT(ty_result_, __LINE__), lhs, expr)
#define TY_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                             \
  if (!result.ok()) return result.status();         \
  lhs = std::move(result).value()
