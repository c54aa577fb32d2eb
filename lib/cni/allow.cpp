#include "cni/allow.h"

#include <algorithm>
#include <set>

#include "base/json.h"
#include "base/strings.h"
#include "cni/go_json.h"

namespace sriovdra::cni {
namespace {

// Keys whose value names a file on the host, in the plugins an administrator may allow: the
// SR-IOV CNIs' logFile, host-local's dataDir and resolvConf, whereabouts' kubeconfig,
// configuration_path and log_file, dhcp's daemonSocketPath. In any case: Go plugins match keys so.
bool isPathKey(std::string_view key) {
  static const std::set<std::string, std::less<>> kKeys = {
      "logfile",         "log_file",           "datadir",          "resolvconf", "kubeconfig",
      "kubeconfig_path", "configuration_path", "daemonsocketpath", "socketpath"};
  return kKeys.count(asciiLower(key)) != 0;
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

// kForbidden when an object of `v` names a key twice, ignoring ASCII case.
Status noCaseCollisions(const json::Value& v, const std::string& where) {
  if (v.IsArray()) {
    for (const auto& item : v.GetArray()) SDRA_RETURN_IF_ERROR(noCaseCollisions(item, where));
    return Status::ok();
  }
  if (!v.IsObject()) return Status::ok();
  std::set<std::string> seen;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string key =
        asciiLower(std::string_view(it->name.GetString(), it->name.GetStringLength()));
    if (!seen.insert(key).second) {
      return denied(where + ": the key \"" + key.substr(0, 64) +
                    "\" is named twice (the plugins match keys ignoring case and take the last)");
    }
    SDRA_RETURN_IF_ERROR(noCaseCollisions(it->value, where));
  }
  return Status::ok();
}

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
    // The plugins read keys as Go does (any case, the last one wins): what is checked here must
    // be what they read, so no object may name a key twice.
    SDRA_RETURN_IF_ERROR(noCaseCollisions(*doc, where));
    GoFields fields(*doc, "NetConf");
    for (const char* runtime_set : {"deviceID", "runtimeConfig", "args"}) {
      if (fields.find(runtime_set) != nullptr) {
        return denied(where + ": \"" + runtime_set +
                      "\" is set by the agent (the claim's VF, its GUID); a "
                      "NetworkAttachmentDefinition must not name a device");
      }
    }
    auto ipam_object = fields.object("ipam", "types.IPAM");
    if (!ipam_object.ok()) return denied(where + ": \"ipam\" is not an object");
    if (const json::Value* ipam = *ipam_object) {
      auto ipam_type_value = GoFields(*ipam, "IPAM").string("type");
      if (!ipam_type_value.ok()) return denied(where + ": \"ipam\".\"type\" is not a string");
      std::string ipam_type = ipam_type_value->value_or("");
      if (!ipam_type.empty() &&
          (!isPluginType(ipam_type) || allowed.ipam.count(std::string(ipam_type)) == 0)) {
        bool needs_mounts = ipam_type == "dhcp" || ipam_type == "whereabouts";
        return denied(where + ": IPAM plugin \"" + ipam_type.substr(0, 256) +
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
