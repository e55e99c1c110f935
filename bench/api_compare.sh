#!/bin/bash
# bench/api_load against `trainyard server` and, where one is built here,
# kube-apiserver + etcd, in one run: both over TLS with a bearer token,
# both on fresh state on the same file system, both fsyncing each write.
# Prints api_load's figures for each, the server's CPU seconds for the
# run (for kube-apiserver, with etcd's) and its RSS after it.
#   usage: bench/api_compare.sh BUILD_DIR [KUBE_DIR] [CLIENTS=200] [WATCHERS=50] [PER_CLIENT=30]
# BUILD_DIR holds a Release build of the targets trainyard and api_load;
# KUBE_DIR is what ../shared/kube-apiserver/build.sh made (start.sh,
# stop.sh, pki/ca.crt, the token admin-token); "" or absent: trainyard only.
# TRAINYARD: another trainyard binary to run (an earlier build, to compare).
set -euo pipefail
build=$1
kube=${2:-}
clients=${3:-200}
watchers=${4:-50}
per_client=${5:-30}
work=$(mktemp -d /tmp/trainyard-compare-XXXXXX)
chmod 755 "$work"  # replicas run as nobody pass through it
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [ -n "$kube" ]; then "$kube/stop.sh" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cpu_seconds() {  # utime + stime of the pids, in seconds
  local total=0
  for p in "$@"; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'
}
rss_mib() {
  local total=0
  for p in "$@"; do total=$((total + $(awk '/VmRSS/ {print $2}' "/proc/$p/status"))); done
  echo $((total / 1024))
}
# Runs the load against $1 with CA $2 and token $3; $4... are the server's pids.
measure() {
  local url=$1 ca=$2 token=$3
  shift 3
  local before
  before=$(cpu_seconds "$@")
  API_LOAD_CA=$ca API_LOAD_TOKEN=$token "$build/bench/api_load" "$url" "$clients" "$watchers" \
    "$per_client" || echo "  (api_load reported errors or missed events)"
  local after
  after=$(cpu_seconds "$@")
  echo "  server CPU $(awk -v a="$after" -v b="$before" 'BEGIN {printf "%.2f", a - b}') s," \
    "RSS after $(rss_mib "$@") MiB"
}

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
echo "bench-token bench *" >"$work/tokens"
"${TRAINYARD:-$build/src/cli/trainyard}" server --home "$work/home" --port 0 --tls-cert "$work/cert.pem" \
  --tls-key "$work/key.pem" --token-file "$work/tokens" >"$work/server.log" 2>&1 &
pids+=($!)
server=$!
for _ in $(seq 150); do
  grep -qs 'server:' "$work/home/kubeconfig" && break
  sleep 0.2
done
url=$(awk '/server:/ {print $2}' "$work/home/kubeconfig" | tr -d '"')
echo "trainyard server ($url):"
measure "$url" "$work/cert.pem" bench-token "$server"

if [ -n "$kube" ]; then
  "$kube/stop.sh" >/dev/null 2>&1 || true
  "$kube/start.sh" >/dev/null
  echo "kube-apiserver + etcd (https://127.0.0.1:6443):"
  measure https://127.0.0.1:6443 "$kube/pki/ca.crt" admin-token \
    "$(cat "$kube/data/apiserver.pid")" "$(cat "$kube/data/etcd.pid")"
fi
