// Chakra execution-trace import: the shipped astra-sim traces (node counts, types, attributes, deps) and
// malformed input (errors, never crashes).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/workload/chakra/chakra_trace.hpp"

namespace warpsim::workload::chakra {
namespace {

const std::filesystem::path kData = WARPSIM_CHAKRA_DATA_DIR;

std::vector<std::uint8_t> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void require_data() {
  if (!std::filesystem::exists(kData)) GTEST_SKIP() << "shared Chakra traces not found at " << kData;
}

TEST(Chakra, AllReduceMicrobenchmark) {
  require_data();
  for (int r = 0; r < 8; ++r) {
    const Trace t = read_trace(
        (kData / "astra-sim_all_reduce_8npus_1MB" / ("all_reduce." + std::to_string(r) + ".et")).string());
    EXPECT_EQ(t.version, "0.0.4");
    ASSERT_EQ(t.nodes.size(), 1u);
    const Node& n = t.nodes[0];
    EXPECT_EQ(n.type, NodeType::kCommColl);
    EXPECT_EQ(n.id,
              static_cast<std::uint64_t>(r));  // protoc --decode shows id == rank (rank 0's id 0 is omitted)
    EXPECT_EQ(n.name, "all_reduce_8npus_1MB");
    ASSERT_TRUE(n.comm_type && n.comm_size);
    EXPECT_EQ(*n.comm_type, 0);  // ALL_REDUCE
    EXPECT_EQ(*n.comm_size, 1048576);
    EXPECT_TRUE(n.data_deps.empty());
    const auto ops = to_ops(t, 8);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].kind, OpKind::kCollective);
    EXPECT_EQ(ops[0].collective, CollectiveKind::kAllReduce);
    EXPECT_EQ(ops[0].comm_bytes, 1048576u);
    EXPECT_EQ(ops[0].group.size(), 8u);
  }
}

TEST(Chakra, CustomRingAllReduce) {
  require_data();
  for (int r = 0; r < 8; ++r) {
    const Trace t = read_trace((kData / "astra-sim_custom_ring_allreduce_8npus_1MB" /
                                ("custom_allreduce." + std::to_string(r) + ".et"))
                                   .string());
    ASSERT_EQ(t.nodes.size(), 35u);
    int send = 0, recv = 0, comp = 0;
    std::size_t edges = 0;
    for (const Node& n : t.nodes) {
      edges += n.data_deps.size() + n.ctrl_deps.size();
      switch (n.type) {
        case NodeType::kCommSend:
          ++send;
          EXPECT_EQ(n.comm_size.value_or(-1), 131072);
          EXPECT_EQ(n.comm_type.value_or(-1), 5);
          EXPECT_TRUE(n.comm_dst.has_value());
          EXPECT_EQ(n.comm_tag.value_or(-1), 0);
          break;
        case NodeType::kCommRecv:
          ++recv;
          EXPECT_EQ(n.comm_type.value_or(-1), 6);
          EXPECT_TRUE(n.comm_src.has_value());
          break;
        case NodeType::kComp:
          ++comp;
          EXPECT_EQ(n.duration_micros, 7u);
          break;
        default:
          ADD_FAILURE() << "unexpected node type " << to_string(n.type);
      }
    }
    EXPECT_EQ(send, 14);
    EXPECT_EQ(recv, 14);
    EXPECT_EQ(comp, 7);
    EXPECT_EQ(edges, 34u);
    // One chain: the execution order visits every node after its dependency.
    const auto order = t.execution_order();
    ASSERT_EQ(order.size(), 35u);
    std::vector<std::size_t> pos(35);
    for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      for (auto dep : t.nodes[i].data_deps) {
        for (std::size_t j = 0; j < t.nodes.size(); ++j) {
          if (t.nodes[j].id == dep) {
            EXPECT_LT(pos[j], pos[i]);
          }
        }
      }
    }
    const auto ops = to_ops(t, 8);
    ASSERT_EQ(ops.size(), 35u);
    for (const Op& o : ops) {
      if (o.kind == OpKind::kCompute) {
        EXPECT_EQ(o.fixed_duration_ps, 7'000'000u);
      }
      if (o.kind == OpKind::kSend || o.kind == OpKind::kRecv) {
        EXPECT_LT(o.peer, 8u);
        EXPECT_NE(o.peer, static_cast<std::uint32_t>(r));
      }
    }
  }
}

std::string error_of(const std::vector<std::uint8_t>& bytes) {
  try {
    parse_trace(bytes, "bad.et");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Chakra, MalformedInputGivesClearErrors) {
  // Truncated: a length prefix promising more bytes than follow.
  EXPECT_NE(error_of({0x05, 0x0a, 0x01}).find("truncated"), std::string::npos);
  // Bad varint: continuation bits that never end.
  EXPECT_NE(error_of(std::vector<std::uint8_t>(12, 0xff)).find("varint"), std::string::npos);
  EXPECT_NE(error_of({0x80}).find("varint"), std::string::npos);
  // Empty file.
  EXPECT_NE(error_of({}).find("empty"), std::string::npos);
  // A node that does not decode (field 1 with the invalid wire type 7).
  EXPECT_NE(error_of({0x00, 0x02, 0x0f, 0x01}).find("Node"), std::string::npos);
  // A dangling dependency: node id 3 depending on node 9.
  EXPECT_NE(error_of({0x00, 0x05, 0x08, 0x03, 0x2a, 0x01, 0x09}).find("missing node 9"), std::string::npos);
  // Pseudo-random garbage never crashes: it either decodes or throws.
  std::uint64_t x = 88172645463325252ull;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::uint8_t> junk(1 + trial % 97);
    for (auto& b : junk) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<std::uint8_t>(x);
    }
    try {
      (void)parse_trace(junk, "junk.et");
    } catch (const std::invalid_argument&) {
    }
  }
}

TEST(Chakra, TruncatedShippedFileIsRejected) {
  require_data();
  auto bytes = file_bytes(kData / "astra-sim_custom_ring_allreduce_8npus_1MB" / "custom_allreduce.3.et");
  ASSERT_GT(bytes.size(), 100u);
  bytes.resize(bytes.size() - 7);
  EXPECT_NE(error_of(bytes).find("truncated"), std::string::npos) << error_of(bytes);
  EXPECT_THROW(read_trace("/nonexistent/file.et"), std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::workload::chakra
