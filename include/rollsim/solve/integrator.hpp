#pragma once
/// \file The integrator interface the simulate loop drives: one internal step at a time, dense output
/// within the last step, and root (witness) reports. CVODE, IDA and ARKODE sit behind it.
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/solve/observer.hpp"

namespace rollsim {

struct SolverOptions {
  std::string method = "adams";  ///< adams | bdf (CVODE; bdf is IDA for a DAE) | erk (ARKODE) | exact (by model)
  double rtol = 1e-10;
  double atol = 1e-12;        ///< for every state not named in atol_by_state
  /// Absolute tolerances of named states (solver.atol = { name = value }); the names are states of the system.
  std::vector<std::pair<std::string, double>> atol_by_state;
  long max_steps = 1000000;  ///< internal steps for the whole run
  double max_step_size = 0;  ///< 0: no limit
};

class Integrator {
 public:
  enum class Status { Step, Root, StopTime };
  virtual ~Integrator() = default;
  /// (Re)start at (t, x) in `mode`: its right-hand side and witnesses. Clears the stop time.
  virtual void reset(double t, const double* x, int mode) = 0;
  /// One internal step, never past t_stop. On Root, t() is the root time.
  virtual Status step(double t_stop) = 0;
  /// The time reached by the last step (or the root time).
  virtual double t() const = 0;
  /// The state at t() (after step()).
  virtual const double* x() const = 0;
  /// Dense output within the last internal step.
  virtual void state_at(double t, double* x) const = 0;
  /// After a Root: per witness of the mode, +1 rising, -1 falling, 0 none.
  virtual const std::vector<int>& roots() const = 0;
  virtual double last_step_size() const = 0;
  virtual SolverStats stats() const = 0;
  /// The integration error the solver allows at x, per component: rtol |x_i| + atol_i. The self-audit's
  /// tolerances are built from it.
  virtual void error_scale(const double* x, double* err) const = 0;
  /// True when the integrator finds every event itself, to round-off (closed-form propagation): the simulate
  /// loop then does not search the steps for crossings the root finder missed.
  virtual bool locates_events_exactly() const { return false; }
};

/// The integrator for a system and method. Throws InputError for a method the system cannot use.
std::unique_ptr<Integrator> make_integrator(const HybridSystem& system, const SolverOptions& options);

}  // namespace rollsim
