#include <catch2/catch.hpp>

#include "kube/client.h"

using namespace sriovdra;

TEST_CASE("API answers map to typed errors with the server's reason and message", "[kube][unit]") {
  struct Row {
    int http;
    std::string reason;
    Code code;
    bool transient;
  };
  std::vector<Row> rows = {
      {400, "BadRequest", Code::kBadRequest, false},
      {401, "Unauthorized", Code::kUnauthorized, false},
      {403, "Forbidden", Code::kForbidden, false},
      {404, "NotFound", Code::kNotFound, false},
      {409, "AlreadyExists", Code::kAlreadyExists, false},
      {409, "Conflict", Code::kConflict, false},
      {410, "Expired", Code::kGone, false},
      {422, "Invalid", Code::kInvalid, false},
      {413, "RequestEntityTooLarge", Code::kTooLarge, false},
      {429, "TooManyRequests", Code::kTooManyRequests, true},
      {500, "InternalError", Code::kUnavailable, true},
      {503, "ServiceUnavailable", Code::kUnavailable, true},
      {504, "Timeout", Code::kTimeout, true},
  };
  for (const auto& row : rows) {
    INFO(row.http << " " << row.reason);
    std::string body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"the )"
                       R"(message","reason":")" +
                       row.reason + R"(","code":)" + std::to_string(row.http) + "}";
    Status st = kube::apiError(row.http, body, "GET", "/api/v1/x");
    CHECK(st.code() == row.code);
    CHECK(st.httpStatus() == row.http);
    CHECK(st.reason() == row.reason);
    CHECK(st.message() == "the message");
    CHECK(st.isTransient() == row.transient);
  }
}

TEST_CASE("etcd's size limit is told apart from a transient server error", "[kube][unit]") {
  Status st = kube::apiError(
      500,
      R"j({"kind":"Status","status":"Failure","message":"rpc error: code = ResourceExhausted )j"
      R"j(desc = trying to send message larger than max (2263733 vs. 2097152)","code":500})j",
      "PATCH", "/apis/x/v1/y");
  CHECK(st.code() == Code::kTooLarge);
  CHECK_FALSE(st.isTransient());
  st = kube::apiError(500, R"({"kind":"Status","message":"etcdserver: request is too large"})",
                      "PATCH", "/apis/x/v1/y");
  CHECK(st.code() == Code::kTooLarge);
}

TEST_CASE("an answer that is not a Status still says what failed", "[kube][unit]") {
  Status st = kube::apiError(502, "<html>bad gateway</html>", "PATCH", "/apis/x/v1/y");
  CHECK(st.code() == Code::kUnavailable);
  CHECK(st.message() == "PATCH /apis/x/v1/y: HTTP 502: <html>bad gateway</html>");
}
