#!/usr/bin/env bash
# Builds helm, which the chart's tests install deployment/sriov-dra-operator with
# (tools/helm/go.mod pins it), once, into ~/.cache/sriov-dra/helm-<stamp>/bin/helm. Prints that
# directory. Go builds upstream code for the tests only; the product is C++.
#
# Usage: scripts/build-helm.sh [CACHE_ROOT]   (default $SRIOV_DRA_CACHE or ~/.cache/sriov-dra)
# A cold build takes about 3 minutes on 2 cores and downloads its Go modules.
set -euo pipefail
module="$(cd "$(dirname "$0")/../tools/helm" && pwd)"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"
stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
out="$cache_root/helm-$stamp"
if [[ -x "$out/bin/helm" ]]; then echo "$out"; exit 0; fi

[[ -x /usr/local/go/bin/go ]] && PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "build-helm: Go (1.26 or newer) is not installed" >&2; exit 1; }
echo "build-helm: building helm into $out (first time only)" >&2
start=$SECONDS
mkdir -p "$out"
staging="$(mktemp -d "$out/build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
cd "$module"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOCACHE="$staging/go-build-cache"
mkdir -p "$staging/bin"
go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$staging/bin/" helm.sh/helm/v4/cmd/helm >&2
rm -rf "$out/bin"
mv "$staging/bin" "$out/"
echo "build-helm: built in $((SECONDS - start)) s" >&2
echo "$out"
