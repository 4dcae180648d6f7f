// Byte counts as users type them (see byte_count.hpp).
#include "experiment/byte_count.hpp"

#include <cctype>
#include <utility>

#include "experiment/setting_error.hpp"

namespace warpsim::experiment {

std::uint64_t parse_byte_count(const std::string& text, const std::string& flag, std::uint64_t max_bytes,
                               const std::string& max_text) {
  std::size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0) throw SettingError(flag + ": expected a byte count like 1KiB or 4GiB (got '" + text + "')");
  const std::string digits = text.substr(0, pos), suffix = text.substr(pos);
  static const std::pair<const char*, std::uint64_t> kUnits[] = {{"", 1},
                                                                 {"B", 1},
                                                                 {"K", 1ull << 10},
                                                                 {"KiB", 1ull << 10},
                                                                 {"M", 1ull << 20},
                                                                 {"MiB", 1ull << 20},
                                                                 {"G", 1ull << 30},
                                                                 {"GiB", 1ull << 30},
                                                                 {"T", 1ull << 40},
                                                                 {"TiB", 1ull << 40},
                                                                 {"KB", 1000},
                                                                 {"MB", 1000'000},
                                                                 {"GB", 1000'000'000},
                                                                 {"TB", 1000'000'000'000}};
  std::uint64_t unit = 0;
  for (const auto& [name, bytes] : kUnits)
    if (suffix == name) unit = bytes;
  if (unit == 0)
    throw SettingError(flag + ": unknown unit '" + suffix + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  if (digits.size() > 13) throw SettingError(flag + ": value too large");
  const std::uint64_t value = std::stoull(digits);
  if (value > max_bytes / unit) throw SettingError(flag + ": at most " + max_text);
  return value * unit;
}

}  // namespace warpsim::experiment
