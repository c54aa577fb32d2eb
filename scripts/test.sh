#!/usr/bin/env bash
# The whole test suite, from a fresh Debian bookworm machine (as root) or a warm checkout:
# installs the Debian packages, builds the pinned Kubernetes release (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl) from Go modules once (cached in
# ~/.cache/sriov-dra), builds the project and runs every test with ctest.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `-R informer`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
SRIOV_DRA_KUBERNETES="$(scripts/build-kubernetes.sh)"
export SRIOV_DRA_KUBERNETES

build_dir="${SRIOV_DRA_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$build_dir"
jobs="$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure --timeout 900 -j "$jobs" "$@"
