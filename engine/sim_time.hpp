// Simulated time and LP identifiers shared by every layer.
// Engine time is an unsigned integer count of picoseconds: integer time keeps sequential and parallel runs
// bit-identical (no floating-point drift), and 2^64 ps is about 213 days of simulated time.
#pragma once

#include <cstdint>
#include <limits>

namespace warpsim {

using SimTime = std::uint64_t;  // picoseconds
using LpId = std::uint32_t;     // global logical-process id, dense in [0, lp_count)

inline constexpr SimTime kTimeInfinity = std::numeric_limits<SimTime>::max();
inline constexpr SimTime kPicosPerNano = 1'000;
inline constexpr SimTime kPicosPerMicro = 1'000'000;
inline constexpr SimTime kPicosPerSecond = 1'000'000'000'000;

}  // namespace warpsim
