// Factories of the strategies the registry in partitioner.cpp knows (one file each).
#pragma once

#include <memory>

#include "partition/partitioner.hpp"

namespace warpsim::partition {

std::unique_ptr<Partitioner> make_block_partitioner();
std::unique_ptr<Partitioner> make_round_robin_partitioner();
std::unique_ptr<Partitioner> make_topology_partitioner(bool striped);
std::unique_ptr<Partitioner> make_metis_partitioner();

}  // namespace warpsim::partition
