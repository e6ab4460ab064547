#include "rollsim/app/registry.hpp"

#include "rollsim/analysis/simulation_keys.hpp"

namespace rollsim {

SimulationOptions simulation_options(const Scenario& sc) {
  const SimulationOptions o = simulation_parameters().read(sc);
  // Samples are counted in a long, and a grid finer than this is a mistake rather than a wish.
  constexpr double kMaxSamples = 1e9;
  if (o.t_end / o.output_dt > kMaxSamples)
    sc.fail(sc.is_default("simulation.output_dt") ? "simulation.t_end" : "simulation.output_dt",
            "simulation.t_end / simulation.output_dt = " + to_string(o.t_end / o.output_dt) +
                " samples; the limit is 1e9: raise output_dt or shorten t_end");
  return o;
}

OutputOptions output_options(const Scenario& sc) { return output_parameters().read(sc); }

}  // namespace rollsim
