// Event transport between ranks: per-destination batches of fixed-stride event records, sent with
// non-blocking MPI_Isend and received by probing. Each batch carries the sender's GVT epoch so the GVT
// algorithm can tell messages sent before a GVT cut (white) from those sent after (red).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace warpsim {

struct BatchHeader {
  std::uint32_t epoch;
  std::uint32_t count;
};

class MpiTransport {
 public:
  MpiTransport(MPI_Comm comm, std::size_t record_bytes, std::uint32_t batch_records);
  ~MpiTransport();
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  // Queues one record (record_bytes long) for `rank`; the batch is sent once it holds batch_records records.
  void push(int rank, const void* record, std::uint32_t epoch);
  void flush_all(std::uint32_t epoch);

  // Receives every batch that has arrived; calls on_batch(epoch, records, count) for each.
  using BatchHandler =
      std::function<void(std::uint32_t epoch, const std::byte* records, std::uint32_t count)>;
  std::uint64_t poll(const BatchHandler& on_batch);

  // Waits until every Isend issued so far has completed.
  void complete_sends();

  std::uint64_t batches_sent() const { return batches_sent_; }
  std::uint64_t batches_received() const { return batches_received_; }

 private:
  void flush(int rank, std::uint32_t epoch);
  void reap_sends();

  struct InFlight {
    MPI_Request request;
    std::vector<std::byte> buffer;
  };

  MPI_Comm comm_;
  std::size_t record_bytes_;
  std::uint32_t batch_records_;
  std::vector<std::vector<std::byte>> outgoing_;  // per destination rank
  std::vector<std::uint32_t> outgoing_count_;
  std::vector<InFlight> in_flight_;
  std::vector<std::vector<std::byte>> spare_buffers_;
  std::vector<std::byte> receive_buffer_;
  std::uint64_t batches_sent_ = 0;
  std::uint64_t batches_received_ = 0;
};

}  // namespace warpsim
