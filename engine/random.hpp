// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
// A stream is addressed by (seed, id of the event being handled), with no state carried between events, so
// an event re-executed after a rollback draws exactly the same numbers and no reverse RNG step is needed.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace warpsim {

class Philox4x32 {
 public:
  using Block = std::array<std::uint32_t, 4>;

  static Block generate(Block counter, std::array<std::uint32_t, 2> key) {
    for (int round = 0; round < 10; ++round) {
      const std::uint64_t p0 = std::uint64_t{kMul0} * counter[0];
      const std::uint64_t p1 = std::uint64_t{kMul1} * counter[2];
      counter = {static_cast<std::uint32_t>(p1 >> 32) ^ counter[1] ^ key[0], static_cast<std::uint32_t>(p1),
                 static_cast<std::uint32_t>(p0 >> 32) ^ counter[3] ^ key[1], static_cast<std::uint32_t>(p0)};
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    return counter;
  }

 private:
  static constexpr std::uint32_t kMul0 = 0xD2511F53u;
  static constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
  static constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
  static constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;
};

// The random stream of one event. Draw i of the stream is a pure function of (seed, stream id, i).
class Rng {
 public:
  Rng() = default;
  Rng(std::uint64_t seed, std::uint32_t stream_hi, std::uint64_t stream_lo)
      : key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)},
        stream_{stream_hi, static_cast<std::uint32_t>(stream_lo),
                static_cast<std::uint32_t>(stream_lo >> 32)} {}

  std::uint64_t next_u64() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const auto block = Philox4x32::generate({stream_[0], stream_[1], stream_[2], draw_++}, key_);
    spare_ = (std::uint64_t{block[2]} << 32) | block[3];
    have_spare_ = true;
    return (std::uint64_t{block[0]} << 32) | block[1];
  }

  // Uniform in (0, 1]: never 0, so -log(u) is finite.
  double uniform() { return (static_cast<double>(next_u64() >> 11) + 1.0) * 0x1.0p-53; }

  double exponential(double mean) { return -mean * std::log(uniform()); }

  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next_u64()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  std::uint32_t draws() const { return draw_; }

 private:
  std::array<std::uint32_t, 2> key_{};
  std::array<std::uint32_t, 3> stream_{};
  std::uint32_t draw_ = 0;
  std::uint64_t spare_ = 0;
  bool have_spare_ = false;
};

}  // namespace warpsim
