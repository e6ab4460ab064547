/// ARKODE's explicit Runge-Kutta stepper (ERKStep) behind the Integrator interface: solver.method = "erk",
/// the order-8 Fehlberg 13(7)8 table, for smooth nonstiff models where a high order pays.
#include <arkode/arkode_erkstep.h>

#include "sundials_integrator.hpp"

namespace rollsim {

namespace {

constexpr sundials::FlagHint kErkHints[] = {
    {ARK_TOO_MUCH_ACC, sundials::hint::loosen_tolerances},
    {ARK_ERR_FAILURE, "the problem may be stiff here: try solver.method = \"bdf\""},
};

const sundials::SolverApi kErkApi = ROLLSIM_SUNDIALS_API(ERKStep, "ARKODE", ERKStepEvolve, ARK_ROOT_RETURN,
                                                         ARK_TSTOP_RETURN, -1, kErkHints);

class ErkIntegrator final : public sundials::SundialsIntegrator {
 public:
  ErkIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : SundialsIntegrator(sys, opt, kErkApi, "arkode-erk8") {
    created(ERKStepCreate(&SundialsIntegrator::ode_rhs, 0.0, y_.get(), ctx_.get()), "ERKStepCreate");
    configure();
    call(ERKStepSetTableNum(mem_.get(), ARKODE_FEHLBERG_13_7_8), "ERKStepSetTableNum");
  }

 private:
  int advance(double t_stop, double* tret) override {
    return ERKStepEvolve(mem_.get(), t_stop, y_.get(), tret, ARK_ONE_STEP);
  }

  /// Not reused: ERKStepReInit leaves counters of the last run (a rebound integrator's statistics would differ
  /// from a new one's, with the same steps and results).
  bool rebind_solver(const HybridSystem&) override { return false; }

  void reinit(double t) override {
    call(ERKStepReInit(mem_.get(), &SundialsIntegrator::ode_rhs, t, y_.get()), "ERKStepReInit");
  }

  void root_init(int count) override {
    call(ERKStepRootInit(mem_.get(), count, count ? &SundialsIntegrator::ode_witnesses : nullptr), "ERKStepRootInit");
  }

  void current(sundials::Counts& c) const override {
    long steps = 0, rhs = 0, g = 0, etf = 0;
    ERKStepGetNumSteps(mem_.get(), &steps);
    ERKStepGetNumRhsEvals(mem_.get(), &rhs);
    ERKStepGetNumGEvals(mem_.get(), &g);
    ERKStepGetNumErrTestFails(mem_.get(), &etf);
    c.set({{"n_steps", steps},
             {"n_rhs_evals", rhs},
             {"n_jac_evals", 0},
             {"n_root_evals", g},
             {"n_err_test_fails", etf}});
  }
};

}  // namespace

std::unique_ptr<Integrator> make_erk_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<ErkIntegrator>(system, options);
}

}  // namespace rollsim
