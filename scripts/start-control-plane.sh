#!/usr/bin/env bash
# Starts etcd and kube-apiserver (from scripts/build-kube-apiserver.sh) on 127.0.0.1 with TLS
# (a fresh CA), token users, RBAC and service-account signing, and writes WORKDIR/kubeconfig.
# Users: admin (system:masters), sriov-dra-operator and sriov-dra-agent (no permissions until
# bound to their roles).
# Usage: scripts/start-control-plane.sh KUBE_APISERVER WORKDIR [PORT]
# Stop with: kill $(cat WORKDIR/*.pid)
set -euo pipefail
apiserver="$1"; dir="$2"; port="${3:-16443}"
etcd_port=$((port + 1)); peer_port=$((port + 2))
mkdir -p "$dir/certs"; dir="$(cd "$dir" && pwd)"

# A CA and a serving certificate for 127.0.0.1/localhost; service-account signing keys.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
  -subj "/CN=sriov-dra-demo-ca" -keyout "$dir/certs/ca.key" -out "$dir/certs/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=kube-apiserver" \
  -keyout "$dir/certs/serving.key" -out "$dir/certs/serving.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > "$dir/certs/ext"
openssl x509 -req -in "$dir/certs/serving.csr" -CA "$dir/certs/ca.crt" -CAkey "$dir/certs/ca.key" \
  -CAcreateserial -days 365 -extfile "$dir/certs/ext" -out "$dir/certs/serving.crt" 2>/dev/null
openssl genrsa -out "$dir/certs/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/certs/sa.key" -pubout -out "$dir/certs/sa.pub" 2>/dev/null

admin_token="$(openssl rand -hex 16)"
operator_token="$(openssl rand -hex 16)"
agent_token="$(openssl rand -hex 16)"
{
  echo "$admin_token,admin,admin,system:masters"
  echo "$operator_token,sriov-dra-operator,sriov-dra-operator,"
  echo "$agent_token,sriov-dra-agent,sriov-dra-agent,"
} > "$dir/tokens.csv"

etcd --data-dir "$dir/etcd" --name demo --log-level=warn \
  --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "demo=http://127.0.0.1:$peer_port" >"$dir/etcd.log" 2>&1 &
echo $! > "$dir/etcd.pid"

"$apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address=127.0.0.1 --secure-port="$port" --advertise-address=10.0.0.1 \
  --tls-cert-file="$dir/certs/serving.crt" --tls-private-key-file="$dir/certs/serving.key" \
  --token-auth-file="$dir/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$dir/certs/sa.pub" \
  --service-account-signing-key-file="$dir/certs/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --disable-admission-plugins=ServiceAccount \
  >"$dir/apiserver.log" 2>&1 &
echo $! > "$dir/apiserver.pid"

kubeconfig() {  # user token
  cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: demo
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: $dir/certs/ca.crt
contexts:
- name: demo
  context: {cluster: demo, user: $1}
current-context: demo
users:
- name: $1
  user: {token: $2}
KC
}
kubeconfig admin "$admin_token" > "$dir/kubeconfig"
kubeconfig sriov-dra-operator "$operator_token" > "$dir/kubeconfig-operator"
kubeconfig sriov-dra-agent "$agent_token" > "$dir/kubeconfig-agent"
chmod 600 "$dir"/kubeconfig*

for _ in $(seq 1 240); do
  if curl -sf --cacert "$dir/certs/ca.crt" -H "Authorization: Bearer $admin_token" \
       "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
    exit 0
  fi
  sleep 0.5
done
echo "kube-apiserver did not become ready; see $dir/apiserver.log" >&2
exit 1
