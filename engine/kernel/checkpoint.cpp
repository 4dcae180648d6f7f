// Checkpoint/restart of the engine (docs/checkpoint.md): agreeing on a cut, writing every rank's committed
// state at that cut (LP states, pending events, send sequence numbers, counters, the caller's extra state)
// plus a manifest, atomically; and validating and loading such a checkpoint instead of init().
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "engine/checkpoint_io.hpp"
#include "engine/kernel/checkpoint_signal.hpp"
#include "engine/kernel/engine.hpp"

namespace warpsim {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kFormat = 2;  // 2: GPU LPs save their wait clocks
constexpr char kRankMagic[8] = {'W', 'S', 'C', 'K', 'R', 'A', 'N', 'K'};
constexpr std::uint64_t kEndMarker = 0x444e454b43534b57ull;  // last field of a rank file
constexpr const char* kManifestHeader = "warpsim checkpoint";

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string cut_dir_name(SimTime cut) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "ckpt-%020" PRIu64, cut);
  return buf;
}

std::string rank_file_name(int rank) {
  return "rank-" + std::to_string(rank) + ".bin";
}

std::uint64_t checksum(const std::string& bytes) {
  Fnv1a h;
  h.update(bytes.data(), bytes.size());
  return h.value();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw CheckpointError("cannot read " + path.string());
  std::string bytes(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw CheckpointError("cannot read " + path.string());
  return bytes;
}

// The newest complete checkpoint under `dir`: dir itself if it holds a manifest, else its ckpt-* subdirectory
// with the largest cut time that holds one. Empty if none.
std::string resolve_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / "manifest", ec)) return dir;
  std::string best;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("ckpt-", 0) != 0 || !fs::is_regular_file(it->path() / "manifest", ec)) continue;
    if (name > best) best = name;  // fixed-width cut times sort as strings
  }
  return best.empty() ? std::string() : (fs::path(dir) / best).string();
}

// Rank 0's string on every rank.
std::string broadcast(std::string text, int rank, MPI_Comm comm) {
  std::uint64_t n = text.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
  if (rank != 0) text.resize(n);
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, comm);
  return text;
}

// Collective: throws `Error` on every rank with the message of the lowest rank that failed, if any did.
template <class Error>
void agree_or_throw(const std::string& local_error, int rank, int ranks, MPI_Comm comm) {
  int failed = local_error.empty() ? ranks : rank;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, comm);
  if (failed == ranks) return;
  std::uint64_t n = local_error.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, failed, comm);
  std::string message = local_error;
  message.resize(n);
  MPI_Bcast(message.data(), static_cast<int>(n), MPI_CHAR, failed, comm);
  throw Error(message);
}

}  // namespace

int Engine::local_checkpoint_request() {
  if (!checkpointing_) return 0;
  if (config_.checkpoint.on_signal && checkpoint_signal_received()) return 2;
  if (config_.checkpoint.every_seconds > 0 && rank_ == 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_).count() >=
          config_.checkpoint.every_seconds) {
    return 1;
  }
  return 0;
}

// Every rank calls this with the same arguments (they come from a reduction, or there is one rank).
void Engine::decide_cut(SimTime cut, bool stop) {
  cut = std::max(cut, cut_base_);
  // Nothing has been executed since the last cut (or the resumed one): keep the request for a later round,
  // when there is progress to save (otherwise a conservative run would cut at the same time forever).
  if (cut == cut_base_ && cut < stop_time_) return;
  if (config_.checkpoint.on_signal) clear_checkpoint_signal();
  last_checkpoint_ = std::chrono::steady_clock::now();  // the timer restarts from the decision
  if (cut >= stop_time_) {
    // An earlier cut (or the end) is coming anyway; a stop request applies to it.
    if (stop && stop_time_ < config_.end_time) stop_after_cut_ = true;
    return;
  }
  if (stop) stop_after_cut_ = true;
  spdlog::debug("checkpoint: cut agreed at {} ps{}", cut, stop ? " (stop after it)" : "");
  stop_time_ = cut;
  if (config_.sync == SyncMode::kOptimistic) rollback_from(cut);
}

// Undoes every processed event at or after `cut`: the state at the cut is then exactly the commits below it.
void Engine::rollback_from(SimTime cut) {
  for (std::uint32_t local = 0; local < lps_.size(); ++local) {
    const LocalLp& lp = lps_[local];
    if (lp.tail != kNil && pool_.at(lp.tail).time >= cut)
      rollback(local, EventKey{cut, 0, 0}, /*inclusive=*/true);
  }
}

// Collective: what a checkpoint must agree on with the run that resumes it, in manifest order.
std::vector<std::pair<std::string, std::string>> Engine::checkpoint_identity() {
  Fnv1a local;
  local.update(lp_ids_.data(), lp_ids_.size() * sizeof(LpId));
  std::uint64_t mine[2] = {lp_ids_.size(), local.value()};
  std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(ranks_));
  MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm_);
  Fnv1a partition;
  partition.update(all.data(), all.size() * sizeof(std::uint64_t));
  std::string types;
  for (const LpType* t : types_) {
    if (!types.empty()) types += ',';
    types.append(t->name());
  }
  std::vector<std::pair<std::string, std::string>> id = {
      {"ranks", std::to_string(ranks_)},
      {"lp count", std::to_string(model_.lp_count())},
      {"lp types", types},
      {"payload bytes", std::to_string(model_.payload_bytes())},
      {"seed", std::to_string(config_.seed)},
      {"end time ps", std::to_string(config_.end_time)},
      {"partition", hex(partition.value())},
  };
  for (const auto& kv : config_.checkpoint.identity) id.push_back(kv);
  return id;
}

std::string Engine::write_checkpoint(SimTime cut) {
  const auto started = std::chrono::steady_clock::now();
  const auto identity = checkpoint_identity();
  const fs::path dir(config_.checkpoint.dir);
  const fs::path tmp = dir / ("." + cut_dir_name(cut) + ".tmp");
  const fs::path final_dir = dir / cut_dir_name(cut);
  std::string error;
  if (rank_ == 0) {
    try {
      fs::create_directories(dir);
      fs::remove_all(tmp);
      fs::create_directory(tmp);
    } catch (const std::exception& e) {
      error = std::string("cannot create checkpoint directory: ") + e.what();
    }
  }
  agree_or_throw<std::runtime_error>(error, rank_, ranks_, comm_);

  // This rank's committed state. Everything below the cut is committed, so no LP has processed events.
  std::ostringstream out(std::ios::binary);
  out.write(kRankMagic, sizeof kRankMagic);
  ckpt::put(out, kFormat);
  ckpt::put<std::uint32_t>(out, static_cast<std::uint32_t>(rank_));
  ckpt::put<std::uint32_t>(out, static_cast<std::uint32_t>(ranks_));
  ckpt::put(out, cut);
  ckpt::put(out, stats_);
  ckpt::put<std::uint64_t>(out, std::max<std::uint64_t>(pool_.peak_live(), loaded_peak_events_));
  ckpt::put<std::uint64_t>(out, lps_.size());
  for (std::uint32_t local = 0; local < lps_.size(); ++local) {
    const LocalLp& lp = lps_[local];
    if (lp.tail != kNil) throw std::logic_error("checkpoint with uncommitted events");
    ckpt::put(out, lp_ids_[local]);
    ckpt::put(out, lp.next_seq);
    ckpt::put(out, lp.type);
    std::ostringstream state(std::ios::binary);
    types_[lp.type]->save(lp.slot, state);
    ckpt::put_string(out, state.str());
  }
  // Pending events: taken out of the queue in key order (deterministic file) and put back.
  std::vector<PendingEntry> entries;
  entries.reserve(pending_.size());
  while (!pending_.empty()) {
    entries.push_back(pending_.top());
    pending_.pop();
  }
  std::uint64_t live = 0;
  for (const PendingEntry& entry : entries) live += pool_.at(entry.index).state != EventState::kCancelled;
  ckpt::put<std::uint64_t>(out, live);
  ckpt::put<std::uint64_t>(out, pool_.stride());
  std::vector<std::byte> record(pool_.stride());
  for (const PendingEntry& entry : entries) {
    EventHeader& e = pool_.at(entry.index);
    if (e.state == EventState::kCancelled) {
      pool_.release(entry.index);
      continue;
    }
    std::memcpy(record.data(), &e, record.size());
    auto* h = reinterpret_cast<EventHeader*>(record.data());
    h->next = h->prev = h->sends = kNil;
    h->state = EventState::kPending;
    h->flags &= kFlagFromRemote;
    out.write(reinterpret_cast<const char*>(record.data()), static_cast<std::streamsize>(record.size()));
    pending_.push(entry);
  }
  // The caller's part goes straight into the rank file: its length is patched in once known.
  ckpt::put<std::uint64_t>(out, 0);
  const auto extra_at = out.tellp();
  if (config_.checkpoint.save_extra) config_.checkpoint.save_extra(out);
  const auto extra_end = out.tellp();
  out.seekp(extra_at - std::streamoff(sizeof(std::uint64_t)));
  ckpt::put<std::uint64_t>(out, static_cast<std::uint64_t>(extra_end - extra_at));
  out.seekp(extra_end);
  ckpt::put(out, kEndMarker);
  const std::string bytes = std::move(out).str();
  const std::uint64_t sum = checksum(bytes);
  {
    std::ofstream file(tmp / rank_file_name(rank_), std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.close();
    if (!file) error = "cannot write " + (tmp / rank_file_name(rank_)).string();
  }
  agree_or_throw<std::runtime_error>(error, rank_, ranks_, comm_);
  std::uint64_t mine[2] = {bytes.size(), sum};
  std::vector<std::uint64_t> files(2 * static_cast<std::size_t>(ranks_));
  MPI_Gather(mine, 2, MPI_UINT64_T, files.data(), 2, MPI_UINT64_T, 0, comm_);

  if (rank_ == 0) {
    try {
      std::string manifest = std::string(kManifestHeader) + "\n";
      manifest += "format: " + std::to_string(kFormat) + "\n";
      manifest += "time ps: " + std::to_string(cut) + "\n";
      for (const auto& [key, value] : identity) manifest += key + ": " + value + "\n";
      for (int r = 0; r < ranks_; ++r) {
        manifest += "file " + rank_file_name(r) + ": " + std::to_string(files[2 * r]) + " " +
                    hex(files[2 * r + 1]) + "\n";
      }
      manifest += "manifest checksum: " + hex(checksum(manifest)) + "\n";
      {
        std::ofstream file(tmp / "manifest", std::ios::binary | std::ios::trunc);
        file << manifest;
        file.close();
        if (!file) throw std::runtime_error("cannot write " + (tmp / "manifest").string());
      }
      // Complete only once renamed: a reader never sees a half-written checkpoint under a ckpt-* name.
      fs::remove_all(final_dir);
      fs::rename(tmp, final_dir);
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("ckpt-", 0) == 0 && entry.path() != final_dir) fs::remove_all(entry.path());
      }
    } catch (const std::exception& e) {
      error = std::string("writing the checkpoint failed: ") + e.what();
    }
  }
  agree_or_throw<std::runtime_error>(error, rank_, ranks_, comm_);
  if (rank_ == 0) {
    std::uint64_t total = 0;
    for (int r = 0; r < ranks_; ++r) total += files[2 * r];
    spdlog::info("checkpoint: wrote {} (simulated time {:.9g} s, {} bytes, {:.3f} s)", final_dir.string(),
                 static_cast<double>(cut) / static_cast<double>(kPicosPerSecond), total,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  return final_dir.string();
}

void Engine::load_checkpoint() {
  const auto started = std::chrono::steady_clock::now();
  const auto identity = checkpoint_identity();
  const std::string& requested = config_.checkpoint.resume;
  const std::string path =
      broadcast(rank_ == 0 ? resolve_checkpoint(requested) : std::string(), rank_, comm_);
  if (path.empty()) {
    throw CheckpointError("checkpoint '" + requested +
                          "': no complete checkpoint there (no manifest in it or in a ckpt-* subdirectory)");
  }
  const std::string where = "checkpoint '" + path + "': ";
  std::string error;
  SimTime cut = 0;
  try {
    // The manifest: intact, of this format, and written for this run.
    const std::string manifest = read_file(fs::path(path) / "manifest");
    const std::string sum_key = "manifest checksum: ";
    const auto sum_at = manifest.rfind(sum_key);
    if (manifest.rfind(std::string(kManifestHeader) + "\n", 0) != 0 || sum_at == std::string::npos ||
        manifest.substr(sum_at) != sum_key + hex(checksum(manifest.substr(0, sum_at))) + "\n") {
      throw CheckpointError(where + "manifest is corrupt or truncated (checksum mismatch)");
    }
    std::map<std::string, std::string> fields;
    std::istringstream lines(manifest.substr(0, sum_at));
    for (std::string line; std::getline(lines, line);) {
      const auto colon = line.find(": ");
      if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 2);
    }
    if (fields["format"] != std::to_string(kFormat)) {
      throw CheckpointError(where + "format " + fields["format"] + " is not the supported format " +
                            std::to_string(kFormat));
    }
    for (const auto& [key, value] : identity) {
      const auto it = fields.find(key);
      const std::string theirs = it == fields.end() ? "(missing)" : it->second;
      if (theirs != value) {
        throw CheckpointError(where + "written for a different run: " + key + " is '" + theirs +
                              "' in the checkpoint but '" + value + "' in this run");
      }
    }
    cut = std::stoull(fields["time ps"]);
    const std::string name = rank_file_name(rank_);
    const std::string expected = fields["file " + name];
    std::uint64_t size = 0;
    char sum_text[17] = {};
    if (std::sscanf(expected.c_str(), "%" SCNu64 " %16s", &size, sum_text) != 2)
      throw CheckpointError(where + "manifest has no valid entry for " + name);
    std::string bytes;
    try {
      bytes = read_file(fs::path(path) / name);
    } catch (const CheckpointError&) {
      throw CheckpointError(where + name + " is missing or unreadable");
    }
    if (bytes.size() != size) {
      throw CheckpointError(where + name + " is truncated or altered (" + std::to_string(bytes.size()) +
                            " bytes, the manifest says " + std::to_string(size) + ")");
    }
    if (hex(checksum(bytes)) != sum_text)
      throw CheckpointError(where + name + " is corrupt (its checksum differs from the manifest's)");

    // The rank file. The checksum matched, so a parse error here means a bug or a forged file.
    ckpt::ViewStream in(bytes);
    char magic[sizeof kRankMagic];
    if (!in.read(magic, sizeof magic) || std::memcmp(magic, kRankMagic, sizeof magic) != 0)
      throw CheckpointError(where + name + " is not a warpsim rank checkpoint");
    if (ckpt::get<std::uint32_t>(in) != kFormat ||
        ckpt::get<std::uint32_t>(in) != static_cast<std::uint32_t>(rank_) ||
        ckpt::get<std::uint32_t>(in) != static_cast<std::uint32_t>(ranks_) || ckpt::get<SimTime>(in) != cut) {
      throw CheckpointError(where + name + " does not belong to this manifest");
    }
    const auto stats = ckpt::get<EngineStats>(in);
    loaded_peak_events_ = ckpt::get<std::uint64_t>(in);
    if (ckpt::get<std::uint64_t>(in) != lps_.size())
      throw CheckpointError(where + name + " holds another LP count than this rank owns");
    for (std::uint32_t local = 0; local < lps_.size(); ++local) {
      LocalLp& lp = lps_[local];
      if (ckpt::get<LpId>(in) != lp_ids_[local]) throw CheckpointError(where + name + ": LP ids differ");
      lp.next_seq = ckpt::get<std::uint64_t>(in);
      if (ckpt::get<std::uint32_t>(in) != lp.type) throw CheckpointError(where + name + ": LP types differ");
      const std::string blob = ckpt::get_string(in, bytes.size());
      ckpt::ViewStream state(blob);
      types_[lp.type]->load(lp.slot, state);
      if (state.peek() != std::char_traits<char>::eof()) {
        throw CheckpointError(where + name + ": state of LP " + std::to_string(lp_ids_[local]) +
                              " has bytes its type did not read");
      }
    }
    const std::uint64_t events = ckpt::get_count(in, bytes.size(), "event");
    if (ckpt::get<std::uint64_t>(in) != pool_.stride())
      throw CheckpointError(where + name + ": event record size differs");
    for (std::uint64_t i = 0; i < events; ++i) {
      const std::uint32_t index = pool_.allocate();
      EventHeader& e = pool_.at(index);
      if (!in.read(reinterpret_cast<char*>(&e), static_cast<std::streamsize>(pool_.stride())))
        throw CheckpointError(where + name + " ends early");
      if (e.time < cut || !std::binary_search(lp_ids_.begin(), lp_ids_.end(), e.dst))
        throw CheckpointError(where + name + ": a pending event is before the cut or for another rank's LP");
      e.next = e.prev = e.sends = kNil;
      e.state = EventState::kPending;
      e.flags &= kFlagFromRemote;
      push_pending(index);
    }
    // The caller's part is parsed in place too (it is most of the file when time series are recorded).
    const auto extra_size = ckpt::get_count(in, bytes.size(), "caller state length");
    const auto extra_at = static_cast<std::size_t>(in.tellg());
    if (extra_at + extra_size > bytes.size()) throw CheckpointError(where + name + " ends early");
    ckpt::ViewStream extra(bytes.data() + extra_at, extra_size);
    in.seekg(static_cast<std::streamoff>(extra_at + extra_size));
    if (config_.checkpoint.load_extra) {
      try {
        config_.checkpoint.load_extra(extra);
      } catch (const std::exception& e) {
        throw CheckpointError(where + name + ": " + e.what());
      }
    }
    if (ckpt::get<std::uint64_t>(in) != kEndMarker)
      throw CheckpointError(where + name + " has no end marker");
    // Counters continue from the checkpoint, so the finished run reports the whole run's events.
    const EngineStats own = stats_;
    stats_ = stats;
    stats_.event_bytes = own.event_bytes;
    stats_.lp_bytes = own.lp_bytes;
    stats_.model_state_bytes = own.model_state_bytes;
    stats_.local_lps = own.local_lps;
  } catch (const std::exception& e) {  // any failure must reach every rank, or the others would wait
    error = e.what();
    if (error.rfind("checkpoint", 0) != 0) error = where + error;
  }
  agree_or_throw<CheckpointError>(error, rank_, ranks_, comm_);
  cut_base_ = cut;
  resumed_from_ = cut;
  resumed_committed_ = stats_.committed;
  MPI_Allreduce(MPI_IN_PLACE, &resumed_committed_, 1, MPI_UINT64_T, MPI_SUM, comm_);
  gvt_ = cut;
  if (rank_ == 0) {
    spdlog::info("checkpoint: resuming from {} (simulated time {:.9g} s, loaded in {:.3f} s)", path,
                 static_cast<double>(cut) / static_cast<double>(kPicosPerSecond),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

}  // namespace warpsim
