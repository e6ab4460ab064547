#pragma once
/// \file Choosing the integrator for a system and solver.method: auto (the default: the model's exact propagation
/// where it has one, IDA for a DAE, else DOP853 handing over to CVODE's BDF where it finds the problem stiff;
/// src/solve/auto_integrator.cpp), CVODE (adams, bdf), IDA (bdf for a DAE), ARKODE (erk), Boost.Odeint (dopri5),
/// DOP853 (dop853), or the model's own (exact). The interface is hybrid/integrator.hpp.
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
/// The facet of a system that a solver method integrates; Any: a method for every system ("auto").
enum class MethodFacet { Ode, Dae, Exact, Any };

/// The names of the methods that integrate `facet`, "auto" first, in the order of make_integrator's method table (the
/// one list of methods): the choices of solver.method (analysis/simulation_keys.hpp) are derived from it.
std::vector<std::string> solver_method_names(MethodFacet facet);

/// The options a run from t0 to t_end integrates with: for solver.method = "auto" without a solver.max_step, the
/// largest step is a tenth of the run (MATLAB's ode45 default): DOP853's steps grow sixfold on a motion its error
/// estimate sees as exact (a steady rotation, whose angles are linear in t) and would otherwise step over both
/// crossings of a witness that dips below zero and comes back (a rotation sequence's singular attitude passed in
/// one step); the witnesses are looked at only at the ends of a step and at their extrema there.
SolverOptions for_run(SolverOptions options, double t0, double t_end);

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
