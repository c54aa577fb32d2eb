#!/usr/bin/env bash
# Builds the Operator Lifecycle Manager the OLM tests install our bundle with (tools/olm/go.mod:
# OLM's olm and catalog operators, and opm of the operator-registry release OLM requires) once,
# into ~/.cache/sriov-dra/olm-<stamp>/, with the CRDs OLM ships in crds/. Prints that directory.
# Go builds upstream code for the tests only; the product is C++.
#
# Usage: scripts/build-olm.sh [CACHE_ROOT]   (default $SRIOV_DRA_CACHE or ~/.cache/sriov-dra)
# A cold build takes about 3 minutes on 2 cores and downloads about 500 MB of modules.
set -euo pipefail
module="$(cd "$(dirname "$0")/../tools/olm" && pwd)"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"
stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
out="$cache_root/olm-$stamp"
programs=(olm catalog opm)
complete() {
  for p in "${programs[@]}"; do [[ -x "$out/bin/$p" ]] || return 1; done
  compgen -G "$out/crds/*.yaml" >/dev/null
}
if complete; then echo "$out"; exit 0; fi

[[ -x /usr/local/go/bin/go ]] && PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "build-olm: Go (1.24 or newer) is not installed" >&2; exit 1; }
echo "build-olm: building OLM and opm into $out (first time only)" >&2
start=$SECONDS
mkdir -p "$out"
staging="$(mktemp -d "$out/build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
cd "$module"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOCACHE="$staging/go-build-cache"
olm_module=github.com/operator-framework/operator-lifecycle-manager
mkdir -p "$staging/bin" "$staging/crds"
go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$staging/bin/" \
  "$olm_module/cmd/olm" "$olm_module/cmd/catalog" >&2
# opm without cgo: OpenPGP instead of gpgme, no device-mapper or btrfs storage drivers.
go build -trimpath -buildvcs=false -ldflags "-s -w" \
  -tags "containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper" \
  -o "$staging/bin/" github.com/operator-framework/operator-registry/cmd/opm >&2
olm_dir="$(go list -m -f '{{.Dir}}' "$olm_module")"
cp "$olm_dir"/deploy/chart/crds/*.yaml "$staging/crds/"
rm -rf "$out/bin" "$out/crds"
mv "$staging/bin" "$staging/crds" "$out/"
echo "build-olm: built in $((SECONDS - start)) s" >&2
echo "$out"
