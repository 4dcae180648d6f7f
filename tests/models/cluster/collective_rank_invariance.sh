# `warpsim collective` prints the same table (times, bandwidths, committed events, digests) sequentially
# and optimistically/conservatively on 1, 2 and 4 ranks.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
EXAMPLES=${2:?usage: $0 warpsim examples/clusters}

rows() { grep -v '^#'; }
for spec in fat_tree_2tier_16gpu.textproto fat_tree_3tier_16gpu.textproto torus_2d_16gpu.textproto; do
  args=(collective --cluster "$EXAMPLES/$spec" --min-bytes 4KiB --max-bytes 256KiB --step-factor 8)
  reference=$(run_np 1 "${args[@]}" --sync sequential | rows)
  [[ $(printf '%s\n' "$reference" | grep -c .) -eq 3 ]] || fail "expected 3 rows: $reference"
  for np in 1 2 4; do
    for sync in optimistic conservative; do
      got=$(run_np "$np" "${args[@]}" --sync "$sync" | rows)
      [[ "$got" == "$reference" ]] || fail "$spec np=$np $sync differs:
$got
--- sequential:
$reference"
      echo "ok $spec np=$np $sync"
    done
  done
  alltoall=(collective --cluster "$EXAMPLES/$spec" --op alltoall --min-bytes 64KiB --max-bytes 64KiB)
  reference=$(run_np 1 "${alltoall[@]}" --sync sequential | rows)
  got=$(run_np 4 "${alltoall[@]}" --sync optimistic --partition round-robin | rows)
  [[ "$got" == "$reference" ]] || fail "$spec alltoall np=4 differs"
done
# Flow fidelity (fat-tree and torus) and cut-through switching, with the tree and hierarchical algorithms.
for spec in fat_tree_2tier_16gpu_flow.textproto fat_tree_3tier_16gpu_cut_through.textproto torus_3d_16gpu_flow.textproto; do
  for algorithm in tree hierarchical; do
    args=(collective --cluster "$EXAMPLES/$spec" --algorithm "$algorithm" --min-bytes 256KiB --max-bytes 256KiB
          --chunk-bytes 64KiB)
    reference=$(run_np 1 "${args[@]}" --sync sequential | rows)
    [[ $(printf '%s\n' "$reference" | grep -c .) -eq 1 ]] || fail "expected 1 row: $reference"
    for variant in "2 optimistic block" "4 optimistic round-robin"; do
      read -r np sync partition <<<"$variant"
      got=$(run_np "$np" "${args[@]}" --sync "$sync" --partition "$partition" | rows)
      [[ "$got" == "$reference" ]] || fail "$spec $algorithm np=$np $sync $partition differs:
$got
--- sequential:
$reference"
      echo "ok $spec $algorithm np=$np $sync $partition"
    done
  done
done
# The hierarchical reduce-scatter, all-gather and broadcast and the tree broadcast: packet fat-tree, flow
# fat-tree and the packet torus, sequential against optimistic on 4 ranks, round-robin (1, 2 and 4 ranks
# and more sync variants: ClusterOracle.HierarchicalReduceScatterAllGatherAndBroadcasts).
for spec in fat_tree_2tier_16gpu.textproto fat_tree_2tier_16gpu_flow.textproto torus_2d_16gpu.textproto; do
  for case in "hierarchical reducescatter" "hierarchical allgather" "hierarchical broadcast" "tree broadcast"; do
    read -r algorithm op <<<"$case"
    args=(collective --cluster "$EXAMPLES/$spec" --algorithm "$algorithm" --op "$op" --min-bytes 256KiB
          --max-bytes 256KiB --chunk-bytes 32KiB)
    reference=$(run_np 1 "${args[@]}" --sync sequential | rows)
    [[ $(printf '%s\n' "$reference" | grep -c .) -eq 1 ]] || fail "expected 1 row: $reference"
    got=$(run_np 4 "${args[@]}" --sync optimistic --partition round-robin | rows)
    [[ "$got" == "$reference" ]] || fail "$spec $algorithm $op np=4 optimistic round-robin differs:
$got
--- sequential:
$reference"
    echo "ok $spec $algorithm $op np=4 optimistic round-robin"
  done
done
echo "$reference"
