#pragma once
// helm (built from its Go module by scripts/build-helm.sh, $SRIOV_DRA_HELM) for the chart's
// tests and the real node's Helm install.
#include <string>
#include <vector>

#include "base/process.h"

namespace sriovdra::testing {

// $SRIOV_DRA_HELM/bin/helm, or "" when the variable is unset.
std::string helmBinary();

// Runs helm (120 s at most) with its caches and configuration in `home`, against `kubeconfig`
// (none: a path that does not exist, so nothing reaches a cluster by accident).
Result<ProcessOutput> runHelm(const std::string& home, const std::vector<std::string>& args,
                              const std::string& kubeconfig = "");

}  // namespace sriovdra::testing
