#pragma once
/// \file Choosing the integrator for a system and solver.method: CVODE (adams, bdf), IDA (bdf for a DAE),
/// ARKODE (erk), Boost.Odeint (dopri5), or the model's own (exact). The interface is hybrid/integrator.hpp.
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/integrator.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// The integrator for a system and method: a method integrates one facet of the system (hybrid/system.hpp: the ODE,
/// the DAE or the exact propagation). Throws InputError for a method the system has no facet for, naming what the
/// method needs and the methods the system has.
std::unique_ptr<Integrator> make_integrator(const HybridSystem& system, const SolverOptions& options);

/// The absolute tolerance of each state: (the state's own solver.atol entry, else solver.atol) x the model's
/// scale for it (HybridSystem::atol_scale). Every integrator's error test and error_scale use it.
/// The facet of a system that a solver method integrates.
enum class MethodFacet { Ode, Dae, Exact };

/// The names of the methods that integrate `facet`, in the order of make_integrator's method table (the one list of
/// methods): the choices of solver.method (analysis/simulation_keys.hpp) are derived from it.
std::vector<std::string> solver_method_names(MethodFacet facet);

void absolute_tolerances(const HybridSystem& system, const SolverOptions& options, double* atol);

/// Integrators kept by one thread between runs (a sweep's points): take() rebinds a kept one when it can
/// (Integrator::rebind: no solver memory created or freed) and makes one otherwise. Not thread-safe: one per thread.
class SolverWorkspace {
 public:
  std::unique_ptr<Integrator> take(const HybridSystem& system, const SolverOptions& options);
  /// Keeps `integrator` for a later take() (the oldest one goes when more than a few are kept).
  void give_back(std::unique_ptr<Integrator> integrator);

 private:
  std::vector<std::unique_ptr<Integrator>> kept_;
};

}  // namespace rollsim
