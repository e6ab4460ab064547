/// CVODE behind the Integrator interface: Adams (fixed-point iteration) or BDF (Newton, dense).
#include <vector>

#include <cvode/cvode.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "sundials_integrator.hpp"

namespace rollsim {

namespace {

constexpr const char* kCvodeSingular =
    "the solution may be singular here (a model limit reached?); try solver.method = \"bdf\", a looser "
    "solver.rtol, or a shorter simulation.t_end";

constexpr sundials::FlagHint kCvodeHints[] = {
    {CV_TOO_MUCH_WORK, sundials::hint::raise_max_steps},
    {CV_TOO_MUCH_ACC, sundials::hint::loosen_tolerances},
    {CV_ERR_FAILURE, kCvodeSingular},
    {CV_CONV_FAILURE, kCvodeSingular},
    {CV_RHSFUNC_FAIL, sundials::hint::model_not_evaluable},
    {CV_RTFUNC_FAIL, sundials::hint::model_not_evaluable},
};

const sundials::SolverApi kCvodeApi =
    ROLLSIM_SUNDIALS_API(CVode, "CVODE", CVode, CV_ROOT_RETURN, CV_TSTOP_RETURN, -1, kCvodeHints);

class CvodeIntegrator final : public sundials::SundialsIntegrator {
 public:
  CvodeIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : SundialsIntegrator(sys, opt, kCvodeApi, "cvode-" + opt.method) {
    const int lmm = opt.method == "bdf" ? CV_BDF : CV_ADAMS;
    created(CVodeCreate(lmm, ctx_.get()), "CVodeCreate");
    call(CVodeInit(mem_.get(), &SundialsIntegrator::ode_rhs, 0.0, y_.get()), "CVodeInit");
    configure();
    if (lmm == CV_BDF) {
      dense_ = sundials::make_dense_linear_solver(y_.get(), n_, ctx_.get());
      call(CVodeSetLinearSolver(mem_.get(), dense_.LS.get(), dense_.A.get()), "CVodeSetLinearSolver");
      has_jacobian_ = provides_jacobian(sys);
      if (has_jacobian_) call(CVodeSetJacFn(mem_.get(), &CvodeIntegrator::jac_cb), "CVodeSetJacFn");
    } else {
      NLS_.reset(SUNNonlinSol_FixedPoint(y_.get(), 0, ctx_.get()));
      sundials::check_ptr(NLS_.get(), "SUNNonlinSol_FixedPoint");
      call(CVodeSetNonlinearSolver(mem_.get(), NLS_.get()), "CVodeSetNonlinearSolver");
    }
  }

 private:
  int advance(double t_stop, double* tret) override {
    return CVode(mem_.get(), t_stop, y_.get(), tret, CV_ONE_STEP);
  }

  void reinit(double t) override { call(CVodeReInit(mem_.get(), t, y_.get()), "CVodeReInit"); }

  /// Whether the model gives a Jacobian (probed once at its initial state).
  static bool provides_jacobian(const HybridSystem& sys) {
    const size_t n = sys.size();
    std::vector<double> probe(n * n), x0(n);
    sys.initial_state(x0.data());
    return facet<OdeSystem>(sys)->jacobian(0.0, x0.data(), sys.initial_mode(x0.data()), probe.data());
  }

  bool rebind_solver(const HybridSystem& sys) override {
    return !dense_.LS || provides_jacobian(sys) == has_jacobian_;
  }

  void root_init(int count) override {
    call(CVodeRootInit(mem_.get(), count, count ? &SundialsIntegrator::ode_witnesses : nullptr), "CVodeRootInit");
  }

  void current(sundials::Counts& c) const override {
    long steps = 0, rhs = 0, jac = 0, g = 0, etf = 0, nni = 0, ncf = 0;
    CVodeGetNumSteps(mem_.get(), &steps);
    CVodeGetNumRhsEvals(mem_.get(), &rhs);
    if (dense_.LS) CVodeGetNumJacEvals(mem_.get(), &jac);
    CVodeGetNumGEvals(mem_.get(), &g);
    CVodeGetNumErrTestFails(mem_.get(), &etf);
    CVodeGetNumNonlinSolvIters(mem_.get(), &nni);
    CVodeGetNumNonlinSolvConvFails(mem_.get(), &ncf);
    c.set({{"n_steps", steps},
             {"n_rhs_evals", rhs},
             {"n_jac_evals", jac},
             {"n_root_evals", g},
             {"n_err_test_fails", etf},
             {"n_nonlin_iters", nni},
             {"n_nonlin_conv_fails", ncf}});
  }

  static int jac_cb(double t, N_Vector y, N_Vector, SUNMatrix J, void* ud, N_Vector, N_Vector, N_Vector) {
    return guarded<OdeSystem>(ud, [&](const OdeSystem& sys, int mode) {
      // SUNDenseMatrix data is column-major, as the interface promises.
      const double* x = N_VGetArrayPointer(y);
      double* jd = SUNDenseMatrix_Data(J);
      if (sys.jacobian(t, x, mode, jd)) return;
      // The model gives no Jacobian in this mode (it did in the first one): forward differences of the rhs.
      sundials::difference_jacobian(sys.size(), x, nullptr, 0.0, jd, [&](const double* xa, const double*, double* f) {
        sys.rhs(t, xa, mode, f);
      });
    });
  }

  sundials::DenseLinearSolver dense_;
  sundials::NonlinearSolver NLS_;
  bool has_jacobian_ = false;
};

}  // namespace

std::unique_ptr<Integrator> make_cvode_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<CvodeIntegrator>(system, options);
}

}  // namespace rollsim
