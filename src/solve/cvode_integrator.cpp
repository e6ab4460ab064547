/// CVODE behind the Integrator interface: Adams (fixed-point iteration) or BDF (Newton, dense).
#include <cstdlib>
#include <cstring>
#include <exception>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "rollsim/core/error.hpp"
#include "rollsim/solve/integrator.hpp"
#include "rollsim/solve/sundials.hpp"

namespace rollsim {

namespace {

struct CvodeMemDeleter {
  void operator()(void* m) const { CVodeFree(&m); }
};

class CvodeIntegrator final : public Integrator {
 public:
  CvodeIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : sys_(sys), opt_(opt), n_(static_cast<long>(sys.size())), ctx_(sundials::make_context()) {
    y_ = sundials::make_vector(n_, ctx_.get());
    atol_ = sundials::make_vector(n_, ctx_.get());
    const auto scale = sys.atol_scale();
    for (long i = 0; i < n_; ++i) NV_Ith_S(atol_.get(), i) = opt.atol * scale[static_cast<size_t>(i)];
    const int lmm = opt.method == "bdf" ? CV_BDF : CV_ADAMS;
    mem_.reset(CVodeCreate(lmm, ctx_.get()));
    sundials::check_ptr(mem_.get(), "CVodeCreate");
    N_VConst(0.0, y_.get());
    call(CVodeInit(mem_.get(), &CvodeIntegrator::rhs_cb, 0.0, y_.get()), "CVodeInit");
    call(CVodeSetUserData(mem_.get(), this), "CVodeSetUserData");
    call(CVodeSetErrHandlerFn(mem_.get(), &CvodeIntegrator::err_cb, this), "CVodeSetErrHandlerFn");
    call(CVodeSVtolerances(mem_.get(), opt.rtol, atol_.get()), "CVodeSVtolerances");
    call(CVodeSetMaxNumSteps(mem_.get(), -1), "CVodeSetMaxNumSteps");  // the loop counts steps itself
    if (opt.max_step_size > 0) call(CVodeSetMaxStep(mem_.get(), opt.max_step_size), "CVodeSetMaxStep");
    if (lmm == CV_BDF) {
      A_.reset(SUNDenseMatrix(n_, n_, ctx_.get()));
      sundials::check_ptr(A_.get(), "SUNDenseMatrix");
      LS_.reset(SUNLinSol_Dense(y_.get(), A_.get(), ctx_.get()));
      sundials::check_ptr(LS_.get(), "SUNLinSol_Dense");
      call(CVodeSetLinearSolver(mem_.get(), LS_.get(), A_.get()), "CVodeSetLinearSolver");
      std::vector<double> probe(static_cast<size_t>(n_ * n_)), x0(static_cast<size_t>(n_));
      sys.initial_state(x0.data());
      if (sys.jacobian(0.0, x0.data(), sys.initial_mode(x0.data()), probe.data()))
        call(CVodeSetJacFn(mem_.get(), &CvodeIntegrator::jac_cb), "CVodeSetJacFn");
    } else {
      NLS_.reset(SUNNonlinSol_FixedPoint(y_.get(), 0, ctx_.get()));
      sundials::check_ptr(NLS_.get(), "SUNNonlinSol_FixedPoint");
      call(CVodeSetNonlinearSolver(mem_.get(), NLS_.get()), "CVodeSetNonlinearSolver");
    }
  }

  void reset(double t, const double* x, int mode) override {
    accumulate();
    mode_ = mode;
    std::memcpy(N_VGetArrayPointer(y_.get()), x, sizeof(double) * static_cast<size_t>(n_));
    call(CVodeReInit(mem_.get(), t, y_.get()), "CVodeReInit");
    witnesses_ = sys_.witnesses(mode);
    const int nw = static_cast<int>(witnesses_.size());
    call(CVodeRootInit(mem_.get(), nw, nw ? &CvodeIntegrator::root_cb : nullptr), "CVodeRootInit");
    roots_.assign(witnesses_.size(), 0);
    if (nw) {
      std::vector<int> dir(witnesses_.size());
      for (size_t i = 0; i < witnesses_.size(); ++i) dir[i] = witnesses_[i].direction;
      call(CVodeSetRootDirection(mem_.get(), dir.data()), "CVodeSetRootDirection");
    }
    t_ = t;
    stop_set_ = false;
  }

  Status step(double t_stop) override {
    if (!stop_set_ || t_stop != stop_) {
      call(CVodeSetStopTime(mem_.get(), t_stop), "CVodeSetStopTime");
      stop_ = t_stop;
      stop_set_ = true;
    }
    double tret = t_;
    const int flag = CVode(mem_.get(), t_stop, y_.get(), &tret, CV_ONE_STEP);
    rethrow_pending();
    if (flag < 0) fail("CVode", flag);
    t_ = tret;
    if (flag == CV_ROOT_RETURN) {
      call(CVodeGetRootInfo(mem_.get(), roots_.data()), "CVodeGetRootInfo");
      return Status::Root;
    }
    if (flag == CV_TSTOP_RETURN) {
      stop_set_ = false;  // CVODE clears a stop time once reached
      return Status::StopTime;
    }
    return Status::Step;
  }

  double t() const override { return t_; }
  const double* x() const override { return N_VGetArrayPointer(y_.get()); }

  void state_at(double t, double* x) const override {
    N_Vector v = N_VMake_Serial(n_, x, ctx_.get());
    const int flag = CVodeGetDky(mem_.get(), t, 0, v);
    N_VDestroy(v);
    if (flag < 0) const_cast<CvodeIntegrator*>(this)->fail("CVodeGetDky", flag);
  }

  const std::vector<int>& roots() const override { return roots_; }

  double last_step_size() const override {
    double h = 0;
    CVodeGetLastStep(mem_.get(), &h);
    return h;
  }

  SolverStats stats() const override {
    SolverStats s;
    s.method = "cvode-" + opt_.method;
    s.rtol = opt_.rtol;
    s.atol = opt_.atol;
    const Counts c = current();
    s.counts = {{"n_steps", total_.steps + c.steps},
                {"n_rhs_evals", total_.rhs + c.rhs},
                {"n_jac_evals", total_.jac + c.jac},
                {"n_root_evals", total_.g + c.g},
                {"n_err_test_fails", total_.etf + c.etf},
                {"n_nonlin_iters", total_.nni + c.nni},
                {"n_nonlin_conv_fails", total_.ncf + c.ncf},
                {"n_restarts", restarts_}};
    return s;
  }

 private:
  struct Counts {
    long steps = 0, rhs = 0, jac = 0, g = 0, etf = 0, nni = 0, ncf = 0;
  };

  Counts current() const {
    Counts c;
    CVodeGetNumSteps(mem_.get(), &c.steps);
    CVodeGetNumRhsEvals(mem_.get(), &c.rhs);
    if (LS_) CVodeGetNumJacEvals(mem_.get(), &c.jac);
    CVodeGetNumGEvals(mem_.get(), &c.g);
    CVodeGetNumErrTestFails(mem_.get(), &c.etf);
    CVodeGetNumNonlinSolvIters(mem_.get(), &c.nni);
    CVodeGetNumNonlinSolvConvFails(mem_.get(), &c.ncf);
    return c;
  }

  void accumulate() {
    if (!started_) {
      started_ = true;
      return;
    }
    const Counts c = current();
    total_.steps += c.steps;
    total_.rhs += c.rhs;
    total_.jac += c.jac;
    total_.g += c.g;
    total_.etf += c.etf;
    total_.nni += c.nni;
    total_.ncf += c.ncf;
    ++restarts_;
  }

  void call(int flag, const char* fn) {
    if (flag < 0) fail(fn, flag);
  }

  [[noreturn]] void fail(const char* fn, int flag) {
    char* name = CVodeGetReturnFlagName(flag);
    std::string flag_name = name ? name : "?";
    std::free(name);
    double h = 0, tc = t_;
    CVodeGetCurrentStep(mem_.get(), &h);
    CVodeGetCurrentTime(mem_.get(), &tc);
    std::string hint;
    if (flag == CV_TOO_MUCH_WORK)
      hint = "raise solver.max_steps";
    else if (flag == CV_TOO_MUCH_ACC)
      hint = "loosen solver.rtol or solver.atol";
    else if (flag == CV_ERR_FAILURE || flag == CV_CONV_FAILURE)
      hint = "the solution may be singular here (a model limit reached?); try solver.method = \"bdf\", a looser "
             "solver.rtol, or a shorter simulation.t_end";
    else if (flag == CV_RHSFUNC_FAIL || flag == CV_RTFUNC_FAIL)
      hint = "the model could not be evaluated at this state";
    if (!last_error_.empty()) hint += (hint.empty() ? "" : "; ") + std::string("CVODE says: ") + last_error_;
    throw SolverError(fn, flag, flag_name, tc, h, sys_.mode_name(mode_), hint);
  }

  void rethrow_pending() {
    if (pending_) {
      auto e = pending_;
      pending_ = nullptr;
      std::rethrow_exception(e);
    }
  }

  static int rhs_cb(double t, N_Vector y, N_Vector ydot, void* ud) {
    auto* self = static_cast<CvodeIntegrator*>(ud);
    try {
      self->sys_.rhs(t, N_VGetArrayPointer(y), self->mode_, N_VGetArrayPointer(ydot));
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static int root_cb(double t, N_Vector y, double* g, void* ud) {
    auto* self = static_cast<CvodeIntegrator*>(ud);
    try {
      self->sys_.witness_values(t, N_VGetArrayPointer(y), self->mode_, g);
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static int jac_cb(double t, N_Vector y, N_Vector, SUNMatrix J, void* ud, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<CvodeIntegrator*>(ud);
    try {
      // SUNDenseMatrix data is column-major, as the interface promises.
      self->sys_.jacobian(t, N_VGetArrayPointer(y), self->mode_, SUNDenseMatrix_Data(J));
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static void err_cb(int, const char*, const char* function, char* msg, void* ud) {
    auto* self = static_cast<CvodeIntegrator*>(ud);
    self->last_error_ = std::string(function ? function : "") + ": " + (msg ? msg : "");
  }

  const HybridSystem& sys_;
  SolverOptions opt_;
  long n_;
  sundials::Context ctx_;
  sundials::Vector y_, atol_;
  std::unique_ptr<void, CvodeMemDeleter> mem_;
  sundials::Matrix A_;
  sundials::LinearSolver LS_;
  sundials::NonlinearSolver NLS_;
  std::vector<Witness> witnesses_;
  std::vector<int> roots_;
  int mode_ = 0;
  double t_ = 0, stop_ = 0;
  bool stop_set_ = false, started_ = false;
  Counts total_;
  long restarts_ = 0;
  std::exception_ptr pending_;
  std::string last_error_;
};

}  // namespace

std::unique_ptr<Integrator> make_cvode_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<CvodeIntegrator>(system, options);
}

}  // namespace rollsim
