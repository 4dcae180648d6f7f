// Reader for MLCommons Chakra execution traces (one file per rank): a length-delimited protobuf stream,
// varint length + ChakraProtoMsg.GlobalMetadata, then varint length + ChakraProtoMsg.Node per node.
// Malformed input (truncated stream, bad varint, undecodable message, dangling or cyclic dependencies)
// raises std::invalid_argument naming the file and byte offset (for a dependency error, the offset of the
// node that carries it); it never crashes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/ops.hpp"

namespace warpsim::workload::chakra {

enum class NodeType : std::uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};
std::string_view to_string(NodeType t);

struct Node {
  std::uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::kInvalid;
  std::uint64_t duration_micros = 0;  // or, where that is 0, a `runtime` attribute (microseconds)
  std::vector<std::uint64_t> data_deps;
  std::vector<std::uint64_t> ctrl_deps;
  // Communication attributes (present when the trace sets them).
  std::optional<std::int64_t> comm_type;  // COMM_COLL: CollectiveCommType (ALL_REDUCE = 0, ...)
  std::optional<std::int64_t> comm_size;  // bytes
  std::optional<std::int64_t> comm_src;
  std::optional<std::int64_t> comm_dst;
  std::optional<std::int64_t> comm_tag;
  // Host/device and grouping attributes of PyTorch-converted traces, and ASTRA-sim's compute work.
  std::optional<bool> is_cpu_op;            // true: a host-side op (aten::, c10d:: record functions)
  std::string pg_name;                      // the process group of a collective ("" when absent)
  std::optional<std::int64_t> num_ops;      // COMP: floating-point operations of the kernel
  std::optional<std::int64_t> tensor_size;  // COMP: bytes the kernel moves
  std::size_t offset = 0;                   // byte offset of the node's message in its file (for errors)
};

struct Trace {
  std::string source;
  std::string version;      // GlobalMetadata.version ("" when absent)
  std::vector<Node> nodes;  // file order
  // Control dependencies on nodes that are not in the file. The PyTorch converter writes them (a kernel's
  // ctrl_deps name its host-side parent, which may have been left out, e.g. the profiler's root node), and
  // Chakra's own ETFeeder orders by data_deps alone, so they are ignored (and counted here). A data
  // dependency on a missing node is an error.
  std::uint64_t dangling_ctrl_deps = 0;
  // Whether control dependencies close a cycle with the data dependencies, so that the order follows the
  // data dependencies alone, as Chakra's ETFeeder does (PyTorch-converted traces: a host op's ctrl_deps can
  // name its own kernel, which data-depends on the host op). Set by parse_trace.
  bool ctrl_deps_ignored = false;
  // Node indices in an order that respects every data dependency and, unless ctrl_deps_ignored, every
  // control dependency (ties by file order). Throws for a missing data dependency or a cycle.
  std::vector<std::size_t> execution_order() const;
};

Trace parse_trace(std::span<const std::uint8_t> bytes, std::string_view source = "<chakra>");
Trace read_trace(const std::string& path);

// The trace of one rank as workload ops in execution_order(): COMP -> kCompute with fixed_duration_ps,
// SEND/RECV -> kSend/kRecv (peer, tag, bytes), COLL -> kCollective over all `world` ranks.
std::vector<Op> to_ops(const Trace& trace, std::uint32_t world);

}  // namespace warpsim::workload::chakra
