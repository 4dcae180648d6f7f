// The project's 64-bit hash helpers, in one place: bit mixers for digests and ECMP, and FNV-1a for
// content keys and checksums. Every result here is persisted somewhere (state digests, sweep experiment
// ids, checkpoint manifests, ECMP path choices), so a function's output must never change; add a new
// function rather than edit one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace warpsim {

// SplitMix64's finalizer (Steele et al.): the mixer of LP state digests and the engine's digest fold.
constexpr std::uint64_t splitmix64_finalize(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// MurmurHash3's fmix64: the cluster model's ECMP flow hash and its LP state digests.
constexpr std::uint64_t murmur3_fmix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// A cheap two-shift Fibonacci mixer: the fat tree's per-switch uplink rotation. Weaker than the two above;
// kept because the topology's path choices (and so every cluster result) depend on it.
constexpr std::uint64_t fibonacci_mix64(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ull;
  return x ^ (x >> 29);
}

// 64-bit FNV-1a's standard offset basis and prime.
inline constexpr std::uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ull;
inline constexpr std::uint64_t kFnv1aPrime = 0x100000001b3ull;

// Incremental 64-bit FNV-1a: small, and stable across platforms and releases (std::hash is neither).
class Fnv1a {
 public:
  constexpr explicit Fnv1a(std::uint64_t basis = kFnv1aOffsetBasis) : hash_(basis) {}
  void update(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) hash_ = (hash_ ^ p[i]) * kFnv1aPrime;
  }
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_;
};

// The basis the sweep store has always hashed experiment ids with (the standard one with a digit lost).
// Kept: the ids name existing sweep results folders, which a resumed sweep must find again.
inline constexpr std::uint64_t kSweepIdFnv1aBasis = 1469598103934665603ull;

// FNV-1a of a whole string, from `basis`.
inline std::uint64_t fnv1a(std::string_view s, std::uint64_t basis = kFnv1aOffsetBasis) {
  Fnv1a h(basis);
  h.update(s);
  return h.value();
}

}  // namespace warpsim
