// Partition map files (see map_file.hpp).
#include "partition/map_file.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace warpsim::partition {

void write_map_file(const std::string& path, const LpMap& map, std::uint64_t lp_count) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write map file " + tmp);
    out << "# warpsim partition map: FIRST LAST RANK (inclusive LP id ranges)\n";
    out << "lps " << lp_count << "\nranks " << map.rank_count() << "\n";
    std::uint64_t first = 0;
    for (std::uint64_t lp = 1; lp <= lp_count; ++lp) {
      if (lp < lp_count && map.rank_of(static_cast<LpId>(lp)) == map.rank_of(static_cast<LpId>(first)))
        continue;
      out << first << ' ' << lp - 1 << ' ' << map.rank_of(static_cast<LpId>(first)) << '\n';
      first = lp;
    }
    out.flush();
    if (!out) throw std::runtime_error("cannot write map file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

namespace {

struct Line {
  std::uint64_t first, last;
  std::int64_t rank;
  std::uint64_t line;
};

bool parse_uint(const std::string& word, std::uint64_t& value) {
  if (word.empty() || word.find_first_not_of("0123456789") != std::string::npos || word.size() > 19)
    return false;
  value = std::stoull(word);
  return true;
}

}  // namespace

RangeLpMap read_map_file(const std::string& path, std::uint64_t expected_lps, int expected_ranks) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("map file " + path + ": cannot open");
  auto error = [&](std::uint64_t line, const std::string& what) {
    return std::invalid_argument("map file " + path + (line ? " line " + std::to_string(line) : "") + ": " +
                                 what);
  };
  std::uint64_t lps = 0, ranks = 0, number = 0;
  bool have_lps = false, have_ranks = false;
  std::vector<Line> lines;
  std::string text;
  while (std::getline(in, text)) {
    ++number;
    const auto hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    if (w[0] == "lps" || w[0] == "ranks") {
      std::uint64_t v = 0;
      if (w.size() != 2 || !parse_uint(w[1], v)) throw error(number, "expected '" + w[0] + " COUNT'");
      (w[0] == "lps" ? lps : ranks) = v;
      (w[0] == "lps" ? have_lps : have_ranks) = true;
      continue;
    }
    if (!have_lps || !have_ranks) throw error(number, "'lps N' and 'ranks R' must come before the ranges");
    std::uint64_t a = 0, b = 0, r = 0;
    const bool ok = (w.size() == 3 && parse_uint(w[0], a) && parse_uint(w[1], b) && parse_uint(w[2], r)) ||
                    (w.size() == 2 && parse_uint(w[0], a) && parse_uint(w[1], r) && (b = a, true));
    if (!ok) throw error(number, "expected 'FIRST LAST RANK' or 'LP RANK'");
    if (a > b) throw error(number, "range " + std::to_string(a) + ".." + std::to_string(b) + " is empty");
    if (b >= lps)
      throw error(number, "LP " + std::to_string(b) + " out of range (lps " + std::to_string(lps) + ")");
    if (r >= ranks)
      throw error(number,
                  "rank " + std::to_string(r) + " out of range (ranks " + std::to_string(ranks) + ")");
    lines.push_back({a, b, static_cast<std::int64_t>(r), number});
  }
  if (!have_lps || !have_ranks) throw error(0, "missing the 'lps N' or 'ranks R' header");
  if (lps != expected_lps) {
    throw error(0,
                "written for " + std::to_string(lps) + " LPs, the model has " + std::to_string(expected_lps));
  }
  if (ranks != static_cast<std::uint64_t>(expected_ranks)) {
    throw error(
        0, "written for " + std::to_string(ranks) + " ranks, the run has " + std::to_string(expected_ranks));
  }
  std::sort(lines.begin(), lines.end(), [](const Line& x, const Line& y) { return x.first < y.first; });
  std::vector<RangeLpMap::Run> runs;
  runs.reserve(lines.size());
  std::uint64_t next = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    if (l.first < next) {
      throw error(l.line, "LP " + std::to_string(l.first) + " listed twice (also line " +
                              std::to_string(lines[i - 1].line) + ")");
    }
    if (l.first > next) throw error(0, "LP " + std::to_string(next) + " is not mapped");
    runs.push_back({static_cast<LpId>(l.first), static_cast<std::int32_t>(l.rank)});
    next = l.last + 1;
  }
  if (next < lps) throw error(0, "LP " + std::to_string(next) + " is not mapped");
  return RangeLpMap(std::move(runs), lps, expected_ranks);
}

}  // namespace warpsim::partition
