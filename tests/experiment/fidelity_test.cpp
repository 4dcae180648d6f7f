// The network-fidelity rule (experiment/fidelity.hpp): flag > simulation.fidelity > cluster.network.fidelity
// > packet; the two spec fields must agree; one parser names the bad field.
#include <gtest/gtest.h>

#include "experiment/fidelity.hpp"

namespace warpsim::experiment {
namespace {

using cluster::Fidelity;

TEST(Fidelity, ParsesTheTwoNames) {
  EXPECT_EQ(parse_fidelity("packet"), Fidelity::kPacket);
  EXPECT_EQ(parse_fidelity("flow"), Fidelity::kFlow);
  EXPECT_FALSE(parse_fidelity("fluid"));
  EXPECT_FALSE(parse_fidelity(""));
  EXPECT_EQ(to_string(Fidelity::kFlow), "flow");
  EXPECT_EQ(to_string(Fidelity::kPacket), "packet");
}

TEST(Fidelity, Precedence) {
  EXPECT_EQ(resolve_fidelity("", "", "").fidelity, Fidelity::kPacket);
  EXPECT_EQ(resolve_fidelity("", "", "flow").fidelity, Fidelity::kFlow);
  EXPECT_EQ(resolve_fidelity("", "flow", "").fidelity, Fidelity::kFlow);
  EXPECT_EQ(resolve_fidelity("", "flow", "flow").fidelity, Fidelity::kFlow);
  EXPECT_EQ(resolve_fidelity("packet", "", "flow").fidelity, Fidelity::kPacket);  // the flag wins
  EXPECT_EQ(resolve_fidelity("flow", "packet", "packet").fidelity, Fidelity::kFlow);
  EXPECT_TRUE(resolve_fidelity("flow", "", "").error_field.empty());
}

TEST(Fidelity, OneErrorNamingTheField) {
  auto c = resolve_fidelity("fluid", "", "");
  EXPECT_EQ(c.error_field, "--fidelity");
  EXPECT_EQ(c.error, "unknown fidelity 'fluid' (known: packet, flow)");
  c = resolve_fidelity("", "fluid", "flow");
  EXPECT_EQ(c.error_field, "simulation.fidelity");
  c = resolve_fidelity("", "", "fluid");
  EXPECT_EQ(c.error_field, "cluster.network.fidelity");
  c = resolve_fidelity("", "packet", "flow");
  EXPECT_EQ(c.error_field, "simulation.fidelity");
  EXPECT_EQ(c.error, "'packet' disagrees with cluster.network.fidelity 'flow'");
}

}  // namespace
}  // namespace warpsim::experiment
