#pragma once
// Status and Result<T>: expected failures as values (docs/conventions.md, "Errors").
// A Status carries a Code, a message written for the person who must act on it, and, for errors
// that came from the Kubernetes API, the HTTP status and the metav1.Status reason.
// Result<T> holds either a T or a non-OK Status; reading the wrong alternative is a bug and aborts.
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sriovdra {

enum class Code {
  kOk,
  kCancelled,        // the caller asked to stop
  kInvalidArgument,  // bad input from a user or a file (not from the API server)
  kNotFound,         // HTTP 404, or a missing file
  kAlreadyExists,    // HTTP 409 reason AlreadyExists
  kConflict,         // HTTP 409 (stale resourceVersion, apply conflict)
  kInvalid,          // HTTP 422: the server rejected the object
  kBadRequest,       // HTTP 400
  kUnauthorized,     // HTTP 401
  kForbidden,        // HTTP 403
  kGone,             // HTTP 410: resourceVersion too old / expired continue token
  kTooManyRequests,  // HTTP 429 (the client itself waits out Retry-After first)
  kTooLarge,         // HTTP 413, or the object exceeds etcd's request size limit: not transient
  kTimeout,          // a deadline passed (connect, request, idle stream) or HTTP 504
  kUnavailable,      // connection failures, HTTP 5xx: retry with backoff
  kTlsVerification,  // the peer's certificate did not verify
  kIo,               // a local system call failed (errno kept)
  kInternal,         // a broken invariant or an unexpected response
};

std::string_view codeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  static Status fromErrno(int err, std::string_view what);

  bool isOk() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  int httpStatus() const { return http_status_; }
  const std::string& reason() const { return reason_; }
  int sysErrno() const { return errno_; }

  Status& withHttp(int http_status, std::string reason) {
    http_status_ = http_status;
    reason_ = std::move(reason);
    return *this;
  }
  Status& withErrno(int err) {
    errno_ = err;
    return *this;
  }
  // Prefixes the message with context: "reading /sys/...: " + message.
  Status& prepend(std::string_view context);

  // True for errors worth retrying with backoff (network, 5xx, 429, timeouts).
  bool isTransient() const;

  // "Conflict (409 Conflict): message", or "OK".
  std::string toString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  int http_status_ = 0;
  std::string reason_;
  int errno_ = 0;
};

// A broken invariant in a release build (see SDRA_CHECK).
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void invariantBroken(std::string_view what, const char* file, int line);

// Checks an invariant; a failure is a programming error (docs/conventions.md), never a user's:
// it is logged ("BUG: <condition> at <file>:<line>"), then aborts the process in debug builds
// and throws InvariantError in release builds, where a controller logs it and counts it in
// controller_runtime_reconcile_panics_total, retries the key and keeps serving the others, and
// an HTTP handler answers 500. Only for conditions no input can cause.
#define SDRA_CHECK(cond)                                                 \
  do {                                                                   \
    if (!(cond)) ::sriovdra::invariantBroken(#cond, __FILE__, __LINE__); \
  } while (0)

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    SDRA_CHECK(!std::get<Status>(v_).isOk());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  Status takeStatus() && { return ok() ? Status() : std::move(std::get<Status>(v_)); }

  T& value() & {
    checkValue();
    return std::get<T>(v_);
  }
  const T& value() const& {
    checkValue();
    return std::get<T>(v_);
  }
  T&& value() && {
    checkValue();
    return std::move(std::get<T>(v_));
  }
  T valueOr(T fallback) const& { return ok() ? std::get<T>(v_) : std::move(fallback); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void checkValue() const {
    if (!ok())
      invariantBroken(("Result has no value: " + std::get<Status>(v_).toString()).c_str(), __FILE__,
                      __LINE__);
  }
  std::variant<T, Status> v_;
};

}  // namespace sriovdra

// Propagates a non-OK Status from an expression returning Status.
#define SDRA_RETURN_IF_ERROR(expr)         \
  do {                                     \
    ::sriovdra::Status sdra_st_ = (expr);  \
    if (!sdra_st_.isOk()) return sdra_st_; \
  } while (0)
