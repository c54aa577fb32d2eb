#!/usr/bin/env bash
# Builds the upstream control plane the tests and the demo run against (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, etcd) and the kubelet of the real-node tests
# from the Go modules pinned in tools/kubernetes/go.mod, once, into
# ~/.cache/sriov-dra/kubernetes-<version>/bin.
# Prints that directory (the one holding bin/). Go is used for nothing else.
#
# Usage: scripts/build-kubernetes.sh [CACHE_ROOT]
#   CACHE_ROOT defaults to $SRIOV_DRA_CACHE or ~/.cache/sriov-dra.
# A cold build takes 5 to 10 minutes on 2 cores (printed at the end) and downloads about 800 MB
# of modules into Go's module cache; later runs are instant.
# Change the pinned release with tools/kubernetes/pin.sh.
set -euo pipefail
module="$(cd "$(dirname "$0")/../tools/kubernetes" && pwd)"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"

version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2; exit}' "$module/go.mod")"
[[ "$version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || { echo "build-kubernetes: no k8s.io/kubernetes in $module/go.mod" >&2; exit 1; }
minor="${BASH_REMATCH[1]}"
out="$cache_root/kubernetes-$version"
# The pin is the go.mod + go.sum pair: a re-pin of the same release (another etcd, say) rebuilds.
stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
programs=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet etcd)
complete() {
  [[ "$(cat "$out/stamp" 2>/dev/null)" == "$stamp" ]] || return 1
  for p in "${programs[@]}"; do [[ -x "$out/bin/$p" ]] || return 1; done
}
if complete; then echo "$out"; exit 0; fi

[[ -x /usr/local/go/bin/go ]] && PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "build-kubernetes: Go (1.26 or newer) is not installed" >&2; exit 1; }
echo "build-kubernetes: building Kubernetes $version and etcd into $out (first time only)" >&2
start=$SECONDS
mkdir -p "$out"
staging="$(mktemp -d "$out/bin.XXXXXX")"
trap 'rm -rf "$staging"' EXIT

ldflags="-s -w"
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done

cd "$module"
# A build cache of its own (about 4 GB), removed once the binaries are in place.
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOCACHE="$out/go-build-cache"
go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$staging/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
  k8s.io/kubernetes/cmd/kubelet >&2
go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$staging/etcd" go.etcd.io/etcd/server/v3 >&2

rm -rf "$out/bin"
chmod 755 "$staging"
mv "$staging" "$out/bin"
echo "$stamp" >"$out/stamp"
rm -rf "$GOCACHE"
echo "build-kubernetes: built in $((SECONDS - start)) s" >&2
echo "$out"
