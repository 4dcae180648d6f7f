// Power and energy series derived from the committed cluster series (see power_series.hpp).
#include "models/energy/power_series.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/sim_time.hpp"

namespace warpsim::energy {

namespace {

using KindId = SeriesRecorder::KindId;

// Seconds each sample of the finished grid covers (the last one may be shorter).
std::vector<double> sample_seconds(const SeriesRecorder& r) {
  std::vector<double> out(r.sample_count());
  for (std::uint64_t s = 0; s < out.size(); ++s) {
    const SimTime lo = s * r.interval();
    const SimTime hi = std::min(r.end_time(), lo + r.interval());
    out[s] = static_cast<double>(hi - lo) / static_cast<double>(kPicosPerSecond);
  }
  return out;
}

// Per local component: the power of sample s, given the component and its input rows.
using PowerOf = std::function<double(std::uint32_t local, std::uint64_t s, double seconds)>;

void derive(SeriesRecorder& r, KindId kind, const std::vector<double>& seconds,
            const std::string& description, const PowerOf& power_of, PowerSeriesTotals& totals) {
  const std::uint32_t metric =
      r.add_derived_metric(kind, MetricSpec{"power_w", "W", Aggregation::kTimeAverage, description});
  const std::size_t n = r.kinds()[kind].ids.size();
  std::vector<double> joules(n, 0.0);
  for (std::uint32_t local = 0; local < n; ++local) {
    const auto row = r.mutable_row(kind, metric, local);
    for (std::uint64_t s = 0; s < row.size(); ++s) {
      row[s] = power_of(local, s, seconds[s]);
      joules[local] += row[s] * seconds[s];
    }
  }
  r.add_derived_column(kind, ColumnSpec{"energy_j", "J", true, "integral of power_w over the series grid"},
                       joules);
  for (std::uint32_t local = 0; local < n; ++local)
    totals.component_joules.emplace_back(std::uint64_t{kind} << 48 | r.kinds()[kind].ids[local],
                                         joules[local]);
}

struct Input {
  KindId kind;
  std::vector<std::uint32_t> metrics;
};

// The kind and its input metrics, when all exist.
std::optional<Input> input(const SeriesRecorder& r, const char* kind,
                           std::initializer_list<const char*> names) {
  const auto k = r.find_kind(kind);
  if (!k) return std::nullopt;  // declarations are alike on every rank, so every rank decides alike
  Input in{*k, {}};
  for (const char* name : names) {
    const auto m = r.find_metric(*k, name);
    if (!m) return std::nullopt;
    in.metrics.push_back(*m);
  }
  return in;
}

double column(const SeriesRecorder& r, KindId kind, std::uint32_t col, std::uint32_t local) {
  const auto& k = r.kinds()[kind];
  return k.column_values[static_cast<std::size_t>(local) * k.columns.size() + col];
}

}  // namespace

PowerSeriesTotals add_power_series(SeriesRecorder& r, const PowerParams& p) {
  PowerSeriesTotals totals;
  const std::vector<double> seconds = sample_seconds(r);
  if (const auto in = input(r, "gpu", {"busy"})) {
    const KindId k = in->kind;
    const std::uint32_t busy = in->metrics[0];
    derive(
        r, k, seconds, "idle + (busy - idle) x busy fraction",
        [&](std::uint32_t local, std::uint64_t s, double) {
          return gpu_power_w(p, r.row(k, busy, local)[s]);
        },
        totals);
    if (const auto node = r.find_column(k, "node")) {
      for (std::uint32_t local = 0; local < r.kinds()[k].ids.size(); ++local)
        totals.nodes = std::max(totals.nodes, static_cast<std::uint64_t>(column(r, k, *node, local)) + 1);
    }
  }
  if (const auto in = input(r, "nic", {"tx_bytes"})) {
    const KindId k = in->kind;
    const std::uint32_t tx = in->metrics[0];
    derive(
        r, k, seconds, "static + energy per byte x bytes transmitted / sample length",
        [&](std::uint32_t local, std::uint64_t s, double sec) {
          return link_power_w(p.nic, r.row(k, tx, local)[s], sec);
        },
        totals);
  }
  if (const auto in = input(r, "switch_port", {"bytes"})) {
    const KindId k = in->kind;
    const std::uint32_t bytes = in->metrics[0];
    const auto lp_col = r.find_column(k, "switch_lp");
    const auto tier_col = r.find_column(k, "tier");
    if (lp_col && tier_col) {
      // A switch's static power is shared evenly by its ports (all of them are on the switch LP's rank).
      const std::size_t n = r.kinds()[k].ids.size();
      std::map<double, std::uint32_t> ports;
      for (std::uint32_t local = 0; local < n; ++local) ++ports[column(r, k, *lp_col, local)];
      std::vector<LinkPower> port_power(n);
      for (std::uint32_t local = 0; local < n; ++local) {
        const LinkPower& sw = column(r, k, *tier_col, local) == 0 ? p.nvswitch : p.network_switch;
        port_power[local] = {sw.static_w / ports[column(r, k, *lp_col, local)], sw.joules_per_byte};
      }
      derive(
          r, k, seconds, "switch static / its ports + energy per byte x bytes / sample length",
          [&](std::uint32_t local, std::uint64_t s, double sec) {
            return link_power_w(port_power[local], r.row(k, bytes, local)[s], sec);
          },
          totals);
    }
  }
  if (const auto in = input(r, "storage", {"read_bytes", "write_bytes"})) {
    const KindId k = in->kind;
    const std::uint32_t rd = in->metrics[0], wr = in->metrics[1];
    derive(
        r, k, seconds, "static + energy per byte x bytes read and written / sample length",
        [&](std::uint32_t local, std::uint64_t s, double sec) {
          return link_power_w(p.storage, r.row(k, rd, local)[s] + r.row(k, wr, local)[s], sec);
        },
        totals);
  }
  return totals;
}

}  // namespace warpsim::energy
