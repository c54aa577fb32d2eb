#!/usr/bin/env bash
# The local demo: a real Kubernetes control plane on this machine (etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler of the release pinned in tools/kubernetes), the
# operator and one node agent per simulated server (each on its own fixture sysfs tree with a
# simulated kernel), all under their own ServiceAccounts and RBAC, and the reference policies of
# the published GPU-NIC alignment experiment. Shows VFs being created and ResourceSlices
# appearing, the GPUs, the VFs and which share a PCIe root, then a pod whose GPU and VF the real
# scheduler aligned and one that stays Pending, with the scheduler's reason and `sriov-dra
# explain`; then, as kubelet and containerd would (demo-kubelet prepares the claim, containerd's
# NRI code in tools/nri-runtime starts the sandbox), the agent attaching the pod's VF with CNI:
# its interface in the pod's network namespace and the claim status saying so. Keeps the cluster
# running for kubectl until Ctrl-C (or exits at once with --exit).
#
# Usage: scripts/demo.sh [--exit]      (run as root on a fresh Debian bookworm machine)
set -euo pipefail
cd "$(dirname "$0")/.."
workdir="${SRIOV_DRA_DEMO_DIR:-/tmp/sriov-dra-demo}"
port="${SRIOV_DRA_DEMO_PORT:-16443}"
ns=sriov-dra
apps=gpu-apps
keep_running=1
[[ "${1:-}" == "--exit" ]] && keep_running=0

bold() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
stop_cluster() {
  for pid_file in "$workdir"/*.pid; do
    [[ -f "$pid_file" ]] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
  ip netns del sriov-dra-demo-pod 2>/dev/null || true
  [[ -n "${demo_netdev:-}" ]] && ip link del "$demo_netdev" 2>/dev/null || true
}
wait_for() {  # tries command...: retries for up to 60 s
  for _ in $(seq 1 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

bold "Installing dependencies and building (first run: ~25 minutes; Kubernetes is cached after)"
scripts/install-deps.sh
kubernetes="$(scripts/build-kubernetes.sh)"
nri_runtime="$(scripts/build-nri-runtime.sh)"
export PATH="$kubernetes/bin:$PATH"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build --target sriov-dra-operator sriov-dra-agent sriov-dra demo-kubelet

if [[ -d "$workdir" ]]; then stop_cluster; rm -rf "$workdir"; fi
bold "Starting a local control plane ($(kubectl version --client | head -1 | sed 's/Client Version: /Kubernetes /'): etcd, kube-apiserver, kube-controller-manager, kube-scheduler) in $workdir"
scripts/start-control-plane.sh "$kubernetes" "$workdir" "$port"
trap stop_cluster EXIT
export KUBECONFIG="$workdir/kubeconfig"
# A kubeconfig for a ServiceAccount token: the admin's, with the token as its credentials.
token_kubeconfig() {  # file token
  cp "$KUBECONFIG" "$1"
  kubectl --kubeconfig "$1" config set-credentials admin --token="$2" >/dev/null
}

bold "Installing the CRDs and config/rbac (resource.k8s.io/v1 is served by kube-apiserver itself)"
kubectl apply -f config/crd/bases/ >/dev/null
# NetworkAttachmentDefinitions come with Multus on a real cluster; the demo installs just the CRD.
kubectl apply -f tests/fixtures/crds/network-attachment-definitions.yaml >/dev/null
kubectl wait --for condition=established --timeout=60s crd --all >/dev/null
kubectl create namespace "$ns" >/dev/null
kubectl apply -k config/rbac >/dev/null
kubectl api-resources --api-group=resource.k8s.io

bold "Starting sriov-dra-operator (permissions: exactly config/rbac)"
token_kubeconfig "$workdir/kubeconfig-operator" \
  "$(kubectl create token -n "$ns" sriov-dra-operator --duration=24h)"
build/bin/sriov-dra-operator --kubeconfig "$workdir/kubeconfig-operator" --namespace "$ns" \
  --leader-elect --webhook-port=0 \
  --health-probe-bind-address="127.0.0.1:$((port + 10))" \
  --metrics-bind-address="127.0.0.1:$((port + 11))" --metrics-secure=false \
  >"$workdir/operator.log" 2>&1 &
echo $! > "$workdir/operator.pid"
wait_for curl -sf "http://127.0.0.1:$((port + 10))/readyz"
echo "  ready; log $workdir/operator.log, metrics http://127.0.0.1:$((port + 11))/metrics"

bold "Simulated servers: two A100 nodes (8 GPUs, 8 ConnectX-6 IB PFs, 4 PCIe roots), one E810 node"
i=0
for entry in a100-04:a100-reference a100-06:a100-reference e810-01:e810-ethernet; do
  node="${entry%%:*}"; topology="${entry##*:}"
  label='{}'
  [[ "$node" == a100-* ]] && label='{"dra-sriov-cx6": "true"}'
  # A node without a kubelet: what a kubelet would report, so the scheduler can place pods.
  kubectl apply -f - >/dev/null <<NODE
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$node", "labels": $label}}
NODE
  kubectl patch node "$node" --subresource=status --type=merge -p \
    '{"status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"},
                 "capacity": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}' >/dev/null
  # New nodes are tainted not-ready until a kubelet reports in; there is none, so lift it.
  kubectl patch node "$node" --type=merge -p '{"spec": {"taints": null}}' >/dev/null
  # The agent's token is bound to its node, as a DaemonSet pod's is: the API server knows which
  # node's claims it may update.
  token_kubeconfig "$workdir/kubeconfig-agent-$node" "$(kubectl create token -n "$ns" \
    sriov-dra-agent --bound-object-kind=Node --bound-object-name="$node" --duration=24h)"
  build/bin/sriov-dra fixture --topology "$topology" --out "$workdir/sysfs-$node" >/dev/null
  # The node's container runtime side of NRI (containerd's own code), driven through a FIFO that a
  # sleeping process keeps open.
  mkdir -p "$workdir/nri-$node"
  mkfifo "$workdir/nri-$node/commands"
  "$nri_runtime" --socket "$workdir/nri-$node/nri.sock" <"$workdir/nri-$node/commands" \
    >"$workdir/nri-$node/answers" 2>"$workdir/nri-$node/runtime.log" &
  echo $! > "$workdir/nri-$node.pid"
  sleep infinity >"$workdir/nri-$node/commands" &
  echo $! > "$workdir/nri-$node-fifo.pid"
  # host-device stands in for the SR-IOV CNI (which needs a real VF): allowed explicitly, as an
  # administrator would (the default allows the SR-IOV CNIs only).
  build/bin/sriov-dra-agent --kubeconfig "$workdir/kubeconfig-agent-$node" --namespace "$ns" \
    --node-name "$node" --sysfs-root "$workdir/sysfs-$node" --simulate-kernel \
    --state-dir "$workdir/state-$node" --resync-period 10 \
    --registry-dir "$workdir/kubelet-$node/plugins_registry" \
    --plugins-dir "$workdir/kubelet-$node/plugins" --cdi-root "$workdir/kubelet-$node/cdi" \
    --device-info-dir "$workdir/kubelet-$node/devinfo" \
    --nri-socket "$workdir/nri-$node/nri.sock" --cni-bin-dir /usr/lib/cni \
    --cni-plugins host-device --cni-ipam-plugins static \
    --health-probe-bind-address="127.0.0.1:$((port + 20 + i))" >"$workdir/agent-$node.log" 2>&1 &
  echo $! > "$workdir/agent-$node.pid"
  echo "  $node: $topology sysfs tree in $workdir/sysfs-$node (agent log: agent-$node.log)"
  echo "    kubelet plugin sockets and CDI specs under $workdir/kubelet-$node"
  i=$((i + 1))
done

bold "The reference node policy alone (config/samples): VFs are created, none is advertised"
kubectl apply -n "$ns" -f config/samples/sriovnetworknodepolicy-cx6-vfs.yaml
vfs_created() {
  [[ "$(kubectl get sriovnodestate -n "$ns" a100-04 \
        -o jsonpath='{range .status.interfaces[*]}{.Vfs[*].pciAddress}{" "}{end}' | wc -w)" -ge 8 ]]
}
wait_for vfs_created || echo "  (still converging; see the agent logs)"
echo "  a100-04 has $(kubectl get sriovnodestate -n "$ns" a100-04 \
  -o jsonpath='{range .status.interfaces[*]}{.Vfs[*].pciAddress}{" "}{end}' | wc -w) VFs;" \
  "ResourceSlices advertise $(kubectl get resourceslices \
  -o jsonpath='{.items[*].spec.devices[*].name}' | wc -w) devices"
echo "  (as the SR-IOV DRA driver: without a SriovResourcePolicy nothing is advertised; the"
echo "   operator's --advertise-node-policy-vfs advertises a node policy's VF groups as well)"

bold "Adding the reference SriovResourcePolicy and DeviceAttributes"
kubectl apply -n "$ns" -f config/samples/sriovresourcepolicy-cx6-advertise-vfs.yaml \
  -f config/samples/deviceattributes-cx6-vfs-attrs.yaml

bold "The agents create the VFs (through the simulated kernel) and publish ResourceSlices"
slice_devices() {
  [[ "$(kubectl get resourceslices -o jsonpath='{.items[*].spec.devices[*].name}' | wc -w)" -ge 16 ]]
}
wait_for slice_devices || echo "  (still converging; see the agent logs)"
grep -h "sriov_numvfs" "$workdir/sysfs-a100-04/simulated-kernel.log" | sed 's/^/  a100-04 kernel: /'
kubectl get resourceslices \
  -o custom-columns='NAME:.metadata.name,NODE:.spec.nodeName,POOL:.spec.pool.name,DEVICES:.spec.devices[*].name'

bold "Policies: what each one matched (status written by the operator)"
kubectl get sriovnetworknodepolicies,sriovresourcepolicies,deviceattributes -n "$ns"
bold "One SriovNodeState per node (status written by its agent)"
kubectl get sriovnodestates -n "$ns" -o wide
for node in a100-04 e810-01; do
  bold "$node: GPUs and advertised VFs by PCIe root"
  kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='{range .status.alignment.gpus[*]}  GPU {.gpu} on {.pcieRoot}: VFs on the same root {.sameRootVfs}, same switch {.sameSwitchVfs}{"\n"}{end}'
  kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='{range .status.interfaces[*]}  PF {.name} {.pciAddress} on {.pcieRoot} (NUMA {.numaNode}): {.numVfs} of {.totalvfs} VFs{"\n"}{end}'
  kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='  a shared pcieRoot implies a shared switch on this node: {.status.alignment.pcieRootImpliesSwitch}{"\n"}'
done
echo "  (e810-01 has no GPU and no policy selects it: nothing is configured or advertised)"

bold "VF 0000-c7-00-1 on a100-04 as the scheduler sees it (the reference driver's attributes)"
kubectl get resourceslice a100-04-sriovnetwork-0 \
  -o jsonpath='{range .spec.devices[?(@.name=="0000-c7-00-1")].attributes}{@}{end}' | tr ',' '\n' | sed 's/^/  /'
echo
bold "DeviceClasses the operator maintains"
kubectl get deviceclasses -o custom-columns='NAME:.metadata.name,SELECTOR:.spec.selectors[0].cel.expression'

bold "GPUs: slices as the NVIDIA DRA driver publishes them (simulated from what the agents found)"
kubectl apply -f - >/dev/null <<'CLASS'
{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
 "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}
CLASS
for node in a100-04 a100-06; do
  devices=""
  i=0
  while read -r bdf root; do
    [[ -n "$bdf" ]] || continue
    devices+="${devices:+,}{\"name\":\"gpu-$i\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"productName\":{\"string\":\"NVIDIA A100-SXM4-80GB\"},\"resource.kubernetes.io/pciBusID\":{\"string\":\"$bdf\"},\"resource.kubernetes.io/pcieRoot\":{\"string\":\"$root\"}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}"
    i=$((i + 1))
  done < <(kubectl get sriovnodestate -n "$ns" "$node" \
             -o jsonpath='{range .status.gpus[*]}{.pciAddress} {.pcieRoot}{"\n"}{end}')
  kubectl apply -f - >/dev/null <<SLICE
{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
 "metadata": {"name": "$node-gpu.nvidia.com"},
 "spec": {"driver": "gpu.nvidia.com", "nodeName": "$node",
          "pool": {"name": "$node", "generation": 1, "resourceSliceCount": 1}, "devices": [$devices]}}
SLICE
  echo "  $node: $i GPUs published"
done

bold "sriov-dra topology --node a100-04: the PCIe tree, what is published and allocated"
build/bin/sriov-dra topology --node a100-04 | sed 's/^/  /'

bold "sriov-dra explain: where would the aligned GPU + VF claim of the experiment fit, and with what"
build/bin/sriov-dra explain -f config/samples/aligned-resourceclaimtemplate.yaml | sed 's/^/  /' || true

bold "sriov-dra simulate: 128 such pods on 16 servers, placed three ways"
build/bin/sriov-dra simulate --nodes 16 --pods 128 | sed 's/^/  /'

bold "The real scheduler at work: a pod with the aligned claim template of the experiment"
kubectl create namespace "$apps" >/dev/null
kubectl apply -n "$apps" -f config/samples/aligned-resourceclaimtemplate.yaml >/dev/null
# The same template asking for three GPUs and three VFs under one root: every root of these
# servers has two of each, so no node can satisfy it.
sed -e 's/name: gpu-nic-aligned/name: three-pairs-one-root/' -e 's/count: 1/count: 3/' \
  config/samples/aligned-resourceclaimtemplate.yaml | kubectl apply -n "$apps" -f - >/dev/null
pod() {  # name template
  kubectl apply -n "$apps" -f - >/dev/null <<POD
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"resourceClaims": [{"name": "gpu-nic", "resourceClaimTemplateName": "$2"}],
          "containers": [{"name": "inference", "image": "registry.k8s.io/pause:3.10",
                          "resources": {"claims": [{"name": "gpu-nic"}]}}]}}
POD
}
pod inference-0 gpu-nic-aligned
scheduled() { [[ -n "$(kubectl get pod -n "$apps" "$1" -o jsonpath='{.spec.nodeName}')" ]]; }
wait_for scheduled inference-0 || echo "  (not scheduled yet; see $workdir/kube-scheduler.log)"
claim="$(kubectl get pod -n "$apps" inference-0 -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')"
node="$(kubectl get pod -n "$apps" inference-0 -o jsonpath='{.spec.nodeName}')"
echo "  kube-scheduler bound inference-0 to $node; the resourceclaim controller made claim $claim"
echo "  kube-scheduler allocated (request, driver, device -> its pcieRoot):"
kubectl get resourceclaim -n "$apps" "$claim" \
  -o jsonpath='{range .status.allocation.devices.results[*]}{.request} {.driver} {.pool} {.device}{"\n"}{end}' |
  while read -r request driver pool device; do
    root="$(kubectl get resourceslices --field-selector "spec.driver=$driver,spec.nodeName=$pool" \
      -o jsonpath="{range .items[*].spec.devices[?(@.name==\"$device\")]}{.attributes.resource\.kubernetes\.io/pcieRoot.string}{end}")"
    printf '    %-4s %-38s %-14s -> %s\n' "$request" "$driver" "$device" "$root"
  done

bold "The VF reaches the pod: kubelet prepares the claim, the runtime starts the sandbox (NRI), the agent runs CNI"
nri() {  # node json: sends one command to the node's NRI runtime, prints its answer
  local answers="$workdir/nri-$1/answers" n
  n=$(wc -l <"$answers")
  echo "$2" >"$workdir/nri-$1/commands"
  for _ in $(seq 1 600); do (($(wc -l <"$answers") > n)) && break; sleep 0.1; done
  tail -n 1 "$answers"
}
vf="$(kubectl get resourceclaim -n "$apps" "$claim" -o jsonpath='{.status.allocation.devices.results[?(@.request=="vf")].device}')"
vf_pci="$(echo "$vf" | sed -E 's/^([0-9a-f]{4})-([0-9a-f]{2})-([0-9a-f]{2})-([0-7])$/\1:\2:\3.\4/')"
demo_netdev="$(kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath="{.status.interfaces[*].Vfs[?(@.pciAddress==\"$vf_pci\")].name}")"
# On this machine an ifb interface of the simulated VF's netdev name stands in for the VF, and a
# network namespace for the pod's; the NAD the claim template names moves it with host-device.
ip link add "$demo_netdev" type ifb
ip netns add sriov-dra-demo-pod
kubectl apply -n "$apps" -f - >/dev/null <<NAD
{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
 "metadata": {"name": "cx6-vf"},
 "spec": {"config": "{\"cniVersion\":\"1.0.0\",\"name\":\"cx6-vf\",\"type\":\"host-device\",\"device\":\"$demo_netdev\",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.56.217.10/24\"}]}}"}}
NAD
echo "  the claim's VF: $vf ($vf_pci, netdev $demo_netdev on $node)"
claim_uid="$(kubectl get resourceclaim -n "$apps" "$claim" -o jsonpath='{.metadata.uid}')"
build/bin/demo-kubelet --registry-dir "$workdir/kubelet-$node/plugins_registry" \
  --claim "$apps/$claim/$claim_uid" | sed 's/^/  demo-kubelet: /'
echo "  runtime: $(nri "$node" '{"op":"wait-plugins","count":1,"timeout_ms":30000}') (the agent's NRI plugin registered)"
pod_uid="$(kubectl get pod -n "$apps" inference-0 -o jsonpath='{.metadata.uid}')"
sandbox='{"id":"sandbox-inference-0","uid":"'"$pod_uid"'","name":"inference-0","namespace":"'"$apps"'","netns":"/var/run/netns/sriov-dra-demo-pod"}'
echo "  RunPodSandbox: $(nri "$node" '{"op":"run","pod":'"$sandbox"'}')"
echo "  in the pod's network namespace:"
ip -n sriov-dra-demo-pod -br addr show dev net1 | sed 's/^/    /'
echo "  the claim's status.devices (ours):"
kubectl get resourceclaim -n "$apps" "$claim" -o jsonpath='{range .status.devices[?(@.driver=="sriovnetwork.k8snetworkplumbingwg.io")]}    {.device}: {.networkData}{"\n"}{end}'

bold "A pod no node can serve aligned stays Pending, with the scheduler's reason"
pod inference-big three-pairs-one-root
unschedulable() {
  [[ "$(kubectl get pod -n "$apps" inference-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" == Unschedulable ]]
}
wait_for unschedulable || true
kubectl get pods -n "$apps" -o wide
echo "  kube-scheduler: $(kubectl get pod -n "$apps" inference-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
big_claim="$(kubectl get pod -n "$apps" inference-big -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')"
bold "sriov-dra explain $apps/$big_claim: why, node by node"
build/bin/sriov-dra explain "$apps/$big_claim" | sed 's/^/  /' || true

bold "Try it offline first: the same render the operator does"
echo "  build/bin/sriov-dra render --node tests/fixtures/cluster/node-a100-04.yaml \\"
echo "      --state tests/fixtures/cluster/nodestate-a100-04.yaml -f config/samples/"

if ((keep_running)); then
  bold "The cluster keeps running. In another shell:"
  echo "  export KUBECONFIG=$KUBECONFIG"
  echo "  kubectl get sriovnodestates,sriovnetworknodepolicies -n $ns; kubectl get resourceslices"
  echo "  build/bin/sriov-dra topology; build/bin/sriov-dra report"
  echo "  kubectl get pods,resourceclaims -n $apps -o wide"
  echo "  kubectl patch sriovnetworknodepolicy -n $ns cx6-vfs --type merge -p '{\"spec\":{\"numVfs\":4}}'"
  echo "Press Ctrl-C to stop."
  while kill -0 "$(cat "$workdir/operator.pid")" 2>/dev/null; do sleep 1; done
  echo "the operator exited; see $workdir/operator.log" >&2
  exit 1
fi
