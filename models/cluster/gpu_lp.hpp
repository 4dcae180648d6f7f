// GPU logical process: runs its GpuProgram op by op, on one stream or two (stream 1 = the communication
// stream, see gpu_program.hpp). State per stream is a program counter, the number of posted sends/storage
// requests not yet complete and of posted receives not yet arrived; one receive-matching balance per
// (stream, peer, tag) serves both. Reverse computation replays each stream's ops between the saved and the
// current program counter backwards.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "models/cluster/cluster_lp_type.hpp"
#include "models/cluster/gpu_program.hpp"

namespace warpsim::cluster {

struct GpuStream {
  std::uint64_t pc = 0;         // index of the stream's next op to run
  std::uint32_t pending = 0;    // posted sends and storage requests not yet complete
  std::uint32_t unmatched = 0;  // posted receives whose message has not arrived
  bool ended = false;           // ran past its last op
};

struct GpuState {
  LpId id = 0;
  std::uint32_t gpu = 0;  // GPU index (the program's and the collectives' numbering)
  // [0] the compute stream, [1] the communication stream (untouched by programs without one).
  std::array<GpuStream, 2> streams{};
  bool computing = false;  // stream 0 runs a compute op
  bool contended = false;  // ... that started while stream 1 had communication in flight (contended_ps)
  bool done = false;       // every stream ended
  SimTime finish_ps = 0;   // when the program ended (0 until then: reverse relies on it)
  SimTime busy_ps = 0;     // total compute time
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;  // bytes of posted receives
  std::uint64_t messages_arrived = 0;
  // ((stream << 31 | peer) << 32 | tag) -> arrivals minus posted receives; zero entries are erased.
  std::map<std::uint64_t, std::int32_t> balance;
};

class GpuLp final : public ClusterLpType<GpuState> {
 public:
  using State = GpuState;

  // Time the GPU's compute stream (stream 0) stood blocked on Waits (or on stream 1), per wait label
  // (GpuOp::wait_label): the exposed communication. comm_clock() keeps, per label, the time stream 1 had
  // communication in flight (blocked on a Wait; its kWaitStream time is idle, not counted). Kept by the
  // commit handler, so they see only committed history in timestamp order and need no reverse.
  struct WaitClock {
    SimTime since = 0;       // start of the open blocked interval
    std::uint8_t label = 0;  // the label of the Wait it is blocked on
    bool open = false;
    std::array<SimTime, kWaitLabels> blocked_ps{};
  };

  GpuLp(const Topology& topology, std::shared_ptr<const GpuProgram> program)
      : ClusterLpType(topology),
        program_(std::move(program)),
        streams_(program_->has_comm_stream() ? 2 : 1) {}
  std::string_view name() const override { return "gpu"; }
  // The state, its wait clock, its decoded-op cache and its commit notes (the balance map's nodes come on
  // top).
  std::size_t state_bytes() const override {
    return sizeof(State) + streams_ * (sizeof(WaitClock) + kOpCacheWays * sizeof(OpCache)) +
           kCommitNotes * sizeof(CommitNote) + sizeof(decltype(note_next_)::value_type);
  }
  void init(std::uint32_t slot, LpContext& ctx) override;
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

  const WaitClock& wait_clock(std::uint32_t slot) const { return clocks_[slot]; }
  // Stream 1's clock (all zero for programs without a communication stream).
  const WaitClock& comm_clock(std::uint32_t slot) const { return comm_clocks_[slot]; }
  std::uint32_t streams() const { return streams_; }

 private:
  State make_state(LpId id) override;
  void on_added(std::uint32_t slot, LpId id) override;
  // The op at `index` of the GPU's program, or null past its end. Decoding an op from the lazy program
  // costs more than the rest of a handler, and a GPU asks for the same op again and again: the Wait it is
  // blocked on at every arrival, and the op its commit handler looks up right after forward() ran it. So
  // each GPU keeps the ops it decoded last, in a small direct-mapped cache (programs are immutable: a cached
  // op is never stale). Four ways also hold the few ops one event ran, which a rollback undoes and redoes.
  // Stream 1's ops have their own ways.
  const GpuOp* fetch(const State& s, std::uint32_t stream, std::uint64_t index) const;
  GpuOp op_at(const State& s, std::uint32_t stream, std::uint64_t index) const;
  // Runs both streams until neither can go on (a stream that ran may unblock the other's kWaitStream).
  void run(State& s, LpContext& ctx);
  // Runs one stream until it blocks or ends; whether it ran an op or ended.
  bool advance(State& s, LpContext& ctx, std::uint32_t stream);
  // Whether `stream` has completed its op at `index` (see OpKind::kWaitStream).
  static bool completed(const State& s, std::uint32_t stream, std::uint64_t index);
  void undo_op(State& s, std::uint32_t stream, const GpuOp& op);
  // The duration the compute op `op` runs for, as started (contended or not).
  SimTime run_ps(const State& s, SimTime duration) const {
    return s.contended ? program_->contended_ps(s.gpu, duration) : duration;
  }
  void commit_comm_clock(std::uint32_t slot, LpContext& ctx);

  std::shared_ptr<const GpuProgram> program_;
  std::uint32_t streams_ = 1;
  std::vector<WaitClock> clocks_;
  std::vector<WaitClock> comm_clocks_;
  struct OpCache {
    std::uint64_t index = ~std::uint64_t{0};  // none yet
    bool end = false;                         // index is past the program's end
    GpuOp op;
  };
  static constexpr std::size_t kOpCacheWays = 4;
  // per slot and stream; not model state (no digest, reverse or checkpoint)
  mutable std::vector<OpCache> op_cache_;

  // What commit() needs of the ops forward() ran: the compute op an event started (the series) and the
  // Wait it left the GPU blocked on (the wait clock). An optimistic commit comes long after forward(), when
  // the op cache holds later ops, and decoding the op again cost as much as the rest of the commit. So
  // forward() notes these ops, keyed by program index, in a small per-GPU ring (oldest note replaced);
  // commit() decodes only what it does not find there. Programs are immutable, so a note is never stale and
  // a rollback needs to undo nothing: like the op cache, the notes are not model state.
  struct CommitNote {
    std::uint64_t index = ~std::uint64_t{0};  // none yet
    SimTime duration_ps = 0;
    double flops = 0;
    double hbm_bytes = 0;
    std::uint8_t wait_label = 0;
    static CommitNote of(std::uint64_t index, const GpuOp& op) {
      return {index, op.duration_ps, op.flops, op.hbm_bytes, op.wait_label};
    }
  };
  static constexpr std::size_t kCommitNotes = 8;
  void note(std::uint32_t slot, std::uint64_t index, const GpuOp& op);
  // The op at `index` as commit() needs it: from the notes, else decoded.
  CommitNote noted(std::uint32_t slot, std::uint64_t index) const;
  std::vector<CommitNote> notes_;        // per slot: kCommitNotes
  std::vector<std::uint8_t> note_next_;  // per slot: the note to replace next
};

}  // namespace warpsim::cluster
