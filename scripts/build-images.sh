#!/usr/bin/env bash
# Builds the operator, agent and CLI images from this tree (Dockerfile, multi-stage on
# debian:bookworm-slim) and tags them REGISTRY/NAME:TAG.
# Usage: scripts/build-images.sh [REGISTRY] [TAG]   (defaults: quay.io/sriov-dra v0.1.0)
# Needs docker (or podman as docker) and access to Debian's package mirrors.
set -euo pipefail
cd "$(dirname "$0")/.."
registry="${1:-quay.io/sriov-dra}"
tag="${2:-v0.1.0}"
engine="${CONTAINER_ENGINE:-docker}"
for target in operator agent cli; do
  name="sriov-dra-$target"
  [[ "$target" == cli ]] && name="sriov-dra"
  echo "building $registry/$name:$tag"
  "$engine" build --target "$target" -t "$registry/$name:$tag" .
done
echo "push with: for i in sriov-dra-operator sriov-dra-agent sriov-dra; do $engine push $registry/\$i:$tag; done"
echo "then point config/default (images) or manifests/install.yaml at them"
