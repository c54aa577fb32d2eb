#include "kube/http_request.h"

#include <algorithm>
#include <string>

#include "base/strings.h"

namespace sriovdra::kube {
namespace {

namespace http = boost::beast::http;

Status refuse(std::string_view what, std::string_view value, std::string_view why) {
  return Status(Code::kInvalidArgument, "refusing to send a request whose " + std::string(what) +
                                            " \"" + printable(value) + "\" " + std::string(why));
}

bool visible(char c) { return c > 0x20 && c < 0x7f; }

// RFC 9110 5.6.2: tchar.
bool tokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// RFC 9110 5.5: field-vchar, SP and HTAB; obs-text (0x80-0xff) is allowed on the wire but never
// needed by this client.
bool fieldValueChar(char c) { return c == '\t' || (c >= 0x20 && c < 0x7f); }

// in_target is the caller's part, target the prefix and it.
Status checkTarget(std::string_view in_target, std::string_view target) {
  if (in_target.empty() || in_target.front() != '/') {
    return refuse("target", in_target, "is not a path");
  }
  if (!std::all_of(target.begin(), target.end(), visible)) {
    return refuse("target", target,
                  "holds a space, a control character or a byte outside ASCII (a name that "
                  "could end the request line)");
  }
  return Status::ok();
}

Status checkHeader(std::string_view name, std::string_view value) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), tokenChar)) {
    return refuse("header name", name, "is not an HTTP token");
  }
  auto bad = std::find_if_not(value.begin(), value.end(), fieldValueChar);
  if (bad != value.end()) {
    // The value is not shown: it may be a credential.
    return Status(Code::kInvalidArgument,
                  "refusing to send a request whose header " + printable(name) +
                      " holds CR, LF, NUL or another control character (byte " +
                      std::to_string(bad - value.begin()) + " of its value)");
  }
  return Status::ok();
}

}  // namespace

Result<OutgoingRequest> buildRequest(const HttpRequest& in, std::string_view prefix,
                                     std::string_view host_header) {
  http::verb verb = http::string_to_verb(in.method);
  if (verb != http::verb::get && verb != http::verb::head && verb != http::verb::post &&
      verb != http::verb::put && verb != http::verb::patch && verb != http::verb::delete_) {
    return refuse("method", in.method, "is not one the Kubernetes API serves");
  }
  std::string target = std::string(prefix) + in.target;
  SDRA_RETURN_IF_ERROR(checkTarget(in.target, target));
  SDRA_RETURN_IF_ERROR(checkHeader("Host", host_header));
  if (!in.accept.empty()) SDRA_RETURN_IF_ERROR(checkHeader("Accept", in.accept));
  if (!in.content_type.empty()) SDRA_RETURN_IF_ERROR(checkHeader("Content-Type", in.content_type));
  for (const auto& [name, value] : in.headers) SDRA_RETURN_IF_ERROR(checkHeader(name, value));

  OutgoingRequest req{verb, target, 11};
  req.set(http::field::host, host_header);
  req.set(http::field::user_agent, "sriov-dra-operator/0.1");
  if (!in.accept.empty()) req.set(http::field::accept, in.accept);
  if (!in.content_type.empty()) req.set(http::field::content_type, in.content_type);
  for (const auto& [name, value] : in.headers) req.set(name, value);
  req.keep_alive(true);
  req.body() = {in.body.data(), in.body.size()};
  req.prepare_payload();
  return req;
}

}  // namespace sriovdra::kube
