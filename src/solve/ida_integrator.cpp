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

#include <vector>

#include <ida/ida.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "sundials_integrator.hpp"

namespace rollsim {

namespace {

constexpr const char* kIdaSingular =
    "the solution may be singular here (a constraint degenerate, a model limit reached?); try a looser "
    "solver.rtol or a shorter simulation.t_end";
constexpr const char* kNoConsistentIc = "no consistent initial condition was found near the given [initial] values";

constexpr sundials::FlagHint kIdaHints[] = {
    {IDA_TOO_MUCH_WORK, sundials::hint::raise_max_steps},
    {IDA_TOO_MUCH_ACC, sundials::hint::loosen_tolerances},
    {IDA_ERR_FAIL, kIdaSingular},
    {IDA_CONV_FAIL, kIdaSingular},
    {IDA_RES_FAIL, sundials::hint::model_not_evaluable},
    {IDA_RTFUNC_FAIL, sundials::hint::model_not_evaluable},
    {IDA_FIRST_RES_FAIL, sundials::hint::model_not_evaluable},
    {IDA_NO_RECOVERY, kNoConsistentIc},
    {IDA_LINESEARCH_FAIL, kNoConsistentIc},
};

// One step per IDASolve call: the per-call step limit never binds; the loop counts steps itself.
const sundials::SolverApi kIdaApi =
    ROLLSIM_SUNDIALS_API(IDA, "IDA", IDASolve, IDA_ROOT_RETURN, IDA_TSTOP_RETURN, 100000, kIdaHints);

class IdaIntegrator final : public sundials::SundialsIntegrator {
 public:
  IdaIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : SundialsIntegrator(sys, opt, kIdaApi, "ida-bdf") {
    yp_ = sundials::make_vector(n_, ctx_.get());
    id_ = sundials::make_vector(n_, ctx_.get());
    dae_->differential_ids(N_VGetArrayPointer(id_.get()));
    created(IDACreate(ctx_.get()), "IDACreate");
    N_VConst(0.0, yp_.get());
    call(IDAInit(mem_.get(), &IdaIntegrator::res_cb, 0.0, y_.get(), yp_.get()), "IDAInit");
    configure();
    call(IDASetId(mem_.get(), id_.get()), "IDASetId");
    call(IDASetSuppressAlg(mem_.get(), SUNTRUE), "IDASetSuppressAlg");
    dense_ = sundials::make_dense_linear_solver(y_.get(), n_, ctx_.get());
    call(IDASetLinearSolver(mem_.get(), dense_.LS.get(), dense_.A.get()), "IDASetLinearSolver");
    // Use the model's iteration matrix if it has one.
    has_jacobian_ = provides_jacobian(sys);
    if (has_jacobian_) call(IDASetJacFn(mem_.get(), &IdaIntegrator::jac_cb), "IDASetJacFn");
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
    return SundialsIntegrator::step(t_stop);
  }

 private:
  int advance(double t_stop, double* tret) override {
    return IDASolve(mem_.get(), t_stop, tret, y_.get(), yp_.get(), IDA_ONE_STEP);
  }

  /// Whether the model gives an iteration matrix (probed once at its initial state).
  static bool provides_jacobian(const HybridSystem& sys) {
    const size_t n = sys.size();
    std::vector<double> probe(n * n), x0(n), xd0(n);
    sys.initial_state(x0.data());
    const int m0 = sys.initial_mode(x0.data());
    const DaeSystem& dae = *facet<DaeSystem>(sys);
    dae.initial_derivative(0.0, x0.data(), m0, xd0.data());
    return dae.residual_jacobian(0.0, x0.data(), xd0.data(), m0, 1.0, probe.data());
  }

  bool rebind_solver(const HybridSystem& sys) override {
    if (provides_jacobian(sys) != has_jacobian_) return false;
    facet<DaeSystem>(sys)->differential_ids(N_VGetArrayPointer(id_.get()));
    call(IDASetId(mem_.get(), id_.get()), "IDASetId");
    return true;
  }

  void reinit(double t) override {
    dae_->initial_derivative(t, N_VGetArrayPointer(y_.get()), mode_, N_VGetArrayPointer(yp_.get()));
    call(IDAReInit(mem_.get(), t, y_.get(), yp_.get()), "IDAReInit");
    need_ic_ = true;  // IDACalcIC needs the direction and scale of the first output time: done in step()
  }

  void root_init(int count) override {
    call(IDARootInit(mem_.get(), count, count ? &SundialsIntegrator::dae_witnesses : nullptr), "IDARootInit");
  }

  void current(sundials::Counts& c) const override {
    long steps = 0, res = 0, jac = 0, g = 0, etf = 0, nni = 0, ncf = 0, bt = 0;
    IDAGetNumSteps(mem_.get(), &steps);
    IDAGetNumResEvals(mem_.get(), &res);
    IDAGetNumJacEvals(mem_.get(), &jac);
    IDAGetNumGEvals(mem_.get(), &g);
    IDAGetNumErrTestFails(mem_.get(), &etf);
    IDAGetNumNonlinSolvIters(mem_.get(), &nni);
    IDAGetNumNonlinSolvConvFails(mem_.get(), &ncf);
    IDAGetNumBacktrackOps(mem_.get(), &bt);
    c.set({{"n_steps", steps},
             {"n_res_evals", res},
             {"n_jac_evals", jac},
             {"n_root_evals", g},
             {"n_err_test_fails", etf},
             {"n_nonlin_iters", nni},
             {"n_nonlin_conv_fails", ncf},
             {"n_ic_backtracks", bt}});
  }

  static int res_cb(double t, N_Vector y, N_Vector yp, N_Vector r, void* ud) {
    return guarded<DaeSystem>(ud, [&](const DaeSystem& sys, int mode) {
      sys.residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), mode, N_VGetArrayPointer(r));
    });
  }

  static int jac_cb(double t, double cj, N_Vector y, N_Vector yp, N_Vector, SUNMatrix J, void* ud, N_Vector, N_Vector,
                    N_Vector) {
    return guarded<DaeSystem>(ud, [&](const DaeSystem& sys, int mode) {
      // SUNDenseMatrix data is column-major, as the interface promises.
      const double* x = N_VGetArrayPointer(y);
      const double* xd = N_VGetArrayPointer(yp);
      double* jd = SUNDenseMatrix_Data(J);
      if (sys.residual_jacobian(t, x, xd, mode, cj, jd)) return;
      // No iteration matrix from the model in this mode: forward differences of F along (e_j, cj e_j).
      sundials::difference_jacobian(sys.size(), x, xd, cj, jd, [&](const double* xa, const double* xda, double* r) {
        sys.residual(t, xa, xda, mode, r);
      });
    });
  }

  sundials::Vector yp_, id_;
  sundials::DenseLinearSolver dense_;
  bool need_ic_ = false;
  bool has_jacobian_ = false;
};

}  // namespace

std::unique_ptr<Integrator> make_ida_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<IdaIntegrator>(system, options);
}

}  // namespace rollsim
