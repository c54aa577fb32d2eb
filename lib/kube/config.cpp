#include "kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <map>

#include <yaml-cpp/yaml.h>

#include "base/base64.h"
#include "base/files.h"
#include "base/strings.h"

namespace sriovdra::kube {
namespace {

namespace fs = std::filesystem;

struct NamedEntry {
  YAML::Node node;
  std::string file;  // the kubeconfig that defined it, for relative paths
};

struct Merged {
  std::string current_context;
  std::map<std::string, NamedEntry> clusters, users, contexts;
};

Status mergeList(const YAML::Node& doc, const char* list, const char* inner,
                 const std::string& file, std::map<std::string, NamedEntry>& into) {
  YAML::Node items = doc[list];
  if (!items) return Status::ok();
  if (!items.IsSequence()) {
    return Status(Code::kInvalidArgument, file + ": `" + list + "` must be a list");
  }
  for (const auto& item : items) {
    if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) {
      return Status(Code::kInvalidArgument, file + ": every entry of `" + list + "` needs a name");
    }
    std::string name = item["name"].as<std::string>();
    YAML::Node body = item[inner];
    if (into.count(name) == 0)
      into[name] = NamedEntry{body ? body : YAML::Node(YAML::NodeType::Map), file};
  }
  return Status::ok();
}

std::string scalar(const YAML::Node& n, const char* key) {
  YAML::Node v = n[key];
  if (!v || !v.IsScalar()) return "";
  return v.as<std::string>();
}

// Absent: false. Anything but a YAML boolean is an error naming `where`: a typo must not turn
// a setting off silently.
Result<bool> flag(const YAML::Node& n, const char* key, const std::string& where) {
  YAML::Node v = n[key];
  if (!v || v.IsNull()) return false;
  if (v.IsScalar()) {
    try {
      return v.as<bool>();
    } catch (const YAML::Exception&) {
    }
  }
  return Status(Code::kInvalidArgument, where + ": " + key + " must be true or false" +
                                            (v.IsScalar() ? ", not \"" + v.Scalar() + "\"" : ""));
}

std::string resolvePath(const std::string& path, const std::string& kubeconfig) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(kubeconfig).parent_path() / path).string();
}

// Reads "<key>-data" (base64) or "<key>" (a file path) of a kubeconfig entry.
Result<std::string> pemField(const NamedEntry& e, const std::string& key, const std::string& what) {
  std::string data = scalar(e.node, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = base64Decode(data);
    if (!decoded.ok()) {
      return Status(Code::kInvalidArgument,
                    e.file + ": " + key + "-data of " + what + " is not valid base64");
    }
    return std::move(*decoded);
  }
  std::string path = scalar(e.node, key.c_str());
  if (path.empty()) return std::string();
  auto content = readFile(resolvePath(path, e.file));
  if (!content.ok()) {
    return Status(Code::kInvalidArgument,
                  e.file + ": " + key + " of " + what + ": " + content.status().message());
  }
  return std::move(*content);
}

Result<ExecConfig> parseExec(const NamedEntry& user, const std::string& user_name) {
  const YAML::Node& n = user.node["exec"];
  ExecConfig exec;
  exec.command = scalar(n, "command");
  if (exec.command.empty()) {
    return Status(Code::kInvalidArgument,
                  user.file + ": user \"" + user_name + "\" has an exec section without a command");
  }
  // A relative command containing a '/' is relative to the kubeconfig (like client-go).
  if (exec.command.find('/') != std::string::npos) {
    exec.command = resolvePath(exec.command, user.file);
  }
  if (n["args"] && n["args"].IsSequence()) {
    for (const auto& a : n["args"]) exec.args.push_back(a.as<std::string>());
  }
  if (n["env"] && n["env"].IsSequence()) {
    for (const auto& e : n["env"]) exec.env.emplace_back(scalar(e, "name"), scalar(e, "value"));
  }
  std::string api = scalar(n, "apiVersion");
  if (!api.empty()) exec.api_version = api;
  if (exec.api_version != "client.authentication.k8s.io/v1" &&
      exec.api_version != "client.authentication.k8s.io/v1beta1") {
    return Status(Code::kInvalidArgument,
                  user.file + ": exec apiVersion \"" + exec.api_version +
                      "\" is not supported; use client.authentication.k8s.io/v1");
  }
  std::string mode = scalar(n, "interactiveMode");
  if (!mode.empty()) exec.interactive_mode = mode;
  auto provide = flag(n, "provideClusterInfo", user.file + ": exec");
  if (!provide.ok()) return provide.status();
  exec.provide_cluster_info = *provide;
  exec.install_hint = scalar(n, "installHint");
  return exec;
}

// Long on purpose: kubectl's resolution order from context to cluster to user to credentials,
// one lookup after the other, each failing with a message that names the kubeconfig entry.
// NOLINTNEXTLINE(readability-function-size)
Result<RestConfig> build(const Merged& m, const std::string& context_override,
                         const std::string& description) {
  std::string ctx_name = context_override.empty() ? m.current_context : context_override;
  if (ctx_name.empty()) {
    return Status(Code::kInvalidArgument,
                  description +
                      " has no current-context; pass --context or set one with "
                      "`kubectl config use-context`");
  }
  auto ctx = m.contexts.find(ctx_name);
  if (ctx == m.contexts.end()) {
    return Status(Code::kInvalidArgument,
                  description + " has no context named \"" + ctx_name + "\"");
  }
  std::string cluster_name = scalar(ctx->second.node, "cluster");
  std::string user_name = scalar(ctx->second.node, "user");
  auto cluster = m.clusters.find(cluster_name);
  if (cluster == m.clusters.end()) {
    return Status(Code::kInvalidArgument, description + ": context \"" + ctx_name +
                                              "\" refers to a missing cluster \"" + cluster_name +
                                              "\"");
  }
  RestConfig cfg;
  cfg.description = description + ", context " + ctx_name;
  cfg.default_namespace = scalar(ctx->second.node, "namespace");
  const NamedEntry& c = cluster->second;
  cfg.server = scalar(c.node, "server");
  if (cfg.server.empty()) {
    return Status(Code::kInvalidArgument,
                  c.file + ": cluster \"" + cluster_name + "\" has no server");
  }
  if (!scalar(c.node, "proxy-url").empty()) {
    return Status(Code::kInvalidArgument, c.file + ": cluster \"" + cluster_name +
                                              "\" sets proxy-url, which is not supported; "
                                              "reach the API server directly");
  }
  auto ca = pemField(c, "certificate-authority", "cluster \"" + cluster_name + "\"");
  if (!ca.ok()) return std::move(ca).takeStatus();
  cfg.tls.ca_pem = std::move(*ca);
  cfg.ca_data_for_exec = cfg.tls.ca_pem;
  cfg.tls.server_name = scalar(c.node, "tls-server-name");
  auto insecure =
      flag(c.node, "insecure-skip-tls-verify", c.file + ": cluster \"" + cluster_name + "\"");
  if (!insecure.ok()) return insecure.status();
  cfg.tls.insecure_skip_verify = *insecure;
  if (cfg.tls.insecure_skip_verify && !cfg.tls.ca_pem.empty()) {
    return Status(Code::kInvalidArgument,
                  c.file + ": cluster \"" + cluster_name +
                      "\" sets both a certificate authority and insecure-skip-tls-verify; "
                      "remove insecure-skip-tls-verify");
  }

  if (user_name.empty()) return cfg;
  auto user = m.users.find(user_name);
  if (user == m.users.end()) {
    return Status(Code::kInvalidArgument, description + ": context \"" + ctx_name +
                                              "\" refers to a missing user \"" + user_name + "\"");
  }
  const NamedEntry& u = user->second;
  std::string what = "user \"" + user_name + "\"";
  if (u.node["auth-provider"]) {
    return Status(Code::kInvalidArgument,
                  u.file + ": " + what +
                      " uses an auth-provider, which Kubernetes removed; use an exec plugin");
  }
  if (!scalar(u.node, "username").empty() || !scalar(u.node, "password").empty()) {
    return Status(Code::kInvalidArgument,
                  u.file + ": " + what + " uses basic authentication, which is not supported");
  }
  auto cert = pemField(u, "client-certificate", what);
  if (!cert.ok()) return std::move(cert).takeStatus();
  auto key = pemField(u, "client-key", what);
  if (!key.ok()) return std::move(key).takeStatus();
  cfg.tls.client_cert_pem = std::move(*cert);
  cfg.tls.client_key_pem = std::move(*key);
  if (cfg.tls.client_cert_pem.empty() != cfg.tls.client_key_pem.empty()) {
    return Status(Code::kInvalidArgument,
                  u.file + ": " + what + " needs both client-certificate and client-key");
  }
  cfg.bearer_token = scalar(u.node, "token");
  cfg.bearer_token_file = resolvePath(scalar(u.node, "tokenFile"), u.file);
  if (u.node["exec"]) {
    auto exec = parseExec(u, user_name);
    if (!exec.ok()) return std::move(exec).takeStatus();
    cfg.exec = std::move(*exec);
  }
  return cfg;
}

std::string homeKubeconfig() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + "/.kube/config" : std::string();
}

}  // namespace

Result<RestConfig> loadKubeconfigFiles(const std::vector<std::string>& paths,
                                       const std::string& context) {
  Merged merged;
  std::string description = "kubeconfig ";
  bool any = false;
  for (const auto& path : paths) {
    if (path.empty()) continue;
    auto text = readFile(path);
    if (!text.ok()) {
      if (text.status().code() == Code::kNotFound) continue;
      return Status(Code::kInvalidArgument, "cannot read kubeconfig: " + text.status().message());
    }
    YAML::Node doc;
    try {
      doc = YAML::Load(*text);
    } catch (const YAML::Exception& e) {
      return Status(Code::kInvalidArgument, path + " is not valid YAML: " + e.what());
    }
    if (!doc.IsMap()) {
      return Status(Code::kInvalidArgument, path + " is not a kubeconfig (expected a mapping)");
    }
    SDRA_RETURN_IF_ERROR(mergeList(doc, "clusters", "cluster", path, merged.clusters));
    SDRA_RETURN_IF_ERROR(mergeList(doc, "users", "user", path, merged.users));
    SDRA_RETURN_IF_ERROR(mergeList(doc, "contexts", "context", path, merged.contexts));
    if (merged.current_context.empty()) merged.current_context = scalar(doc, "current-context");
    description += (any ? ":" : "") + path;
    any = true;
  }
  if (!any) {
    return Status(Code::kNotFound, "kubeconfig not found: " + join(paths, ", "));
  }
  try {
    return build(merged, context, description);
  } catch (const YAML::Exception& e) {
    return Status(Code::kInvalidArgument, description + ": unexpected value: " + e.what());
  }
}

Result<RestConfig> inClusterConfig(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return Status(Code::kNotFound,
                  "not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  RestConfig cfg;
  cfg.server = "https://" + h + ":" + port;
  cfg.description = "in-cluster service account (" + dir + ")";
  cfg.bearer_token_file = dir + "/token";
  auto token = readFile(cfg.bearer_token_file);
  if (!token.ok()) {
    return Status(
        Code::kInvalidArgument,
        "in-cluster config: cannot read the service account token: " + token.status().message());
  }
  auto ca = readFile(dir + "/ca.crt");
  if (!ca.ok()) {
    return Status(Code::kInvalidArgument,
                  "in-cluster config: cannot read the cluster CA: " + ca.status().message());
  }
  cfg.tls.ca_pem = std::move(*ca);
  auto ns = readFile(dir + "/namespace");
  if (ns.ok()) {
    std::string n = *ns;
    while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
    cfg.default_namespace = n;
  }
  return cfg;
}

Result<RestConfig> loadConfig(const KubeconfigOptions& options) {
  if (!options.path.empty()) return loadKubeconfigFiles({options.path}, options.context);
  const char* env = std::getenv("KUBECONFIG");
  if (env != nullptr && *env != '\0') {
    return loadKubeconfigFiles(splitList(env, ':'), options.context);
  }
  auto in_cluster = inClusterConfig();
  if (in_cluster.ok() || in_cluster.status().code() != Code::kNotFound) return in_cluster;
  std::string home = homeKubeconfig();
  auto cfg = loadKubeconfigFiles({home}, options.context);
  if (!cfg.ok() && cfg.status().code() == Code::kNotFound) {
    return Status(Code::kNotFound,
                  "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, run in a "
                  "cluster, or create " +
                      home);
  }
  return cfg;
}

}  // namespace sriovdra::kube
