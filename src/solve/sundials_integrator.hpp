#pragma once
/// \file The machinery the SUNDIALS integrators (CVODE, IDA, ARKODE ERKStep) share behind the Integrator
/// interface: state, exception-capturing callbacks, the set-up every solver needs (user data, error handler,
/// tolerances, step limits), failures turned into SolverError with a hint, the stop time, root directions,
/// statistics summed across restarts, and the difference-quotient Jacobian for a model without one. Each solver
/// describes its C functions of the same shape in a SolverApi (ROLLSIM_SUNDIALS_API names them once); its own
/// calls (creation, stepping, linear solvers, Jacobians) stay in its file.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <sundials/sundials_nvector.h>
#include <sundials/sundials_types.h>

#include "mode_directions.hpp"
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
  Named<int(void*, long)> set_max_num_steps;
  Named<int(void*, sunrealtype)> set_stop_time;
  Named<int(void*, int*)> set_root_direction;
  Named<int(void*, int*)> get_root_info;
  Named<int(void*, sunrealtype, int, N_Vector)> get_dky;
  int (*get_last_step)(void*, sunrealtype*);
  int (*get_current_step)(void*, sunrealtype*);
  int (*get_current_time)(void*, sunrealtype*);
  int root_return;   ///< the step's return flag for a root found
  int tstop_return;  ///< the step's return flag for the stop time reached
  long max_num_steps;  ///< the solver's own step limit per call (the loop counts steps itself)
  std::span<const FlagHint> hints;
};

/// The SolverApi of the solver whose functions are named `prefix`Free, `prefix`SetUserData, ... (CVode, IDA,
/// ERKStep): each function of the shared shapes, with its name for messages, from the one prefix. \param step_fn
/// the stepping function (CVode, IDASolve, ERKStepEvolve); \param root_flag, tstop_flag its return flags for a root
/// and for the stop time; \param max_steps the per-call step limit; \param hint_list the solver's FlagHints.
#define ROLLSIM_SUNDIALS_API(prefix, solver_name, step_fn, root_flag, tstop_flag, max_steps, hint_list) \
  ::rollsim::sundials::SolverApi {                                                                     \
    .solver = solver_name, .step_name = #step_fn, .free = &prefix##Free,                              \
    .return_flag_name = &prefix##GetReturnFlagName,                                                   \
    .set_user_data = {&prefix##SetUserData, #prefix "SetUserData"},                                   \
    .set_err_handler_fn = {&prefix##SetErrHandlerFn, #prefix "SetErrHandlerFn"},                      \
    .sv_tolerances = {&prefix##SVtolerances, #prefix "SVtolerances"},                                 \
    .set_max_step = {&prefix##SetMaxStep, #prefix "SetMaxStep"},                                      \
    .set_max_num_steps = {&prefix##SetMaxNumSteps, #prefix "SetMaxNumSteps"},                         \
    .set_stop_time = {&prefix##SetStopTime, #prefix "SetStopTime"},                                   \
    .set_root_direction = {&prefix##SetRootDirection, #prefix "SetRootDirection"},                    \
    .get_root_info = {&prefix##GetRootInfo, #prefix "GetRootInfo"},                                   \
    .get_dky = {&prefix##GetDky, #prefix "GetDky"}, .get_last_step = &prefix##GetLastStep,            \
    .get_current_step = &prefix##GetCurrentStep, .get_current_time = &prefix##GetCurrentTime,         \
    .root_return = root_flag, .tstop_return = tstop_flag, .max_num_steps = max_steps, .hints = hint_list \
  }

/// Forward-difference columns of a Jacobian, for a model that gives none in a mode: column j of J (n x n,
/// column-major) is (F(x + dx e_j, x' + cj dx e_j) - F(x, x')) / dx with dx = 1e-8 max(1, |x_j|). \param xd x'
/// (nullptr for an ODE's f(x), with cj unused); \param eval(x, xd, out) evaluates F.
template <class Eval>
void difference_jacobian(std::size_t n, const double* x, const double* xd, double cj, double* J, Eval&& eval) {
  std::vector<double> xp(x, x + n), xdp, f0(n), f1(n);
  if (xd) xdp.assign(xd, xd + n);
  eval(x, xd, f0.data());
  for (std::size_t j = 0; j < n; ++j) {
    const double dx = 1e-8 * std::max(1.0, std::abs(x[j]));
    xp[j] = x[j] + dx;
    if (xd) xdp[j] = xd[j] + cj * dx;
    eval(xp.data(), xd ? xdp.data() : nullptr, f1.data());
    xp[j] = x[j];
    if (xd) xdp[j] = xd[j];
    for (std::size_t i = 0; i < n; ++i) J[i + n * j] = (f1[i] - f0[i]) / dx;
  }
}

/// Solver counters by name, in the order the statistics list them.
struct Counts {
  std::vector<std::pair<std::string, long>> values;
  /// Adds `more` name by name (both list the same names in the same order); empty, takes `more`.
  void accumulate(const Counts& more);
  /// Sets the counts in order; the names are kept once set (no allocation when called again with the same list).
  void set(std::initializer_list<std::pair<const char*, long>> list);
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

  /// Takes the solver memory `mem` a creation function `fn` returned (SolverError when it is null).
  void created(void* mem, const char* fn);
  /// After mem_ is created: user data, error handler, tolerances, the per-call step limit and
  /// solver.max_step_size.
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
  virtual void current(Counts& c) const = 0;

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
  /// For a C callback: runs f(facet, mode) with the bound system's facet Facet (OdeSystem, DaeSystem or
  /// WitnessSystem), returning 0, or keeps the exception it throws for rethrow_pending() and returns -1 (an
  /// unrecoverable failure to the solver).
  template <class Facet, class F>
  static int guarded(void* user_data, F&& f) {
    auto* self = static_cast<SundialsIntegrator*>(user_data);
    try {
      f(self->bound<Facet>(), self->mode_);
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

  /// The bound system's facet Facet (one the solver was made for: make_integrator checked it).
  template <class Facet>
  const Facet& bound() const {
    if constexpr (std::is_same_v<Facet, OdeSystem>) return *ode_;
    else if constexpr (std::is_same_v<Facet, DaeSystem>) return *dae_;
    else return *witnesses_;
  }

  const HybridSystem* sys_;
  /// Its facets (nullptr where it has none; a system without witnesses has no roots).
  const OdeSystem* ode_ = nullptr;
  const DaeSystem* dae_ = nullptr;
  const WitnessSystem* witnesses_ = nullptr;
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
  Counts restart_counts_;  ///< the counts of the part of the run before a restart (storage kept)
  /// The solver's root functions are sized for the most witnesses a mode has had since the system was bound
  /// (root_capacity_; -1: to be set at the next reset), so that a change of mode does not reallocate them; the
  /// components past the current mode's nw_ witnesses are constant (1) and never a root.
  int nw_ = 0, root_capacity_ = -1;
  std::vector<int> root_directions_;
  ModeDirections mode_directions_;  ///< of each mode met since the system was bound
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
  /// sys_ and its facets.
  void bind(const HybridSystem& sys);
};

}  // namespace rollsim::sundials
