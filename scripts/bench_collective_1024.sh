#!/usr/bin/env bash
# Benchmark: 1024-GPU ring all-reduce of 1 GiB in packet mode (128 nodes x 8 GPUs, 2-tier rail-optimized
# fat-tree of radix-64 switches, 400 Gb/s links). Prints the collective row and the wall time per run.
# Usage: scripts/bench_collective_1024.sh path/to/warpsim [packet_bytes] [np] [sync] [fidelity] [partition]
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim [packet_bytes] [np] [sync]}
PACKET=${2:-4096}
NP=${3:-1}
SYNC=${4:-sequential}
FIDELITY=${5:-packet}
PARTITION=${6:-block}
SPEC=$(mktemp --suffix=.textproto)
trap 'rm -f "$SPEC"' EXIT
cat >"$SPEC" <<SPEC
name: "bench_1024gpu"
nodes: 128
scale_up { gpus_per_node: 8 nvlink_bandwidth_gbps: 3600 nvlink_latency_ns: 200 }
topology: "fat_tree"
fat_tree {
  tiers: 2
  radix: 64
  oversubscription: 1
  links { bandwidth_gbps: 400 latency_ns: 500 }
  links { bandwidth_gbps: 400 latency_ns: 500 }
}
network { packet_bytes: $PACKET }
SPEC
echo "# packet_bytes=$PACKET np=$NP sync=$SYNC fidelity=$FIDELITY partition=$PARTITION host=$(hostname) cores=$(nproc)"
start=$(date +%s.%N)
mpiexec -np "$NP" --oversubscribe --allow-run-as-root "$WARPSIM" --log-level warn collective \
  --cluster "$SPEC" --op allreduce --algo ring --min-bytes 1GiB --max-bytes 1GiB --sync "$SYNC" --progress-seconds 0 \
  --fidelity "$FIDELITY" --partition "$PARTITION"
end=$(date +%s.%N)
echo "# wall_seconds=$(echo "$end - $start" | bc)"
