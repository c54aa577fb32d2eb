// The NRI plugin against a runtime that misbehaves at the protocol level, played by the test on
// a unix socket byte by byte (containerd's own NRI code is in tests/integration/nri_test.cpp and
// never sends these): an unparsable request, a Synchronize that never ends.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "nri/api.pb.h"
#include "nri/plugin.h"
#include "nri/wire.h"
#include "support/temp_dir.h"
#include "ttrpc/ttrpc.pb.h"

using sriovdra::Status;
namespace snri = sriovdra::nri;
using namespace std::chrono_literals;

namespace {

namespace api = ::nri::pkg::api::v1alpha1;

class NoPods : public snri::PodHandler {
 public:
  Status synchronize(const std::vector<snri::Pod>&) override { return Status::ok(); }
  Status runPodSandbox(const snri::Pod&) override { return Status::ok(); }
  Status stopPodSandbox(const snri::Pod&) override { return Status::ok(); }
  Status removePodSandbox(const snri::Pod&) override { return Status::ok(); }
  Status createContainer(const snri::Pod&, const std::string&) override { return Status::ok(); }
};

// The runtime's end of one plugin connection: the test listens, the plugin connects.
class FakeRuntime {
 public:
  explicit FakeRuntime(const std::string& path) : listener_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof a.sun_path);
    std::copy(path.begin(), path.end(), a.sun_path);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
  }
  ~FakeRuntime() {
    if (conn_ >= 0) ::close(conn_);
    ::close(listener_);
  }
  void accept() {
    pollfd p{listener_, POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10000) == 1);
    conn_ = ::accept(listener_, nullptr, nullptr);
    REQUIRE(conn_ >= 0);
  }
  // A request of the plugin service, its payload as given (valid protobuf or not).
  void call(uint32_t stream, const std::string& request_bytes) const {
    std::string bytes =
        snri::muxFrame(snri::kPluginServiceConn,
                       snri::ttrpcMessage({stream, snri::MessageType::kRequest, 0, request_bytes}));
    REQUIRE(::send(conn_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  static std::string request(const std::string& method, const std::string& payload) {
    ttrpc::Request r;
    r.set_service("nri.pkg.api.v1alpha1.Plugin");
    r.set_method(method);
    r.set_payload(payload);
    return r.SerializeAsString();
  }
  // The plugin's answer on `stream` (requests it makes on the runtime service are not answered).
  ttrpc::Response response(uint32_t stream) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{conn_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[65536];
      ssize_t n = ::recv(conn_, buf, sizeof buf, 0);
      REQUIRE(n > 0);
      auto frames = mux_.feed(std::string_view(buf, static_cast<size_t>(n)));
      REQUIRE(frames.ok());
      for (auto& f : *frames) {
        if (f.conn != snri::kPluginServiceConn) continue;
        auto messages = plugin_conn_.feed(f.payload);
        REQUIRE(messages.ok());
        for (auto& m : *messages) {
          if (m.stream != stream) continue;
          ttrpc::Response r;
          REQUIRE(r.ParseFromString(m.payload));
          return r;
        }
      }
    }
    FAIL("no answer on stream " << stream);
    return {};
  }

 private:
  int listener_;
  int conn_ = -1;
  snri::MuxReader mux_;
  snri::MessageReader plugin_conn_;
};

}  // namespace

TEST_CASE("an unparsable request fails alone; an endless Synchronize is refused", "[nri][unit]") {
  sriovdra::testing::TempDir dir;
  FakeRuntime runtime(dir.path() + "/nri.sock");
  NoPods handler;
  snri::Plugin plugin({.socket_path = dir.path() + "/nri.sock"}, handler);
  plugin.start();
  runtime.accept();

  runtime.call(1, "\xff\xff\xff not protobuf");
  auto refused = runtime.response(1);
  CHECK(refused.status().code() == 3);  // InvalidArgument, as ttrpc's server answers
  // The connection goes on.
  runtime.call(3, FakeRuntime::request("Configure", api::ConfigureRequest().SerializeAsString()));
  auto configured = runtime.response(3);
  CHECK(configured.status().code() == 0);

  // A Synchronize split into pieces that never ends: refused once it passes the bound.
  api::SynchronizeRequest piece;
  piece.set_more(true);
  for (int i = 0; i < 1000; ++i) {
    auto* pod = piece.add_pods();
    pod->set_id("sandbox-" + std::to_string(i));
  }
  uint32_t stream = 5;
  int code = 0;
  for (size_t sent = 0; code == 0 && sent <= snri::kMaxSyncPods + 1000; sent += 1000) {
    runtime.call(stream, FakeRuntime::request("Synchronize", piece.SerializeAsString()));
    auto answer = runtime.response(stream);
    code = answer.status().code();
    if (code != 0) CHECK_THAT(answer.status().message(), Catch::Contains("more than 16384 pods"));
    stream += 2;
  }
  CHECK(code == 3);
  plugin.stop();
}
