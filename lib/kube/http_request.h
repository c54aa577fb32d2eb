#pragma once
// An HttpRequest as it goes on the wire (Boost.Beast's message), refused when any part of it
// could be read as more than one request line or one header: whatever a name from an object or a
// header value holds, a request is exactly one request. Pure; used by the transport and fuzzed
// (fuzz/http_request_fuzzer.cpp: the bytes always parse back as one request, equal to its input).
//
// Refused with kInvalidArgument, the offending text escaped in the message:
//   method        not GET, HEAD, POST, PUT, PATCH or DELETE (what the Kubernetes API serves;
//                 Beast itself cannot send a TRACE with a body)
//   target        empty, not starting with '/', or any byte outside visible ASCII (0x21-0x7e):
//                 no CR, LF, NUL, space, tab, DEL, no UTF-8 (RFC 9112 3.2 has none of them)
//   header name   empty or not an RFC 9110 token
//   header value  CR, LF, NUL or any other control character but tab (RFC 9110 5.5); the message
//                 gives the byte's position, never the value (it may be a credential)
// accept and content_type are header values too. The body goes out as it is: its length is in
// Content-Length, so no byte of it can start a request.
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/span_body.hpp>

#include "base/status.h"
#include "kube/transport.h"

namespace sriovdra::kube {

// Its body is a view of the HttpRequest's (no copy of a large body): in.body must outlive it.
using OutgoingRequest = boost::beast::http::request<boost::beast::http::span_body<const char>>;

// The request for a server whose URL has path prefix `prefix` (no trailing '/'), with Host
// `host_header`, a User-Agent and keep-alive.
Result<OutgoingRequest> buildRequest(const HttpRequest& in, std::string_view prefix,
                                     std::string_view host_header);

}  // namespace sriovdra::kube
