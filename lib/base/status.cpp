#include "base/status.h"

#include <cstdio>
#include <cstring>

namespace sriovdra {

std::string_view codeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kCancelled:
      return "Cancelled";
    case Code::kInvalidArgument:
      return "InvalidArgument";
    case Code::kNotFound:
      return "NotFound";
    case Code::kAlreadyExists:
      return "AlreadyExists";
    case Code::kConflict:
      return "Conflict";
    case Code::kInvalid:
      return "Invalid";
    case Code::kBadRequest:
      return "BadRequest";
    case Code::kUnauthorized:
      return "Unauthorized";
    case Code::kForbidden:
      return "Forbidden";
    case Code::kGone:
      return "Gone";
    case Code::kTooManyRequests:
      return "TooManyRequests";
    case Code::kTooLarge:
      return "TooLarge";
    case Code::kTimeout:
      return "Timeout";
    case Code::kUnavailable:
      return "Unavailable";
    case Code::kTlsVerification:
      return "TLSVerificationFailed";
    case Code::kIo:
      return "IOError";
    case Code::kInternal:
      return "Internal";
  }
  return "Unknown";
}

Status Status::fromErrno(int err, std::string_view what) {
  Status st(Code::kIo, std::string(what) + ": " + std::strerror(err));
  if (err == ENOENT) st = Status(Code::kNotFound, std::string(what) + ": " + std::strerror(err));
  st.withErrno(err);
  return st;
}

Status& Status::prepend(std::string_view context) {
  message_ = std::string(context) + ": " + message_;
  return *this;
}

bool Status::isTransient() const {
  switch (code_) {
    case Code::kTimeout:
    case Code::kUnavailable:
    case Code::kTooManyRequests:
      return true;
    case Code::kInternal:
      return http_status_ >= 500;
    default:
      return false;
  }
}

std::string Status::toString() const {
  if (isOk()) return "OK";
  std::string out(codeName(code_));
  if (http_status_ != 0) out += " (HTTP " + std::to_string(http_status_) + ")";
  out += ": ";
  out += message_;
  return out;
}

void invariantBroken(std::string_view what, const char* file, int line) {
  std::fprintf(stderr, "BUG: %.*s at %s:%d\n", static_cast<int>(what.size()), what.data(), file,
               line);
  std::fflush(stderr);
#ifdef NDEBUG
  throw InvariantError("BUG: " + std::string(what) + " at " + file + ":" + std::to_string(line));
#else
  std::abort();
#endif
}

}  // namespace sriovdra
