#include "serving/parts.h"

#include <cstdlib>

#include "base/log.h"

namespace sriovdra::serving {

void addServer(kube::Manager& manager, std::string name,
               std::function<Result<std::unique_ptr<http::Server>>()> start) {
  auto server = std::make_shared<std::unique_ptr<http::Server>>();
  manager.add(
      std::move(name),
      [server, start = std::move(start)](const std::stop_token&) {
        auto started = start();
        if (started.ok()) *server = std::move(*started);
        return started.status();
      },
      [server] {
        if (*server) (*server)->stop();
      });
}

Result<std::unique_ptr<http::Server>> startProbes(const std::string& address,
                                                  const ProbeCheck& healthy,
                                                  const ProbeCheck& ready) {
  auto answer = [](const ProbeCheck& check) {
    return [check](const http::Request&) {
      std::string problem = check();
      return problem.empty() ? http::Response::text(200, "ok\n")
                             : http::Response::text(500, problem + "\n");
    };
  };
  return http::Server::start({.bind_address = address, .name = "probes"},
                             {{"/healthz", answer(healthy)}, {"/readyz", answer(ready)}});
}

Result<std::shared_ptr<kube::Client>> connect(
    const kube::KubeconfigOptions& kubeconfig,
    const std::function<Status(const kube::RestConfig&)>& resolve) {
  auto config = kube::loadConfig(kubeconfig);
  if (!config.ok()) return config.status();
  if (Status st = resolve(*config); !st.isOk()) return st;
  return kube::Client::create(*config);
}

std::string namespaceOf(const std::string& flag, const kube::RestConfig& config) {
  if (!flag.empty()) return flag;
  if (!config.default_namespace.empty()) return config.default_namespace;
  const char* env = std::getenv("POD_NAMESPACE");
  return env != nullptr ? env : "";
}

int exitCode(const Status& ran) {
  if (ran.isOk()) return 0;
  SDRA_LOG_ERROR << ran.message();
  return 1;
}

}  // namespace sriovdra::serving
