// Chakra traces as cluster GPU programs (training::TraceProgram), on traces generated here with the Chakra
// schema and its varint-delimited framing, shaped like the PyTorch converter's output: nodes out of id order,
// host ops (is_cpu_op) with their kernels, a c10d host node and its NCCL kernel node, a process group
// (pg_name), a control dep on a node left out of the file, ASTRA-sim's num_ops compute. Checks what is
// replayed, skipped and counted, the op stream (durations, the ring expansion, peers through rank_to_gpu),
// and that traces that do not belong together are refused.
#include <gtest/gtest.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/training/trace_program.hpp"
#include "models/workload/chakra/et_def.pb.h"
#include "models/workload/gpu_profile.hpp"

namespace warpsim::training {
namespace {

using workload::chakra::Trace;
namespace pb = ChakraProtoMsg;

struct NodeDesc {
  std::uint64_t id;
  std::string name;
  pb::NodeType type;
  std::vector<std::uint64_t> data_deps = {};
  std::vector<std::uint64_t> ctrl_deps = {};
  std::uint64_t duration_us = 0;
  std::map<std::string, std::int64_t> ints = {};
  std::string pg_name = "";
  bool cpu = false;
};

// The Chakra ET framing: varint length + GlobalMetadata, then varint length + Node for each node.
std::vector<std::uint8_t> encode(const std::vector<NodeDesc>& nodes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    coded.WriteVarint32(static_cast<std::uint32_t>(meta.ByteSizeLong()));
    meta.SerializeToCodedStream(&coded);
    for (const NodeDesc& d : nodes) {
      pb::Node n;
      n.set_id(d.id);
      n.set_name(d.name);
      n.set_type(d.type);
      for (auto x : d.data_deps) n.add_data_deps(x);
      for (auto x : d.ctrl_deps) n.add_ctrl_deps(x);
      n.set_duration_micros(d.duration_us);
      auto* cpu = n.add_attr();
      cpu->set_name("is_cpu_op");
      cpu->set_bool_val(d.cpu);
      for (const auto& [k, v] : d.ints) {
        auto* a = n.add_attr();
        a->set_name(k);
        a->set_int64_val(v);
      }
      if (!d.pg_name.empty()) {
        auto* a = n.add_attr();
        a->set_name("pg_name");
        a->set_string_val(d.pg_name);
      }
      coded.WriteVarint32(static_cast<std::uint32_t>(n.ByteSizeLong()));
      n.SerializeToCodedStream(&coded);
    }
  }
  return {out.begin(), out.end()};
}

// One rank of a PyTorch-like step: a forward kernel, an all-reduce on the world (c10d host node + NCCL
// kernel), an all-gather on process group "tp", an ASTRA-sim num_ops node, a broadcast (skipped), and an
// empty kernel. File order is not id order; the kernel 40 data-depends on its host op 10, whose ctrl dep
// names the profiler root 1 (not in the file).
std::vector<NodeDesc> rank_nodes(std::int64_t allreduce_bytes) {
  return {
      {40, "ampere_sgemm_128x64_nn", pb::COMP_NODE, {10}, {}, 120},
      {10, "aten::mm", pb::COMP_NODE, {}, {1}, 150, {}, "", true},
      {50, "c10d::allreduce_", pb::COMM_COLL_NODE, {40}, {}, 30, {}, "", true},
      {52,
       "ncclKernel_AllReduce_RING_LL_Sum_float",
       pb::COMM_COLL_NODE,
       {50, 40},
       {},
       900,
       {{"comm_type", 0}, {"comm_size", allreduce_bytes}}},
      {60,
       "ncclKernel_AllGather_RING_LL",
       pb::COMM_COLL_NODE,
       {52},
       {},
       0,
       {{"comm_type", 2}, {"comm_size", 4096}},
       "tp"},
      {55, "astra_gemm", pb::COMP_NODE, {60}, {}, 0, {{"num_ops", 2'000'000'000}, {"tensor_size", 1 << 20}}},
      {70,
       "ncclKernel_Broadcast_RING_LL",
       pb::COMM_COLL_NODE,
       {55},
       {},
       5,
       {{"comm_type", 5}, {"comm_size", 64}}},
      {71, "Memset", pb::COMP_NODE, {70}, {}, 0},
      {72, "metadata", pb::METADATA_NODE, {71}},
  };
}

Trace trace_of(const std::vector<NodeDesc>& nodes, const std::string& name) {
  return workload::chakra::parse_trace(encode(nodes), name);
}

std::shared_ptr<const workload::ComputeModel> h100() {
  return std::make_shared<const workload::ComputeModel>(workload::find_gpu_profile("H100-SXM"));
}

std::vector<cluster::GpuOp> ops_of(const TraceProgram& p, std::uint32_t gpu) {
  std::vector<cluster::GpuOp> ops;
  for (std::uint64_t i = 0;; ++i) {
    const auto op = p.op(gpu, i);
    if (!op) break;
    ops.push_back(*op);
  }
  EXPECT_EQ(ops.size(), p.size(gpu));
  return ops;
}

TEST(TraceProgram, PyTorchLikeTraceOnFourRanks) {
  std::vector<Trace> traces;
  for (int r = 0; r < 4; ++r)
    traces.push_back(trace_of(rank_nodes(1 << 20), "rank" + std::to_string(r) + ".et"));
  EXPECT_EQ(traces[0].dangling_ctrl_deps, 1u);
  TraceProgramOptions options;
  options.rank_to_gpu = {7, 5, 3, 1};  // reversed onto odd GPUs
  options.cluster_gpus = 8;
  options.process_groups["tp"] = {0, 1};
  options.process_groups["tp2"] = {2, 3};
  // Ranks 2 and 3 name their all-gather's group "tp2".
  for (int r = 2; r < 4; ++r) {
    auto nodes = rank_nodes(1 << 20);
    nodes[4].pg_name = "tp2";
    traces[r] = trace_of(nodes, "rank" + std::to_string(r) + ".et");
  }
  const TraceProgram p(traces, options, h100());
  const TraceCounts& c = p.counts(0);
  EXPECT_EQ(c.nodes, 9u);
  EXPECT_EQ(c.skipped_cpu, 2u);  // aten::mm, c10d::allreduce_
  EXPECT_EQ(c.compute, 2u);      // the sgemm kernel, the num_ops node
  EXPECT_EQ(c.compute_modeled, 1u);
  EXPECT_EQ(c.collectives, 2u);          // all-reduce, all-gather
  EXPECT_EQ(c.skipped_collectives, 1u);  // broadcast
  EXPECT_EQ(c.skipped_empty, 1u);        // Memset without duration or work
  EXPECT_EQ(c.skipped_other, 1u);        // metadata
  EXPECT_FALSE(p.rank_of(0).has_value());
  EXPECT_EQ(p.size(0), 0u);  // unmapped GPUs idle
  EXPECT_EQ(*p.rank_of(7), 0u);

  // Rank 0 on GPU 7: Compute(120 us), all-reduce over 4 = 2*3 ring steps (Send, Recv, Wait), all-gather over
  // the 2 of "tp" = 1 step, Compute(modeled).
  const auto ops = ops_of(p, 7);
  ASSERT_EQ(ops.size(), 1u + 18u + 3u + 1u);
  EXPECT_EQ(ops[0].kind, cluster::OpKind::kCompute);
  EXPECT_EQ(ops[0].duration_ps, 120'000'000u);
  EXPECT_EQ(ops[1].kind, cluster::OpKind::kSend);
  EXPECT_EQ(ops[1].peer, 5u);  // rank 1's GPU
  EXPECT_EQ(ops[1].bytes, (1u << 20) / 4);
  EXPECT_EQ(ops[2].kind, cluster::OpKind::kRecv);
  EXPECT_EQ(ops[2].peer, 1u);  // rank 3's GPU
  EXPECT_EQ(ops[3].kind, cluster::OpKind::kWait);
  EXPECT_EQ(ops[19].kind, cluster::OpKind::kSend);
  EXPECT_EQ(ops[19].peer, 5u);  // the all-gather stays within "tp" = ranks 0, 1
  EXPECT_EQ(ops[19].bytes, 2048u);
  EXPECT_EQ(ops[22].kind, cluster::OpKind::kCompute);
  EXPECT_EQ(ops[22].duration_ps,
            h100()->picoseconds(workload::ComputeWork("chakra_comp", 2e9, 1 << 20, workload::DType::kBf16)));
  EXPECT_GT(ops[22].duration_ps, 0u);
  // Rank 2 (GPU 3) gathers within "tp2": its peer is rank 3 on GPU 1.
  const auto ops2 = ops_of(p, 3);
  EXPECT_EQ(ops2[19].peer, 1u);
  // Every send has a receive with the same tag at the peer (over the whole program).
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> balance;
  for (std::uint32_t g : {7u, 5u, 3u, 1u}) {
    for (const auto& op : ops_of(p, g)) {
      if (op.kind == cluster::OpKind::kSend) ++balance[{g, op.peer, op.tag}];
      if (op.kind == cluster::OpKind::kRecv) --balance[{op.peer, g, op.tag}];
    }
  }
  for (const auto& [key, n] : balance) EXPECT_EQ(n, 0);
}

TEST(TraceProgram, PeerlessP2pIsSkippedAndRuntimeAttributeTimesAKernel) {
  // Chakra's PyTorch converter gives sends/receives comm_size and pg_name only; older traces carry the
  // duration in a `runtime` attribute.
  const std::vector<NodeDesc> nodes{
      {1, "ncclKernel_SendRecv", pb::COMM_SEND_NODE, {}, {}, 3, {{"comm_size", 64}}, "0"},
      {2, "kernel", pb::COMP_NODE, {1}, {}, 0, {{"runtime", 25}}},
  };
  const TraceProgram p({trace_of(nodes, "p.et")}, {}, h100());
  EXPECT_EQ(p.counts(0).skipped_p2p, 1u);
  const auto ops = ops_of(p, 0);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].duration_ps, 25'000'000u);
}

TEST(TraceProgram, RefusesTracesThatDoNotBelongTogether) {
  // Rank 1 issues one collective fewer.
  std::vector<Trace> traces{trace_of(rank_nodes(4096), "a.et"), trace_of(rank_nodes(4096), "b.et")};
  auto fewer = rank_nodes(4096);
  fewer.erase(fewer.begin() + 4);  // no all-gather
  fewer[4].data_deps = {52};
  traces[1] = trace_of(fewer, "b.et");
  try {
    TraceProgram p(traces, {}, h100());
    FAIL() << "mismatched collectives accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("b.et: rank 1 issues 1 collectives"), std::string::npos) << e.what();
  }
  // A send without its receive.
  const std::vector<NodeDesc> send{
      {1, "send", pb::COMM_SEND_NODE, {}, {}, 0, {{"comm_dst", 1}, {"comm_size", 64}, {"comm_tag", 3}}}};
  const std::vector<NodeDesc> none{{1, "k", pb::COMP_NODE, {}, {}, 5}};
  EXPECT_THROW(TraceProgram({trace_of(send, "s.et"), trace_of(none, "n.et")}, {}, h100()),
               std::invalid_argument);
  // A collective without comm_size names the file and the node's byte offset.
  const std::vector<NodeDesc> sizeless{{9, "nccl", pb::COMM_COLL_NODE, {}, {}, 1, {{"comm_type", 0}}}};
  try {
    TraceProgram p({trace_of(sizeless, "z.et")}, {}, h100());
    FAIL() << "collective without comm_size accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("z.et: byte "), std::string::npos) << e.what();
  }
  // rank_to_gpu: out of the cluster, or one GPU twice.
  TraceProgramOptions o;
  o.cluster_gpus = 2;
  o.rank_to_gpu = {0, 2};
  EXPECT_THROW(TraceProgram({trace_of(none, "a.et"), trace_of(none, "b.et")}, o, h100()),
               std::invalid_argument);
  o.rank_to_gpu = {1, 1};
  EXPECT_THROW(TraceProgram({trace_of(none, "a.et"), trace_of(none, "b.et")}, o, h100()),
               std::invalid_argument);
}

TEST(TraceProgram, ControlDepsOrderNodesUnlessTheyCloseACycle) {
  // 3 runs before 2 by a control dep although 2 comes first in the file.
  const std::vector<NodeDesc> ordered{{2, "b", pb::COMP_NODE, {}, {3}, 2},
                                      {3, "a", pb::COMP_NODE, {}, {}, 3}};
  const Trace t = trace_of(ordered, "o.et");
  EXPECT_FALSE(t.ctrl_deps_ignored);
  const TraceProgram p({t}, {}, h100());
  const auto ops = ops_of(p, 0);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].duration_ps, 3'000'000u);
  // A host op whose ctrl dep is its own kernel (which data-depends on it): ordered by data deps alone.
  const std::vector<NodeDesc> cycle{{5, "aten::mul", pb::COMP_NODE, {}, {6}, 4, {}, "", true},
                                    {6, "kernel", pb::COMP_NODE, {5}, {}, 1}};
  EXPECT_TRUE(trace_of(cycle, "c.et").ctrl_deps_ignored);
  // A cycle of data deps is an error naming the file and a byte offset.
  const std::vector<NodeDesc> bad{{5, "x", pb::COMP_NODE, {6}, {}, 4}, {6, "y", pb::COMP_NODE, {5}, {}, 1}};
  try {
    (void)trace_of(bad, "d.et");
    FAIL() << "data cycle accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("d.et: byte "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warpsim::training
