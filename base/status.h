// Status and StatusOr: the error currency across module boundaries.
//
// Modelled on absl::Status. A Status is OK or carries a code and a human
// message that names what went wrong and, where possible, the fix. Nothing
// in KernelCache throws across a module boundary: functions that can fail
// return Status or StatusOr<T>.
//
// Both are [[nodiscard]]: a dropped error is a compile warning (the build
// uses -Wall). A StatusOr built from an OK Status has no value to give: it
// holds Internal "StatusOr constructed from an OK status (no value)"
// instead, as absl::StatusOr does, in every build type.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kc {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input; the message names the field
  kNotFound,
  kAlreadyExists,
  kConflict,  // optimistic-concurrency conflict (HTTP 409 Conflict)
  kGone,      // resourceVersion too old (HTTP 410)
  kFailedPrecondition,
  kPermissionDenied,  // HTTP 403
  kUnauthenticated,   // HTTP 401
  kUnavailable,       // transient: retry
  kDeadlineExceeded,
  kResourceExhausted,
  kDataLoss,  // corrupt or half-written data
  kCancelled,
  kInternal,
  kUnknown,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: configmaps \"x\" not found"
  std::string ToString() const;

  // Returns a copy whose message is "<prefix>: <message>".
  Status WithContext(std::string_view prefix) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status ConflictError(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
inline Status GoneError(std::string m) { return {StatusCode::kGone, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status PermissionDeniedError(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status UnauthenticatedError(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}

inline bool IsNotFound(const Status& s) { return s.code() == StatusCode::kNotFound; }
inline bool IsAlreadyExists(const Status& s) { return s.code() == StatusCode::kAlreadyExists; }
inline bool IsConflict(const Status& s) { return s.code() == StatusCode::kConflict; }
inline bool IsGone(const Status& s) { return s.code() == StatusCode::kGone; }

std::ostream& operator<<(std::ostream& os, const Status& s);

// StatusOr<T>: a T, or a non-OK Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& s) : v_(s.ok() ? OkMisuse() : s) {}        // NOLINT
  StatusOr(Status&& s) : v_(s.ok() ? OkMisuse() : std::move(s)) {}  // NOLINT
  StatusOr(const T& value) : v_(value) {}                           // NOLINT
  StatusOr(T&& value) : v_(std::move(value)) {}                     // NOLINT
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U&&, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, T>>>
  StatusOr(U&& value) : v_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  static Status OkMisuse() {
    return Status(StatusCode::kInternal, "StatusOr constructed from an OK status (no value)");
  }
  std::variant<Status, T> v_;
};

}  // namespace kc

#define KC_CONCAT_INNER_(a, b) a##b
#define KC_CONCAT_(a, b) KC_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define KC_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::kc::Status kc_status_ = (expr);        \
    if (!kc_status_.ok()) return kc_status_; \
  } while (0)

// KC_ASSIGN_OR_RETURN(auto x, StatusOrExpr());
#define KC_ASSIGN_OR_RETURN(lhs, expr) \
  KC_ASSIGN_OR_RETURN_IMPL_(KC_CONCAT_(kc_statusor_, __LINE__), lhs, expr)
#define KC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
