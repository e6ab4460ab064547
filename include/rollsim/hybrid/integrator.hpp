#pragma once
/// \file The integrator interface the simulate loop drives: one internal step at a time, dense output
/// within the last step, and root (witness) reports; its options and its work counts, as plain types. CVODE,
/// IDA and ARKODE sit behind it (solve/), and so may a model's own closed-form propagation
/// (ExactSystem::make_exact_integrator), which is why the interface lives with the system interface.
#include <string>
#include <utility>
#include <vector>

namespace rollsim {

class HybridSystem;

struct SolverOptions {
  /// auto (the choice of solve/integrator.hpp) | adams | bdf (CVODE; bdf is IDA for a DAE) | erk (ARKODE) | dopri5
  /// (Odeint) | dop853 | exact (by model)
  std::string method = "auto";
  double rtol = 1e-10;
  double atol = 1e-12;        ///< for every state not named in atol_by_state
  /// Absolute tolerances of named states (solver.atol = { name = value }); the names are states of the system.
  std::vector<std::pair<std::string, double>> atol_by_state;
  long max_steps = 1000000;  ///< internal steps for the whole run
  double max_step_size = 0;  ///< 0: no limit
};

/// Solver work, by name (n_steps, n_rhs_evals, ...).
struct SolverStats {
  std::string method;
  double rtol = 0, atol = 0;
  std::vector<std::pair<std::string, long>> counts;
  long get(const std::string& name) const;
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
  /// The time derivative of the dense output within the last internal step (x' at t, to the solver's accuracy).
  virtual void derivative_at(double t, double* xdot) const = 0;
  /// After a Root: per witness of the mode, +1 rising, -1 falling, 0 none.
  virtual const std::vector<int>& roots() const = 0;
  /// The mode's witness values at (t(), x()) when the integrator has evaluated them there (its own root search),
  /// so that the caller need not again; nullptr when it has not.
  virtual const double* witness_values() const { return nullptr; }
  virtual double last_step_size() const = 0;
  virtual SolverStats stats() const = 0;
  /// The integration error the solver allows at x, per component: rtol |x_i| + atol_i. The self-audit's
  /// tolerances are built from it.
  virtual void error_scale(const double* x, double* err) const = 0;
  /// True when the integrator finds every event itself, to round-off (closed-form propagation): the simulate
  /// loop then does not search the steps for crossings the root finder missed.
  virtual bool locates_events_exactly() const { return false; }
  /// True once a method that tests for stiffness (dop853: Hairer's test of h |lambda| against its stability
  /// boundary) has found the problem stiff over its recent steps; false for every other method.
  virtual bool stiff() const { return false; }
  /// For the next run: bind to `system` with `options`, keeping the solver's memory (the next reset()
  /// reinitialises it; the statistics start again from zero). Possible only for a system of the same class and
  /// size and options of the same method; false otherwise (the caller then makes a new integrator).
  virtual bool rebind(const HybridSystem& /*system*/, const SolverOptions& /*options*/) { return false; }
};

}  // namespace rollsim
