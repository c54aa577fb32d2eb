#include "node/cni/run_command.h"

#include <istream>
#include <ostream>

#include "host/netns.h"

namespace sriovdra::cni_plugin {
namespace {

// The reference skeleton's CheckNetNS: a path that does not open is not the plugin's.
bool pluginsOwn(const std::string& netns) {
  auto theirs = host::NetNamespace::open(netns);
  if (!theirs.ok()) return false;
  auto ours = host::NetNamespace::current();
  return ours.ok() && ours->sameAs(*theirs);
}

constexpr size_t kMaxConfig = size_t{1} << 20;

int printError(std::ostream& out, const cni::PluginError& e) {
  out << cni::errorJson(e);
  out.flush();
  return 1;
}

int runCommand(const PluginCommands& commands, std::string_view about, const cni::Getenv& env,
               std::istream& in, std::ostream& out, std::ostream& err) {
  // Run by hand: what it is, before stdin is read (a terminal gives no configuration).
  if (env("CNI_COMMAND").empty() && !about.empty()) {
    err << about << "\nCNI protocol versions supported: ";
    const auto& v = cni::supportedVersions();
    for (size_t i = 0; i < v.size(); ++i) err << (i ? ", " : "") << v[i];
    err << "\n";
    return 0;
  }
  std::string input;
  if (env("CNI_COMMAND") != "VERSION") {
    // A network configuration is a few KiB; more than kMaxConfig is not one.
    char buffer[8192];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      input.append(buffer, static_cast<size_t>(in.gcount()));
      if (input.size() > kMaxConfig) {
        return printError(out, {cni::kErrDecodingFailure,
                                "the network configuration on stdin is over " +
                                    std::to_string(kMaxConfig) + " bytes",
                                ""});
      }
    }
  }
  auto prepared = cni::prepareCommand(env, std::move(input));
  if (auto* e = std::get_if<cni::PluginError>(&prepared)) return printError(out, *e);
  const auto& args = std::get<cni::CmdArgs>(prepared);
  auto failed = [&](const Status& st) {
    return printError(out, {cni::kErrInternal, st.message(), ""});
  };
  auto checkNetns = [&]() -> int {
    if (!args.netnsOverridden() && pluginsOwn(args.netns)) {
      return printError(out,
                        {cni::kErrInvalidNetNs,
                         "plugin's netns and netns from CNI_NETNS should not be the same", ""});
    }
    return 0;
  };
  switch (args.command) {
    case cni::PluginCommand::kVersion:
      out << cni::versionJson();
      return 0;
    case cni::PluginCommand::kAdd: {
      auto result = commands.add(args);
      if (!result.ok()) return failed(result.status());
      if (int code = checkNetns(); code != 0) return code;
      out << *result;
      return 0;
    }
    case cni::PluginCommand::kDel: {
      Status st = commands.del(args);
      if (!st.isOk()) return failed(st);
      return checkNetns();
    }
    case cni::PluginCommand::kCheck:
    case cni::PluginCommand::kStatus:
    case cni::PluginCommand::kGc: {
      const auto& fn = args.command == cni::PluginCommand::kCheck    ? commands.check
                       : args.command == cni::PluginCommand::kStatus ? commands.status
                                                                     : nullptr;
      if (!fn) return 0;
      Status st = fn(args);
      return st.isOk() ? 0 : failed(st);
    }
  }
  return 0;
}

}  // namespace

int runCniCommand(const PluginCommands& commands, std::string_view about, const cni::Getenv& env,
                  std::istream& in, std::ostream& out, std::ostream& err) {
  // A runtime reads only stdout: whatever goes wrong, it gets a CNI error there.
  try {
    return runCommand(commands, about, env, in, out, err);
  } catch (const std::exception& e) {
    return printError(out, {cni::kErrInternal, std::string("internal error: ") + e.what(), ""});
  }
}

}  // namespace sriovdra::cni_plugin
