#!/usr/bin/env bash
# Builds the tests' container runtime stand-in (tools/nri-runtime: containerd's NRI adaptation,
# pinned in its go.mod) once, into ~/.cache/sriov-dra/nri-runtime-<stamp>/nri-test-runtime, and
# prints that file's path. Go builds upstream code for the tests only; the product is C++.
#
# Usage: scripts/build-nri-runtime.sh [CACHE_ROOT]   (default $SRIOV_DRA_CACHE or ~/.cache/sriov-dra)
# A cold build takes about a minute and downloads about 30 MB of modules.
set -euo pipefail
module="$(cd "$(dirname "$0")/../tools/nri-runtime" && pwd)"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"
stamp="$(cat "$module/go.mod" "$module/go.sum" "$module/main.go" | sha256sum | cut -c1-16)"
out="$cache_root/nri-runtime-$stamp"
if [[ -x "$out/nri-test-runtime" ]]; then echo "$out/nri-test-runtime"; exit 0; fi

[[ -x /usr/local/go/bin/go ]] && PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "build-nri-runtime: Go (1.24 or newer) is not installed" >&2; exit 1; }
echo "build-nri-runtime: building the NRI test runtime into $out (first time only)" >&2
mkdir -p "$out"
staging="$(mktemp -d "$out/build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
cd "$module"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOCACHE="$staging/go-build-cache"
go build -trimpath -buildvcs=false -tags nri_no_wasm -ldflags "-s -w" \
  -o "$staging/nri-test-runtime" . >&2
mv "$staging/nri-test-runtime" "$out/nri-test-runtime"
echo "$out/nri-test-runtime"
