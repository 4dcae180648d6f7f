// The map file: a written map reads back identical; missing, duplicate and out-of-range LPs, out-of-range
// ranks, a wrong LP or rank count and malformed lines are errors naming the line.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "partition/block_map.hpp"
#include "partition/map_file.hpp"

namespace warpsim::partition {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& text, std::uint64_t lps = 10, int ranks = 2) {
  try {
    read_map_file(write("bad.map", text), lps, ranks);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(MapFile, RoundTrip) {
  const RoundRobinLpMap rr(1000, 3);
  const std::string path = testing::TempDir() + "rr.map";
  write_map_file(path, rr, 1000);
  const RangeLpMap back = read_map_file(path, 1000, 3);
  for (LpId lp = 0; lp < 1000; ++lp) ASSERT_EQ(back.rank_of(lp), rr.rank_of(lp));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(back.lps_of(r), rr.lps_of(r));
}

TEST(MapFile, SingleLpLinesAndComments) {
  const RangeLpMap m =
      read_map_file(write("ok.map", "# c\nlps 4\nranks 2\n\n0 1 0  # two\n2 1\n3 1\n"), 4, 2);
  EXPECT_EQ(m.lps_of(0), (std::vector<LpId>{0, 1}));
  EXPECT_EQ(m.lps_of(1), (std::vector<LpId>{2, 3}));
}

TEST(MapFile, Errors) {
  EXPECT_NE(error_of("lps 10\nranks 2\n0 4 0\n6 9 1\n").find("LP 5 is not mapped"), std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n0 4 0\n5 8 1\n").find("LP 9 is not mapped"), std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n0 5 0\n5 9 1\n").find("line 4: LP 5 listed twice (also line 3)"),
            std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n0 10 0\n").find("line 3: LP 10 out of range"), std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n0 9 2\n").find("line 3: rank 2 out of range"), std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n0 x 1\n").find("line 3: expected"), std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n0 9 -1\n").find("line 3: expected"), std::string::npos);
  EXPECT_NE(error_of("0 9 0\n").find("line 1: 'lps N' and 'ranks R'"), std::string::npos);
  EXPECT_NE(error_of("lps 11\nranks 2\n0 10 0\n").find("written for 11 LPs, the model has 10"),
            std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 4\n0 9 0\n").find("written for 4 ranks, the run has 2"),
            std::string::npos);
  EXPECT_NE(error_of("lps 10\nranks 2\n5 4 0\n").find("is empty"), std::string::npos);
  EXPECT_THROW(read_map_file(testing::TempDir() + "does-not-exist.map", 10, 2), std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::partition
