// Byte counts as users type them on the command line: "4GiB", "512K", "1000", "1MB".
#pragma once

#include <cstdint>
#include <string>

namespace warpsim::experiment {

// Binary suffixes (K, KiB, M, MiB, G, GiB, T, TiB), decimal ones (KB, MB, GB, TB), none or B for bytes.
// Throws SettingError naming `flag` for anything else, or for a value above `max_bytes`.
std::uint64_t parse_byte_count(const std::string& text, const std::string& flag, std::uint64_t max_bytes,
                               const std::string& max_text);

}  // namespace warpsim::experiment
