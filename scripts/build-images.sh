#!/usr/bin/env bash
# Builds the operator, agent and CLI images from this tree without a container registry or a
# base image: each image is one layer holding the stripped binary and exactly the shared
# libraries it loads (from the Debian packages install-deps.sh installs), written as an OCI image
# layout archive (index.json, oci-layout, blobs/) that `ctr images import` and
# `skopeo copy oci-archive:...` read. No shell, no package manager in the images.
#
# Usage: scripts/build-images.sh [--build-dir DIR] [--out DIR] [--registry R] [--tag T]
#                                [--test-images]
#   --build-dir  a CMake build of this tree (default: build; built here if needed)
#   --out        where the archives go (default: <build-dir>/images)
#   --registry, --tag  the names in manifests/install.yaml by default: quay.io/sriov-dra, v0.1.0
#   --test-images      also sriov-dra.local/busybox:test (Debian's busybox-static), which the
#                      real-node tests use as the sandbox (pause) image and as workload image,
#                      and sriov-dra.local/sriov-dra-agent-simulated:test, the agent on the
#                      simulated kernel (the product's images never carry the simulation)
# Prints one line per archive: PATH NAME. Push one with, e.g.,
#   skopeo copy oci-archive:build/images/sriov-dra-agent.tar docker://registry.example/sriov-dra-agent:v0.1.0
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build out="" registry=quay.io/sriov-dra tag=v0.1.0 test_images=0
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --registry) registry="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --test-images) test_images=1; shift ;;
    *) echo "build-images: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
out="${out:-$build_dir/images}"
mkdir -p "$out"
[[ -f "$build_dir/build.ninja" ]] || cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=(sriov-dra-operator sriov-dra-agent sriov-dra sriov ib-sriov)
((test_images)) && targets+=(sriov-dra-agent-simulated cni-simulated)
cmake --build "$build_dir" --target "${targets[@]}" >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Copies a file into the root filesystem ROOT at the same path; symbolic links are kept as links
# and their targets copied too (the dynamic loader is /lib64/ld-linux-x86-64.so.2 -> ...).
copy_in() {
  local root="$1" path="$2" target
  [[ -e "$root$path" || -L "$root$path" ]] && return 0
  mkdir -p "$root$(dirname "$path")"
  if [[ -L "$path" ]]; then
    target="$(readlink "$path")"
    ln -s "$target" "$root$path"
    [[ "$target" == /* ]] || target="$(dirname "$path")/$target"
    copy_in "$root" "$(realpath -s "$target")"
  else
    cp "$path" "$root$path"
  fi
}

# The shared libraries ELF loads, as the dynamic loader resolves them on this machine.
libraries_of() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# Writes blob FILE into the layout under $layout/blobs/sha256/ and prints its digest and size.
add_blob() {
  local layout="$1" file="$2" digest
  digest="$(sha256 "$file")"
  cp "$file" "$layout/blobs/sha256/$digest"
  echo "$digest $(stat -c %s "$file")"
}

# oci_image NAME REF ROOTFS USER ENTRYPOINT...: the archive $out/NAME.tar of image REF.
oci_image() {
  local name="$1" ref="$2" rootfs="$3" user="$4"; shift 4
  local layout="$work/$name-layout" entrypoint="" arg
  for arg in "$@"; do entrypoint+="${entrypoint:+,}\"$arg\""; done
  mkdir -p "$layout/blobs/sha256"
  # Reproducible: sorted names, fixed owner and time, no gzip timestamp.
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -C "$rootfs" -cf "$work/$name-layer.tar" .
  gzip -n -6 <"$work/$name-layer.tar" >"$work/$name-layer.tar.gz"
  local diff_id layer layer_size config config_size manifest manifest_size
  diff_id="$(sha256 "$work/$name-layer.tar")"
  read -r layer layer_size < <(add_blob "$layout" "$work/$name-layer.tar.gz")
  printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"User\":\"$user\",\
\"Entrypoint\":[$entrypoint],\"Env\":[\"PATH=/usr/bin:/bin\"],\"WorkingDir\":\"/\"},\
\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff_id\"]},\
\"history\":[{\"created_by\":\"scripts/build-images.sh\"}]}" >"$work/$name-config.json"
  read -r config config_size < <(add_blob "$layout" "$work/$name-config.json")
  printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\
\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:$config\",\"size\":$config_size},\
\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$layer\",\"size\":$layer_size}]}" \
    >"$work/$name-manifest.json"
  read -r manifest manifest_size < <(add_blob "$layout" "$work/$name-manifest.json")
  printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\
\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$manifest\",\"size\":$manifest_size,\
\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"},\
\"annotations\":{\"io.containerd.image.name\":\"$ref\",\"org.opencontainers.image.ref.name\":\"${ref##*:}\"}}]}" \
    >"$layout/index.json"
  printf '%s' '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$out/$name.tar" .
  echo "$out/$name.tar $ref"
}

# binary_image NAME REF BINARY USER [PROGRAM [EXTRA...]]: the build's PROGRAM (default BINARY)
# as /usr/bin/BINARY, its libraries, /tmp, and the users of the manifests; each EXTRA host file
# at its path, with the libraries it loads when it is a program; an EXTRA written SOURCE=PATH is
# the build's program SOURCE, stripped, at PATH (with its libraries, if it loads any).
binary_image() {
  local name="$1" ref="$2" binary="$3" user="$4" program="${5:-$3}" rootfs="$work/$1-rootfs" lib
  local extra
  mkdir -p "$rootfs/usr/bin" "$rootfs/tmp" "$rootfs/etc"
  chmod 1777 "$rootfs/tmp"
  strip --strip-unneeded -o "$rootfs/usr/bin/$binary" "$build_dir/bin/$program"
  for lib in $(libraries_of "$build_dir/bin/$program"); do copy_in "$rootfs" "$lib"; done
  for extra in "${@:6}"; do
    if [[ "$extra" == *=* ]]; then
      mkdir -p "$rootfs$(dirname "${extra#*=}")"
      strip --strip-unneeded -o "$rootfs${extra#*=}" "$build_dir/bin/${extra%%=*}"
      if ldd "$build_dir/bin/${extra%%=*}" >/dev/null 2>&1; then
        for lib in $(libraries_of "$build_dir/bin/${extra%%=*}"); do copy_in "$rootfs" "$lib"; done
      fi
      continue
    fi
    copy_in "$rootfs" "$extra"
    [[ -x "$extra" ]] || continue
    for lib in $(libraries_of "$extra"); do copy_in "$rootfs" "$lib"; done
  done
  printf 'root:x:0:0:root:/:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/usr/sbin/nologin\n' \
    >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
  oci_image "$name" "$ref" "$rootfs" "$user" "/usr/bin/$binary"
}
# A product image, named as manifests/install.yaml names it.
product_image() { binary_image "$1" "$registry/$1:$tag" "$2" "$3" "$2" "${@:4}"; }

# What the agent runs to read and set Mellanox firmware (Debian's mstflint): mstconfig and the
# parameter database it opens.
mstconfig=(/usr/bin/mstconfig /usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db)
for f in "${mstconfig[@]}"; do
  [[ -e "$f" ]] || { echo "build-images: $f is missing (install-deps.sh installs mstflint)" >&2; exit 1; }
done

product_image sriov-dra-operator sriov-dra-operator 65532:65532
# The agent runs as root (it writes sysfs and runs CNI plugins); see config/agent/daemonset.yaml.
# It carries the sriov and ib-sriov CNI plugins (static programs) for its init container to
# install on the node.
cni_plugins=(sriov=/usr/lib/sriov-dra/cni/sriov ib-sriov=/usr/lib/sriov-dra/cni/ib-sriov)
product_image sriov-dra-agent sriov-dra-agent 0:0 "${mstconfig[@]}" "${cni_plugins[@]}"
product_image sriov-dra sriov-dra 65532:65532

if ((test_images)); then
  # The agent on the simulated kernel (tools/agent_simulated.cpp), where sriov-dra-agent is, with
  # the CNI plugins on the simulated kernel (tools/cni_simulated.cpp) where the plugins are.
  binary_image sriov-dra-agent-simulated sriov-dra.local/sriov-dra-agent-simulated:test \
    sriov-dra-agent 0:0 sriov-dra-agent-simulated \
    cni-simulated=/usr/lib/sriov-dra/cni/sriov cni-simulated=/usr/lib/sriov-dra/cni/ib-sriov
  busybox=/bin/busybox
  linked="$(ldd "$busybox" 2>&1 || true)"
  if [[ ! -x "$busybox" || "$linked" != *"not a dynamic executable"* ]]; then
    echo "build-images: $busybox is not Debian's busybox-static (install-deps.sh installs it)" >&2
    exit 1
  fi
  rootfs="$work/busybox-rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/tmp"
  cp "$busybox" "$rootfs/bin/busybox"
  for applet in sh sleep ip cat ls ps; do ln -s busybox "$rootfs/bin/$applet"; done
  oci_image busybox sriov-dra.local/busybox:test "$rootfs" 0:0 /bin/busybox sleep inf
fi
