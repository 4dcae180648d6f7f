// Chakra ET stream decoding and conversion to workload ops (see chakra_trace.hpp).
#include "models/workload/chakra/chakra_trace.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>

#include <fstream>
#include <iterator>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "models/workload/chakra/et_def.pb.h"

namespace warpsim::workload::chakra {

namespace {

[[noreturn]] void fail(std::string_view source, std::size_t offset, const std::string& what) {
  throw std::invalid_argument("chakra trace " + std::string(source) + ": byte " + std::to_string(offset) +
                              ": " + what);
}

std::optional<std::int64_t> int_value(const ChakraProtoMsg::AttributeProto& a) {
  using A = ChakraProtoMsg::AttributeProto;
  switch (a.value_case()) {
    case A::kInt32Val:
      return a.int32_val();
    case A::kInt64Val:
      return a.int64_val();
    case A::kUint32Val:
      return a.uint32_val();
    case A::kUint64Val:
      return static_cast<std::int64_t>(a.uint64_val());
    case A::kSint32Val:
      return a.sint32_val();
    case A::kSint64Val:
      return a.sint64_val();
    case A::kFixed32Val:
      return a.fixed32_val();
    case A::kFixed64Val:
      return static_cast<std::int64_t>(a.fixed64_val());
    case A::kSfixed32Val:
      return a.sfixed32_val();
    case A::kSfixed64Val:
      return a.sfixed64_val();
    case A::kBoolVal:
      return a.bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string_view to_string(NodeType t) {
  switch (t) {
    case NodeType::kInvalid:
      return "INVALID_NODE";
    case NodeType::kMetadata:
      return "METADATA_NODE";
    case NodeType::kMemLoad:
      return "MEM_LOAD_NODE";
    case NodeType::kMemStore:
      return "MEM_STORE_NODE";
    case NodeType::kComp:
      return "COMP_NODE";
    case NodeType::kCommSend:
      return "COMM_SEND_NODE";
    case NodeType::kCommRecv:
      return "COMM_RECV_NODE";
    case NodeType::kCommColl:
      return "COMM_COLL_NODE";
  }
  return "?";
}

Trace parse_trace(std::span<const std::uint8_t> bytes, std::string_view source) {
  Trace trace;
  trace.source = std::string(source);
  if (bytes.empty()) fail(source, 0, "empty file (expected a GlobalMetadata message)");
  // A malformed message (e.g. a string that is not UTF-8) is reported by the exception below; protobuf's own
  // "[libprotobuf ERROR ...]" log line would be a second line on stderr.
  const google::protobuf::LogSilencer quiet;
  std::size_t offset = 0;
  std::size_t index = 0;  // message number; 0 is the metadata
  while (offset < bytes.size()) {
    google::protobuf::io::CodedInputStream in(bytes.data() + offset, static_cast<int>(bytes.size() - offset));
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length)) fail(source, offset, "truncated or malformed varint length prefix");
    const auto header = static_cast<std::size_t>(in.CurrentPosition());
    const std::size_t body = offset + header;
    if (length > bytes.size() - body) {
      fail(source, offset,
           "message " + std::to_string(index) + " declares " + std::to_string(length) + " bytes but only " +
               std::to_string(bytes.size() - body) + " remain (truncated file?)");
    }
    const auto* data = bytes.data() + body;
    if (index == 0) {
      ChakraProtoMsg::GlobalMetadata meta;
      if (!meta.ParseFromArray(data, static_cast<int>(length))) {
        fail(source, offset, "cannot decode the GlobalMetadata message");
      }
      trace.version = meta.version();
    } else {
      ChakraProtoMsg::Node pb;
      if (!pb.ParseFromArray(data, static_cast<int>(length))) {
        fail(source, offset, "cannot decode Node message " + std::to_string(index));
      }
      Node n;
      n.id = pb.id();
      n.name = pb.name();
      const int type = pb.type();
      if (type < 0 || type > 7)
        fail(source, offset, "node " + std::to_string(n.id) + ": unknown type " + std::to_string(type));
      n.type = static_cast<NodeType>(type);
      n.duration_micros = pb.duration_micros();
      n.data_deps.assign(pb.data_deps().begin(), pb.data_deps().end());
      n.ctrl_deps.assign(pb.ctrl_deps().begin(), pb.ctrl_deps().end());
      for (const auto& a : pb.attr()) {
        const auto v = int_value(a);
        if (a.name() == "comm_type")
          n.comm_type = v;
        else if (a.name() == "comm_size")
          n.comm_size = v;
        else if (a.name() == "comm_src")
          n.comm_src = v;
        else if (a.name() == "comm_dst")
          n.comm_dst = v;
        else if (a.name() == "comm_tag")
          n.comm_tag = v;
        else if (a.name() == "is_cpu_op" && v)
          n.is_cpu_op = *v != 0;
        else if (a.name() == "runtime" && v && *v > 0 && n.duration_micros == 0)
          n.duration_micros = static_cast<std::uint64_t>(*v);  // older converters: microseconds, as here
        else if (a.name() == "num_ops")
          n.num_ops = v;
        else if (a.name() == "tensor_size")
          n.tensor_size = v;
        else if (a.name() == "pg_name" || a.name() == "comm_group") {
          // PyTorch names its process groups by string; some converters write the number instead.
          if (a.value_case() == ChakraProtoMsg::AttributeProto::kStringVal)
            n.pg_name = a.string_val();
          else if (v)
            n.pg_name = std::to_string(*v);
        }
      }
      n.offset = offset;
      trace.nodes.push_back(std::move(n));
    }
    offset = body + length;
    ++index;
  }
  // Check the dependency graph now so that consumers can rely on it; a cycle that only control
  // dependencies close makes the order follow the data dependencies (see Trace::ctrl_deps_ignored).
  try {
    (void)trace.execution_order();
  } catch (const std::invalid_argument&) {
    trace.ctrl_deps_ignored = true;
    try {
      (void)trace.execution_order();
    } catch (const std::invalid_argument&) {
      trace.ctrl_deps_ignored = false;
      throw;  // the data dependencies alone are broken: their error
    }
  }
  std::unordered_set<std::uint64_t> ids;
  for (const Node& n : trace.nodes) ids.insert(n.id);
  for (const Node& n : trace.nodes) {
    for (const auto dep : n.ctrl_deps) trace.dangling_ctrl_deps += ids.count(dep) == 0 ? 1 : 0;
  }
  return trace;
}

Trace read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("chakra trace " + path + ": cannot read");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_trace(bytes, path);
}

std::vector<std::size_t> Trace::execution_order() const {
  std::unordered_map<std::uint64_t, std::size_t> by_id;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!by_id.emplace(nodes[i].id, i).second) {
      throw std::invalid_argument("chakra trace " + source + ": byte " + std::to_string(nodes[i].offset) +
                                  ": duplicate node id " + std::to_string(nodes[i].id));
    }
  }
  std::vector<std::size_t> pending(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> users(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const auto* deps : {&nodes[i].data_deps, &nodes[i].ctrl_deps}) {
      for (const auto dep : *deps) {
        const auto it = by_id.find(dep);
        if (deps == &nodes[i].ctrl_deps && (ctrl_deps_ignored || it == by_id.end())) continue;
        if (it == by_id.end()) {
          throw std::invalid_argument("chakra trace " + source + ": byte " + std::to_string(nodes[i].offset) +
                                      ": node " + std::to_string(nodes[i].id) + " depends on missing node " +
                                      std::to_string(dep));
        }
        users[it->second].push_back(i);
        ++pending[i];
      }
    }
  }
  // Kahn's algorithm, smallest file position first, so the order is deterministic.
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (const auto u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != nodes.size()) {
    // The first node (in file order) that never became ready sits on or behind the cycle.
    std::size_t stuck = 0;
    while (stuck < nodes.size() && pending[stuck] == 0) ++stuck;
    throw std::invalid_argument("chakra trace " + source + ": byte " + std::to_string(nodes[stuck].offset) +
                                ": node " + std::to_string(nodes[stuck].id) +
                                " is on or behind a dependency cycle");
  }
  return order;
}

std::vector<Op> to_ops(const Trace& trace, std::uint32_t world) {
  std::vector<Op> ops;
  for (const std::size_t i : trace.execution_order()) {
    const Node& n = trace.nodes[i];
    Op o;
    o.name = "chakra_node";
    o.comm_bytes = n.comm_size ? static_cast<std::uint64_t>(*n.comm_size) : 0;
    o.tag = n.comm_tag ? static_cast<std::uint64_t>(*n.comm_tag) : 0;
    switch (n.type) {
      case NodeType::kComp:
        o.kind = OpKind::kCompute;
        o.fixed_duration_ps = n.duration_micros * 1'000'000ull;
        break;
      case NodeType::kCommSend:
        o.kind = OpKind::kSend;
        o.peer = static_cast<std::uint32_t>(n.comm_dst.value_or(0));
        break;
      case NodeType::kCommRecv:
        o.kind = OpKind::kRecv;
        o.peer = static_cast<std::uint32_t>(n.comm_src.value_or(0));
        break;
      case NodeType::kCommColl: {
        o.kind = OpKind::kCollective;
        const auto t = n.comm_type.value_or(0);
        switch (t) {
          case 0:
            o.collective = CollectiveKind::kAllReduce;
            break;
          case 2:
            o.collective = CollectiveKind::kAllGather;
            break;
          case 6:
            o.collective = CollectiveKind::kAllToAll;
            break;
          case 7:
          case 8:
            o.collective = CollectiveKind::kReduceScatter;
            break;
          default:
            throw std::invalid_argument("chakra trace " + trace.source + ": node " + std::to_string(n.id) +
                                        ": collective comm_type " + std::to_string(t) + " is not supported");
        }
        o.group = GroupDesc{0, 1, world, 0, 1};
        o.group_kind = GroupKind::kDataContext;
        break;
      }
      default:
        continue;  // metadata and memory nodes carry no simulated work here
    }
    ops.push_back(o);
  }
  return ops;
}

}  // namespace warpsim::workload::chakra
