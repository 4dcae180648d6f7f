# Sourced by chakra_replay.sh (needs $PROTOC, $SRC, $tmp, run_np, value, fail): writes a 4-rank trace shaped
# like the output of Chakra's PyTorch converter into $tmp/gen (the Chakra framing, a varint length before
# each message, around protoc --encode's output) and its experiment spec $tmp/gen.textproto, and checks what
# `warpsim run` maps. Per rank, in file order (ids out of order): a GEMM kernel (40 + 10r us) data-depending on
# its host op aten::mm (is_cpu_op) with a control dep on node 1 (not in the file, as the profiler root in real
# traces); an NCCL all-reduce of 4 MiB on pg "0" (not listed: all ranks) beside its c10d host node; an
# all-gather of 1 MiB on pg "tp01" or "tp23"; a send to and a receive from rank r+2 (mod 4); an elementwise
# kernel; a broadcast (skipped). rank_to_gpu puts ranks 0, 1 on GPUs 0, 4 (two nodes of the 4-GPU fat-tree)
# and ranks 2, 3 on GPUs 1, 5.

varint() {
  local n=$1
  while ((n >= 128)); do
    printf "\\x$(printf %02x $(((n & 127) | 128)))"
    n=$((n >> 7))
  done
  printf "\\x$(printf %02x "$n")"
}
msg() {  # TYPE TEXT
  printf '%s\n' "$2" | "$PROTOC" -I"$SRC" --encode="ChakraProtoMsg.$1" "$SRC/models/workload/chakra/et_def.proto" \
    >"$tmp/msg.bin"
  varint "$(stat -c %s "$tmp/msg.bin")"
  cat "$tmp/msg.bin"
}
attr() { printf 'attr { name: "%s" %s }' "$1" "$2"; }

mkdir -p "$tmp/gen"
cpu=$(attr is_cpu_op "bool_val: true")
for r in 0 1 2 3; do
  tp=$([[ $r -lt 2 ]] && echo tp01 || echo tp23)
  peer=$(((r + 2) % 4))
  {
    msg GlobalMetadata 'version: "0.0.4"'
    msg Node "id: 20 name: \"sm90_xmma_gemm_bf16\" type: COMP_NODE data_deps: 10 ctrl_deps: 1
              duration_micros: $((40 + 10 * r))"
    msg Node "id: 10 name: \"aten::mm\" type: COMP_NODE duration_micros: 80 $cpu"
    msg Node "id: 31 name: \"ncclKernel_AllReduce_RING_LL_Sum_bf16\" type: COMM_COLL_NODE data_deps: 20
              $(attr comm_type "int64_val: 0") $(attr comm_size "int64_val: 4194304") $(attr pg_name 'string_val: "0"')"
    msg Node "id: 30 name: \"c10d::allreduce_\" type: COMM_COLL_NODE data_deps: 20 duration_micros: 9 $cpu"
    msg Node "id: 40 name: \"ncclKernel_AllGather_RING_LL_Sum_bf16\" type: COMM_COLL_NODE data_deps: 31
              $(attr comm_type "int64_val: 2") $(attr comm_size "int64_val: 1048576") $(attr pg_name "string_val: \"$tp\"")"
    msg Node "id: 50 name: \"send\" type: COMM_SEND_NODE data_deps: 40 $(attr comm_dst "int32_val: $peer")
              $(attr comm_size "int64_val: 262144") $(attr comm_tag "int32_val: 7")"
    msg Node "id: 51 name: \"recv\" type: COMM_RECV_NODE data_deps: 40 $(attr comm_src "int32_val: $peer")
              $(attr comm_size "int64_val: 262144") $(attr comm_tag "int32_val: 7")"
    msg Node "id: 60 name: \"vectorized_elementwise_kernel\" type: COMP_NODE data_deps: 50 data_deps: 51
              duration_micros: 15"
    msg Node "id: 70 name: \"ncclKernel_Broadcast_RING_LL\" type: COMM_COLL_NODE data_deps: 60
              $(attr comm_type "int64_val: 5") $(attr comm_size "int64_val: 64")"
  } >"$tmp/gen/pytorch.$r.et"
done
cat >"$tmp/gen.textproto" <<SPEC
name: "generated-pytorch-4"
cluster_file: "$SRC/examples/clusters/fat_tree_2tier_16gpu.textproto"
chakra_trace {
  folder: "gen"
  rank_to_gpu: [0, 4, 1, 5]
  process_group { name: "tp01" ranks: [0, 1] }
  process_group { name: "tp23" ranks: [2, 3] }
}
simulation { end_time_s: 1 }
SPEC

gen=$(run_np 1 run "$tmp/gen.textproto" --sync sequential --progress-seconds 0)
for kv in "trace ranks: 4" "trace nodes: 36" "replayed compute nodes: 8" "replayed collectives: 8" \
  "replayed sends: 4" "replayed receives: 4" "skipped cpu nodes: 8" "skipped unsupported collectives: 4" \
  "dangling control deps: 4"; do
  grep -qx "$kv" <<<"$gen" || fail "generated trace: no '$kv' in: $gen"
done
# The slowest rank computes 70 + 15 us; the collectives and transfers come on top.
awk -v m="$(value "makespan seconds" "$gen")" 'BEGIN { exit (m > 85e-6) ? 0 : 1 }' ||
  fail "generated trace: makespan not above the slowest rank's compute: $gen"
echo "ok generated 4-rank PyTorch-shaped trace:" \
  $(grep -E '^(makespan seconds|compute seconds|blocked on [a-z0-9]* seconds):' <<<"$gen" | tr '\n' ' ')
