// The cluster series' switch-port numbering: Topology::port_base() (arithmetic, what every rank uses to
// register its own switches' ports) equals the dense numbering of all switch ports in ascending LP id, for
// fat-trees of 2 and 3 tiers (with oversubscription, one GPU per node) and tori; and ClusterSeries
// registers each port under that id with its link bandwidth.
#include <gtest/gtest.h>

#include <string>

#include "engine/series_recorder.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_series.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {
namespace {

bool is_switch(LpKind k) {
  return k == LpKind::kNvSwitch || k == LpKind::kLeaf || k == LpKind::kTier1 || k == LpKind::kCore ||
         k == LpKind::kRouter;
}

void expect_dense_numbering(const ClusterParams& params, const std::string& what) {
  SCOPED_TRACE(what);
  const auto topo = make_topology(params);
  std::uint64_t next = 0;
  for (LpId lp = 0; lp < topo->lp_count(); ++lp) {
    if (!is_switch(topo->kind_of(lp))) continue;
    ASSERT_EQ(topo->port_base(lp), next) << "switch LP " << lp;
    next += topo->port_count(lp);
  }
  EXPECT_EQ(topo->port_total(), next);

  SeriesRecorder recorder(1000, 1000000);
  ClusterSeries series(recorder, *topo);
  const auto& kind = recorder.kinds()[series.port_kind()];
  EXPECT_EQ(kind.component_count, next);
  for (LpId lp = 0; lp < topo->lp_count(); ++lp) {
    if (!is_switch(topo->kind_of(lp))) continue;
    const std::uint32_t local0 = series.add_switch(lp);
    for (std::uint32_t p = 0; p < topo->port_count(lp); ++p) {
      EXPECT_EQ(kind.ids[local0 + p], topo->port_base(lp) + p);
      EXPECT_EQ(series.port_gbps(local0 + p), topo->peer(lp, p).link.bandwidth_gbps);
    }
  }
}

ClusterParams example(const char* file) {
  return spec::to_cluster_params(spec::load_cluster_spec(std::string(WARPSIM_EXAMPLES_DIR "/") + file));
}

TEST(ClusterSeries, SwitchPortsAreNumberedDenselyInLpOrder) {
  for (const char* file : {"fat_tree_2tier_16gpu.textproto", "fat_tree_3tier_16gpu.textproto",
                           "torus_2d_16gpu.textproto", "torus_3d_16gpu_flow.textproto"}) {
    expect_dense_numbering(example(file), file);
  }
  ClusterParams p;  // one GPU per node (no NVSwitches), oversubscribed leaves
  p.nodes = 8;
  p.gpus_per_node = 1;
  p.radix = 6;
  p.oversubscription = 2;
  expect_dense_numbering(p, "8x1 radix 6, oversubscription 2");
}

}  // namespace
}  // namespace warpsim::cluster
