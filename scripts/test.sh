#!/usr/bin/env bash
# The whole test suite, from a fresh Debian bookworm machine (as root) or a warm checkout:
# installs the Debian packages, builds the pinned Kubernetes release (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kubelet) from Go modules once (cached in
# ~/.cache/sriov-dra), containerd (tools/containerd), the NRI test runtime (containerd's NRI
# adaptation, tools/nri-runtime), Operator Lifecycle Manager (tools/olm) and helm (tools/helm),
# prepares the real-kernel tests' VM (scripts/build-kernel-vm.sh: QEMU, Debian's kernel), builds
# the project and its images (scripts/build-images.sh, for the real-node tests), runs every test
# with ctest, and fuzzes every input an attacker controls for 20 s each (scripts/fuzz.sh, clang, in build-fuzz).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `-R informer`.
#
# `scripts/test.sh --sanitize [ctest args]`: the unit and host tests (no control plane, the fuzz
# seed replays among them; CMake target unit_and_host_tests) built with
# AddressSanitizer and UndefinedBehaviorSanitizer in build-sanitize; any finding fails them.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  scripts/install-deps.sh
  build_dir="${SRIOV_DRA_SANITIZE_BUILD_DIR:-build-sanitize}"
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSRIOV_DRA_SANITIZE=ON \
    -DSRIOV_DRA_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build_dir" --target unit_and_host_tests
  export ASAN_OPTIONS="detect_leaks=1"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/scripts/ubsan.supp"
  exec ctest --test-dir "$build_dir" --output-on-failure --timeout 900 -L "unit|host" "$@"
fi

scripts/install-deps.sh
SRIOV_DRA_KUBERNETES="$(scripts/build-kubernetes.sh)"
SRIOV_DRA_NRI_RUNTIME="$(scripts/build-nri-runtime.sh)"
SRIOV_DRA_OLM="$(scripts/build-olm.sh)"
SRIOV_DRA_CONTAINERD="$(scripts/build-containerd.sh)"
SRIOV_DRA_KERNEL_VM="$(scripts/build-kernel-vm.sh)"
SRIOV_DRA_HELM="$(scripts/build-helm.sh)"
SRIOV_DRA_SNO="$(scripts/build-sriov-network-operator.sh)"
export SRIOV_DRA_KUBERNETES SRIOV_DRA_NRI_RUNTIME SRIOV_DRA_OLM SRIOV_DRA_CONTAINERD SRIOV_DRA_KERNEL_VM
export SRIOV_DRA_HELM SRIOV_DRA_SNO

build_dir="${SRIOV_DRA_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$build_dir"
scripts/build-images.sh --build-dir "$build_dir" --test-images >/dev/null
SRIOV_DRA_IMAGES="$(realpath "$build_dir")/images"
export SRIOV_DRA_IMAGES
jobs="$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure --timeout 900 -j "$jobs" "$@"
# Every input a component reads from someone it does not control (admission reviews, API objects,
# CEL, policy YAML, VfConfig, checkpoints, kubeconfigs, sysfs, netlink, a NAD's CNI configuration
# and a plugin's result, the runtime's NRI bytes) is fuzzed for a bounded time on every full run,
# so a new finding fails it; every target's seeds ran above as unit tests.
if (($# == 0)); then scripts/fuzz.sh 20; fi
