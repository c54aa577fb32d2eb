#!/usr/bin/env bash
# Builds the container runtime of the real-node tests (containerd, ctr, containerd-shim-runc-v2,
# pinned in tools/containerd/go.mod) once, into ~/.cache/sriov-dra/containerd-<stamp>/bin, and
# prints that bin directory. runc and the CNI plugins come from Debian (install-deps.sh). Go builds
# upstream code for the tests only; the product is C++.
#
# Usage: scripts/build-containerd.sh [CACHE_ROOT]   (default $SRIOV_DRA_CACHE or ~/.cache/sriov-dra)
# A cold build takes about 5 minutes on 2 cores and downloads about 300 MB of modules.
set -euo pipefail
module="$(cd "$(dirname "$0")/../tools/containerd" && pwd)"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"
stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
out="$cache_root/containerd-$stamp/bin"
programs=(containerd ctr containerd-shim-runc-v2)
complete() {
  for p in "${programs[@]}"; do [[ -x "$out/$p" ]] || return 1; done
}
if complete; then echo "$out"; exit 0; fi

[[ -x /usr/local/go/bin/go ]] && PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "build-containerd: Go (1.26 or newer) is not installed" >&2; exit 1; }
echo "build-containerd: building containerd into $out (first time only)" >&2
start=$SECONDS
mkdir -p "$(dirname "$out")"
staging="$(mktemp -d "$(dirname "$out")/build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
cd "$module"
version="$(awk '$1 == "github.com/containerd/containerd/v2" {print $2; exit}' go.mod)"
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$version"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOCACHE="$staging/go-build-cache"
# The build tags of containerd's own Makefile for a static build without btrfs.
go build -trimpath -buildvcs=false -tags "no_btrfs urfave_cli_no_docs" -ldflags "$ldflags" \
  -o "$staging/bin/" github.com/containerd/containerd/v2/cmd/containerd \
  github.com/containerd/containerd/v2/cmd/ctr >&2
go build -trimpath -buildvcs=false -tags "no_btrfs urfave_cli_no_docs no_grpc" -ldflags "$ldflags" \
  -o "$staging/bin/" github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 >&2
rm -rf "$out"
mv "$staging/bin" "$out"
echo "build-containerd: built in $((SECONDS - start)) s" >&2
echo "$out"
