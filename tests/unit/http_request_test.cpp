// Requests are exactly one request: names from objects are path segments or refused, and no
// target or header value can end the request line (issue 52's request smuggling).
#include "kube/http_request.h"

#include <sstream>

#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include "base/strings.h"
#include "kube/resource.h"

using namespace sriovdra;

TEST_CASE("printable escapes what could end or forge a line or drive a terminal", "[base][unit]") {
  CHECK(printable("nad-a.b:c") == "nad-a.b:c");
  CHECK(printable("a\r\nb\tc\\d") == R"(a\r\nb\tc\\d)");
  CHECK(printable(std::string("a\0b", 3)) == R"(a\x00b)");
  CHECK(printable("\x1b[31mred\x7f") == R"(\x1b[31mred\x7f)");
  CHECK(printable("caf\xc3\xa9") == R"(caf\xc3\xa9)");
  CHECK(printable(std::string(300, 'a'), 4) == "aaaa...");
}

TEST_CASE("request paths take names as one path segment or refuse them", "[kube][unit]") {
  const auto& nads = kube::resources::kConfigMaps;
  struct Row {
    std::string ns, name, sub;
    std::string path_or_error;
  };
  std::vector<Row> rows = {
      {"default", "net-a", "", "/api/v1/namespaces/default/configmaps/net-a"},
      {"default", "net-a", "status", "/api/v1/namespaces/default/configmaps/net-a/status"},
      // RBAC's names hold ':'; ClusterRoles are path segments too.
      {"", "system:node:a", "", "/api/v1/configmaps/system:node:a"},
      {"default", "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis", "",
       R"(ConfigMap name "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis" is not a Kubernetes object)"},
      {"x HTTP", "apis", "", R"(namespace "x HTTP" is not a Kubernetes object name)"},
      {"a%2Fb", "n", "", R"(namespace "a%2Fb" is not)"},
      {"default", "a/b", "", R"(ConfigMap name "a/b" is not)"},
      {"default", "..", "", R"(ConfigMap name ".." may not be "." or "..")"},
      {"default", ".", "", R"(ConfigMap name "." may not be)"},
      {"default", "", "", R"(ConfigMap name "" is empty)"},
      {"default", "n?watch=1", "", R"(ConfigMap name "n?watch=1" is not)"},
      {"default", "n#x", "", R"(ConfigMap name "n#x" is not)"},
      {"default", std::string("n\0x", 3), "", R"(ConfigMap name "n\x00x" is not)"},
      {"default", "n\xc3\xa9", "", R"(ConfigMap name "n\xc3\xa9" is not)"},
      {"default", std::string(254, 'a'), "", "is longer than 253 bytes"},
      {"default", "n", "status/../x", R"(subresource "status/../x" is not)"},
  };
  for (const auto& row : rows) {
    INFO(printable(row.ns) << " " << printable(row.name) << " " << row.sub);
    auto path = nads.objectPath(row.ns, row.name, row.sub);
    if (row.path_or_error.front() == '/') {
      REQUIRE(path.ok());
      CHECK(*path == row.path_or_error);
    } else {
      REQUIRE_FALSE(path.ok());
      CHECK(path.status().code() == Code::kInvalidArgument);
      CHECK_THAT(path.status().message(), Catch::Contains(row.path_or_error));
    }
  }
  CHECK(*kube::resources::kNodes.collectionPath("x y") == "/api/v1/nodes");  // cluster-scoped
  CHECK_FALSE(nads.collectionPath("x\ny").ok());
  CHECK(*nads.collectionPath("") == "/api/v1/configmaps");
}

namespace {

// The bytes a request goes out as, parsed back as a server would: the number of requests in them.
size_t requestsIn(const kube::OutgoingRequest& req) {
  std::ostringstream wire;
  wire << req;
  std::string bytes = wire.str();
  size_t count = 0;
  boost::asio::const_buffer rest(bytes.data(), bytes.size());
  while (rest.size() > 0) {
    boost::beast::http::request_parser<boost::beast::http::string_body> parser;
    parser.eager(true);
    boost::system::error_code ec;
    size_t used = parser.put(rest, ec);
    if (ec || !parser.is_done()) return count + 100;  // not a whole request
    ++count;
    rest += used;
  }
  return count;
}

}  // namespace

TEST_CASE("a request is refused when its target or a header could end its request line",
          "[kube][unit]") {
  struct Row {
    std::string what;
    kube::HttpRequest req;
    std::string error;  // "" = sent
  };
  auto get = [](std::string target) {
    kube::HttpRequest r;
    r.method = "GET";
    r.target = std::move(target);
    return r;
  };
  auto withHeader = [&](std::string name, std::string value) {
    auto r = get("/api");
    r.headers.emplace_back(std::move(name), std::move(value));
    return r;
  };
  auto withAccept = [&](std::string value) {
    auto r = get("/api");
    r.accept = std::move(value);
    return r;
  };
  std::vector<Row> rows = {
      {"plain", get("/api/v1/namespaces/a/configmaps/b?watch=1&x=%20"), ""},
      {"CR LF in the target",
       get("/api/v1/x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis/resource.k8s.io/v1/resourceslices/n"),
       R"(target "/prefix/api/v1/x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis/resource.k8s.io)"},
      {"LF alone", get("/a\nb"), R"(target "/prefix/a\nb" holds a space, a control character)"},
      {"NUL", get(std::string("/a\0b", 4)), R"(target "/prefix/a\x00b" holds)"},
      {"space", get("/a b"), R"(target "/prefix/a b" holds)"},
      {"tab", get("/a\tb"), R"(target "/prefix/a\tb" holds)"},
      {"UTF-8", get("/caf\xc3\xa9"), R"(target "/prefix/caf\xc3\xa9" holds)"},
      {"not a path", get("http://evil/"), "is not a path"},
      {"unknown method",
       [&] {
         auto r = get("/");
         r.method = "GET / HTTP/1.1\r\n";
         return r;
       }(),
       R"(method "GET / HTTP/1.1\r\n" is not one the Kubernetes API serves)"},
      {"TRACE",
       [&] {
         auto r = get("/");
         r.method = "TRACE";
         r.body = "x";
         return r;
       }(),
       R"(method "TRACE" is not one)"},
      {"header value with CR LF", withHeader("Authorization", "Bearer t\r\nX-Evil: 1"),
       "header Authorization holds CR, LF, NUL or another control character (byte 8 of its "
       "value)"},
      {"header value with NUL", withHeader("X-A", std::string("a\0", 2)), "byte 1 of its value"},
      {"header name with a colon", withHeader("X-A: b\r\nX-B", "c"),
       R"(header name "X-A: b\r\nX-B" is not an HTTP token)"},
      {"empty header name", withHeader("", "c"), "is not an HTTP token"},
      {"Accept with LF", withAccept("application/json\nX: y"), "header Accept holds"},
      {"header value with a tab", withHeader("X-A", "a\tb"), ""},
  };
  for (const auto& row : rows) {
    SECTION(row.what) {
      auto built = kube::buildRequest(row.req, "/prefix", "api.example:6443");
      if (row.error.empty()) {
        REQUIRE(built.ok());
        CHECK(built->target() == "/prefix" + row.req.target);
        CHECK(requestsIn(*built) == 1);
      } else {
        REQUIRE_FALSE(built.ok());
        CHECK(built.status().code() == Code::kInvalidArgument);
        CHECK_THAT(built.status().message(), Catch::Contains(row.error));
        CHECK_THAT(built.status().message(), !Catch::Contains("Bearer"));
      }
    }
  }
}
