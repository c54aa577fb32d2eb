#!/usr/bin/env bash
# The local demo: a real kube-apiserver + etcd on this machine, the operator under its own RBAC,
# simulated nodes, and the reference policies of the published GPU-NIC alignment experiment.
# Prints what the operator rendered for each node, then keeps the cluster running for you to
# explore with kubectl until Ctrl-C (or exits at once with --exit).
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

bold "Installing dependencies and building (first run: ~10 minutes; kube-apiserver is cached)"
scripts/install-deps.sh
apiserver="$(scripts/build-kube-apiserver.sh)"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build --target sriov-dra-operator sriov-dra

if [[ -d "$workdir" ]]; then stop_cluster; rm -rf "$workdir"; fi
bold "Starting a local control plane (etcd + kube-apiserver v1.20.2) in $workdir"
scripts/start-control-plane.sh "$apiserver" "$workdir" "$port"
trap stop_cluster EXIT
export KUBECONFIG="$workdir/kubeconfig"
admin_token="$(head -1 "$workdir/tokens.csv" | cut -d, -f1)"
server="https://127.0.0.1:$port"

bold "Installing the CRDs (and test-only resource.k8s.io CRDs: this API server predates DRA)"
kubectl apply -f crds/ -f tests/crds/ >/dev/null
kubectl wait --for condition=established --timeout=60s crd --all >/dev/null
kubectl create namespace "$ns" >/dev/null

bold "Starting sriov-dra-operator with exactly the permissions of config/rbac"
kubectl apply -n "$ns" -f config/rbac/role.yaml -f config/rbac/leader_election_role.yaml >/dev/null
kubectl create clusterrolebinding sriov-dra-operator --clusterrole=sriov-dra-operator \
  --user=sriov-dra-operator >/dev/null
for role in sriov-dra-operator sriov-dra-operator-leader-election; do
  kubectl create rolebinding -n "$ns" "$role" --role="$role" --user=sriov-dra-operator >/dev/null
done
build/bin/sriov-dra-operator --kubeconfig "$workdir/kubeconfig-operator" --namespace "$ns" \
  --leader-elect --webhook-port=0 \
  --health-probe-bind-address="127.0.0.1:$((port + 10))" \
  --metrics-bind-address="127.0.0.1:$((port + 11))" >"$workdir/operator.log" 2>&1 &
echo $! > "$workdir/operator.pid"
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$((port + 10))/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
echo "operator ready (log: $workdir/operator.log, metrics: http://127.0.0.1:$((port + 11))/metrics)"

bold "Registering simulated nodes: two A100 nodes labelled dra-sriov-cx6=true, one CPU node"
for node in a100-04 a100-06 cpu-01; do
  label='{}'
  [[ "$node" == a100-* ]] && label='{"dra-sriov-cx6": "true"}'
  kubectl apply -f - >/dev/null <<NODE
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$node", "labels": $label}}
NODE
done

bold "Applying the reference policies (config/samples, from the published experiment)"
kubectl apply -n "$ns" -f config/samples/sriovnetworknodepolicy-cx6-vfs.yaml \
  -f config/samples/sriovresourcepolicy-cx6-advertise-vfs.yaml \
  -f config/samples/deviceattributes-cx6-vfs-attrs.yaml

bold "Simulated agents report their hardware: 8 ConnectX-6 InfiniBand PFs x 1 VF per A100 node"
echo "(the node agent arrives in a later release; this writes the status it would report)"
for node in a100-04 a100-06 cpu-01; do
  for _ in $(seq 1 100); do
    kubectl get sriovnodestate -n "$ns" "$node" >/dev/null 2>&1 && break
    sleep 0.1
  done
  status=tests/fixtures/cluster/nodestate-a100-status.json
  [[ "$node" == cpu-* ]] && status=/dev/null
  [[ -s "$status" ]] || continue
  curl -sf --cacert "$workdir/certs/ca.crt" -H "Authorization: Bearer $admin_token" \
    -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary @"$status" \
    "$server/apis/sriovnetwork.k8snetworkplumbingwg.io/v1alpha1/namespaces/$ns/sriovnodestates/$node/status" \
    >/dev/null
done
for _ in $(seq 1 100); do
  n="$(kubectl get sriovnodestate -n "$ns" a100-06 -o jsonpath='{.spec.devices[*].name}' | wc -w)"
  [[ "$n" == 8 ]] && break
  sleep 0.2
done
sleep 1

bold "Policies: what each one matched (status written by the operator)"
kubectl get sriovnetworknodepolicies,sriovresourcepolicies,deviceattributes -n "$ns"
bold "One SriovNodeState per node"
kubectl get sriovnodestates -n "$ns"
for node in a100-04 a100-06 cpu-01; do
  bold "Rendered for $node: PFs to configure, then VFs to advertise"
  kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='{range .spec.interfaces[*]}  PF {.name} {.pciAddress}  numVfs={.numVfs} linkType={.linkType} resource={.vfGroups[0].resourceName} rdma={.vfGroups[0].isRdma}{"\n"}{end}'
  kubectl get sriovnodestate -n "$ns" "$node" -o jsonpath='{range .spec.devices[*]}  VF {.name}  resourceName={.attributes.sriovnetwork\.k8snetworkplumbingwg\.io/resourceName.string}{"\n"}{end}'
  [[ "$node" == cpu-* ]] && echo "  (nothing: no policy selects this node)"
done
bold "DeviceClasses the operator maintains"
kubectl get deviceclasses -o custom-columns='NAME:.metadata.name,SELECTOR:.spec.selectors[0].cel.expression'

bold "The same render offline, before applying anything: sriov-dra render"
echo "build/bin/sriov-dra render --node tests/fixtures/cluster/node-a100-04.yaml \\"
echo "    --state tests/fixtures/cluster/nodestate-a100-04.yaml -f config/samples/ -o yaml"

if ((keep_running)); then
  bold "The cluster keeps running. In another shell:"
  echo "  export KUBECONFIG=$KUBECONFIG"
  echo "  kubectl get sriovnodestates -n $ns; kubectl describe sriovnetworknodepolicy -n $ns cx6-vfs"
  echo "Press Ctrl-C to stop."
  while kill -0 "$(cat "$workdir/operator.pid")" 2>/dev/null; do sleep 1; done
  echo "the operator exited; see $workdir/operator.log" >&2
  exit 1
fi
