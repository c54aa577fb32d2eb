// A request the clients send, built from names and header values someone else wrote: whatever
// they hold, the bytes on the wire parse back as exactly one request with the method, target and
// headers it was built with, or the request is refused before it is sent.
// Input: method, namespace, name, subresource, a header value and an Accept value, separated by
// the byte 0xff (which no valid field holds).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http.hpp>

#include "kube/http_request.h"
#include "kube/resource.h"

using namespace sriovdra;
namespace http = boost::beast::http;

namespace {

std::vector<std::string> fields(std::string_view in, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < n; ++i) {
    size_t sep = in.find('\xff');
    out.emplace_back(in.substr(0, sep));
    in = sep == std::string_view::npos ? std::string_view() : in.substr(sep + 1);
  }
  out.emplace_back(in);
  return out;
}

void expect(bool holds) {
  if (!holds) std::abort();
}

// A parser drops the whitespace around a header value (RFC 9110 5.5).
std::string_view trimmed(std::string_view v) {
  size_t first = v.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return v.substr(first, v.find_last_not_of(" \t") - first + 1);
}

// Both ways to a request: the checked path, and the raw concatenation a caller could pass.
void check(const kube::HttpRequest& req) {
  auto built = kube::buildRequest(req, "/prefix", "api.example:6443");
  if (!built.ok()) return;
  std::ostringstream wire;
  wire << *built;
  std::string bytes = wire.str();

  http::request_parser<http::string_body> parser;
  parser.eager(true);
  // kube-apiserver reads headers up to Go's http.DefaultMaxHeaderBytes (1 MiB); Beast's parser
  // stops at 8 KiB unless told (a long header value is not a second request).
  parser.header_limit(1u << 20);
  boost::system::error_code ec;
  size_t used = parser.put(boost::asio::buffer(bytes), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  expect(!ec && parser.is_done() && used == bytes.size());
  const auto& got = parser.get();
  expect(got.method_string() == req.method);
  expect(got.target() == "/prefix" + req.target);
  expect(std::distance(got.begin(), got.end()) == std::distance(built->begin(), built->end()));
  for (const auto& [name, value] : req.headers) expect(got[name] == trimmed(value));
  expect(got[http::field::accept] == trimmed(req.accept));
  expect(got.body() == req.body);
}

}  // namespace

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  auto f = fields({reinterpret_cast<const char*>(data), size}, 6);
  kube::HttpRequest req;
  req.method = f[0];
  req.body = "{}";
  req.content_type = "application/json";
  req.accept = f[5];
  req.headers.emplace_back("X-Fuzz", f[4]);
  auto path = kube::resources::kConfigMaps.objectPath(f[1], f[2], f[3]);
  if (path.ok()) {
    req.target = *path;
    check(req);
  }
  req.target = "/api/v1/namespaces/" + f[1] + "/configmaps/" + f[2] + "/" + f[3];
  check(req);
  return 0;
}
