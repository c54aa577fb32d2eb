#!/usr/bin/env bash
# Builds a real kube-apiserver v1.20.2 for the integration tests from Debian's `kubernetes`
# source package (Go 1.19 from Debian), once, into a cache directory. Prints the binary's path.
#
# Usage: scripts/build-kube-apiserver.sh [CACHE_DIR]
#   CACHE_DIR defaults to $SRIOV_DRA_CACHE/envtest or ~/.cache/sriov-dra/envtest.
# The first run needs root (apt-get) and takes ~5 minutes on 2 cores; later runs are instant.
set -euo pipefail
cache="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}/envtest}"
bin="$cache/bin/kube-apiserver"
if [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi
mkdir -p "$cache/bin"
work="$(mktemp -d "$cache/src.XXXXXX")"
trap 'rm -rf "$work"' EXIT

export DEBIAN_FRONTEND=noninteractive
# Source packages come from the same Debian archive as the binaries.
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >/etc/apt/sources.list.d/debian-src.sources
  else
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/debian-src.list
  fi
fi
apt-get update -qq >&2
# Go, rsync (used by `make generated_files`), and the two Go libraries whose copies vendored
# in kubernetes 1.20 crash on Go >= 1.18 (reflect2 1.0.1 map iteration).
apt-get install -y -qq --no-install-recommends golang-go rsync make \
  golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev >&2

cd "$work"
apt-get source --download-only kubernetes >&2
mkdir k && tar xzf kubernetes_*.orig.tar.gz -C k
ksrc="$(echo "$work"/k/kubernetes-*)"
for lib in github.com/modern-go/reflect2 github.com/json-iterator/go; do
  rm -rf "$ksrc/vendor/$lib"
  cp -r "/usr/share/gocode/src/$lib" "$ksrc/vendor/$lib"
  rm -f "$ksrc/vendor/$lib/go.mod"
done

# Kubernetes 1.20 builds in GOPATH mode and needs its generated code (openapi, deepcopy, ...).
gopath="$work/gopath"
mkdir -p "$gopath/src/k8s.io"
ln -sfn "$ksrc" "$gopath/src/k8s.io/kubernetes"
cd "$gopath/src/k8s.io/kubernetes"
export GOCACHE="$work/gocache"
make generated_files >&2
ldflags=""
for pkg in component-base/version client-go/pkg/version; do
  v=k8s.io/kubernetes/vendor/k8s.io/$pkg
  ldflags+=" -X $v.gitVersion=v1.20.2 -X $v.gitMajor=1 -X $v.gitMinor=20 -X $v.gitTreeState=archive"
done
GO111MODULE=off GOPATH="$gopath" CGO_ENABLED=0 go build -ldflags "$ldflags" \
  -o "$bin.tmp" ./cmd/kube-apiserver >&2
mv "$bin.tmp" "$bin"
echo "$bin"
