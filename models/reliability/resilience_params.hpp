// Plain parameters of the resilience model (resilience_model.hpp): the training run's timeline (step time,
// checkpoint interval and cost, restart cost, horizon) and the failure domains with their components'
// MTBFs. Filled by experiment/ from the spec and the main simulation, or directly by tests; no spec types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace warpsim::reliability {

// Component classes, in the order of reliability.proto's FailureRate.component names.
enum class Component : std::uint8_t { kGpu, kNode, kNic, kNvSwitch, kSwitch, kStorage, kCount };
std::string_view to_string(Component c);

// One class of component inside a failure domain: `per_domain` of them, each failing at 1 / mtbf_s.
struct FailureClass {
  Component component = Component::kGpu;
  std::uint32_t per_domain = 1;
  double mtbf_s = 0;
};

// `domains` identical failure domains (the job's nodes, the fabric switches, the storage targets). A
// domain is one LP: its components' failures form one Poisson process at the summed rate.
struct DomainGroup {
  std::string name;  // "node", "switch", "storage"
  std::uint32_t domains = 0;
  std::vector<FailureClass> classes;
  // Whether a failure here may repeat (correlated failures, ResilienceParams::repeat_probability).
  bool repeats = false;
  double rate_per_s() const;  // of one domain
};

struct ResilienceParams {
  double horizon_s = 0;              // simulated wall time of the run
  double step_s = 0;                 // T: one training step without checkpoint stalls
  std::uint32_t interval_steps = 1;  // K: a checkpoint after every K steps
  double checkpoint_s = 0;           // C: stall of one checkpoint
  double restart_s = 0;              // R: failure to resumed training
  std::vector<DomainGroup> groups;
  // Correlated failures (not in Daly's model): after a failure in a domain whose group `repeats`, with this
  // probability the same component fails again at a uniform time within repeat_window_s (a flaky part
  // that was not replaced). A repeat may itself repeat.
  double repeat_probability = 0;
  double repeat_window_s = 0;
  // The spare pool (not in Daly's model either): with repair_s > 0 every failure of a node-domain
  // component (GPU, host, NIC, NVSwitch) sends its node to repair for repair_s, and a spare takes its place;
  // a restart that finds more nodes in repair than spare_nodes waits until enough are back.
  std::uint32_t spare_nodes = 0;
  double repair_s = 0;

  double system_rate_per_s() const;  // primary failures per second over all domains
  std::uint64_t domain_count() const;
};

}  // namespace warpsim::reliability
