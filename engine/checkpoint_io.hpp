// Binary reading and writing for simulation checkpoints (docs/checkpoint.md): fixed-width little-endian
// values as the machine holds them (a checkpoint is restored on the same kind of machine), length-prefixed
// strings and blobs, and reads that throw CheckpointError instead of returning garbage on a short or
// malformed stream. Used by the engine and by every LP type's save()/load().
#pragma once

#include <algorithm>
#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "engine/hash.hpp"

namespace warpsim {

// A checkpoint that cannot be used: corrupt, truncated, of another format, or written for another run.
// An std::invalid_argument, so that the CLI reports it as bad input (one line, exit code 2).
class CheckpointError : public std::invalid_argument {
 public:
  explicit CheckpointError(const std::string& what) : std::invalid_argument(what) {}
};

namespace ckpt {

template <class T>
void put(std::ostream& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "checkpoint values are written as bytes");
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <class T>
T get(std::istream& in) {
  static_assert(std::is_trivially_copyable_v<T>, "checkpoint values are read as bytes");
  T value{};
  if (!in.read(reinterpret_cast<char*>(&value), sizeof(T)))
    throw CheckpointError("checkpoint data ends early");
  return value;
}

// A count that sizes a container: refuses values above `limit` so a corrupt count cannot exhaust memory.
inline std::uint64_t get_count(std::istream& in, std::uint64_t limit, const char* what) {
  const auto n = get<std::uint64_t>(in);
  if (n > limit) {
    throw CheckpointError(std::string("checkpoint data is malformed: ") + what + " count " +
                          std::to_string(n) + " exceeds " + std::to_string(limit));
  }
  return n;
}

inline void put_string(std::ostream& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

inline std::string get_string(std::istream& in, std::uint64_t limit = std::uint64_t{1} << 40) {
  const std::uint64_t n = get_count(in, limit, "string length");
  std::string s;
  // Grow in steps, so a corrupt length on a short stream fails on the read instead of allocating first.
  constexpr std::uint64_t kStep = std::uint64_t{1} << 24;
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t part = std::min(kStep, n - done);
    s.resize(done + part);
    if (!in.read(s.data() + done, static_cast<std::streamsize>(part)))
      throw CheckpointError("checkpoint data ends early");
    done += part;
  }
  return s;
}

// An istream over bytes held elsewhere (no copy, unlike std::istringstream): a rank file is parsed where it
// was read, so restoring does not need twice its size in memory.
class ViewStream : private std::streambuf, public std::istream {
 public:
  ViewStream(const char* data, std::size_t size) : std::istream(this) {
    char* p = const_cast<char*>(data);  // the get area is only read
    setg(p, p, p + size);
  }
  explicit ViewStream(const std::string& bytes) : ViewStream(bytes.data(), bytes.size()) {}

 private:
  std::streambuf::pos_type seekoff(std::streambuf::off_type off, std::ios_base::seekdir dir,
                                   std::ios_base::openmode) override {
    char* base = dir == std::ios_base::beg ? eback() : dir == std::ios_base::cur ? gptr() : egptr();
    if (off < eback() - base || off > egptr() - base) return std::streambuf::pos_type(-1);
    setg(eback(), base + off, egptr());
    return std::streambuf::pos_type(gptr() - eback());
  }
  std::streambuf::pos_type seekpos(std::streambuf::pos_type pos, std::ios_base::openmode mode) override {
    return seekoff(std::streambuf::off_type(pos), std::ios_base::beg, mode);
  }
};

}  // namespace ckpt
}  // namespace warpsim
