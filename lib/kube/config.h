#pragma once
// Where and how to reach the API server: kubeconfig files (as kubectl reads them) and the
// in-cluster service-account configuration. Resolution order of loadConfig(), as in
// controller-runtime: an explicit --kubeconfig path; $KUBECONFIG (a ':'-separated list, merged
// with first-file-wins); in-cluster ($KUBERNETES_SERVICE_HOST); ~/.kube/config.
// Relative file paths inside a kubeconfig are relative to that kubeconfig's directory.
// Unsupported settings (auth-provider, proxy-url, basic auth) are errors, never silently ignored.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "kube/tls_options.h"

namespace sriovdra::kube {

// users[].user.exec of a kubeconfig (client.authentication.k8s.io ExecConfig).
struct ExecConfig {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string api_version = "client.authentication.k8s.io/v1";
  std::string interactive_mode = "IfAvailable";
  bool provide_cluster_info = false;
  std::string install_hint;
};

struct RestConfig {
  std::string server;  // https://host:port[/prefix]
  TlsOptions tls;
  std::string bearer_token;       // static token (kubeconfig `token`)
  std::string bearer_token_file;  // re-read when it changes (kubeconfig `tokenFile`, in-cluster)
  std::optional<ExecConfig> exec;
  std::string ca_data_for_exec;   // CA handed to exec plugins that ask for cluster info
  std::string default_namespace;  // context namespace, or the pod's namespace in-cluster
  std::string description;        // where this came from, for messages ("kubeconfig ~/.kube/config,
                                  // context kind")
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // default per-request deadline
};

struct KubeconfigOptions {
  std::string path;     // --kubeconfig; "" = $KUBECONFIG, in-cluster, then ~/.kube/config
  std::string context;  // --context; "" = current-context
};

Result<RestConfig> loadConfig(const KubeconfigOptions& options);
// Loads one or more kubeconfig files (merged in order, first wins).
Result<RestConfig> loadKubeconfigFiles(const std::vector<std::string>& paths,
                                       const std::string& context);
// Service-account configuration; dir holds token, ca.crt and namespace.
Result<RestConfig> inClusterConfig(
    const std::string& dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace sriovdra::kube
