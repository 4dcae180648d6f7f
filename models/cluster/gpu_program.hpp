// The per-GPU program interface: what a GPU LP executes. The op at index i of GPU g is a pure function of
// (g, i), generated lazily on the rank that owns the GPU (no global trace), so the GPU LP only keeps a
// program counter and reverse computation just steps it back. Workloads (training steps, collectives,
// micro-benchmarks) implement GpuProgram.
//
// A GPU runs up to two streams, like CUDA streams: stream 0 (the compute stream, `op`) and, for programs that
// have one, stream 1 (the communication stream NCCL's kernels run on while compute goes on, `comm_op`).
// Stream 1 holds no compute or storage ops (delays are allowed); the streams order themselves against each
// other with kWaitStream.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/sim_time.hpp"

namespace warpsim::cluster {

enum class OpKind : std::uint8_t {
  kCompute,  // occupies the GPU for `duration_ps`
  kSend,     // posts a message of `bytes` to GPU `peer` with `tag`; non-blocking
  kRecv,     // posts a receive of the message (peer, tag); non-blocking
  kWait,     // blocks until every posted send has left the NIC and every posted receive has arrived
  kStorage,  // posts a request of `bytes` to storage target `peer` (tag 1 = write, 0 = read); non-blocking
  // Blocks until the GPU's OTHER stream has completed its op at index `bytes` (a compute op completes when it
  // finishes, any other op when the stream has run it). Naming an index of the other stream, rather than a
  // signal counter, keeps the streams' coupling free of extra state (nothing to reverse or checkpoint).
  kWaitStream,
  // Occupies its stream for `duration_ps` without taking the GPU's SMs (NCCL's launch and protocol latency,
  // a reduction's HBM traffic): it completes like a send, so the stream's next Wait waits for it, and ops
  // between them run meanwhile. Allowed on both streams.
  kDelay,
};

// Labels a workload may put on its Waits (what the wait is for); the GPU LP adds up, per label, the time its
// stream stood blocked on such waits. 0 = unlabelled.
inline constexpr std::uint32_t kWaitLabels = 8;

struct GpuOp {
  OpKind kind = OpKind::kWait;
  std::uint8_t wait_label = 0;  // kWait, kWaitStream: < kWaitLabels, see above
  std::uint32_t peer = 0;
  std::uint32_t tag = 0;
  std::uint64_t bytes = 0;
  SimTime duration_ps = 0;
  // kCompute: the work behind duration_ps, for the time series only (0 where unknown).
  double flops = 0;
  double hbm_bytes = 0;

  static GpuOp compute(SimTime duration, double flops = 0, double hbm_bytes = 0) {
    return {OpKind::kCompute, 0, 0, 0, 0, duration, flops, hbm_bytes};
  }
  static GpuOp send(std::uint32_t peer, std::uint64_t bytes, std::uint32_t tag) {
    return {OpKind::kSend, 0, peer, tag, bytes, 0};
  }
  static GpuOp recv(std::uint32_t peer, std::uint64_t bytes, std::uint32_t tag) {
    return {OpKind::kRecv, 0, peer, tag, bytes, 0};
  }
  static GpuOp wait(std::uint8_t label = 0) {
    GpuOp op;
    op.wait_label = label;
    return op;
  }
  // Waits for the other stream's op `other_index` (see OpKind::kWaitStream); labelled like a Wait.
  static GpuOp wait_stream(std::uint64_t other_index, std::uint8_t label = 0) {
    GpuOp op{OpKind::kWaitStream, label, 0, 0, other_index, 0};
    return op;
  }
  static GpuOp delay(SimTime duration) { return {OpKind::kDelay, 0, 0, 0, 0, duration}; }
  static GpuOp storage(std::uint32_t target, std::uint64_t bytes, bool write) {
    return {OpKind::kStorage, 0, target, write ? 1u : 0u, bytes, 0};
  }
};

class GpuProgram {
 public:
  virtual ~GpuProgram() = default;
  // The op at `index` of GPU `gpu`, or nullopt once the GPU's program has ended (for this and every later
  // index). Must be deterministic and cheap: reverse handlers call it again.
  virtual std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t index) const = 0;
  // Whether the program has a communication stream (stream 1). Asked once; a program without one runs, and
  // counts events, exactly as a one-stream GPU.
  virtual bool has_comm_stream() const { return false; }
  // The op at `index` of GPU `gpu`'s stream 1, or nullopt past its end; the same contract as op().
  virtual std::optional<GpuOp> comm_op(std::uint32_t, std::uint64_t) const { return std::nullopt; }
  // How long a compute op of `duration` takes on GPU `gpu` when it starts while stream 1 has communication
  // in flight (a send not yet left or a receive not yet arrived): NCCL's kernels occupy SMs the compute
  // kernel then lacks. Default: no slowdown. Must be deterministic (reverse handlers call it again).
  virtual SimTime contended_ps(std::uint32_t, SimTime duration) const { return duration; }
  // Whether stream 1's communication, stopped at its op `comm_pc`, takes SMs from compute ops that start
  // now (contended_ps). False where the program already charged that cost in the compute ops' durations
  // (e.g. kernels launched with an SM margin), so it is not charged twice.
  virtual bool comm_contends(std::uint32_t, std::uint64_t) const { return true; }
};

// A program in which no GPU does anything (the default).
class IdleProgram final : public GpuProgram {
 public:
  std::optional<GpuOp> op(std::uint32_t, std::uint64_t) const override { return std::nullopt; }
};

}  // namespace warpsim::cluster
