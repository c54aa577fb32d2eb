#include "cni/exec.h"

#include <algorithm>

#include <unistd.h>

#include "base/process.h"
#include "base/strings.h"
#include "cni/skel.h"

namespace sriovdra::cni {

Result<std::string> execPlugin(const std::string& type, const std::vector<std::string>& bin_dirs,
                               std::vector<std::pair<std::string, std::string>> env,
                               std::string stdin_data, std::chrono::milliseconds timeout,
                               size_t max_output) {
  std::string binary;
  for (const auto& dir : bin_dirs) {
    std::string candidate = dir;
    candidate.append("/").append(type);
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) {
      binary = candidate;
      break;
    }
  }
  if (binary.empty()) {
    return Status(Code::kNotFound,
                  "failed to find plugin \"" + type + "\" in path [" + join(bin_dirs, " ") + "]");
  }
  ProcessSpec spec;
  spec.argv = {binary};
  spec.env = std::move(env);
  spec.stdin_data = std::move(stdin_data);
  auto out = runProcess(spec, timeout, max_output);
  if (!out.ok()) return Status(out.status().code(), type + ": " + out.status().message());
  if (out->exit_code != 0) {
    return Status(Code::kUnavailable, failureMessage(type, out->exit_code, out->out, out->err));
  }
  return out->out;
}

Result<std::string> Executor::run(const NetworkConfig& config, size_t index, Command command,
                                  const RuntimeArgs& args, const std::string& prev_result,
                                  std::chrono::milliseconds timeout) const {
  const std::string& type = config.types.at(index);
  auto out = execPlugin(type, args.bin_dirs, environment(command, args),
                        pluginInput(config, index, prev_result), timeout, max_output_);
  if (out.status().code() == Code::kNotFound) {
    return Status(Code::kNotFound, "CNI plugin " + type + " is not installed (looked in " +
                                       join(args.bin_dirs, ", ") + "; the agent's --cni-bin-dir)");
  }
  if (!out.ok() && out.status().code() != Code::kUnavailable) {
    return Status(out.status().code(), "CNI plugin " + out.status().message());
  }
  return out;
}

namespace {

Status checkRuntimeArgs(const NetworkConfig& config, const RuntimeArgs& args) {
  for (const PluginError& e :
       {validateContainerId(args.container_id), validateNetworkName(config.name),
        validateInterfaceName(args.if_name)}) {
    if (e.code != 0) {
      return Status(Code::kInvalidArgument,
                    "CNI: " + e.msg + (e.details.empty() ? "" : ": " + printable(e.details)));
    }
  }
  return Status::ok();
}

}  // namespace

std::chrono::milliseconds Executor::timeoutBy(Deadline deadline) const {
  if (deadline == Deadline::max()) return timeout_;
  return std::min(timeout_, std::chrono::duration_cast<std::chrono::milliseconds>(
                                deadline - std::chrono::steady_clock::now()));
}

Result<std::string> Executor::add(const NetworkConfig& config, const RuntimeArgs& args,
                                  Deadline deadline) const {
  SDRA_RETURN_IF_ERROR(checkRuntimeArgs(config, args));
  std::string result;
  for (size_t i = 0; i < config.plugins.size(); ++i) {
    auto timeout = timeoutBy(deadline);
    auto out = timeout.count() > 0
                   ? run(config, i, Command::kAdd, args, result, timeout)
                   : Result<std::string>(Status(
                         Code::kTimeout, "no time was left to run CNI plugin " + config.types[i]));
    if (!out.ok()) {
      // Undo the plugins that succeeded (and the failing one, which may have left half a setup).
      NetworkConfig done = config;
      done.plugins.resize(i + 1);
      done.types.resize(i + 1);
      (void)del(done, args, result);
      return out.status();
    }
    result = *out;
  }
  return result;
}

Status Executor::del(const NetworkConfig& config, const RuntimeArgs& args,
                     const std::string& add_result, Deadline deadline) const {
  SDRA_RETURN_IF_ERROR(checkRuntimeArgs(config, args));
  Status first = Status::ok();
  for (size_t i = config.plugins.size(); i-- > 0;) {
    auto timeout = timeoutBy(deadline);
    auto out = timeout.count() > 0
                   ? run(config, i, Command::kDel, args, add_result, timeout)
                   : Result<std::string>(Status(
                         Code::kTimeout, "no time was left to run CNI plugin " + config.types[i]));
    if (!out.ok() && first.isOk()) first = out.status();
  }
  return first;
}

}  // namespace sriovdra::cni
