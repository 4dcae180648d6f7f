// MPI event transport implementation (see mpi_transport.hpp).
#include "engine/kernel/mpi_transport.hpp"

#include <cstring>
#include <stdexcept>

namespace warpsim {

namespace {
constexpr int kEventTag = 7001;
}

MpiTransport::MpiTransport(MPI_Comm comm, std::size_t record_bytes, std::uint32_t batch_records)
    : comm_(comm), record_bytes_(record_bytes), batch_records_(batch_records == 0 ? 1 : batch_records) {
  int ranks = 1;
  MPI_Comm_size(comm_, &ranks);
  outgoing_.resize(ranks);
  outgoing_count_.assign(ranks, 0);
}

MpiTransport::~MpiTransport() {
  // Requests must not outlive their buffers; the engine drains all traffic before it returns, so this
  // completes at once.
  for (auto& f : in_flight_) MPI_Wait(&f.request, MPI_STATUS_IGNORE);
}

void MpiTransport::push(int rank, const void* record, std::uint32_t epoch) {
  auto& buffer = outgoing_[rank];
  if (buffer.empty()) {
    if (!spare_buffers_.empty()) {
      buffer = std::move(spare_buffers_.back());
      spare_buffers_.pop_back();
    }
    buffer.resize(sizeof(BatchHeader));
  }
  const std::size_t at = buffer.size();
  buffer.resize(at + record_bytes_);
  std::memcpy(buffer.data() + at, record, record_bytes_);
  if (++outgoing_count_[rank] >= batch_records_) flush(rank, epoch);
}

void MpiTransport::flush(int rank, std::uint32_t epoch) {
  auto& buffer = outgoing_[rank];
  if (outgoing_count_[rank] == 0) return;
  const BatchHeader header{epoch, outgoing_count_[rank]};
  std::memcpy(buffer.data(), &header, sizeof header);
  in_flight_.push_back(InFlight{MPI_REQUEST_NULL, std::move(buffer)});
  auto& f = in_flight_.back();
  MPI_Isend(f.buffer.data(), static_cast<int>(f.buffer.size()), MPI_BYTE, rank, kEventTag, comm_, &f.request);
  buffer = std::vector<std::byte>();
  outgoing_count_[rank] = 0;
  ++batches_sent_;
}

void MpiTransport::flush_all(std::uint32_t epoch) {
  for (int r = 0; r < static_cast<int>(outgoing_.size()); ++r) flush(r, epoch);
}

void MpiTransport::reap_sends() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < in_flight_.size(); ++i) {
    int done = 0;
    MPI_Test(&in_flight_[i].request, &done, MPI_STATUS_IGNORE);
    if (done) {
      in_flight_[i].buffer.clear();
      spare_buffers_.push_back(std::move(in_flight_[i].buffer));
    } else {
      if (kept != i) in_flight_[kept] = std::move(in_flight_[i]);
      ++kept;
    }
  }
  in_flight_.resize(kept);
}

std::uint64_t MpiTransport::poll(const BatchHandler& on_batch) {
  if (!in_flight_.empty()) reap_sends();
  std::uint64_t received = 0;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kEventTag, comm_, &flag, &status);
    if (!flag) break;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    receive_buffer_.resize(static_cast<std::size_t>(bytes));
    MPI_Recv(receive_buffer_.data(), bytes, MPI_BYTE, status.MPI_SOURCE, kEventTag, comm_, MPI_STATUS_IGNORE);
    BatchHeader header;
    std::memcpy(&header, receive_buffer_.data(), sizeof header);
    if (sizeof header + std::size_t{header.count} * record_bytes_ != static_cast<std::size_t>(bytes)) {
      throw std::runtime_error("corrupt event batch from rank " + std::to_string(status.MPI_SOURCE));
    }
    ++batches_received_;
    ++received;
    on_batch(header.epoch, receive_buffer_.data() + sizeof header, header.count);
  }
  return received;
}

void MpiTransport::complete_sends() {
  for (auto& f : in_flight_) MPI_Wait(&f.request, MPI_STATUS_IGNORE);
  for (auto& f : in_flight_) {
    f.buffer.clear();
    spare_buffers_.push_back(std::move(f.buffer));
  }
  in_flight_.clear();
}

}  // namespace warpsim
