#include "nri/plugin.h"

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <set>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/backoff.h"
#include "base/log.h"
#include "nri/api.pb.h"
#include "nri/wire.h"
#include "ttrpc/ttrpc.pb.h"

namespace sriovdra::nri {
namespace {

namespace api = ::nri::pkg::api::v1alpha1;

constexpr const char* kPluginService = "nri.pkg.api.v1alpha1.Plugin";
constexpr const char* kRuntimeService = "nri.pkg.api.v1alpha1.Runtime";
constexpr int kCodeUnknown = 2;  // gRPC codes, as ttrpc carries them
constexpr int kCodeInvalidArgument = 3;
constexpr int kCodeUnimplemented = 12;

// The events this plugin handles, as ConfigureResponse.events: bit (event - 1) per event.
constexpr int32_t eventMask() {
  int32_t mask = 0;
  for (int e : {api::RUN_POD_SANDBOX, api::STOP_POD_SANDBOX, api::REMOVE_POD_SANDBOX,
                api::CREATE_CONTAINER}) {
    mask |= 1 << (e - 1);
  }
  return mask;
}

Pod podOf(const api::PodSandbox& p) {
  Pod pod{p.id(), p.uid(), p.name(), p.namespace_(), ""};
  for (const auto& ns : p.linux().namespaces()) {
    if (ns.type() == "network") pod.netns = ns.path();
  }
  if (auto networks = p.annotations().find("k8s.v1.cni.cncf.io/networks");
      networks != p.annotations().end()) {
    pod.networks = networks->second;
  }
  return pod;
}

Result<int> connectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return Status(Code::kInvalidArgument, "NRI socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::fromErrno(errno, "NRI socket");
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd);
    return Status::fromErrno(e, "connecting to the NRI socket " + path);
  }
  // A runtime that stops reading must not hang the handlers that answer it.
  timeval tv{10, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

}  // namespace

// One connection to the runtime: reads on the connection thread (serve), answers requests on
// the pool, calls the runtime for registration. Kept alive by the handlers still running.
class Plugin::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(int fd, Plugin& plugin, boost::asio::thread_pool& pool)
      : fd_(fd), plugin_(plugin), pool_(pool) {}
  ~Session() { ::close(fd_); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Reads and dispatches until the connection ends; returns why it ended.
  Status serve();
  // Ends the connection from any thread (serve() returns, writes fail).
  void end() { ::shutdown(fd_, SHUT_RDWR); }
  // Registers the plugin (runs on the pool; ends the connection when it fails).
  void registerPlugin();

 private:
  struct Call {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Result<std::string> result = Status(Code::kUnavailable, "no answer");
  };

  Status write(uint32_t conn, const Message& m);
  Result<std::string> call(const std::string& method, const std::string& payload);
  void answer(uint32_t stream, const ttrpc::Request& request);
  // The response payload of a plugin-service request, or a status for the runtime.
  Result<std::string> dispatch(const std::string& method, const std::string& payload);
  Status onRuntimeResponse(const Message& m);
  void failCalls(const std::string& why);

  const int fd_;
  Plugin& plugin_;
  boost::asio::thread_pool& pool_;
  std::mutex write_mu_;  // one frame at a time on the socket
  std::mutex calls_mu_;
  std::map<uint32_t, std::shared_ptr<Call>> calls_;  // guarded by calls_mu_
  uint32_t next_stream_ = 1;                         // guarded by calls_mu_
  std::mutex sync_mu_;
  std::vector<Pod> sync_pods_;  // guarded by sync_mu_: a split Synchronize so far
  MuxReader mux_;               // connection thread only, as the two below
  MessageReader plugin_conn_;
  MessageReader runtime_conn_;
};

Status Plugin::Session::write(uint32_t conn, const Message& m) {
  std::string bytes = muxFrame(conn, ttrpcMessage(m));
  std::lock_guard lock(write_mu_);
  size_t at = 0;
  while (at < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::fromErrno(errno, "writing to the NRI socket");
    at += static_cast<size_t>(n);
  }
  return Status::ok();
}

Result<std::string> Plugin::Session::call(const std::string& method, const std::string& payload) {
  ttrpc::Request request;
  request.set_service(kRuntimeService);
  request.set_method(method);
  request.set_payload(payload);
  request.set_timeout_nano(
      std::chrono::duration_cast<std::chrono::nanoseconds>(plugin_.options_.call_timeout).count());
  auto pending = std::make_shared<Call>();
  uint32_t stream = 0;
  {
    std::lock_guard lock(calls_mu_);
    stream = next_stream_;
    next_stream_ += 2;
    calls_[stream] = pending;
  }
  SDRA_RETURN_IF_ERROR(
      write(kRuntimeServiceConn, {stream, MessageType::kRequest, 0, request.SerializeAsString()}));
  std::unique_lock lock(pending->mu);
  if (!pending->cv.wait_for(lock, plugin_.options_.call_timeout, [&] { return pending->done; })) {
    std::lock_guard calls(calls_mu_);
    calls_.erase(stream);
    return Status(Code::kUnavailable, "the runtime did not answer " + method + " within " +
                                          std::to_string(plugin_.options_.call_timeout.count()) +
                                          " ms");
  }
  return pending->result;
}

Status Plugin::Session::onRuntimeResponse(const Message& m) {
  if (m.type != MessageType::kResponse) return Status::ok();
  std::shared_ptr<Call> pending;
  {
    std::lock_guard lock(calls_mu_);
    auto it = calls_.find(m.stream);
    if (it == calls_.end()) return Status::ok();  // timed out already
    pending = it->second;
    calls_.erase(it);
  }
  ttrpc::Response response;
  Result<std::string> result = std::string();
  if (!response.ParseFromString(m.payload)) {
    result = Status(Code::kInvalidArgument, "the runtime sent an unreadable ttrpc response");
  } else if (response.status().code() != 0) {
    result = Status(Code::kUnavailable, "the runtime refused: " + response.status().message());
  } else {
    result = response.payload();
  }
  std::lock_guard lock(pending->mu);
  pending->result = std::move(result);
  pending->done = true;
  pending->cv.notify_all();
  return Status::ok();
}

void Plugin::Session::failCalls(const std::string& why) {
  std::lock_guard lock(calls_mu_);
  for (auto& [stream, pending] : calls_) {
    std::lock_guard call(pending->mu);
    pending->result = Status(Code::kUnavailable, why);
    pending->done = true;
    pending->cv.notify_all();
  }
  calls_.clear();
}

void Plugin::Session::registerPlugin() {
  api::RegisterPluginRequest request;
  request.set_plugin_name(plugin_.options_.name);
  request.set_plugin_idx(plugin_.options_.index);
  auto registered = call("RegisterPlugin", request.SerializeAsString());
  if (!registered.ok()) {
    plugin_.setError("registering with the runtime: " + registered.status().message());
    end();
    return;
  }
  SDRA_LOG_INFO << "NRI: registered as " << plugin_.options_.index << "-" << plugin_.options_.name
                << " with the runtime on " << plugin_.options_.socket_path;
}

Result<std::string> Plugin::Session::dispatch(const std::string& method,
                                              const std::string& payload) {
  auto bad = [&] {
    return Status(Code::kInvalidArgument, "NRI: unreadable " + method + " request");
  };
  PodHandler& h = plugin_.handler_;
  if (method == "Configure") {
    api::ConfigureRequest request;
    if (!request.ParseFromString(payload)) return bad();
    SDRA_LOG_INFO << "NRI: configured by " << request.runtime_name() << " "
                  << request.runtime_version() << " (request timeout " << request.request_timeout()
                  << " ms)";
    api::ConfigureResponse response;
    response.set_events(eventMask());
    return response.SerializeAsString();
  }
  if (method == "Synchronize") {
    api::SynchronizeRequest request;
    if (!request.ParseFromString(payload)) return bad();
    std::vector<Pod> pods;
    {
      std::lock_guard lock(sync_mu_);
      if (sync_pods_.size() + static_cast<size_t>(request.pods_size()) > kMaxSyncPods) {
        sync_pods_.clear();
        return Status(Code::kInvalidArgument,
                      "NRI: a Synchronize of more than " + std::to_string(kMaxSyncPods) +
                          " pods is refused; the pods sent so far are forgotten");
      }
      for (const auto& p : request.pods()) sync_pods_.push_back(podOf(p));
      if (!request.more()) pods.swap(sync_pods_);
    }
    if (!request.more()) {
      SDRA_RETURN_IF_ERROR(h.synchronize(pods));
      plugin_.synchronized_ = true;
      SDRA_LOG_INFO << "NRI: synchronized with " << pods.size() << " pod(s)";
    }
    api::SynchronizeResponse response;
    response.set_more(request.more());
    return response.SerializeAsString();
  }
  if (method == "Shutdown") {
    SDRA_LOG_INFO << "NRI: the runtime is shutting down";
    end();
    return api::Empty().SerializeAsString();
  }
  auto withPod = [&](auto request, Status (PodHandler::*event)(const Pod&),
                     auto response) -> Result<std::string> {
    if (!request.ParseFromString(payload)) return bad();
    SDRA_RETURN_IF_ERROR((h.*event)(podOf(request.pod())));
    return response.SerializeAsString();
  };
  if (method == "RunPodSandbox") {
    return withPod(api::RunPodSandboxRequest(), &PodHandler::runPodSandbox,
                   api::RunPodSandboxResponse());
  }
  if (method == "StopPodSandbox") {
    return withPod(api::StopPodSandboxRequest(), &PodHandler::stopPodSandbox,
                   api::StopPodSandboxResponse());
  }
  if (method == "RemovePodSandbox") {
    return withPod(api::RemovePodSandboxRequest(), &PodHandler::removePodSandbox,
                   api::RemovePodSandboxResponse());
  }
  if (method == "CreateContainer") {
    api::CreateContainerRequest request;
    if (!request.ParseFromString(payload)) return bad();
    SDRA_RETURN_IF_ERROR(h.createContainer(podOf(request.pod()), request.container().name()));
    return api::CreateContainerResponse().SerializeAsString();
  }
  return Status(Code::kInternal, "NRI method " + method + " reached dispatch");
}

void Plugin::Session::answer(uint32_t stream, const ttrpc::Request& request) {
  static const std::set<std::string> kMethods = {
      "Configure",      "Synchronize",      "Shutdown",       "RunPodSandbox",
      "StopPodSandbox", "RemovePodSandbox", "CreateContainer"};
  ttrpc::Response response;
  if (request.service() != kPluginService || kMethods.count(request.method()) == 0) {
    response.mutable_status()->set_code(kCodeUnimplemented);
    response.mutable_status()->set_message(request.service() + "/" + request.method() +
                                           " is not implemented by this plugin");
  } else {
    auto result = dispatch(request.method(), request.payload());
    if (result.ok()) {
      response.set_payload(*result);
    } else {
      Code c = result.status().code();
      response.mutable_status()->set_code(c == Code::kInvalidArgument ? kCodeInvalidArgument
                                                                      : kCodeUnknown);
      response.mutable_status()->set_message(result.status().message());
      SDRA_LOG_WARN << "NRI: " << request.method() << " failed: " << result.status().message();
    }
  }
  Status st =
      write(kPluginServiceConn, {stream, MessageType::kResponse, 0, response.SerializeAsString()});
  if (!st.isOk()) SDRA_LOG_WARN << "NRI: answering " << request.method() << ": " << st.message();
}

Status Plugin::Session::serve() {
  std::string buffer(size_t{64} * 1024, '\0');
  Status why = Status(Code::kUnavailable, "the runtime closed the NRI connection");
  while (true) {
    ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = Status::fromErrno(errno, "reading the NRI socket");
      break;
    }
    if (n == 0) break;
    auto frames = mux_.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
    if (!frames.ok()) {
      why = frames.status();
      break;
    }
    Status bad = Status::ok();
    for (auto& f : *frames) {
      if (f.conn != kPluginServiceConn && f.conn != kRuntimeServiceConn) continue;
      auto& reader = f.conn == kPluginServiceConn ? plugin_conn_ : runtime_conn_;
      auto messages = reader.feed(f.payload);
      if (!messages.ok()) {
        bad = messages.status();
        break;
      }
      for (auto& m : *messages) {
        if (f.conn == kRuntimeServiceConn) {
          (void)onRuntimeResponse(m);
          continue;
        }
        if (m.type != MessageType::kRequest) continue;
        ttrpc::Request request;
        if (!request.ParseFromString(m.payload)) {
          // As ttrpc's own server: that request fails, the connection goes on.
          ttrpc::Response response;
          response.mutable_status()->set_code(kCodeInvalidArgument);
          response.mutable_status()->set_message("unmarshal request error");
          SDRA_LOG_WARN << "NRI: the runtime sent an unreadable ttrpc request (stream " << m.stream
                        << ")";
          (void)write(kPluginServiceConn,
                      {m.stream, MessageType::kResponse, 0, response.SerializeAsString()});
          continue;
        }
        boost::asio::post(pool_, [self = shared_from_this(), stream = m.stream,
                                  request = std::move(request)] { self->answer(stream, request); });
      }
    }
    if (!bad.isOk()) {
      why = bad;
      break;
    }
  }
  failCalls(why.message());
  end();
  return why;
}

Plugin::Plugin(PluginOptions options, PodHandler& handler)
    : options_(std::move(options)), handler_(handler) {}

Plugin::~Plugin() { stop(); }

void Plugin::start() {
  thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
}

void Plugin::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  {
    std::lock_guard lock(mu_);
    if (session_) session_->end();
  }
  thread_.join();
}

std::string Plugin::lastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void Plugin::setError(const std::string& e) {
  std::lock_guard lock(mu_);
  last_error_ = e;
}

void Plugin::run(const std::stop_token& stop) {
  boost::asio::thread_pool pool(static_cast<size_t>(std::max(1, options_.workers)));
  Backoff backoff(
      BackoffPolicy{.initial = std::chrono::milliseconds(100), .cap = options_.max_backoff});
  std::string reported;  // the last error logged, so a missing socket is said once
  std::mutex wait_mu;
  std::condition_variable_any wait_cv;
  while (!stop.stop_requested()) {
    auto fd = connectUnix(options_.socket_path);
    if (fd.ok()) {
      auto session = std::make_shared<Session>(*fd, *this, pool);
      {
        std::lock_guard lock(mu_);
        session_ = session;
      }
      if (stop.stop_requested()) session->end();
      boost::asio::post(pool, [session] { session->registerPlugin(); });
      Status ended = session->serve();
      synchronized_ = false;
      {
        std::lock_guard lock(mu_);
        session_.reset();
        if (last_error_.empty() || ended.message() != "the runtime closed the NRI connection") {
          last_error_ = ended.message();
        }
      }
      if (stop.stop_requested()) break;
      SDRA_LOG_WARN << "NRI: connection ended (" << ended.message() << "); connecting again";
      reported.clear();
    } else {
      setError(fd.status().message());
      if (fd.status().message() != reported) {
        SDRA_LOG_WARN << "NRI: " << fd.status().message() << "; retrying with backoff";
        reported = fd.status().message();
      }
    }
    std::unique_lock lock(wait_mu);
    wait_cv.wait_for(lock, stop, backoff.next(), [] { return false; });
  }
  pool.join();
}

}  // namespace sriovdra::nri
