#!/usr/bin/env bash
# Bad experiment specs exit 2 with one error line naming the offending field.
set -euo pipefail
WARPSIM=$1
SPEC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../../jobs/cli/expect_spec_error.sh"
expect world_too_big "job.world_size_gpus" 's/data_parallel: 4/data_parallel: 8/'
expect tp_heads "tensor_parallel" 's/tensor_parallel: 2/tensor_parallel: 3/'
expect unknown_gpu "gpu_type" 's/H100-SXM/Z100/'
expect bad_sync "simulation.sync" 's/simulation { steps: 2 }/simulation { steps: 2 sync: "eventually" }/'
expect bad_fidelity "simulation.fidelity" 's/simulation { steps: 2 }/simulation { steps: 2 fidelity: "fluid" }/'
expect bad_link "fat_tree.links" 's/bandwidth_gbps: 400 latency_ns: 500/bandwidth_gbps: 0 latency_ns: 500/'
expect gpu_mismatch "job.gpu_type" 's/simulation { steps: 2 }/cluster_gpu_type: "B200"\nsimulation { steps: 2 }/'
expect bad_dp_algorithm "training.dp_allreduce_algorithm" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 dp_allreduce_algorithm: "butterfly"/'
expect tree_with_zero1 "training.dp_allreduce_algorithm" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 dp_allreduce_algorithm: "tree"/; s/data_parallel: 4 }/data_parallel: 4 zero_stage: 1 }/'
expect chunk_with_ring "training.dp_tree_chunk_bytes" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 dp_allreduce_algorithm: "ring" dp_tree_chunk_bytes: 1000000/'
expect bad_nccl_protocol "training.nccl_protocol" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 nccl_protocol: "fast"/'
expect param_gather_without_zero "training.overlap_param_gather" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 overlap_param_gather: true/'
expect cp_overlap_without_cp "training.no_cp_comm_overlap" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 no_cp_comm_overlap: true/'
expect zero3_prefetch_without_zero3 "training.no_zero3_prefetch" 's/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 no_zero3_prefetch: true/'
# Dropout probabilities outside [0, 1).
expect attention_dropout_one "model.attention_dropout: must be within" 's/vocab_size: 32000/vocab_size: 32000 attention_dropout: 1/'
expect hidden_dropout_negative "model.hidden_dropout: must be within" 's/vocab_size: 32000/vocab_size: 32000 hidden_dropout: -0.1/'
# Context parallelism's communication types: an unknown name, a type without CP, without fused attention,
# heads that do not split for the all-to-all, and the ring's overlap switch on another type.
expect bad_cp_comm_type "parallelism.cp_comm_type: must be" 's/data_parallel: 4 }/data_parallel: 2 context_parallel: 2 cp_comm_type: "ring" }/'
expect cp_comm_type_without_cp "parallelism.cp_comm_type.*context_parallel is 1" 's/data_parallel: 4 }/data_parallel: 4 cp_comm_type: "all_gather" }/'
expect cp_comm_type_unfused "parallelism.cp_comm_type.*model.fused_attention" 's/data_parallel: 4 }/data_parallel: 2 context_parallel: 2 cp_comm_type: "all_gather" }/'
expect a2a_heads "parallelism.cp_comm_type.*divisible by parallelism.context_parallel" 's/vocab_size: 32000/vocab_size: 32000 fused_attention: true num_kv_heads: 2/; s/data_parallel: 4 }/data_parallel: 2 context_parallel: 2 cp_comm_type: "a2a" }/'
expect cp_overlap_with_all_gather "training.no_cp_comm_overlap.*all_gather" 's/vocab_size: 32000/vocab_size: 32000 fused_attention: true/; s/data_parallel: 4 }/data_parallel: 2 context_parallel: 2 cp_comm_type: "all_gather" }/; s/grad_bucket_bytes: 8000000/grad_bucket_bytes: 8000000 no_cp_comm_overlap: true/'
# Issue #25: an MoE without moe_top_k was silently top-1, and absurd sizes passed.
expect moe_top_k_0 "model.moe_top_k" 's/vocab_size: 32000/vocab_size: 32000 num_experts: 8 moe_top_k: 0/'
expect moe_top_k_unset "model.moe_top_k" 's/vocab_size: 32000/vocab_size: 32000 num_experts: 8/'
expect moe_top_k_9 "model.moe_top_k" 's/vocab_size: 32000/vocab_size: 32000 num_experts: 8 moe_top_k: 9/'
expect ep_not_dividing_experts "parallelism.expert_parallel.*model.num_experts" 's/vocab_size: 32000/vocab_size: 32000 num_experts: 6 moe_top_k: 2/; s/data_parallel: 4 }/data_parallel: 4 expert_parallel: 4 }/'
expect vocab_huge "model.vocab_size: at most" 's/vocab_size: 32000/vocab_size: 4294967295/'
expect layers_huge "model.num_layers: at most" 's/num_layers: 4/num_layers: 4000000/'
expect hidden_huge "model.hidden_size: at most" 's/hidden_size: 1024/hidden_size: 1073741824/'
expect seq_huge "model.seq_length_tokens: at most" 's/seq_length_tokens: 1024/seq_length_tokens: 4294967295/'
expect micro_batch_huge "training.micro_batch_sequences" 's/micro_batch_sequences: 1/micro_batch_sequences: 4294967295/'
expect global_batch_huge "training.global_batch_sequences: at most" 's/global_batch_sequences: 16/global_batch_sequences: 18446744073709551615/'
expect dp_huge "parallelism.data_parallel: at most" 's/data_parallel: 4/data_parallel: 4294967295/'
# Issue #24: uneven pipeline stages that do not add up, contradicting recompute fields, a job over the HBM.
expect uneven_no_middle_layers "parallelism.first_stage_layers" 's/data_parallel: 4 }/data_parallel: 4 first_stage_layers: 4 }/'
expect uneven_too_many "parallelism.last_stage_layers" 's/data_parallel: 4 }/data_parallel: 4 first_stage_layers: 2 last_stage_layers: 3 }/'
expect uneven_without_pp "parallelism.first_stage_layers" 's/pipeline_parallel: 2 data_parallel: 4 }/pipeline_parallel: 1 data_parallel: 8 first_stage_layers: 2 }/'
# Issue #24 item 5: schedules that need a pipeline, DualPipe's micro-batch and even-PP requirements.
expect zero_bubble_without_pp "parallelism.pipeline_schedule: ZERO_BUBBLE_H1 needs parallelism.pipeline_parallel > 1" 's/pipeline_parallel: 2 data_parallel: 4 }/pipeline_parallel: 1 data_parallel: 8 pipeline_schedule: ZERO_BUBBLE_H1 }/'
expect dual_pipe_few_microbatches "parallelism.pipeline_schedule: DUAL_PIPE needs an even microbatch count" 's/data_parallel: 4 }/data_parallel: 4 pipeline_schedule: DUAL_PIPE }/; s/global_batch_sequences: 16/global_batch_sequences: 8/'
expect dual_pipe_virtual_stages "parallelism.virtual_stages_per_rank" 's/data_parallel: 4 }/data_parallel: 4 pipeline_schedule: DUAL_PIPE virtual_stages_per_rank: 2 }/'
expect recompute_conflict "training.activation_recompute_mode" 's/micro_batch_sequences: 1/micro_batch_sequences: 1 activation_recompute: true activation_recompute_mode: SELECTIVE/'
expect hbm_overflow "peak memory per GPU [0-9.]* GB .* exceeds the H100-SXM's HBM of 80.0 GB.*training.allow_hbm_overflow" 's/seq_length_tokens: 1024/seq_length_tokens: 65536/'
# Issue #26 item 2: node groups of several GPU types with an unknown profile, a gap, an overlap, or no group
# of the job's gpu_type.
G='network { packet_bytes: 1048576 }'
expect node_group_unknown_gpu "node_group\[1\].gpu_type" "s/$G/$G node_group { nodes: 2 gpu_type: \"H100-SXM\" } node_group { nodes: 2 gpu_type: \"Z100\" }/"
expect node_group_gap "node_group" "s/$G/$G node_group { nodes: 2 gpu_type: \"H100-SXM\" } node_group { nodes: 1 gpu_type: \"A100-80GB\" }/"
expect node_group_overlap "node_group\[1\].first_node" "s/$G/$G node_group { nodes: 2 gpu_type: \"H100-SXM\" } node_group { first_node: 1 nodes: 3 gpu_type: \"A100-80GB\" }/"
expect node_group_job_gpu "job.gpu_type" "s/$G/$G node_group { nodes: 4 gpu_type: \"A100-80GB\" }/"
expect node_group_with_cluster_gpu_type "cluster_gpu_type" "s/$G/$G node_group { nodes: 4 gpu_type: \"H100-SXM\" }/; s/simulation { steps: 2 }/cluster_gpu_type: \"H100-SXM\"\nsimulation { steps: 2 }/"
expect unknown_field "no_such_field" 's/simulation { steps: 2 }/simulation { no_such_field: 1 }/'
printf 'cluster_file: "nope-cluster.textproto"\njob_file: "nope-job.textproto"\n' >"$TMP/missing.textproto"
code=0
err=$("$WARPSIM" run "$TMP/missing.textproto" 2>&1 >/dev/null) || code=$?
[[ $code -eq 2 ]] && grep -q cluster_file <<<"$err" || { echo "FAIL: missing cluster_file: $code $err"; exit 1; }
echo "ok missing cluster file: $err"
code=0
"$WARPSIM" run "$TMP/does-not-exist.textproto" 2>/dev/null || code=$?
[[ $code -eq 2 ]] || { echo "FAIL: missing spec file exited $code"; exit 1; }
echo "ok missing file"
