#include "support/nri_runtime.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/json.h"
#include "support/poll.h"

namespace sriovdra::testing {
namespace {

std::string runtimeBinary() {
  const char* env = std::getenv("SRIOV_DRA_NRI_RUNTIME");
  if (env == nullptr || *env == '\0') {
    FAIL(
        "SRIOV_DRA_NRI_RUNTIME is not set: run scripts/test.sh, or scripts/build-nri-runtime.sh "
        "and set SRIOV_DRA_NRI_RUNTIME to the path it printed");
  }
  return env;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // an answer still being written
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace

NriRuntime::NriRuntime(const std::string& dir, const std::string& socket)
    : dir_(dir), socket_(socket.empty() ? dir + "/nri.sock" : socket) {
  std::filesystem::create_directories(dir_);
  std::string fifo = dir_ + "/commands";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ProcessSpec spec;
  spec.argv = {runtimeBinary(), "--socket", socket_};
  spec.stdin_path = fifo;
  spec.stdout_path = dir_ + "/answers";
  spec.stderr_path = dir_ + "/runtime.log";
  spec.kill_with_parent = true;
  auto child = ChildProcess::spawn(spec);
  REQUIRE(child.ok());
  process_ = std::move(*child);
  commands_ = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // waits for the child to open it
  REQUIRE(commands_ >= 0);
  // The first line says the socket is served.
  std::string ready = command("", std::chrono::seconds(20));
  INFO(logs());
  REQUIRE(ready.empty());
}

NriRuntime::~NriRuntime() {
  if (commands_ >= 0) ::close(commands_);
  process_.stop(SIGTERM, std::chrono::seconds(5));
}

std::string NriRuntime::command(const std::string& json, std::chrono::milliseconds timeout) {
  if (!json.empty()) {
    std::string line = json + "\n";
    REQUIRE(::write(commands_, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  }
  std::vector<std::string> all;
  auto answered = [&] {
    all = lines(readFile(dir_ + "/answers").valueOr(""));
    return all.size() > answers_;
  };
  if (!pollUntil(answered, timeout, std::chrono::milliseconds(10))) {
    FAIL("the NRI test runtime did not answer " << json << " within " << timeout.count()
                                                << " ms; its log:\n"
                                                << logs());
  }
  auto answer = json::parse(all[answers_++]);
  REQUIRE(answer.ok());
  return std::string(json::stringOr(*answer, "error"));
}

std::string NriRuntime::podCommand(const std::string& op, const nri::Pod& pod,
                                   const std::string& container) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::setString(doc, "op", op, a);
  json::Value p(rapidjson::kObjectType);
  json::setString(p, "id", pod.id, a);
  json::setString(p, "uid", pod.uid, a);
  json::setString(p, "name", pod.name, a);
  json::setString(p, "namespace", pod.namespace_, a);
  json::setString(p, "netns", pod.netns, a);
  json::setString(p, "networks", pod.networks, a);
  doc.AddMember("pod", p, a);
  if (!container.empty()) json::setString(doc, "container", container, a);
  return command(json::dump(doc), std::chrono::seconds(60));
}

std::string NriRuntime::runPodSandbox(const nri::Pod& pod) { return podCommand("run", pod); }
std::string NriRuntime::stopPodSandbox(const nri::Pod& pod) { return podCommand("stop", pod); }
std::string NriRuntime::removePodSandbox(const nri::Pod& pod) { return podCommand("remove", pod); }
std::string NriRuntime::createContainer(const nri::Pod& pod, const std::string& container) {
  return podCommand("create", pod, container);
}
std::string NriRuntime::runUnseen(const nri::Pod& pod) { return podCommand("run-unseen", pod); }

std::string NriRuntime::waitPlugins(int count, std::chrono::milliseconds timeout) {
  return command(R"({"op":"wait-plugins","count":)" + std::to_string(count) + R"(,"timeout_ms":)" +
                     std::to_string(timeout.count()) + "}",
                 timeout + std::chrono::seconds(10));
}

std::string NriRuntime::logs() const { return readFile(dir_ + "/runtime.log").valueOr(""); }

}  // namespace sriovdra::testing
