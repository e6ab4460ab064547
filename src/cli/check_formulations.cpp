// rollsim check formulations SCENARIO: the ODE and the DAE formulation of one scenario, compared.
#include <cstdio>

#include "common.hpp"
#include "rollsim/app/formulations.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/io/formulations_writer.hpp"

namespace rollsim::cli {

namespace {

struct CheckArgs {
  std::string scenario, out;
  std::vector<std::string> sets;
};

void print_rows(const char* title, const std::vector<SignalDifference>& rows) {
  std::printf("%s\n", title);
  for (const auto& d : rows)
    std::printf("  %-22s %.3e %-6s at t = %.6f s\n", d.name.c_str(), d.max_abs, d.unit.c_str(), d.at_t);
}

int check_formulations_command(const CheckArgs& a) {
  const FormulationScenarios scenarios = formulation_scenarios(a.scenario, a.sets);
  // A bad -o is an input error (exit 2), found before the runs.
  const std::string out = a.out.empty() ? std::string() : output_path(scenarios.ode, a.out);
  const FormulationCheck fc = check_formulations(scenarios);
  const Comparison& c = fc.comparison;
  std::printf("ODE: %s at t = %.12g s (%s); DAE: %s at t = %.12g s (%s)\n", fc.ode.result.termination.c_str(),
              fc.ode.result.t_final, fc.ode.result.stats.method.c_str(), fc.dae.result.termination.c_str(),
              fc.dae.result.t_final, fc.dae.result.stats.method.c_str());
  std::printf("common samples   %zu\n", c.n_common_samples);
  print_rows("largest differences, states (DAE - ODE)", c.states);
  print_rows("largest differences, forces", c.forces);
  print_rows("largest differences, other outputs (not judged)", c.others);
  std::printf("events\n");
  for (const auto& e : c.events)
    std::printf("  %-22s ODE %.12f s  DAE %.12f s  difference %.3e s\n", e.kind.c_str(), e.t_a, e.t_b, e.t_b - e.t_a);
  for (const auto* run : {&fc.ode, &fc.dae})
    for (const auto& it : run->result.summary)
      if (it.key == "energy_drift_abs" || it.key.rfind("constraint_", 0) == 0)
        std::printf("%s %-22s %.3e %s\n", run == &fc.ode ? "ODE" : "DAE", it.key.c_str(), it.number, it.unit.c_str());
  std::printf("tolerances       state %.1e, force %.1e N, event time %.1e s\n", fc.tol.state, fc.tol.force,
              fc.tol.event_time);
  std::printf("largest          state %.3e (%s), force %.3e N (%s), event time %.3e s (%s)\n", c.max_state,
              c.worst_state.c_str(), c.max_force, c.worst_force.c_str(), c.max_event_time, c.worst_event.c_str());
  for (const auto& p : c.problems) std::printf("FAIL: %s\n", p.c_str());
  std::printf("%s\n", c.passed ? "PASS: the formulations agree within the tolerances" : "FAIL");
  if (!out.empty()) {
    ResultFile file(out, provenance(scenarios.ode));
    write_formulations(file.root(), fc);
    // Complete when both runs finished: a comparison of a failed run is kept, marked incomplete.
    const bool runs_done = fc.ode.result.completed() && fc.dae.result.completed();
    file.mark_data();
    file.close(runs_done, runs_done ? "ok" : "a run failed: see /formulations/problems");
    std::printf("wrote %s\n", out.c_str());
  }
  return c.passed ? kExitOk : kExitFailure;
}

}  // namespace

void add_check_formulations_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = check_command(app)->add_subcommand(
      "formulations", "Run the ODE and the DAE formulation of a scenario and compare states, forces and event times");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml)")->required();
  cmd->add_option("-o,--output", args->out,
                  "write the comparison (/formulations: differences, tolerances, events, verdict) to this HDF5 file");
  cmd->add_option("--set", args->sets, "override a scenario key: --set initial.theta1=0.02 (repeatable)");
  cmd->callback([args]() { throw CLI::RuntimeError(check_formulations_command(*args)); });
}

}  // namespace rollsim::cli
