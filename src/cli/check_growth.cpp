// rollsim check growth SCENARIO: the linear model's eigenvalues against short nonlinear runs.
#include <cmath>
#include <cstdio>

#include "common.hpp"
#include "rollsim/analysis/growth.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/io/growth_writer.hpp"

namespace rollsim::cli {

namespace {

struct GrowthArgs {
  std::string scenario, out;
  std::vector<std::string> sets;
};

int growth_command(const GrowthArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  auto system = build_system(sc);
  // A nonsmooth model or a constrained formulation is an input error (exit 2).
  const Linearizable& model = linearizable(*system, sc);
  const LinearOptions lopt = linear_options(sc);
  const GrowthOptions gopt = growth_options(sc);
  const std::string out = optional_output_path(sc, a.out);
  const LinearResult lin = linearize_system(*system, lopt, sc);
  require_full_state(lin, sc, "rollsim check growth");  // a linearisation about a steady motion is an input error
  const GrowthResult g = check_growth(simulation_options(sc), model, lin, gopt);
  std::printf("Short-time growth check: nonlinear runs from the equilibrium plus epsilon x mode shape\n");
  std::printf("%-20s %9s %24s %24s %11s %11s  %s\n", "mode", "epsilon", "eigenvalue [rad/s]", "measured [rad/s]",
              "rel. error", "floor", "status");
  for (const auto& r : g.rows) {
    char p[64], m[64];
    std::snprintf(p, sizeof p, "%.9f%+.9fi", r.predicted.real(), r.predicted.imag());
    std::snprintf(m, sizeof m, "%.9f%+.9fi", r.measured.real(), r.measured.imag());
    std::printf("%-20s %9.1e %24s %24s %11.3e %11.3e  %s\n", r.label.c_str(), r.epsilon, p, m, r.rel_error, r.floor,
                r.status.c_str());
  }
  std::printf("\nfloor: the estimated integration-error floor of the relative error, %s\n", kGrowthFloorFormula);
  std::printf("\nObserved order of the error in epsilon (over the %d smallest epsilons with error > %g x floor):\n",
              gopt.order_points, gopt.floor_margin);
  for (const auto& o : g.orders)
    std::printf("  %-20s %s  (%d rows)\n", o.label.c_str(), std::isnan(o.order) ? "-" : std::to_string(o.order).c_str(),
                o.points);
  std::printf("\nSmall-epsilon check (epsilon <= %g, relative error <= %g): %s\n", gopt.small_epsilon, gopt.tolerance,
              g.passed ? "PASS" : "FAIL");
  for (const auto& p : g.problems) std::printf("  %s\n", p.c_str());
  if (!out.empty()) {
    ResultFile file(out, provenance(sc));
    write_growth(file.root(), g);
    file.close(true, "ok");
    std::printf("wrote %s\n", out.c_str());
  }
  // Exit 1 means only that the check failed; a run that could not be completed is not a failed check.
  if (g.run_failure == "interrupted") return kExitInterrupted;
  if (!g.run_failure.empty()) {
    std::fprintf(stderr, "rollsim: solver failure in a perturbed run (see the status column); the check could not "
                         "be carried out\n");
    return kExitSolver;
  }
  return g.passed ? kExitOk : kExitFailure;
}

}  // namespace

void add_check_growth_command(CLI::App& app) {
  auto args = std::make_shared<GrowthArgs>();
  auto* cmd = check_command(app)->add_subcommand(
      "growth", "Eigenvalues against growth rates and frequencies fitted on short nonlinear runs");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml) at an equilibrium")->required();
  cmd->add_option("-o,--output", args->out, "write the /growth table to this HDF5 file");
  cmd->add_option("--set", args->sets, "override a scenario key (repeatable)");
  cmd->callback([args]() { throw CLI::RuntimeError(growth_command(*args)); });
}

}  // namespace rollsim::cli
