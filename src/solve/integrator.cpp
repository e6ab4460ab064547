#include "rollsim/solve/integrator.hpp"

#include <string>

#include "rollsim/core/error.hpp"

namespace rollsim {

std::unique_ptr<Integrator> make_cvode_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_ida_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_erk_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_dopri5_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_dop853_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_auto_integrator(const HybridSystem& system, const SolverOptions& options);

namespace {

using Needs = MethodFacet;

std::unique_ptr<Integrator> make_exact(const HybridSystem& system, const SolverOptions& options) {
  return facet<ExactSystem>(system)->make_exact_integrator(options);
}

/// Every method with the facet it needs and its integrator. A DAE's "bdf" comes before the ODE's: a system with both
/// an ODE and a DAE facet is integrated as the DAE.
struct Method {
  const char* name;
  Needs needs;
  std::unique_ptr<Integrator> (*make)(const HybridSystem&, const SolverOptions&);
};
constexpr Method kMethods[] = {
    {"auto", Needs::Any, &make_auto_integrator},     {"adams", Needs::Ode, &make_cvode_integrator},   {"bdf", Needs::Dae, &make_ida_integrator},
    {"bdf", Needs::Ode, &make_cvode_integrator},     {"erk", Needs::Ode, &make_erk_integrator},
    {"dopri5", Needs::Ode, &make_dopri5_integrator}, {"dop853", Needs::Ode, &make_dop853_integrator},
    {"exact", Needs::Exact, &make_exact},
};

bool has(const HybridSystem& system, Needs needs) {
  switch (needs) {
    case Needs::Ode: return facet<OdeSystem>(system) != nullptr;
    case Needs::Dae: return facet<DaeSystem>(system) != nullptr;
    case Needs::Exact: return facet<ExactSystem>(system) != nullptr;
    case Needs::Any: return true;
  }
  return false;
}

const char* needs_text(Needs needs) {
  switch (needs) {
    case Needs::Ode: return "an ODE x' = f(t, x)";
    case Needs::Dae: return "a DAE F(t, x, x') = 0";
    case Needs::Exact: return "a piecewise-linear model with closed-form modes";
    case Needs::Any: return "any system";
  }
  return "";
}

}  // namespace

std::vector<std::string> solver_method_names(MethodFacet facet) {
  std::vector<std::string> names;
  for (const Method& m : kMethods)
    if (m.needs == facet || (m.needs == Needs::Any && facet != Needs::Any)) names.emplace_back(m.name);
  return names;
}

std::unique_ptr<Integrator> make_integrator(const HybridSystem& system, const SolverOptions& options) {
  // The name first: a facet test is a dynamic_cast, and a sweep makes an integrator per point for a method that
  // cannot rebind (the exact one, last in the list).
  for (const Method& m : kMethods)
    if (options.method == m.name && has(system, m.needs)) return m.make(system, options);
  std::string needed, available;
  for (const Method& m : kMethods) {
    if (has(system, m.needs)) {
      if (available.find(std::string("\"") + m.name + '"') == std::string::npos)
        available += (available.empty() ? "\"" : ", \"") + std::string(m.name) + '"';
    } else if (options.method == m.name) {
      needed += (needed.empty() ? "" : " or ") + std::string(needs_text(m.needs));
    }
  }
  if (needed.empty()) needed = "a method of that name";
  throw InputError("solver.method \"" + options.method + "\" integrates " + needed + "; the model \"" +
                   system.model_name() + "\" in this formulation has none (its methods: " +
                   (available.empty() ? std::string("none") : available) + ")");
}

SolverOptions for_run(SolverOptions options, double t0, double t_end) {
  if (options.method == "auto" && options.max_step_size == 0 && t_end > t0) options.max_step_size = (t_end - t0) / 10;
  return options;
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
