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

/// The widths of the table of largest differences: signal, |DAE - ODE|, unit (in brackets), time.
constexpr const char* kRowFormat = "  %-22s %11s  %-9s %10s%s\n";

std::string bracketed_unit(const std::string& unit) { return "[" + (unit.empty() ? std::string("1") : unit) + "]"; }

/// One section of the table; a signal undefined (NaN) at some samples is marked with a footnote below the section,
/// which counts them and quotes the signal's description (which says where it is undefined).
/// `marks` numbers the footnotes across the sections.
void print_rows(const char* title, const std::vector<SignalDifference>& rows, int& marks) {
  std::printf("%s\n", title);
  std::vector<std::string> notes;
  for (const auto& d : rows) {
    char diff[32], at[32];
    std::snprintf(diff, sizeof diff, "%.3e", d.max_abs);
    std::snprintf(at, sizeof at, "%.6f", d.at_t);
    const bool undefined = d.undefined_both + d.undefined_one > 0;
    if (undefined) {
      char b[160];
      std::snprintf(b, sizeof b, " at %zu samples (t = %.6f to %.6f s)", d.undefined_both + d.undefined_one,
                    d.undefined_from, d.undefined_to);
      std::string note = "  (" + std::to_string(++marks) + ") NaN in " +
                         (d.undefined_one == 0 ? "both runs" : "one run only") + b +
                         (d.undefined_one == 0 ? ", left out of the difference" : ": an infinite difference");
      if (!d.description.empty()) note += "; " + d.name + " is " + d.description;
      notes.push_back(note);
    }
    const std::string mark = undefined ? "  (" + std::to_string(marks) + ")" : "";
    std::printf(kRowFormat, d.name.c_str(), diff, bracketed_unit(d.unit).c_str(), at, mark.c_str());
  }
  for (const auto& n : notes) std::printf("%s\n", n.c_str());
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
  std::printf("largest differences at the common samples\n");
  std::printf(kRowFormat, "signal", "|DAE - ODE|", "unit", "at t [s]", "");
  int marks = 0;
  print_rows("states (judged)", c.states, marks);
  print_rows("forces (judged)", c.forces, marks);
  print_rows("other outputs (not judged)", c.others, marks);
  std::printf("events\n");
  for (const auto& e : c.events)
    std::printf("  %-22s ODE %.12f s  DAE %.12f s  difference %.3e s\n", e.kind.c_str(), e.t_a, e.t_b, e.t_b - e.t_a);
  for (const auto* run : {&fc.ode, &fc.dae})
    for (const auto& it : run->result.summary)
      if (it.key == "energy_drift_abs" || it.key.rfind("constraint_", 0) == 0)
        std::printf("%s %-22s %.3e%s%s\n", run == &fc.ode ? "ODE" : "DAE", it.key.c_str(), it.number,
                    it.unit.empty() ? "" : " ", it.unit.c_str());
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
