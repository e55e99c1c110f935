#!/bin/bash
# What a `trainyard server` holds after a burst of load: its RSS idle, just
# after bench/api_load's run (200 clients x 30 ConfigMaps, 50 watchers), and
# 60 s later. TRIM=0 runs it with TRAINYARD_MEMORY_TRIM=0 (the allocator
# keeps what it freed), for the figure beside it.
#   usage: bench/memory_after_load.sh BUILD_DIR [TRIM=1]
# BUILD_DIR holds a Release build of the targets trainyard and api_load.
set -euo pipefail
build=$1
trim=${2:-1}
home=$(mktemp -d /tmp/trainyard-memory-XXXXXX)
TRAINYARD_MEMORY_TRIM=$trim "$build/src/cli/trainyard" server --home "$home" --port 0 \
  >"$home.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$home" "$home.log"' EXIT
for _ in $(seq 150); do
  grep -qs 'server:' "$home/kubeconfig" && break
  sleep 0.2
done
url=$(awk '/server:/ {print $2}' "$home/kubeconfig" | tr -d '"')
rss() { awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status"; }
sleep 5
idle=$(rss)
"$build/bench/api_load" "$url" 200 50 30 | head -1
after=$(rss)
sleep 60
later=$(rss)
echo "TRAINYARD_MEMORY_TRIM=$trim: RSS idle ${idle} MiB, after the load ${after} MiB, 60 s later ${later} MiB"
