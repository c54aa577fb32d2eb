#!/usr/bin/env bash
# Builds the SR-IOV network operator (tools/sriov-network-operator/go.mod pins it), whose
# controller the migration test runs beside ours, once, into
# ~/.cache/sriov-dra/sriov-network-operator-<stamp>: bin/sriov-network-operator, the bindata/
# manifests it renders (it reads them from its working directory) and its CRDs (crds/). Prints that
# directory. Go builds upstream code for the tests only; the product is C++.
#
# Usage: scripts/build-sriov-network-operator.sh [CACHE_ROOT]
#        (default $SRIOV_DRA_CACHE or ~/.cache/sriov-dra)
# A cold build takes about 5 minutes on 2 cores and downloads its Go modules.
set -euo pipefail
module="$(cd "$(dirname "$0")/../tools/sriov-network-operator" && pwd)"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"
stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
out="$cache_root/sriov-network-operator-$stamp"
if [[ -x "$out/bin/sriov-network-operator" ]]; then echo "$out"; exit 0; fi

[[ -x /usr/local/go/bin/go ]] && PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || {
  echo "build-sriov-network-operator: Go (1.26 or newer) is not installed" >&2; exit 1; }
echo "build-sriov-network-operator: building into $out (first time only)" >&2
start=$SECONDS
mkdir -p "$out"
staging="$(mktemp -d "$out/build.XXXXXX")"
trap 'chmod -R u+w "$staging" 2>/dev/null; rm -rf "$staging"' EXIT
cd "$module"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOCACHE="$staging/go-build-cache"
pkg=github.com/k8snetworkplumbingwg/sriov-network-operator
mkdir -p "$staging/bin" "$staging/crds"
go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$staging/bin/" "$pkg" >&2
src="$(go list -m -f '{{.Dir}}' "$pkg")"
cp -r "$src/bindata" "$staging/"
cp "$src"/config/crd/bases/*.yaml "$staging/crds/"
chmod -R u+w "$staging/bindata" "$staging/crds"
rm -rf "$out/bin" "$out/bindata" "$out/crds"
mv "$staging/bin" "$staging/bindata" "$staging/crds" "$out/"
echo "build-sriov-network-operator: built in $((SECONDS - start)) s" >&2
echo "$out"
