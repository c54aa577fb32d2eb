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
  prometheus-cpp-dev catch2 libcli11-dev libbenchmark-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # real peers for tests: etcd (kube-apiserver is built by build-kube-apiserver.sh), the
  # Prometheus server that scrapes the operator and an agent
  etcd-server prometheus
)
# kubectl: Debian's kubernetes-client unless some kubectl (1.20 or newer) is already installed.
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)

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
