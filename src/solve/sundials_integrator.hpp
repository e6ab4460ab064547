#pragma once
/// \file The machinery the SUNDIALS integrators (CVODE, IDA, ARKODE ERKStep) share behind the Integrator
/// interface: state, exception-capturing callbacks, failures turned into SolverError with a hint, the stop
/// time, root directions and statistics summed across restarts. Each solver describes its C functions of the
/// same shape in a SolverApi; its own calls (creation, stepping, linear solvers, Jacobians) stay in its file.
#include <exception>
#include <span>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <sundials/sundials_nvector.h>
#include <sundials/sundials_types.h>

#include "rollsim/hybrid/integrator.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/solve/sundials.hpp"

namespace rollsim::sundials {

/// A SUNDIALS function and the name it goes by in error messages.
template <class F>
struct Named {
  F* fn = nullptr;
  const char* name = "";
};

/// What to suggest when a solver function fails with `flag`.
struct FlagHint {
  int flag;
  const char* hint;
};

/// Hints more than one solver gives.
namespace hint {
inline constexpr const char* raise_max_steps = "raise solver.max_steps";
inline constexpr const char* loosen_tolerances = "loosen solver.rtol or solver.atol";
inline constexpr const char* model_not_evaluable = "the model could not be evaluated at this state";
}  // namespace hint

using ErrHandlerFn = void (*)(int, const char*, const char*, char*, void*);

/// One solver's functions of the shapes all three share.
struct SolverApi {
  const char* solver;     ///< "CVODE": prefixes the solver's own last error message in a hint
  const char* step_name;  ///< the function advance() calls, for its failures: "CVode"
  void (*free)(void**);
  char* (*return_flag_name)(long int);
  Named<int(void*, void*)> set_user_data;
  Named<int(void*, ErrHandlerFn, void*)> set_err_handler_fn;
  Named<int(void*, sunrealtype, N_Vector)> sv_tolerances;
  Named<int(void*, sunrealtype)> set_max_step;
  Named<int(void*, sunrealtype)> set_stop_time;
  Named<int(void*, int*)> set_root_direction;
  Named<int(void*, int*)> get_root_info;
  Named<int(void*, sunrealtype, int, N_Vector)> get_dky;
  int (*get_last_step)(void*, sunrealtype*);
  int (*get_current_step)(void*, sunrealtype*);
  int (*get_current_time)(void*, sunrealtype*);
  int root_return;   ///< the step's return flag for a root found
  int tstop_return;  ///< the step's return flag for the stop time reached
  std::span<const FlagHint> hints;
};

/// Solver counters by name, in the order the statistics list them.
struct Counts {
  std::vector<std::pair<std::string, long>> values;
  /// Adds `more` name by name (both list the same names in the same order); empty, takes `more`.
  void accumulate(const Counts& more);
};

class SundialsIntegrator : public Integrator {
 public:
  double t() const override { return t_; }
  const double* x() const override { return N_VGetArrayPointer(y_.get()); }
  void state_at(double t, double* x) const override;
  void derivative_at(double t, double* xdot) const override;
  const std::vector<int>& roots() const override { return roots_; }
  double last_step_size() const override;
  SolverStats stats() const override;
  void error_scale(const double* x, double* err) const override;
  /// One internal step by advance(), with the stop time at t_stop.
  Status step(double t_stop) override;
  /// Sums the counts of the run so far (but for the first start), then restarts in `mode` at (t, x) with
  /// reinit(t), the mode's witnesses as roots and no stop time.
  void reset(double t, const double* x, int mode) final;
  /// Same class of system, same size, same method, and rebind_solver() agrees: the tolerances are set anew and
  /// the statistics cleared; the memory is reinitialised by the next reset().
  bool rebind(const HybridSystem& system, const SolverOptions& options) final;

 protected:
  /// The state and absolute-tolerance vectors of the system's size, the state zero; `method` names the
  /// solver in the statistics. The solver memory is created by the derived class into mem_.
  SundialsIntegrator(const HybridSystem& sys, const SolverOptions& opt, const SolverApi& api, std::string method);

  /// After mem_ is created: user data, error handler, tolerances and solver.max_step_size.
  void configure();
  /// The solver's own part of rebind(), before sys_ changes: false when `system` needs another set-up (e.g. a
  /// Jacobian where the bound system has none).
  virtual bool rebind_solver(const HybridSystem& /*system*/) { return true; }
  /// The solver's reinitialisation at t with the state in y_ (and mode_ set).
  virtual void reinit(double t) = 0;
  /// The solver's root function for `count` witnesses (none if 0), via its RootInit.
  virtual void root_init(int count) = 0;
  /// The solver's one step towards t_stop, into y_ and *tret; returns its flag.
  virtual int advance(double t_stop, double* tret) = 0;
  /// The solver's counters since the last reinit.
  virtual Counts current() const = 0;

  void call(int flag, const char* fn) const {
    if (flag < 0) fail(fn, flag);
  }
  /// Throws SolverError for `fn` failing with `flag`: its name, the current t and h, the mode, the hint for
  /// the flag and the solver's last error message.
  [[noreturn]] void fail(const char* fn, int flag) const;
  /// Rethrows the exception a callback caught, if any.
  void rethrow_pending();

  /// The user data every callback gets.
  void* user_data() { return static_cast<SundialsIntegrator*>(this); }
  /// For a C callback: runs f(system, mode), returning 0, or keeps the exception it throws for
  /// rethrow_pending() and returns -1 (an unrecoverable failure to the solver).
  template <class F>
  static int guarded(void* user_data, F&& f) {
    auto* self = static_cast<SundialsIntegrator*>(user_data);
    try {
      f(*self->sys_, self->mode_);
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }
  /// Right-hand side and witnesses of an ODE (CVODE, ARKODE), witnesses of a DAE (IDA).
  static int ode_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void* user_data);
  static int ode_witnesses(sunrealtype t, N_Vector y, sunrealtype* g, void* user_data);
  static int dae_witnesses(sunrealtype t, N_Vector y, N_Vector yp, sunrealtype* g, void* user_data);
  /// Keeps the solver's last error message for the hint of a failure.
  static void error_handler(int code, const char* module, const char* function, char* msg, void* user_data);

  const HybridSystem* sys_;
  const std::type_info* system_type_;
  SolverOptions opt_;
  const SolverApi& api_;
  const long n_;
  Context ctx_;
  Vector y_, atol_;
  SolverMemory mem_;
  int mode_ = 0;
  double t_ = 0;

 private:
  std::string method_;
  std::vector<int> roots_;
  double stop_ = 0;
  bool stop_set_ = false;  ///< cleared when the stop time is reached: set it again before the next step
  bool started_ = false;
  Counts total_;
  long restarts_ = 0;
  std::exception_ptr pending_;
  /// Wraps the caller's array for the dense output (GetDky), made once: no N_Vector per sample.
  Vector dky_;
  void dky(double t, int k, double* out) const;
  std::string last_error_;
  /// atol_i from absolute_tolerances() (solve/integrator.hpp).
  void set_atol();
};

}  // namespace rollsim::sundials
