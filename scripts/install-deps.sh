#!/usr/bin/env bash
# Installs every Debian bookworm package the build, the tests and the demo need.
# Idempotent; needs root. Packages already present are not touched.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config git curl ca-certificates openssl
  clang-format clang-tidy
  # libraries (ARCHITECTURE.md §5)
  libboost1.81-dev libboost-url1.81-dev libssl-dev rapidjson-dev libyaml-cpp-dev
  prometheus-cpp-dev catch2 libcli11-dev libbenchmark-dev libre2-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # a real peer for tests: the Prometheus server that scrapes the operator and an agent
  # (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl are built from Go
  # modules by build-kubernetes.sh)
  prometheus
  # the host tests create network interfaces (veth) with ip, to check our netlink against the
  # running kernel
  iproute2
  # real CNI plugins (host-device, static, tuning) for the pod attach tests
  containernetworking-plugins
  # the real node (tests/node): runc under containerd, busybox for the sandbox and workload
  # images (scripts/build-images.sh --test-images), iptables for the kubernetes Service's one NAT
  # rule (no kube-proxy)
  runc busybox-static iptables
  # mstconfig, which the agent image carries to change Mellanox firmware (docs/agent.md)
  mstflint
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if ((EUID != 0)); then
  echo "install-deps: missing packages (${missing[*]}); run this script as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}" >&2
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
