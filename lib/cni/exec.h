#pragma once
// Runs a network configuration's CNI plugins (config.h) as the CNI specification says: each
// plugin binary from the first CNI bin directory that has it, its configuration on stdin, the
// CNI_* environment, a deadline per plugin. No shell: argv is the binary alone.
//   add(): the plugins in order, each getting the previous result; returns the last result. A
//     failing plugin stops the chain and the plugins before it are deleted again (best effort),
//     so a failed ADD leaves nothing attached. With a deadline, each plugin gets what is left of
//     it (at most the per-plugin timeout); a plugin still running then is killed, and fails.
//   del(): the plugins in reverse order with the ADD result as prevResult; every plugin runs
//     even when one fails (the first failure is returned), as DEL must clean up what it can.
//   execPlugin(): one plugin binary alone, for a runtime and for a main plugin delegating to its
//     IPAM plugin alike.
// Before any plugin runs, add() and del() check what the reference library (libcni) checks: the
// container ID and the network name ([a-zA-Z0-9][a-zA-Z0-9_.-]*) and the interface name (1-15
// bytes, not "." or "..", no '/', ':' or whitespace); kInvalidArgument in its words otherwise, so
// a name such as "../../x" never reaches a plugin or a path built from it.
// Thread-safe (no state besides the options).
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "cni/config.h"

namespace sriovdra::cni {

// The plugin `type` from the first of `bin_dirs` that has it, run with `env` added to the
// process's and `stdin_data` on its stdin, within `timeout`: its stdout (at most `max_output`
// bytes). kNotFound when no directory has it ("failed to find plugin "<type>" in path
// [<bin_dirs>]", the reference library's words), kUnavailable with failureMessage() when it
// fails, the run's own failure (prefixed with the type) otherwise.
Result<std::string> execPlugin(const std::string& type, const std::vector<std::string>& bin_dirs,
                               std::vector<std::pair<std::string, std::string>> env,
                               std::string stdin_data, std::chrono::milliseconds timeout,
                               size_t max_output = size_t{1} << 20);

class Executor {
 public:
  // A plugin's output over max_output bytes fails it (kInvalidArgument), as a crash would.
  explicit Executor(std::chrono::milliseconds timeout = std::chrono::seconds(60),
                    size_t max_output = 1u << 20)
      : timeout_(timeout), max_output_(max_output) {}
  using Deadline = std::chrono::steady_clock::time_point;
  Result<std::string> add(const NetworkConfig& config, const RuntimeArgs& args,
                          Deadline deadline = Deadline::max()) const;
  // By `deadline` (a plugin still running then is killed, kTimeout): DEL is idempotent, so one
  // cut short is run again.
  Status del(const NetworkConfig& config, const RuntimeArgs& args, const std::string& add_result,
             Deadline deadline = Deadline::max()) const;

 private:
  // The per-plugin timeout, cut to what is left before `deadline`.
  std::chrono::milliseconds timeoutBy(Deadline deadline) const;
  // The plugin's stdout, or its failure (kUnavailable: a plugin error; kNotFound: no binary).
  Result<std::string> run(const NetworkConfig& config, size_t index, Command command,
                          const RuntimeArgs& args, const std::string& prev_result,
                          std::chrono::milliseconds timeout) const;

  std::chrono::milliseconds timeout_;
  size_t max_output_;
};

}  // namespace sriovdra::cni
