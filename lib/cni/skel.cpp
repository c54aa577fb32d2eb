#include "cni/skel.h"

#include <algorithm>
#include <cctype>

#include "base/json.h"
#include "cni/go_json.h"

namespace sriovdra::cni {
namespace {

bool validNameChars(std::string_view s) {
  if (s.empty() || std::isalnum(static_cast<unsigned char>(s[0])) == 0) return false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

const char* commandName(PluginCommand c) {
  switch (c) {
    case PluginCommand::kAdd:
      return "ADD";
    case PluginCommand::kDel:
      return "DEL";
    case PluginCommand::kCheck:
      return "CHECK";
    case PluginCommand::kStatus:
      return "STATUS";
    case PluginCommand::kGc:
      return "GC";
    case PluginCommand::kVersion:
      return "VERSION";
  }
  return "";
}

// Version numbers compared as the skeleton's GreaterThanOrEqualTo does (major.minor.patch).
std::vector<int> versionParts(std::string_view v) {
  std::vector<int> parts;
  int n = 0;
  bool digit = false;
  for (char c : v) {
    if (c == '.') {
      parts.push_back(n);
      n = 0;
      digit = false;
    } else if (c >= '0' && c <= '9') {
      n = n * 10 + (c - '0');
      digit = true;
    } else {
      return {};
    }
  }
  if (digit) parts.push_back(n);
  return parts;
}

bool atLeast(std::string_view version, std::string_view minimum) {
  return versionParts(version) >= versionParts(minimum);
}

std::string quotedList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? " \"" : "\"") + items[i] + "\"";
  return out + "]";
}

}  // namespace

std::string errorJson(const PluginError& error) {
  json::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  doc.AddMember("code", error.code, a);
  doc.AddMember("msg", json::str(error.msg, a), a);
  if (!error.details.empty()) doc.AddMember("details", json::str(error.details, a), a);
  std::string text = json::indentLikeGo(json::dump(doc), "    ");
  // Outside strings JSON has none of these characters, so this touches strings only.
  std::string out;
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

bool CmdArgs::netnsOverridden() const {
  std::string upper;
  for (char c : netns_override)
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper == "TRUE" || netns_override == "1";
}

const std::vector<std::string>& supportedVersions() {
  static const std::vector<std::string> kVersions = {"0.1.0", "0.2.0", "0.3.0", "0.3.1",
                                                     "0.4.0", "1.0.0", "1.1.0"};
  return kVersions;
}

std::string versionJson() {
  std::string out = R"({"cniVersion":"1.1.0","supportedVersions":[)";
  const auto& v = supportedVersions();
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ",\"" : "\"") + v[i] + "\"";
  return out + "]}\n";
}

PluginError validateContainerId(std::string_view id) {
  if (id.empty()) return {kErrUnknownContainer, "missing containerID", ""};
  if (!validNameChars(id)) {
    return {kErrInvalidEnvironment, "invalid characters in containerID", std::string(id)};
  }
  return {0, "", ""};
}

PluginError validateInterfaceName(std::string_view name) {
  if (name.empty()) return {kErrInvalidEnvironment, "interface name is empty", ""};
  if (name.size() > 15) {
    return {kErrInvalidEnvironment, "interface name is too long",
            "interface name should be less than 16 characters"};
  }
  if (name == "." || name == "..") return {kErrInvalidEnvironment, "interface name is . or ..", ""};
  for (char c : name) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)) != 0) {
      return {kErrInvalidEnvironment, "interface name contains / or : or whitespace characters",
              ""};
    }
  }
  return {0, "", ""};
}

PluginError validateNetworkName(std::string_view name) {
  if (name.empty()) return {kErrInvalidNetworkConfig, "missing network name", ""};
  if (!validNameChars(name)) {
    return {kErrInvalidNetworkConfig, "invalid characters found in network name",
            std::string(name)};
  }
  return {0, "", ""};
}

// Long on purpose: the reference skeleton's checks in its order (the environment's variables,
// then the configuration's version), so the first error a plugin reports is the one skel.go
// reports.
// NOLINTNEXTLINE(readability-function-size)
std::variant<CmdArgs, PluginError> prepareCommand(const Getenv& env, std::string stdin_data) {
  CmdArgs args;
  std::string command = env("CNI_COMMAND");
  struct Var {
    const char* name;
    std::string* value;
    bool required;
    PluginError (*validate)(std::string_view);
  };
  bool add_check_del = command == "ADD" || command == "CHECK" || command == "DEL";
  bool add_check = command == "ADD" || command == "CHECK";
  bool needs_path = add_check_del || command == "GC" || command == "STATUS";
  const Var vars[] = {
      {"CNI_CONTAINERID", &args.container_id, add_check_del, validateContainerId},
      {"CNI_NETNS", &args.netns, add_check, nullptr},
      {"CNI_IFNAME", &args.if_name, add_check_del, validateInterfaceName},
      {"CNI_ARGS", &args.args, false, nullptr},
      {"CNI_PATH", &args.path, needs_path, nullptr},
      {"CNI_NETNS_OVERRIDE", &args.netns_override, false, nullptr},
  };
  std::vector<std::string> missing;
  if (command.empty()) missing.emplace_back("CNI_COMMAND");
  for (const auto& v : vars) {
    *v.value = env(v.name);
    if (v.value->empty()) {
      if (v.required) missing.emplace_back(v.name);
    } else if (v.required && v.validate != nullptr) {
      if (auto e = v.validate(*v.value); e.code != 0) return e;
    }
  }
  if (!missing.empty()) {
    std::string joined;
    for (const auto& m : missing) joined += (joined.empty() ? "" : ",") + m;
    return PluginError{kErrInvalidEnvironment, "required env variables [" + joined + "] missing",
                       ""};
  }
  static const PluginCommand kCommands[] = {PluginCommand::kAdd,   PluginCommand::kDel,
                                            PluginCommand::kCheck, PluginCommand::kStatus,
                                            PluginCommand::kGc,    PluginCommand::kVersion};
  bool known = false;
  for (auto c : kCommands) {
    if (command == commandName(c)) {
      args.command = c;
      known = true;
    }
  }
  if (args.command == PluginCommand::kVersion && known) return args;
  // The skeleton decodes stdin before it looks at the command.
  auto doc = json::parse(stdin_data);
  if (!doc.ok() || !doc->IsObject()) {
    return PluginError{kErrDecodingFailure,
                       "error unmarshall network config: " +
                           (doc.ok() ? std::string("not a JSON object") : doc.status().message()),
                       ""};
  }
  // Read as the Go skeleton reads them: any case, the last key wins, null is absent.
  GoFields fields(*doc, "");
  auto name = fields.string("name");
  if (!name.ok()) {
    return PluginError{kErrDecodingFailure,
                       "error unmarshall network config: " + name.status().message(), ""};
  }
  if (auto e = validateNetworkName(name->value_or("")); e.code != 0) return e;
  if (!known) {
    return PluginError{kErrInvalidEnvironment, "unknown CNI_COMMAND: " + command, ""};
  }
  auto version = fields.string("cniVersion");
  if (!version.ok()) {
    return PluginError{kErrDecodingFailure,
                       "decoding version from network config: " + version.status().message(), ""};
  }
  args.cni_version = version->value_or("").empty() ? "0.1.0" : **version;
  args.stdin_data = std::move(stdin_data);
  const char* minimum =
      args.command == PluginCommand::kCheck                                          ? "0.4.0"
      : args.command == PluginCommand::kStatus || args.command == PluginCommand::kGc ? "1.1.0"
                                                                                     : nullptr;
  if (minimum != nullptr && !atLeast(args.cni_version, minimum)) {
    return PluginError{kErrIncompatibleVersion,
                       std::string("config version does not allow ") + commandName(args.command),
                       ""};
  }
  const auto& supported = supportedVersions();
  if (std::find(supported.begin(), supported.end(), args.cni_version) == supported.end()) {
    return PluginError{
        kErrIncompatibleVersion, "incompatible CNI versions",
        "config is \"" + args.cni_version + "\", plugin supports " + quotedList(supported)};
  }
  return args;
}

}  // namespace sriovdra::cni
