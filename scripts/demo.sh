#!/usr/bin/env bash
# The local demo, on a real node: a control plane of the release pinned in tools/kubernetes
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) and this machine joined to it
# as a node (the kubelet of that release, containerd, Debian's runc and CNI plugins). The product
# is installed as a user installs it, with `kubectl apply` of manifests/install.yaml (the agent's
# fixture mounts changed by tests/node/overlay), as pods from the images scripts/build-images.sh
# builds here; the reference policies of the published GPU-NIC alignment experiment follow. Only
# the hardware is simulated: the agent sees an A100 server's sysfs (8 GPUs, 8 ConnectX-6 PFs,
# 4 PCIe roots) through the simulated kernel, an ifb interface stands in for each VF's netdev,
# and a stand-in of the NVIDIA driver publishes and prepares the GPUs. Shows the VFs, the
# ResourceSlices, which GPU and VF share a PCIe root, `sriov-dra topology|explain|simulate`, then a
# pod whose GPU and VF the real scheduler aligned, running, with the VF's interface inside it,
# and one that stays Pending with the scheduler's reason. Keeps the cluster running for kubectl
# until Ctrl-C (or stops at once with --exit). tools/demo_node.cpp holds the cluster.
#
# Usage: scripts/demo.sh [--exit]      (run as root on a fresh Debian bookworm machine)
set -euo pipefail
cd "$(dirname "$0")/.."
workdir="${SRIOV_DRA_DEMO_DIR:-/tmp/sriov-dra-demo}"
ns=sriov-dra
apps=llm
keep_running=1
[[ "${1:-}" == "--exit" ]] && keep_running=0

bold() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
stop_cluster() {
  [[ -f "$workdir/demo-node.pid" ]] || return 0
  kill "$(cat "$workdir/demo-node.pid")" 2>/dev/null || return 0
  echo "stopping the node and the control plane (demo-node undoes what they changed)"
  while kill -0 "$(cat "$workdir/demo-node.pid")" 2>/dev/null; do sleep 0.2; done
}
wait_for() {  # tries command...: retries for up to 120 s
  for _ in $(seq 1 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

bold "Installing dependencies and building (first run: ~30 minutes; upstream builds are cached)"
scripts/install-deps.sh
SRIOV_DRA_KUBERNETES="$(scripts/build-kubernetes.sh)"
SRIOV_DRA_CONTAINERD="$(scripts/build-containerd.sh)"
export SRIOV_DRA_KUBERNETES SRIOV_DRA_CONTAINERD
export PATH="$SRIOV_DRA_KUBERNETES/bin:$PATH"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build --target sriov-dra-operator sriov-dra-agent sriov-dra demo-node
scripts/build-images.sh --test-images | sed 's/^/  image: /'
SRIOV_DRA_IMAGES="$PWD/build/images"
export SRIOV_DRA_IMAGES

if [[ -d "$workdir" ]]; then stop_cluster; rm -rf "$workdir"; fi
mkdir -p "$workdir"
bold "The cluster: $(kubectl version --client | head -1 | sed 's/Client Version: /Kubernetes /'), this machine as its node, the product as pods"
export KUBECONFIG="$workdir/kubeconfig"
# Its steps on stdout; the logs of the harness's own parts (the GPU plugin) on stderr.
build/bin/demo-node --kubeconfig "$KUBECONFIG" >"$workdir/demo-node.log" \
  2>"$workdir/demo-node.stderr" &
echo $! >"$workdir/demo-node.pid"
trap stop_cluster EXIT
shown=0
until grep -qx ready "$workdir/demo-node.log"; do
  if ! kill -0 "$(cat "$workdir/demo-node.pid")" 2>/dev/null; then
    tail -n 60 "$workdir/demo-node.stderr" >&2
    echo "demo-node failed; its logs: $workdir/demo-node.log, demo-node.stderr" >&2
    exit 1
  fi
  lines=$(wc -l <"$workdir/demo-node.log")
  ((lines > shown)) && sed -n "$((shown + 1)),${lines}p" "$workdir/demo-node.log" && shown=$lines
  sleep 0.5
done
sed -n "$((shown + 1)),\$p" "$workdir/demo-node.log" | grep -vx ready || true
node="$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')"
kubectl get nodes -o wide

bold "The product, installed with kubectl apply: the operator Deployment and the agent DaemonSet"
kubectl get deployments,daemonsets,pods -n "$ns" -o wide
echo "  images (built by scripts/build-images.sh, no registry; the agent is the one on the simulated kernel):"
kubectl get pods -n "$ns" -o jsonpath='{range .items[*]}{"    "}{.metadata.name}{": "}{.spec.containers[0].image}{"\n"}{end}'
echo "  the agent's DRA plugin registered with the real kubelet:"
ls /var/lib/sriov-dra-node-test/kubelet/plugins_registry | sed 's/^/    /'

bold "The agent made the VFs (through the simulated kernel) and publishes them"
grep -h "sriov_numvfs" /var/lib/sriov-dra-node-test/fixture/simulated-kernel.log | head -4 |
  sed 's/^/  kernel: /'
kubectl get resourceslices \
  -o custom-columns='NAME:.metadata.name,NODE:.spec.nodeName,DRIVER:.spec.driver,DEVICES:.spec.devices[*].name'

bold "Policies: what each one matched (status written by the operator)"
kubectl get sriovnetworknodepolicies,sriovresourcepolicies,deviceattributes -n "$ns"
bold "The node's SriovNodeState (spec by the operator, status by the agent)"
kubectl get sriovnodestates -n "$ns" -o wide
bold "$node: GPUs and advertised VFs by PCIe root"
kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='{range .status.alignment.gpus[*]}  GPU {.gpu} on {.pcieRoot}: VFs on the same root {.sameRootVfs}, same switch {.sameSwitchVfs}{"\n"}{end}'
kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='{range .status.interfaces[*]}  PF {.name} {.pciAddress} on {.pcieRoot} (NUMA {.numaNode}): {.numVfs} of {.totalvfs} VFs{"\n"}{end}'

bold "VF 0000-c7-00-1 as the scheduler sees it (the reference driver's attributes)"
kubectl get resourceslices -o jsonpath='{range .items[*].spec.devices[?(@.name=="0000-c7-00-1")]}{.attributes}{end}' |
  tr ',' '\n' | sed 's/^/  /'
echo
bold "DeviceClasses the operator maintains"
kubectl get deviceclasses -o custom-columns='NAME:.metadata.name,SELECTOR:.spec.selectors[0].cel.expression'

bold "sriov-dra topology --node $node: the PCIe tree, what is published and allocated"
build/bin/sriov-dra topology --node "$node" | sed 's/^/  /'

bold "sriov-dra explain: where would the aligned GPU + VF claim of the experiment fit, and with what"
build/bin/sriov-dra explain -f config/samples/aligned-resourceclaimtemplate.yaml | sed 's/^/  /' || true

bold "sriov-dra simulate: 128 such pods on 16 servers, placed three ways"
build/bin/sriov-dra simulate --nodes 16 --pods 128 | sed 's/^/  /'

bold "A pod with the experiment's claim template gpu-nic-aligned: scheduled, prepared, attached, Running"
pod() {  # name template
  kubectl apply -n "$apps" -f - >/dev/null <<POD
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"terminationGracePeriodSeconds": 1,
          "resourceClaims": [{"name": "gpu-nic", "resourceClaimTemplateName": "$2"}],
          "containers": [{"name": "inference", "image": "sriov-dra.local/busybox:test",
                          "command": ["/bin/busybox", "sleep", "inf"],
                          "resources": {"claims": [{"name": "gpu-nic"}]}}]}}
POD
}
pod inference-0 gpu-nic-aligned
kubectl wait -n "$apps" --for=condition=Ready pod/inference-0 --timeout=120s >/dev/null ||
  echo "  (not Running yet; kubectl describe pod -n $apps inference-0)"
claim="$(kubectl get pod -n "$apps" inference-0 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')"
echo "  kube-scheduler allocated claim $claim (request, driver, device -> its pcieRoot):"
kubectl get resourceclaim -n "$apps" "$claim" \
  -o jsonpath='{range .status.allocation.devices.results[*]}{.request} {.driver} {.pool} {.device}{"\n"}{end}' |
  while read -r request driver pool device; do
    root="$(kubectl get resourceslices --field-selector "spec.driver=$driver,spec.nodeName=$pool" \
      -o jsonpath="{range .items[*].spec.devices[?(@.name==\"$device\")]}{.attributes.resource\.kubernetes\.io/pcieRoot.string}{end}")"
    printf '    %-4s %-38s %-14s -> %s\n' "$request" "$driver" "$device" "$root"
  done
echo "  the kubelet called our NodePrepareResources; containerd applied our CDI edits and called our"
echo "  NRI plugin, which ran the NAD's CNI: our ib-sriov plugin (installed by the agent's init"
echo "  container), with host-local for IPv4 and IPv6. In the pod:"
kubectl exec -n "$apps" inference-0 -- ip addr show dev net1 | sed 's/^/    /'
kubectl exec -n "$apps" inference-0 -- ls /dev/infiniband | tr '\n' ' ' | sed 's/^/    \/dev\/infiniband: /'
echo
kubectl exec -n "$apps" inference-0 -- /bin/busybox env | grep '^SRIOVNETWORK' | sed 's/^/    CDI: /'
echo "  the claim's status.devices (ours):"
kubectl get resourceclaim -n "$apps" "$claim" -o jsonpath='{range .status.devices[?(@.driver=="sriovnetwork.k8snetworkplumbingwg.io")]}    {.device}: {.networkData}{"\n"}{end}'

bold "A pod no root of this node can serve (three GPUs and three VFs under one root) stays Pending"
sed -e 's/name: gpu-nic-aligned/name: three-pairs-one-root/' -e 's/count: 1/count: 3/' \
  config/samples/aligned-resourceclaimtemplate.yaml | kubectl apply -n "$apps" -f - >/dev/null
pod inference-big three-pairs-one-root
unschedulable() {
  [[ "$(kubectl get pod -n "$apps" inference-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" == Unschedulable ]]
}
wait_for unschedulable || true
kubectl get pods -n "$apps" -o wide
echo "  kube-scheduler: $(kubectl get pod -n "$apps" inference-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
big_claim="$(kubectl get pod -n "$apps" inference-big -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')"
bold "sriov-dra explain $apps/$big_claim: why"
build/bin/sriov-dra explain "$apps/$big_claim" | sed 's/^/  /' || true

bold "Try it offline first: the same render the operator does"
echo "  build/bin/sriov-dra render --node tests/fixtures/cluster/node-a100-04.yaml \\"
echo "      --state tests/fixtures/cluster/nodestate-a100-04.yaml -f config/samples/"

if ((keep_running)); then
  bold "The cluster keeps running. In another shell:"
  echo "  export KUBECONFIG=$KUBECONFIG PATH=$SRIOV_DRA_KUBERNETES/bin:\$PATH"
  echo "  kubectl get pods -A -o wide; kubectl logs -n $ns daemonset/sriov-dra-agent"
  echo "  kubectl get sriovnodestates,sriovnetworknodepolicies -n $ns; kubectl get resourceslices"
  echo "  build/bin/sriov-dra topology; build/bin/sriov-dra report"
  echo "  kubectl delete pod -n $apps inference-0   # the VF's interface goes back to the host"
  echo "Press Ctrl-C to stop."
  while kill -0 "$(cat "$workdir/demo-node.pid")" 2>/dev/null; do sleep 1; done
  echo "demo-node exited; see $workdir/demo-node.log" >&2
  exit 1
fi
