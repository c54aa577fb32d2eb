#pragma once
// What the operator and the agent processes have in common as kube::Manager parts: an HTTP
// server that starts with the process and stops with it, the /healthz and /readyz probes, and the
// exit code of a run.
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/manager.h"

namespace sriovdra::serving {

// Adds a part that starts a server with `start` (a null server: turned off by its flags, nothing
// to stop) and stops it with the process.
void addServer(kube::Manager& manager, std::string name,
               std::function<Result<std::unique_ptr<http::Server>>()> start);

// A check of a probe: "" when healthy (or ready), else the reason, served with HTTP 500.
using ProbeCheck = std::function<std::string()>;
// /healthz and /readyz on `address` (plain HTTP, as kubelet probes).
Result<std::unique_ptr<http::Server>> startProbes(const std::string& address,
                                                  const ProbeCheck& healthy,
                                                  const ProbeCheck& ready);

// Loads the kubeconfig, lets `resolve` fill in the options the flags left to the environment,
// and makes the client: the first error, or the client.
Result<std::shared_ptr<kube::Client>> connect(
    const kube::KubeconfigOptions& kubeconfig,
    const std::function<Status(const kube::RestConfig&)>& resolve);
// The namespace a process works in: its flag, else the kubeconfig's, else $POD_NAMESPACE (in a
// pod); "" when none says.
std::string namespaceOf(const std::string& flag, const kube::RestConfig& config);

// The process's exit code for what kube::Manager::run() returned; logs an error.
int exitCode(const Status& ran);

}  // namespace sriovdra::serving
