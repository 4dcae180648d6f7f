// The partition map file `warpsim partition --write-map` writes and `warpsim run --partition-map` reads.
// Text:
//   # comment lines and blank lines are ignored
//   lps 36864            LP count of the model the map is for
//   ranks 4              rank count
//   0 9215 0             FIRST LAST RANK: LPs FIRST..LAST (inclusive) live on RANK
//   9216 0               LP RANK: one LP
// Every LP in [0, lps) must be listed exactly once. Runs of equal ranks are written as one line, so the file
// is as compact as the map (a few lines per rank for the topology strategy).
#pragma once

#include <cstdint>
#include <string>

#include "partition/range_map.hpp"

namespace warpsim::partition {

// Atomic: written to a temporary name, then renamed. Throws std::runtime_error on an I/O failure.
void write_map_file(const std::string& path, const LpMap& map, std::uint64_t lp_count);
// Throws std::invalid_argument "map file PATH line N: ..." for malformed lines, missing or duplicate LPs,
// LPs or ranks out of range, or an LP/rank count that differs from the expected one.
RangeLpMap read_map_file(const std::string& path, std::uint64_t expected_lps, int expected_ranks);

}  // namespace warpsim::partition
