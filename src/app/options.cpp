#include "rollsim/app/registry.hpp"

namespace rollsim {

SimulationOptions simulation_options(const Scenario& sc) {
  SimulationOptions o;
  o.t_end = sc.real("simulation.t_end");
  o.output_dt = sc.real("simulation.output_dt");
  o.solver.method = sc.string("solver.method");
  o.solver.rtol = sc.real("solver.rtol");
  o.solver.atol = sc.real("solver.atol");
  for (const auto& [name, value] : sc.by_name("solver.atol")) o.solver.atol_by_state.emplace_back(name, value.first);
  o.solver.max_steps = sc.integer("solver.max_steps");
  if (sc.has("solver.max_step")) o.solver.max_step_size = sc.real("solver.max_step");
  // Samples are counted in a long, and a grid finer than this is a mistake rather than a wish.
  constexpr double kMaxSamples = 1e9;
  if (o.t_end / o.output_dt > kMaxSamples)
    sc.fail(sc.is_default("simulation.output_dt") ? "simulation.t_end" : "simulation.output_dt",
            "simulation.t_end / simulation.output_dt = " + to_string(o.t_end / o.output_dt) +
                " samples; the limit is 1e9: raise output_dt or shorten t_end");
  return o;
}

}  // namespace rollsim
