/// ARKODE's explicit Runge-Kutta stepper (ERKStep) behind the Integrator interface: solver.method = "erk",
/// the order-8 Fehlberg 13(7)8 table, for smooth nonstiff models where a high order pays.
#include <cstdlib>
#include <cstring>
#include <exception>

#include <arkode/arkode_erkstep.h>
#include <nvector/nvector_serial.h>

#include "rollsim/core/error.hpp"
#include "rollsim/solve/integrator.hpp"
#include "rollsim/solve/sundials.hpp"

namespace rollsim {

namespace {

struct ErkMemDeleter {
  void operator()(void* m) const { ERKStepFree(&m); }
};

class ErkIntegrator final : public Integrator {
 public:
  ErkIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : sys_(sys), opt_(opt), n_(static_cast<long>(sys.size())), ctx_(sundials::make_context()) {
    y_ = sundials::make_vector(n_, ctx_.get());
    atol_ = sundials::make_vector(n_, ctx_.get());
    const auto scale = sys.atol_scale();
    for (long i = 0; i < n_; ++i) NV_Ith_S(atol_.get(), i) = opt.atol * scale[static_cast<size_t>(i)];
    N_VConst(0.0, y_.get());
    mem_.reset(ERKStepCreate(&ErkIntegrator::rhs_cb, 0.0, y_.get(), ctx_.get()));
    sundials::check_ptr(mem_.get(), "ERKStepCreate");
    call(ERKStepSetUserData(mem_.get(), this), "ERKStepSetUserData");
    call(ERKStepSetErrHandlerFn(mem_.get(), &ErkIntegrator::err_cb, this), "ERKStepSetErrHandlerFn");
    call(ERKStepSVtolerances(mem_.get(), opt.rtol, atol_.get()), "ERKStepSVtolerances");
    call(ERKStepSetTableNum(mem_.get(), ARKODE_FEHLBERG_13_7_8), "ERKStepSetTableNum");
    call(ERKStepSetMaxNumSteps(mem_.get(), -1), "ERKStepSetMaxNumSteps");  // the loop counts steps itself
    if (opt.max_step_size > 0) call(ERKStepSetMaxStep(mem_.get(), opt.max_step_size), "ERKStepSetMaxStep");
  }

  void reset(double t, const double* x, int mode) override {
    accumulate();
    mode_ = mode;
    std::memcpy(N_VGetArrayPointer(y_.get()), x, sizeof(double) * static_cast<size_t>(n_));
    call(ERKStepReInit(mem_.get(), &ErkIntegrator::rhs_cb, t, y_.get()), "ERKStepReInit");
    const auto w = sys_.witnesses(mode);
    const int nw = static_cast<int>(w.size());
    call(ERKStepRootInit(mem_.get(), nw, nw ? &ErkIntegrator::root_cb : nullptr), "ERKStepRootInit");
    roots_.assign(w.size(), 0);
    if (nw) {
      std::vector<int> dir(w.size());
      for (size_t i = 0; i < w.size(); ++i) dir[i] = w[i].direction;
      call(ERKStepSetRootDirection(mem_.get(), dir.data()), "ERKStepSetRootDirection");
    }
    t_ = t;
    stop_set_ = false;
  }

  Status step(double t_stop) override {
    if (!stop_set_ || t_stop != stop_) {
      call(ERKStepSetStopTime(mem_.get(), t_stop), "ERKStepSetStopTime");
      stop_ = t_stop;
      stop_set_ = true;
    }
    double tret = t_;
    const int flag = ERKStepEvolve(mem_.get(), t_stop, y_.get(), &tret, ARK_ONE_STEP);
    rethrow_pending();
    if (flag < 0) fail("ERKStepEvolve", flag);
    t_ = tret;
    if (flag == ARK_ROOT_RETURN) {
      call(ERKStepGetRootInfo(mem_.get(), roots_.data()), "ERKStepGetRootInfo");
      return Status::Root;
    }
    if (flag == ARK_TSTOP_RETURN) {
      stop_set_ = false;
      return Status::StopTime;
    }
    return Status::Step;
  }

  double t() const override { return t_; }
  const double* x() const override { return N_VGetArrayPointer(y_.get()); }

  void state_at(double t, double* x) const override {
    N_Vector v = N_VMake_Serial(n_, x, ctx_.get());
    const int flag = ERKStepGetDky(mem_.get(), t, 0, v);
    N_VDestroy(v);
    if (flag < 0) const_cast<ErkIntegrator*>(this)->fail("ERKStepGetDky", flag);
  }

  const std::vector<int>& roots() const override { return roots_; }

  double last_step_size() const override {
    double h = 0;
    ERKStepGetLastStep(mem_.get(), &h);
    return h;
  }

  SolverStats stats() const override {
    SolverStats s;
    s.method = "arkode-erk8";
    s.rtol = opt_.rtol;
    s.atol = opt_.atol;
    long steps = 0, rhs = 0, g = 0, etf = 0;
    ERKStepGetNumSteps(mem_.get(), &steps);
    ERKStepGetNumRhsEvals(mem_.get(), &rhs);
    ERKStepGetNumGEvals(mem_.get(), &g);
    ERKStepGetNumErrTestFails(mem_.get(), &etf);
    s.counts = {{"n_steps", total_steps_ + steps}, {"n_rhs_evals", total_rhs_ + rhs}, {"n_jac_evals", 0},
                {"n_root_evals", total_g_ + g},     {"n_err_test_fails", total_etf_ + etf}, {"n_restarts", restarts_}};
    return s;
  }

 private:
  void accumulate() {
    if (!started_) {
      started_ = true;
      return;
    }
    long steps = 0, rhs = 0, g = 0, etf = 0;
    ERKStepGetNumSteps(mem_.get(), &steps);
    ERKStepGetNumRhsEvals(mem_.get(), &rhs);
    ERKStepGetNumGEvals(mem_.get(), &g);
    ERKStepGetNumErrTestFails(mem_.get(), &etf);
    total_steps_ += steps;
    total_rhs_ += rhs;
    total_g_ += g;
    total_etf_ += etf;
    ++restarts_;
  }

  void call(int flag, const char* fn) {
    if (flag < 0) fail(fn, flag);
  }

  [[noreturn]] void fail(const char* fn, int flag) {
    char* name = ERKStepGetReturnFlagName(flag);
    std::string flag_name = name ? name : "?";
    std::free(name);
    double h = 0, tc = t_;
    ERKStepGetCurrentStep(mem_.get(), &h);
    ERKStepGetCurrentTime(mem_.get(), &tc);
    std::string hint;
    if (flag == ARK_TOO_MUCH_ACC) hint = "loosen solver.rtol or solver.atol";
    else if (flag == ARK_ERR_FAILURE) hint = "the problem may be stiff here: try solver.method = \"bdf\"";
    if (!last_error_.empty()) hint += (hint.empty() ? "" : "; ") + std::string("ARKODE says: ") + last_error_;
    throw SolverError(fn, flag, flag_name, tc, h, sys_.has_modes() ? sys_.mode_name(mode_) : "", hint);
  }

  void rethrow_pending() {
    if (pending_) {
      auto e = pending_;
      pending_ = nullptr;
      std::rethrow_exception(e);
    }
  }

  static int rhs_cb(double t, N_Vector y, N_Vector ydot, void* ud) {
    auto* self = static_cast<ErkIntegrator*>(ud);
    try {
      self->sys_.rhs(t, N_VGetArrayPointer(y), self->mode_, N_VGetArrayPointer(ydot));
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static int root_cb(double t, N_Vector y, double* g, void* ud) {
    auto* self = static_cast<ErkIntegrator*>(ud);
    try {
      self->sys_.witness_values(t, N_VGetArrayPointer(y), self->mode_, g);
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static void err_cb(int, const char*, const char* function, char* msg, void* ud) {
    auto* self = static_cast<ErkIntegrator*>(ud);
    self->last_error_ = std::string(function ? function : "") + ": " + (msg ? msg : "");
  }

  const HybridSystem& sys_;
  SolverOptions opt_;
  long n_;
  sundials::Context ctx_;
  sundials::Vector y_, atol_;
  std::unique_ptr<void, ErkMemDeleter> mem_;
  std::vector<int> roots_;
  int mode_ = 0;
  double t_ = 0, stop_ = 0;
  bool stop_set_ = false, started_ = false;
  long total_steps_ = 0, total_rhs_ = 0, total_g_ = 0, total_etf_ = 0, restarts_ = 0;
  std::exception_ptr pending_;
  std::string last_error_;
};

}  // namespace

std::unique_ptr<Integrator> make_erk_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<ErkIntegrator>(system, options);
}

}  // namespace rollsim
