#pragma once
// One fuzz input through the loader, the model's validation and the solver options; shared by the
// libFuzzer target (fuzz/fuzz_scenario.cpp) and the regression test (tests/test_fuzz_regressions.cpp).
// Input format: the scenario text, optionally followed by a line "%%" and one override (KEY=VALUE) per line.
#include <cmath>
#include <string>
#include <vector>

#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim::fuzz {

/// Checks on a scenario the loader accepted; returns what is wrong, or "".
inline std::string check_accepted(const Scenario& sc) {
  const ModelEntry* model = find_model(sc.model);
  if (!model) return "a validated scenario names an unknown model: " + sc.model;
  std::unique_ptr<HybridSystem> system;
  try {
    system = build_system(sc);
  } catch (const SolverError&) {
    return "";  // a start with no consistent contact mode, or several (Painlevé): refused (exit 3) as a run is
  }
  const SimulationOptions opt = simulation_options(sc);
  if (!(opt.t_end > 0) || !(opt.output_dt > 0) || !std::isfinite(opt.t_end) || !std::isfinite(opt.output_dt))
    return "accepted an impossible time grid";
  if (!(opt.solver.rtol >= 1e-15 && opt.solver.rtol < 1) || !(opt.solver.atol > 0) || opt.solver.max_steps < 1)
    return "accepted impossible tolerances";

  // The system can be evaluated at its initial state, and what it reports there is finite.
  const std::size_t n = system->size();
  std::vector<double> x(n), xdot(n), y(system->outputs().size());
  system->initial_state(x.data());
  const int mode = system->initial_mode(x.data());
  // A DAE has a residual, not an explicit right-hand side: its initial state is made consistent by IDACalcIC.
  if (const OdeSystem* ode = facet<OdeSystem>(*system)) ode->rhs(opt.t0, x.data(), mode, xdot.data());
  system->compute_outputs(opt.t0, x.data(), mode, y.data());
  for (double v : x)
    if (!std::isfinite(v)) return "accepted a non-finite initial state";
  for (double v : xdot)
    if (!std::isfinite(v)) return "accepted an initial state whose derivative is not finite";
  if (const WitnessSystem* w = facet<WitnessSystem>(*system)) {
    std::vector<double> g(w->witnesses(mode).size());
    w->witness_values(opt.t0, x.data(), mode, g.data());
  }

  // The resolved text stored in every result file is itself a scenario that resolves to the same values.
  const std::string resolved = sc.resolved_text();
  try {
    const Scenario again = load_scenario_text(resolved, "resolved.toml");
    if (again.resolved_text() != resolved) return "the resolved text changes on reloading:\n" + resolved;
  } catch (const InputError& e) {
    return "the resolved text does not load again: " + std::string(e.what()) + "\n" + resolved;
  }
  return "";
}

/// Runs one input; returns "" for a clean acceptance or rejection (InputError), else what went wrong.
/// Any other exception escapes to the caller.
inline std::string run_input(const std::string& input) {
  std::string text = input;
  std::vector<std::string> overrides;
  const auto sep = input.find("\n%%\n");
  if (sep != std::string::npos) {
    text = input.substr(0, sep + 1);
    const std::string rest = input.substr(sep + 4);
    for (std::size_t start = 0; start < rest.size() && overrides.size() < 8;) {
      const auto end = rest.find('\n', start);
      overrides.push_back(rest.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  try {
    const Scenario sc = load_scenario_text(text, "fuzz.toml", overrides);
    return check_accepted(sc);
  } catch (const InputError&) {
    return "";  // a clean rejection
  }
}

}  // namespace rollsim::fuzz
