// The system's facets: a system implements only what it has (an ODE, a DAE, witnesses, an exact propagation), its
// formulation follows from them, and make_integrator refuses a method the system has no facet for, naming what the
// method needs and the methods the system has.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/solve/integrator.hpp"
#include "rollsim/solve/simulate.hpp"

namespace {

using namespace rollsim;

/// x' + x = 0 as a DAE F = x' + x, from x(0) = 1; no iteration matrix (IDA's difference quotients), no witnesses.
class DecayDae final : public DaeSystem {
 public:
  std::string model_name() const override { return "decay_dae"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x0) const override { x0[0] = 1; }
  void residual(double, const double* x, const double* xd, int, double* r) const override { r[0] = xd[0] + x[0]; }
  void differential_ids(double* id) const override { id[0] = 1; }
  void initial_derivative(double, const double* x, int, double* xd) const override { xd[0] = -x[0]; }
  void compute_outputs(double, const double*, int, double*) const override {}

 private:
  Signals s_{{"x", "1", "state"}}, o_;
};

/// x' = -x as an ODE, without witnesses.
class DecayOde final : public OdeSystem {
 public:
  std::string model_name() const override { return "decay_ode"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x0) const override { x0[0] = 1; }
  void rhs(double, const double* x, int, double* f) const override { f[0] = -x[0]; }
  void compute_outputs(double, const double*, int, double*) const override {}

 private:
  Signals s_{{"x", "1", "state"}}, o_;
};

/// The message of the InputError make_integrator throws for `method` (empty when it does not throw one).
std::string refusal(const HybridSystem& sys, const std::string& method) {
  SolverOptions o;
  o.method = method;
  try {
    make_integrator(sys, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

SimulationOptions options(const std::string& method) {
  SimulationOptions opt;
  opt.t_end = 2;
  opt.output_dt = 0.5;
  opt.solver.method = method;
  opt.solver.rtol = 1e-10;
  opt.solver.atol = 1e-14;
  return opt;
}

}  // namespace

TEST_CASE("facets: a DAE has no right-hand side, its formulation is Dae and only bdf (IDA) integrates it") {
  const DecayDae sys;
  CHECK(sys.formulation() == Formulation::Dae);
  CHECK(facet<DaeSystem>(sys) != nullptr);
  CHECK(facet<OdeSystem>(sys) == nullptr);
  CHECK(facet<WitnessSystem>(sys) == nullptr);
  for (const char* m : {"adams", "erk", "dopri5", "dop853"}) {
    CAPTURE(m);
    const std::string e = refusal(sys, m);
    CHECK(e.find("solver.method \"" + std::string(m) + "\" integrates an ODE") != std::string::npos);
    CHECK(e.find("\"decay_dae\"") != std::string::npos);
    CHECK(e.find("its methods: \"auto\", \"bdf\")") != std::string::npos);  // auto chooses IDA for a DAE
  }
  CHECK(refusal(sys, "exact").find("closed-form modes") != std::string::npos);
  CHECK(refusal(sys, "bdf").empty());
  // The run: x = e^{-t} (the iteration matrix from difference quotients of the residual).
  const RunResult r = simulate(sys, options("bdf"), {});
  REQUIRE(r.status == "ok");
  CHECK(r.stats.method == "ida-bdf");
  CHECK(r.n_events == 0);
  CHECK(std::abs(r.x_final[0] - std::exp(-2.0)) < 1e-7);
}

TEST_CASE("facets: an ODE without witnesses runs with every general method, and has no exact propagation") {
  const DecayOde sys;
  CHECK(sys.formulation() == Formulation::Ode);
  CHECK(facet<WitnessSystem>(sys) == nullptr);
  CHECK(facet<ExactSystem>(sys) == nullptr);
  const std::string e = refusal(sys, "exact");
  CHECK(e.find("integrates a piecewise-linear model with closed-form modes") != std::string::npos);
  CHECK(e.find("its methods: \"auto\", \"adams\", \"bdf\", \"erk\", \"dopri5\", \"dop853\")") != std::string::npos);
  // The one method table names the choices: what an ODE, a DAE and an exact system can take ("auto" each).
  CHECK(solver_method_names(MethodFacet::Ode) == std::vector<std::string>{"auto", "adams", "bdf", "erk", "dopri5", "dop853"});
  CHECK(solver_method_names(MethodFacet::Dae) == std::vector<std::string>{"auto", "bdf"});
  CHECK(solver_method_names(MethodFacet::Exact) == std::vector<std::string>{"auto", "exact"});
  CHECK(refusal(sys, "rk4").find("integrates a method of that name") != std::string::npos);
  for (const char* m : {"auto", "bdf", "adams", "erk", "dopri5", "dop853"}) {
    CAPTURE(m);
    const RunResult r = simulate(sys, options(m), {});
    REQUIRE(r.status == "ok");
    CHECK(r.n_events == 0);
    CHECK(std::abs(r.x_final[0] - std::exp(-2.0)) < 1e-7);
  }
}
