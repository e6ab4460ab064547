/// IDA behind the Integrator interface: variable-order BDF on F(t, x, x') = 0, Newton with a dense
/// linear solver, one step at a time, with dense output, roots and consistent initial conditions.
///
/// Algebraic components (the Lagrange multipliers) are marked by IDASetId, which IDACalcIC
/// (IDA_YA_YDP_INIT) needs, and left out of the local error test (IDASetSuppressAlg on). The models
/// hand IDA index-1 systems: each multiplier is a smooth function of the differential components,
/// solved to the Newton tolerance at every step, so its accuracy follows from theirs. Kept in the
/// error test, a multiplier that passes through zero (the normal force at lift-off) is held to the
/// absolute tolerance solver.atol, which is set in state units: on the tipping table at rtol 1e-10 that
/// collapsed the step size after lift-off (85 000 error-test failures instead of 0, and a less
/// accurate run), while with suppression the forces agree with the ODE formulation to 2e-7 N.
#include <cstdlib>
#include <cstring>
#include <exception>

#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "rollsim/core/error.hpp"
#include "rollsim/solve/integrator.hpp"
#include "rollsim/solve/sundials.hpp"

namespace rollsim {

namespace {

struct IdaMemDeleter {
  void operator()(void* m) const { IDAFree(&m); }
};

class IdaIntegrator final : public Integrator {
 public:
  IdaIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : sys_(sys), opt_(opt), n_(static_cast<long>(sys.size())), ctx_(sundials::make_context()) {
    y_ = sundials::make_vector(n_, ctx_.get());
    yp_ = sundials::make_vector(n_, ctx_.get());
    id_ = sundials::make_vector(n_, ctx_.get());
    atol_ = sundials::make_vector(n_, ctx_.get());
    const auto scale = sys.atol_scale();
    for (long i = 0; i < n_; ++i) NV_Ith_S(atol_.get(), i) = opt.atol * scale[static_cast<size_t>(i)];
    sys.differential_ids(N_VGetArrayPointer(id_.get()));
    mem_.reset(IDACreate(ctx_.get()));
    sundials::check_ptr(mem_.get(), "IDACreate");
    N_VConst(0.0, y_.get());
    N_VConst(0.0, yp_.get());
    call(IDAInit(mem_.get(), &IdaIntegrator::res_cb, 0.0, y_.get(), yp_.get()), "IDAInit");
    call(IDASetUserData(mem_.get(), this), "IDASetUserData");
    call(IDASetErrHandlerFn(mem_.get(), &IdaIntegrator::err_cb, this), "IDASetErrHandlerFn");
    call(IDASVtolerances(mem_.get(), opt.rtol, atol_.get()), "IDASVtolerances");
    call(IDASetId(mem_.get(), id_.get()), "IDASetId");
    call(IDASetSuppressAlg(mem_.get(), SUNTRUE), "IDASetSuppressAlg");
    // One step per IDASolve call: the per-call step limit never binds; the loop counts steps itself.
    call(IDASetMaxNumSteps(mem_.get(), 100000), "IDASetMaxNumSteps");
    if (opt.max_step_size > 0) call(IDASetMaxStep(mem_.get(), opt.max_step_size), "IDASetMaxStep");
    A_.reset(SUNDenseMatrix(n_, n_, ctx_.get()));
    sundials::check_ptr(A_.get(), "SUNDenseMatrix");
    LS_.reset(SUNLinSol_Dense(y_.get(), A_.get(), ctx_.get()));
    sundials::check_ptr(LS_.get(), "SUNLinSol_Dense");
    call(IDASetLinearSolver(mem_.get(), LS_.get(), A_.get()), "IDASetLinearSolver");
    // Use the model's iteration matrix if it has one (probe it once at its initial state).
    std::vector<double> probe(static_cast<size_t>(n_ * n_)), x0(static_cast<size_t>(n_)), xd0(static_cast<size_t>(n_));
    sys.initial_state(x0.data());
    const int m0 = sys.initial_mode(x0.data());
    sys.initial_derivative(0.0, x0.data(), m0, xd0.data());
    if (sys.residual_jacobian(0.0, x0.data(), xd0.data(), m0, 1.0, probe.data())) {
      call(IDASetJacFn(mem_.get(), &IdaIntegrator::jac_cb), "IDASetJacFn");
    }
  }

  void reset(double t, const double* x, int mode) override {
    accumulate();
    mode_ = mode;
    std::memcpy(N_VGetArrayPointer(y_.get()), x, sizeof(double) * static_cast<size_t>(n_));
    sys_.initial_derivative(t, x, mode, N_VGetArrayPointer(yp_.get()));
    call(IDAReInit(mem_.get(), t, y_.get(), yp_.get()), "IDAReInit");
    witnesses_ = sys_.witnesses(mode);
    const int nw = static_cast<int>(witnesses_.size());
    call(IDARootInit(mem_.get(), nw, nw ? &IdaIntegrator::root_cb : nullptr), "IDARootInit");
    roots_.assign(witnesses_.size(), 0);
    if (nw) {
      std::vector<int> dir(witnesses_.size());
      for (size_t i = 0; i < witnesses_.size(); ++i) dir[i] = witnesses_[i].direction;
      call(IDASetRootDirection(mem_.get(), dir.data()), "IDASetRootDirection");
    }
    t_ = t;
    stop_set_ = false;
    need_ic_ = true;  // IDACalcIC needs the direction and scale of the first output time: done in step()
  }

  Status step(double t_stop) override {
    if (need_ic_) {
      // Consistent initial conditions: the algebraic components of x and all of x', with the
      // differential components of x held at the given values.
      const int flag = IDACalcIC(mem_.get(), IDA_YA_YDP_INIT, t_stop);
      rethrow_pending();
      if (flag < 0) fail("IDACalcIC", flag);
      call(IDAGetConsistentIC(mem_.get(), y_.get(), yp_.get()), "IDAGetConsistentIC");
      need_ic_ = false;
    }
    if (!stop_set_ || t_stop != stop_) {
      call(IDASetStopTime(mem_.get(), t_stop), "IDASetStopTime");
      stop_ = t_stop;
      stop_set_ = true;
    }
    double tret = t_;
    const int flag = IDASolve(mem_.get(), t_stop, &tret, y_.get(), yp_.get(), IDA_ONE_STEP);
    rethrow_pending();
    if (flag < 0) fail("IDASolve", flag);
    t_ = tret;
    if (flag == IDA_ROOT_RETURN) {
      call(IDAGetRootInfo(mem_.get(), roots_.data()), "IDAGetRootInfo");
      return Status::Root;
    }
    if (flag == IDA_TSTOP_RETURN) {
      stop_set_ = false;  // set it again before the next step, whether or not IDA cleared it
      return Status::StopTime;
    }
    return Status::Step;
  }

  double t() const override { return t_; }
  const double* x() const override { return N_VGetArrayPointer(y_.get()); }

  void state_at(double t, double* x) const override {
    N_Vector v = N_VMake_Serial(n_, x, ctx_.get());
    sundials::check_ptr(v, "N_VMake_Serial");
    const int flag = IDAGetDky(mem_.get(), t, 0, v);
    N_VDestroy(v);
    if (flag < 0) const_cast<IdaIntegrator*>(this)->fail("IDAGetDky", flag);
  }

  const std::vector<int>& roots() const override { return roots_; }

  double last_step_size() const override {
    double h = 0;
    IDAGetLastStep(mem_.get(), &h);
    return h;
  }

  SolverStats stats() const override {
    SolverStats s;
    s.method = "ida-bdf";
    s.rtol = opt_.rtol;
    s.atol = opt_.atol;
    const Counts c = current();
    s.counts = {{"n_steps", total_.steps + c.steps},
                {"n_res_evals", total_.res + c.res},
                {"n_jac_evals", total_.jac + c.jac},
                {"n_root_evals", total_.g + c.g},
                {"n_err_test_fails", total_.etf + c.etf},
                {"n_nonlin_iters", total_.nni + c.nni},
                {"n_nonlin_conv_fails", total_.ncf + c.ncf},
                {"n_ic_backtracks", total_.bt + c.bt},
                {"n_restarts", restarts_}};
    return s;
  }

 private:
  struct Counts {
    long steps = 0, res = 0, jac = 0, g = 0, etf = 0, nni = 0, ncf = 0, bt = 0;
  };

  Counts current() const {
    Counts c;
    IDAGetNumSteps(mem_.get(), &c.steps);
    IDAGetNumResEvals(mem_.get(), &c.res);
    IDAGetNumJacEvals(mem_.get(), &c.jac);
    IDAGetNumGEvals(mem_.get(), &c.g);
    IDAGetNumErrTestFails(mem_.get(), &c.etf);
    IDAGetNumNonlinSolvIters(mem_.get(), &c.nni);
    IDAGetNumNonlinSolvConvFails(mem_.get(), &c.ncf);
    IDAGetNumBacktrackOps(mem_.get(), &c.bt);
    return c;
  }

  void accumulate() {
    if (!started_) {
      started_ = true;
      return;
    }
    const Counts c = current();
    total_.steps += c.steps;
    total_.res += c.res;
    total_.jac += c.jac;
    total_.g += c.g;
    total_.etf += c.etf;
    total_.nni += c.nni;
    total_.ncf += c.ncf;
    total_.bt += c.bt;
    ++restarts_;
  }

  void call(int flag, const char* fn) {
    if (flag < 0) fail(fn, flag);
  }

  [[noreturn]] void fail(const char* fn, int flag) {
    char* name = IDAGetReturnFlagName(flag);
    std::string flag_name = name ? name : "?";
    std::free(name);
    double h = 0, tc = t_;
    IDAGetCurrentStep(mem_.get(), &h);
    IDAGetCurrentTime(mem_.get(), &tc);
    std::string hint;
    if (flag == IDA_TOO_MUCH_WORK)
      hint = "raise solver.max_steps";
    else if (flag == IDA_TOO_MUCH_ACC)
      hint = "loosen solver.rtol or solver.atol";
    else if (flag == IDA_ERR_FAIL || flag == IDA_CONV_FAIL)
      hint = "the solution may be singular here (a constraint degenerate, a model limit reached?); try a looser "
             "solver.rtol or a shorter simulation.t_end";
    else if (flag == IDA_RES_FAIL || flag == IDA_RTFUNC_FAIL || flag == IDA_FIRST_RES_FAIL)
      hint = "the model could not be evaluated at this state";
    else if (flag == IDA_NO_RECOVERY || flag == IDA_LINESEARCH_FAIL)
      hint = "no consistent initial condition was found near the given [initial] values";
    if (!last_error_.empty()) hint += (hint.empty() ? "" : "; ") + std::string("IDA says: ") + last_error_;
    throw SolverError(fn, flag, flag_name, tc, h, sys_.has_modes() ? sys_.mode_name(mode_) : "", hint);
  }

  void rethrow_pending() {
    if (pending_) {
      auto e = pending_;
      pending_ = nullptr;
      std::rethrow_exception(e);
    }
  }

  static int res_cb(double t, N_Vector y, N_Vector yp, N_Vector r, void* ud) {
    auto* self = static_cast<IdaIntegrator*>(ud);
    try {
      self->sys_.residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), self->mode_, N_VGetArrayPointer(r));
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static int root_cb(double t, N_Vector y, N_Vector, double* g, void* ud) {
    auto* self = static_cast<IdaIntegrator*>(ud);
    try {
      self->sys_.witness_values(t, N_VGetArrayPointer(y), self->mode_, g);
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static int jac_cb(double t, double cj, N_Vector y, N_Vector yp, N_Vector, SUNMatrix J, void* ud, N_Vector, N_Vector,
                    N_Vector) {
    auto* self = static_cast<IdaIntegrator*>(ud);
    try {
      // SUNDenseMatrix data is column-major, as the interface promises.
      self->sys_.residual_jacobian(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), self->mode_, cj,
                                   SUNDenseMatrix_Data(J));
      return 0;
    } catch (...) {
      self->pending_ = std::current_exception();
      return -1;
    }
  }

  static void err_cb(int, const char*, const char* function, char* msg, void* ud) {
    auto* self = static_cast<IdaIntegrator*>(ud);
    self->last_error_ = std::string(function ? function : "") + ": " + (msg ? msg : "");
  }

  const HybridSystem& sys_;
  SolverOptions opt_;
  long n_;
  sundials::Context ctx_;
  sundials::Vector y_, yp_, id_, atol_;
  std::unique_ptr<void, IdaMemDeleter> mem_;
  sundials::Matrix A_;
  sundials::LinearSolver LS_;
  std::vector<Witness> witnesses_;
  std::vector<int> roots_;
  int mode_ = 0;
  double t_ = 0, stop_ = 0;
  bool stop_set_ = false, started_ = false, need_ic_ = false;
  Counts total_;
  long restarts_ = 0;
  std::exception_ptr pending_;
  std::string last_error_;
};

}  // namespace

std::unique_ptr<Integrator> make_ida_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<IdaIntegrator>(system, options);
}

}  // namespace rollsim
