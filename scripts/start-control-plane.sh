#!/usr/bin/env bash
# Starts a local control plane of the pinned Kubernetes release (from scripts/build-kubernetes.sh)
# on 127.0.0.1: etcd, kube-apiserver (TLS from a fresh CA, token users, RBAC, service-account
# signing), kube-controller-manager (without the node-lifecycle controller: the demo's nodes have
# no kubelet) and kube-scheduler, the last two as system:kube-controller-manager and
# system:kube-scheduler with client certificates and the roles the API server bootstraps.
# Writes WORKDIR/kubeconfig (admin, system:masters); other identities are ServiceAccounts with
# tokens from `kubectl create token`.
# Usage: scripts/start-control-plane.sh KUBERNETES_DIR WORKDIR [PORT]
# Stop with: kill $(cat WORKDIR/*.pid)
set -euo pipefail
bin="$1/bin"; dir="$2"; port="${3:-16443}"
etcd_port=$((port + 1)); peer_port=$((port + 2))
mkdir -p "$dir/certs"; dir="$(cd "$dir" && pwd)"
certs="$dir/certs"

# A CA, a serving certificate for 127.0.0.1/localhost, a client CA and service-account keys.
ca() {  # name
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
    -subj "/CN=sriov-dra-demo-$1" -keyout "$certs/$1.key" -out "$certs/$1.crt" 2>/dev/null
}
cert() {  # ca name subject extensions
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$3" \
    -keyout "$certs/$2.key" -out "$certs/$2.csr" 2>/dev/null
  printf '%b' "$4" >"$certs/$2.ext"
  openssl x509 -req -in "$certs/$2.csr" -CA "$certs/$1.crt" -CAkey "$certs/$1.key" \
    -CAcreateserial -days 365 -extfile "$certs/$2.ext" -out "$certs/$2.crt" 2>/dev/null
}
ca ca
ca client-ca
cert ca serving "/CN=kube-apiserver" 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
for component in kube-controller-manager kube-scheduler; do
  cert client-ca "$component" "/CN=system:$component" 'extendedKeyUsage=clientAuth\n'
done
openssl genrsa -out "$certs/sa.key" 2048 2>/dev/null
openssl rsa -in "$certs/sa.key" -pubout -out "$certs/sa.pub" 2>/dev/null

admin_token="$(openssl rand -hex 16)"
echo "$admin_token,admin,admin,system:masters" > "$dir/tokens.csv"

"$bin/etcd" --data-dir "$dir/etcd" --name demo --log-level=warn \
  --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "demo=http://127.0.0.1:$peer_port" >"$dir/etcd.log" 2>&1 &
echo $! > "$dir/etcd.pid"

"$bin/kube-apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address=127.0.0.1 --secure-port="$port" --advertise-address=10.0.0.1 \
  --tls-cert-file="$certs/serving.crt" --tls-private-key-file="$certs/serving.key" \
  --client-ca-file="$certs/client-ca.crt" \
  --token-auth-file="$dir/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$certs/sa.pub" \
  --service-account-signing-key-file="$certs/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --disable-admission-plugins=ServiceAccount \
  --cert-dir="$dir/apiserver-certs" >"$dir/apiserver.log" 2>&1 &
echo $! > "$dir/apiserver.pid"

cluster() {
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: demo\n  cluster:\n'
  printf '    server: https://127.0.0.1:%s\n    certificate-authority: %s\n' "$port" "$certs/ca.crt"
  printf 'contexts:\n- name: demo\n  context: {cluster: demo, user: %s}\n' "$1"
  printf 'current-context: demo\nusers:\n- name: %s\n  user:\n' "$1"
}
kubeconfig() {  # user token
  cluster "$1"
  printf '    token: %s\n' "$2"
}
kubeconfig admin "$admin_token" > "$dir/kubeconfig"
for component in kube-controller-manager kube-scheduler; do
  { cluster "$component"
    printf '    client-certificate: %s\n    client-key: %s\n' "$certs/$component.crt" "$certs/$component.key"
  } > "$dir/kubeconfig-$component"
done
chmod 600 "$dir"/kubeconfig*

ready=0
for _ in $(seq 1 240); do
  if curl -sf --cacert "$certs/ca.crt" -H "Authorization: Bearer $admin_token" \
       "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
    ready=1; break
  fi
  sleep 0.5
done
((ready)) || { echo "kube-apiserver did not become ready; see $dir/apiserver.log" >&2; exit 1; }

component() {  # name secure-port args...
  local name="$1" secure_port="$2"; shift 2
  "$bin/$name" --kubeconfig="$dir/kubeconfig-$name" \
    --authentication-kubeconfig="$dir/kubeconfig-$name" \
    --authorization-kubeconfig="$dir/kubeconfig-$name" \
    --bind-address=127.0.0.1 --secure-port="$secure_port" --cert-dir="$dir/$name-certs" \
    --leader-elect=false "$@" >"$dir/$name.log" 2>&1 &
  echo $! > "$dir/$name.pid"
}
component kube-controller-manager $((port + 3)) --controllers='*,-node-lifecycle-controller' \
  --use-service-account-credentials=true --service-account-private-key-file="$certs/sa.key" \
  --root-ca-file="$certs/ca.crt"
component kube-scheduler $((port + 4))
