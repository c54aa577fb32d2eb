#!/usr/bin/env bash
# Prepares the real-kernel tests' VM once (ctest label `kernel`, tests/kernel/): QEMU 10 from
# Debian bookworm-backports (its emulated Intel 82576, `-device igb`, implements SR-IOV), Debian's
# guest kernel unpacked (not installed) with the kernel decompressed to an ELF vmlinux (it boots
# about 3 s faster under TCG), and a base initramfs: busybox-static, the igb, igbvf, vfio-pci
# and soft-RoCE (rdma_rxe) modules, and an /init that loads them, runs /probe/run when the test
# appended one (a second cpio archive, see tests/kernel/vm.h) and powers the guest off. Cached in
# ~/.cache/sriov-dra/kernel-vm-<kernel version>-<stamp>; prints that directory
# (vmlinux, base.cpio, kernel-version).
#
# Usage: scripts/build-kernel-vm.sh [CACHE_ROOT]   (as root the first time: apt-get)
# A cold run takes about a minute (70 MB kernel package, QEMU from the archive).
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cache_root="${1:-${SRIOV_DRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sriov-dra}}"

# Modules in load order (each needs the ones before it): igb and vfio-pci, then soft-RoCE (rxe
# needs the crc32 hash it asks the crypto API for).
modules=(dca i2c-algo-bit igb igbvf vfio vfio_iommu_type1 vfio_virqfd irqbypass vfio-pci-core
         vfio-pci crc32_generic ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe)

need_packages=()
qemu-system-x86_64 -device help 2>/dev/null | grep -q '"igb"' || need_packages+=(qemu)
command -v cpio >/dev/null || need_packages+=(cpio)
[[ -x /bin/busybox ]] && /bin/busybox --list 2>/dev/null | grep -qx insmod || need_packages+=(busybox)
if ((${#need_packages[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "build-kernel-vm: missing ${need_packages[*]}; run once as root to install them" >&2
    exit 1
  fi
  # Bookworm's own QEMU (7.2) has no igb device; bookworm-backports has QEMU 10.
  if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
    printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" \
      "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
      >/etc/apt/sources.list.d/bookworm-backports.sources
  fi
  echo "build-kernel-vm: installing QEMU (bookworm-backports), busybox-static and cpio" >&2
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends -t bookworm-backports qemu-system-x86 >/dev/null
  apt-get install -y -qq --no-install-recommends busybox-static cpio xz-utils >/dev/null
fi

# The newest 6.1 kernel the archive has (linux-image-amd64 names it; the package lists are
# fetched once when this machine has none).
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}
kernel_pkg="$(kernel_package)"
if [[ -z "$kernel_pkg" && $(id -u) -eq 0 ]]; then
  apt-get update -qq >&2
  kernel_pkg="$(kernel_package)"
fi
[[ -n "$kernel_pkg" ]] || { echo "build-kernel-vm: no linux-image-amd64 in the apt lists" >&2; exit 1; }
version="${kernel_pkg#linux-image-}"
stamp="$(sha256sum <"$self" | cut -c1-12)"
out="$cache_root/kernel-vm-$version-$stamp"
if [[ -f "$out/base.cpio" && -f "$out/vmlinux" ]]; then echo "$out"; exit 0; fi

echo "build-kernel-vm: preparing the guest ($kernel_pkg) in $out (first time only)" >&2
mkdir -p "$cache_root"
staging="$(mktemp -d "$cache_root/kernel-vm.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
(cd "$staging" && apt-get download -qq "$kernel_pkg" 2>/dev/null) ||
  (cd "$staging" && apt-get update -qq && apt-get download -qq "$kernel_pkg")
dpkg-deb -x "$staging"/"$kernel_pkg"_*.deb "$staging/pkg"

# The bzImage carries the kernel xz-compressed after its setup code: decompress it from the
# xz stream's magic (xz complains about the bytes after the stream; the ELF it wrote is whole).
bzimage="$staging/pkg/boot/vmlinuz-$version"
offset="$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$bzimage" | head -1 | cut -d: -f1)"
tail -c +"$((offset + 1))" "$bzimage" | xz -dc >"$staging/vmlinux" 2>/dev/null || true
[[ "$(head -c 4 "$staging/vmlinux" | od -An -c | tr -d ' ')" == "177ELF" ]] ||
  { echo "build-kernel-vm: could not decompress $bzimage" >&2; exit 1; }

root="$staging/initramfs"
mkdir -p "$root"/{bin,dev,proc,sys,run,tmp,modules}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
for m in "${modules[@]}"; do
  ko="$(find "$staging/pkg/lib/modules/$version" -name "$m.ko*" | head -1)"
  [[ -n "$ko" ]] || { echo "build-kernel-vm: module $m not in $kernel_pkg" >&2; exit 1; }
  case "$ko" in
    *.xz) xz -dc "$ko" >"$root/modules/$m.ko" ;;
    *) cp "$ko" "$root/modules/$m.ko" ;;
  esac
done
{
  echo '#!/bin/sh'
  echo '/bin/busybox --install -s /bin'
  echo 'mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev'
  echo "for m in ${modules[*]}; do insmod /modules/\$m.ko || echo \"sriov-dra-vm: insmod \$m failed\"; done"
  echo 'ip link set lo up'
  echo 'if [ -x /probe/run ]; then /probe/run; else echo "sriov-dra-vm: no probe"; fi'
  echo 'echo "sriov-dra-vm: exit $?"'
  echo 'poweroff -f'
} >"$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$staging/base.cpio"
echo "$version" >"$staging/kernel-version"
mkdir -p "$out"
mv "$staging/vmlinux" "$staging/base.cpio" "$staging/kernel-version" "$out/"
# Guests of other kernels or of earlier versions of this script are not used again.
find "$cache_root" -maxdepth 1 -name 'kernel-vm-*' ! -path "$out" -exec rm -rf {} +
echo "$out"
