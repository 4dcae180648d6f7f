// What this rank's share of a finished cluster simulation did, per component kind (counts, busy time,
// bytes moved): the input of the energy model. Ranks sum their totals (jobs/cli does the reduction; models
// never call MPI), and every LP lives on exactly one rank, so the sum is the same for any rank count.
#pragma once

#include "models/cluster/cluster_model.hpp"
#include "models/energy/power_model.hpp"

namespace warpsim::energy {

ComponentTotals local_totals(const cluster::ClusterModel& model);
// The component counts of a whole cluster from its topology alone (busy time and bytes 0): the inventory
// when nothing is simulated (`warpsim cost`).
ComponentTotals inventory(const cluster::Topology& topology);

}  // namespace warpsim::energy
