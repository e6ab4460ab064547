#include "rollsim/solve/integrator.hpp"

#include "rollsim/core/error.hpp"

namespace rollsim {

std::unique_ptr<Integrator> make_cvode_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_ida_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_erk_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_dopri5_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_dop853_integrator(const HybridSystem& system, const SolverOptions& options);

std::unique_ptr<Integrator> make_integrator(const HybridSystem& system, const SolverOptions& options) {
  if (options.method == "exact") {
    if (auto exact = system.make_exact_integrator(options)) return exact;
    throw InputError("solver.method \"exact\" needs a piecewise-linear model with closed-form modes; the model \"" +
                     system.model_name() + "\" has none");
  }
  if (system.formulation() == Formulation::Ode && (options.method == "bdf" || options.method == "adams"))
    return make_cvode_integrator(system, options);
  if (system.formulation() == Formulation::Ode && options.method == "erk") return make_erk_integrator(system, options);
  if (system.formulation() == Formulation::Ode && options.method == "dopri5")
    return make_dopri5_integrator(system, options);
  if (system.formulation() == Formulation::Ode && options.method == "dop853")
    return make_dop853_integrator(system, options);
  if (system.formulation() == Formulation::Dae && options.method == "bdf") return make_ida_integrator(system, options);
  throw InputError("solver.method \"" + options.method + "\" cannot integrate the model \"" + system.model_name() + "\"");
}

void absolute_tolerances(const HybridSystem& system, const SolverOptions& options, double* atol) {
  const auto scale = system.atol_scale();
  const auto& states = system.states();
  for (std::size_t i = 0; i < states.size(); ++i) {
    double a = options.atol;
    for (const auto& [name, value] : options.atol_by_state)
      if (name == states[i].name) a = value;
    atol[i] = a * scale[i];
  }
}

std::unique_ptr<Integrator> SolverWorkspace::take(const HybridSystem& system, const SolverOptions& options) {
  for (auto it = kept_.begin(); it != kept_.end(); ++it)
    if ((*it)->rebind(system, options)) {
      auto integ = std::move(*it);
      kept_.erase(it);
      return integ;
    }
  return make_integrator(system, options);
}

void SolverWorkspace::give_back(std::unique_ptr<Integrator> integrator) {
  constexpr std::size_t kKept = 4;  // a sweep alternates between a few methods at most
  if (!integrator) return;
  if (kept_.size() >= kKept) kept_.erase(kept_.begin());
  kept_.push_back(std::move(integrator));
}

}  // namespace rollsim
