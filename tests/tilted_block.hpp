#pragma once
// The block on a tilted plane of scenarios/block_tilted_plane.toml, for the tests of Coulomb's cone.
#include <cmath>

#include "support.hpp"

namespace rollsim::test {

/// The block of scenarios/block_tilted_plane.toml: its parameters, the normal force N = m g cos(beta), the slope's
/// pull m g sin(beta) and the critical sideways push P_c = m g sqrt(mu_s^2 cos^2(beta) - sin^2(beta)), where the
/// needed friction sqrt(slope^2 + P_c^2) reaches mu_s N.
struct TiltedBlock {
  Scenario base = load_scenario_text(scenario_text("block_tilted_plane.toml"), "block_tilted_plane.toml", {});
  double m = base.real("parameters.m"), g = base.real("parameters.g"), beta = base.real("parameters.beta"),
         mu = base.real("parameters.mu"), mu_s = base.real("parameters.mu_s");
  double N = m * g * std::cos(beta), slope = m * g * std::sin(beta),
         Pc = m * g * std::sqrt(mu_s * mu_s * std::cos(beta) * std::cos(beta) - std::sin(beta) * std::sin(beta));
};

}  // namespace rollsim::test
