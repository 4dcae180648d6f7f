// PHOLD (Fujimoto's synthetic benchmark) with ROSS's semantics, so figures compare with ROSS's PHOLD:
// each LP starts with `start_events` events; handling one schedules one new event at
// now + lookahead + Exp(mean); with probability `remote` its destination is uniform over all LPs, else the
// LP itself. One PHOLD time unit is one microsecond of engine time.
// With a SeriesRecorder, each LP is a "phold_lp" component whose commit handler records, per sample
// interval, the events it handled and how many of them came from another LP.
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/model.hpp"
#include "engine/series_recorder.hpp"
#include "engine/slotted_lp_type.hpp"

namespace warpsim::phold {

struct PholdParams {
  std::uint64_t lp_count = 2048;
  std::uint32_t start_events = 1;
  double lookahead = 1.0;  // time units
  double mean = 1.0;       // time units
  double remote = 0.25;    // probability in [0, 1]
};

inline constexpr SimTime kTimeUnit = kPicosPerMicro;
SimTime to_engine_time(double units);

struct PholdState {
  std::uint64_t handled;   // events handled
  std::uint64_t checksum;  // sum of a hash of every handled event's key: order-sensitive to *which* events
};

// Checkpoints are the base's default: the State's bytes.
class PholdLp final : public SlottedLpType<PholdState> {
 public:
  // Series of the "phold_lp" component kind, in declaration order.
  enum Metric : std::uint32_t { kEvents = 0, kRemoteEvents = 1 };
  static constexpr std::string_view kSeriesKind = "phold_lp";

  // `recorder` (optional) must outlive the LP type; the type declares its component kind in it.
  PholdLp(const PholdParams& params, SeriesRecorder* recorder);
  std::string_view name() const override { return "phold"; }
  void init(std::uint32_t slot, LpContext& ctx) override;
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;

 private:
  using State = PholdState;
  void on_added(std::uint32_t slot, LpId id) override;
  SimTime draw_delay(LpContext& ctx) const;

  PholdParams params_;
  SimTime lookahead_ps_;
  SeriesRecorder* recorder_ = nullptr;
  SeriesRecorder::KindId series_kind_ = 0;  // component `slot` of this kind is the LP in `slot`
};

class PholdModel final : public Model {
 public:
  explicit PholdModel(const PholdParams& params, SeriesRecorder* recorder = nullptr)
      : params_(params), lp_type_(params, recorder) {}
  std::uint64_t lp_count() const override { return params_.lp_count; }
  std::size_t type_count() const override { return 1; }
  LpType& type(std::size_t) override { return lp_type_; }
  std::size_t type_of(LpId) const override { return 0; }
  std::size_t payload_bytes() const override { return 0; }
  SimTime lookahead() const override { return to_engine_time(params_.lookahead); }

 private:
  PholdParams params_;
  PholdLp lp_type_;
};

}  // namespace warpsim::phold
