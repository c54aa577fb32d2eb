#pragma once
// One run of a CNI plugin as the reference skeleton runs it (cni/skel.h): the environment and
// stdin checked, VERSION answered, the command called, its result printed on stdout, or its
// error printed there as CNI error JSON (code 999 for the plugin's own failures) with exit status
// 1. After ADD and DEL the plugin's own network namespace must not be CNI_NETNS (code 8) unless
// CNI_NETNS_OVERRIDE is 1 or true. CHECK and STATUS without a function succeed.
// Without CNI_COMMAND, `about` and the supported versions go to stderr and the exit status is 0.
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cni/skel.h"

namespace sriovdra::cni_plugin {

struct PluginCommands {
  std::function<Result<std::string>(const cni::CmdArgs&)> add;  // the result's JSON text
  std::function<Status(const cni::CmdArgs&)> del;
  std::function<Status(const cni::CmdArgs&)> check;
  std::function<Status(const cni::CmdArgs&)> status;
};

// The process's exit status.
int runCniCommand(const PluginCommands& commands, std::string_view about, const cni::Getenv& env,
                  std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace sriovdra::cni_plugin
