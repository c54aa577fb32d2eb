#!/usr/bin/env bash
# The local demo: a real kube-apiserver + etcd on this machine, the operator and one node agent
# per simulated server (each on its own fixture sysfs tree with a simulated kernel), all under
# their own RBAC, and the reference policies of the published GPU-NIC alignment experiment.
# Shows VFs being created and ResourceSlices appearing, prints per node the GPUs, the VFs and
# which share a PCIe root, then keeps the cluster running for kubectl until Ctrl-C (or exits at
# once with --exit).
#
# Usage: scripts/demo.sh [--exit]      (run as root on a fresh Debian bookworm machine)
set -euo pipefail
cd "$(dirname "$0")/.."
workdir="${SRIOV_DRA_DEMO_DIR:-/tmp/sriov-dra-demo}"
port="${SRIOV_DRA_DEMO_PORT:-16443}"
ns=sriov-dra
keep_running=1
[[ "${1:-}" == "--exit" ]] && keep_running=0

bold() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
stop_cluster() {
  for pid_file in "$workdir"/*.pid; do
    [[ -f "$pid_file" ]] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
}
wait_for() {  # tries command...: retries for up to 30 s
  for _ in $(seq 1 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

bold "Installing dependencies and building (first run: ~10 minutes; kube-apiserver is cached)"
scripts/install-deps.sh
apiserver="$(scripts/build-kube-apiserver.sh)"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build --target sriov-dra-operator sriov-dra-agent sriov-dra

if [[ -d "$workdir" ]]; then stop_cluster; rm -rf "$workdir"; fi
bold "Starting a local control plane (etcd + kube-apiserver v1.20.2) in $workdir"
scripts/start-control-plane.sh "$apiserver" "$workdir" "$port"
trap stop_cluster EXIT
export KUBECONFIG="$workdir/kubeconfig"

bold "Installing the CRDs (and test-only resource.k8s.io CRDs: this API server predates DRA)"
kubectl apply -f config/crd/bases/ -f tests/crds/ >/dev/null
kubectl wait --for condition=established --timeout=60s crd --all >/dev/null
kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f config/rbac/role.yaml -f config/rbac/leader_election_role.yaml \
  -f config/rbac/agent_role.yaml >/dev/null
kubectl create clusterrolebinding sriov-dra-operator --clusterrole=sriov-dra-operator \
  --user=sriov-dra-operator >/dev/null
kubectl create clusterrolebinding sriov-dra-agent --clusterrole=sriov-dra-agent \
  --user=sriov-dra-agent >/dev/null
for role in sriov-dra-operator sriov-dra-operator-leader-election; do
  kubectl create rolebinding -n "$ns" "$role" --role="$role" --user=sriov-dra-operator >/dev/null
done
kubectl create rolebinding -n "$ns" sriov-dra-agent --role=sriov-dra-agent \
  --user=sriov-dra-agent >/dev/null

bold "Starting sriov-dra-operator (permissions: exactly config/rbac)"
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
  kubectl apply -f - >/dev/null <<NODE
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$node", "labels": $label}}
NODE
  build/bin/sriov-dra fixture --topology "$topology" --out "$workdir/sysfs-$node" >/dev/null
  build/bin/sriov-dra-agent --kubeconfig "$workdir/kubeconfig-agent" --namespace "$ns" \
    --node-name "$node" --sysfs-root "$workdir/sysfs-$node" --simulate-kernel \
    --state-dir "$workdir/state-$node" --resync-period 10 \
    --registry-dir "$workdir/kubelet-$node/plugins_registry" \
    --plugins-dir "$workdir/kubelet-$node/plugins" --cdi-root "$workdir/kubelet-$node/cdi" \
    --device-info-dir "$workdir/kubelet-$node/devinfo" \
    --health-probe-bind-address="127.0.0.1:$((port + 20 + i))" >"$workdir/agent-$node.log" 2>&1 &
  echo $! > "$workdir/agent-$node.pid"
  echo "  $node: $topology sysfs tree in $workdir/sysfs-$node (agent log: agent-$node.log)"
  echo "    kubelet plugin sockets and CDI specs under $workdir/kubelet-$node"
  i=$((i + 1))
done

bold "Applying the reference policies (config/samples, from the published experiment)"
kubectl apply -n "$ns" -f config/samples/sriovnetworknodepolicy-cx6-vfs.yaml \
  -f config/samples/sriovresourcepolicy-cx6-advertise-vfs.yaml \
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

bold "Try it offline first: the same render the operator does"
echo "  build/bin/sriov-dra render --node tests/fixtures/cluster/node-a100-04.yaml \\"
echo "      --state tests/fixtures/cluster/nodestate-a100-04.yaml -f config/samples/"

if ((keep_running)); then
  bold "The cluster keeps running. In another shell:"
  echo "  export KUBECONFIG=$KUBECONFIG"
  echo "  kubectl get sriovnodestates,sriovnetworknodepolicies -n $ns; kubectl get resourceslices"
  echo "  build/bin/sriov-dra topology; build/bin/sriov-dra explain -f config/samples/aligned-resourceclaimtemplate.yaml"
  echo "  kubectl patch sriovnetworknodepolicy -n $ns cx6-vfs --type merge -p '{\"spec\":{\"numVfs\":4}}'"
  echo "Press Ctrl-C to stop."
  while kill -0 "$(cat "$workdir/operator.pid")" 2>/dev/null; do sleep 1; done
  echo "the operator exited; see $workdir/operator.log" >&2
  exit 1
fi
