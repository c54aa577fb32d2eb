#include "support/helm.h"

#include <chrono>
#include <cstdlib>

namespace sriovdra::testing {

std::string helmBinary() {
  const char* env = std::getenv("SRIOV_DRA_HELM");
  return env == nullptr || *env == '\0' ? "" : std::string(env) + "/bin/helm";
}

Result<ProcessOutput> runHelm(const std::string& home, const std::vector<std::string>& args,
                              const std::string& kubeconfig) {
  ProcessSpec spec;
  spec.argv = {helmBinary()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"HELM_CACHE_HOME", home + "/cache"},
              {"HELM_CONFIG_HOME", home + "/config"},
              {"HELM_DATA_HOME", home + "/data"},
              {"KUBECONFIG", kubeconfig.empty() ? home + "/no-cluster" : kubeconfig}};
  return runProcess(spec, std::chrono::seconds(120), size_t{64} << 20);
}

}  // namespace sriovdra::testing
