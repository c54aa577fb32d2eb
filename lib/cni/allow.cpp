#include "cni/allow.h"

#include <algorithm>

#include "base/json.h"
#include "base/strings.h"

namespace sriovdra::cni {
namespace {

// Keys whose value names a file on the host, in the plugins an administrator may allow: the
// SR-IOV CNIs' logFile, host-local's dataDir and resolvConf, whereabouts' kubeconfig,
// configuration_path and log_file, dhcp's daemonSocketPath.
bool isPathKey(std::string_view key) {
  static const std::set<std::string_view> kKeys = {
      "logFile",         "log_file",           "dataDir",          "resolvConf", "kubeconfig",
      "kubeconfig_path", "configuration_path", "daemonSocketPath", "socketPath"};
  return kKeys.count(key) != 0;
}

std::string listed(const std::set<std::string>& names) {
  return names.empty() ? "none" : join(names, ", ");
}

Status denied(const std::string& what) { return Status(Code::kForbidden, what); }

bool below(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (dir == "/") return true;
  return path == dir ||
         (path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/');
}

class PathCheck {
 public:
  PathCheck(const AllowList& allowed, const std::string& where)
      : allowed_(allowed), where_(where) {}

  Status walk(const json::Value& v, std::string_view key) const {
    if (v.IsString()) return check(key, std::string_view(v.GetString(), v.GetStringLength()));
    if (v.IsArray()) {
      for (const auto& e : v.GetArray()) SDRA_RETURN_IF_ERROR(walk(e, key));
    } else if (v.IsObject()) {
      for (const auto& m : v.GetObject()) {
        SDRA_RETURN_IF_ERROR(walk(m.value, {m.name.GetString(), m.name.GetStringLength()}));
      }
    }
    return Status::ok();
  }

 private:
  Status check(std::string_view key, std::string_view value) const {
    bool names_file = isPathKey(key) && !value.empty();
    if (!names_file && (value.empty() || value.front() != '/')) return Status::ok();
    std::string field = where_ + ": \"" + std::string(key) + "\" names the host path \"" +
                        std::string(value.substr(0, 256)) + "\"";
    if (!isCleanAbsolutePath(value)) {
      return denied(field + ", which is not a clean absolute path (no \".\" or \"..\")");
    }
    bool ok = std::any_of(allowed_.host_paths.begin(), allowed_.host_paths.end(),
                          [&](const std::string& dir) { return below(value, dir); });
    if (ok) return Status::ok();
    std::string dirs = allowed_.host_paths.empty() ? "none" : join(allowed_.host_paths, ", ");
    return denied(field +
                  "; the plugins run as root on the node, so a NetworkAttachmentDefinition " +
                  "may name files only below the directories the agent's --cni-host-paths " +
                  "allows (" + dirs + ")");
  }

  const AllowList& allowed_;
  const std::string& where_;
};

}  // namespace

bool isCleanAbsolutePath(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, end - start);
    if (part == "." || part == ".." || (part.empty() && end != path.size())) return false;
    start = end + 1;
  }
  return true;
}

Status checkAllowed(const NetworkConfig& config, const AllowList& allowed) {
  for (size_t i = 0; i < config.plugins.size(); ++i) {
    const std::string& type = config.types[i];
    std::string where = config.list ? "plugins[" + std::to_string(i) + "] (type " + type + ")"
                                    : "the CNI configuration (type " + type + ")";
    if (allowed.plugins.count(type) == 0) {
      std::string message = where;
      message.append(": CNI plugin \"")
          .append(type)
          .append("\" is not allowed on this node (allowed: ");
      message.append(listed(allowed.plugins))
          .append("); an administrator allows more with the agent's --cni-plugins");
      return denied(message);
    }
    auto doc = json::parse(config.plugins[i]);
    if (!doc.ok() || !doc->IsObject()) return denied(where + " is not a JSON object");
    for (const char* runtime_set : {"deviceID", "runtimeConfig"}) {
      if (json::member(*doc, runtime_set) != nullptr) {
        return denied(where + ": \"" + runtime_set +
                      "\" is set by the agent (the claim's VF); a NetworkAttachmentDefinition " +
                      "must not name a device");
      }
    }
    if (const json::Value* ipam = json::objectMember(*doc, "ipam")) {
      std::string_view ipam_type = json::stringOr(*ipam, "type");
      if (!ipam_type.empty() &&
          (!isPluginType(ipam_type) || allowed.ipam.count(std::string(ipam_type)) == 0)) {
        bool needs_mounts = ipam_type == "dhcp" || ipam_type == "whereabouts";
        return denied(where + ": IPAM plugin \"" + std::string(ipam_type.substr(0, 256)) +
                      "\" is not allowed on this node (allowed: " + listed(allowed.ipam) +
                      "); an administrator allows more with the agent's --cni-ipam-plugins" +
                      (needs_mounts ? ", after mounting what it needs into the agent "
                                      "(docs/install.md, \"IPAM plugins\")"
                                    : ""));
      }
    }
    SDRA_RETURN_IF_ERROR(PathCheck(allowed, where).walk(*doc, ""));
  }
  return Status::ok();
}

}  // namespace sriovdra::cni
