// Byte counts typed on the command line (--memory-budget, collective --min-bytes ...).
#include "experiment/byte_count.hpp"

#include <gtest/gtest.h>

#include "experiment/setting_error.hpp"

namespace warpsim::experiment {
namespace {

std::uint64_t parse(const std::string& text) {
  return parse_byte_count(text, "--x", 1ull << 50, "1 PiB");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const SettingError& e) {
    return e.what();
  }
  return "";
}

TEST(ByteCount, BinaryAndDecimalUnits) {
  EXPECT_EQ(parse("1000"), 1000u);
  EXPECT_EQ(parse("12B"), 12u);
  EXPECT_EQ(parse("4K"), 4096u);
  EXPECT_EQ(parse("4KiB"), 4096u);
  EXPECT_EQ(parse("80MiB"), 80u << 20);
  EXPECT_EQ(parse("3G"), 3ull << 30);
  EXPECT_EQ(parse("2TiB"), 2ull << 40);
  EXPECT_EQ(parse("5KB"), 5000u);
  EXPECT_EQ(parse("5MB"), 5000000u);
  EXPECT_EQ(parse("5GB"), 5000000000u);
  EXPECT_EQ(parse("1TB"), 1000000000000u);
}

TEST(ByteCount, BadInputNamesTheFlag) {
  EXPECT_EQ(error_of("MiB"), "--x: expected a byte count like 1KiB or 4GiB (got 'MiB')");
  EXPECT_EQ(error_of("-1"), "--x: expected a byte count like 1KiB or 4GiB (got '-1')");
  EXPECT_EQ(error_of("1.5GiB"), "--x: unknown unit '.5GiB' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  EXPECT_EQ(error_of("2048TiB"), "--x: at most 1 PiB");
  EXPECT_EQ(error_of("99999999999999999"), "--x: value too large");
  EXPECT_EQ(error_of("1025TiB"), "--x: at most 1 PiB");
  EXPECT_EQ(error_of("1024TiB"), "");
}

}  // namespace
}  // namespace warpsim::experiment
