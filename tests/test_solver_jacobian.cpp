// The Jacobian callbacks: a model that gives a Jacobian in one mode and not in another (its jacobian() returns
// false there) still runs with the Newton-based methods, on difference quotients, and gets the closed-form answer.
#include <doctest/doctest.h>

#include <cmath>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/solve/simulate.hpp"

namespace {

using namespace rollsim;

/// x' = -x in mode 0 (analytic Jacobian), x' = -2 x in mode 1 (none); x falls through 1/2 into mode 1.
class Decay final : public OdeSystem, public WitnessSystem {
 public:
  mutable long jacobian_refusals = 0;
  std::string model_name() const override { return "decay"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  bool has_modes() const override { return true; }
  void initial_state(double* x0) const override { x0[0] = 1; }
  void rhs(double, const double* x, int mode, double* f) const override { f[0] = (mode == 0 ? -1.0 : -2.0) * x[0]; }
  bool jacobian(double, const double*, int mode, double* J) const override {
    if (mode != 0) {
      ++jacobian_refusals;
      return false;
    }
    J[0] = -1;
    return true;
  }
  std::vector<Witness> witnesses(int mode) const override {
    if (mode == 0) return {{"half", -1, false}};
    return {};
  }
  void witness_values(double, const double* x, int, double* g) const override { g[0] = x[0] - 0.5; }
  EventOutcome on_event(double, double*, int, const std::string&, int) const override {
    EventOutcome out;
    out.kind = "half";
    out.new_mode = 1;
    return out;
  }
  void compute_outputs(double, const double*, int, double*) const override {}
  std::unique_ptr<Summarizer> make_summarizer() const override { return nullptr; }

 private:
  Signals s_{{"x", "1", "state"}}, o_;
};

}  // namespace

TEST_CASE("solver: a mode without a model Jacobian falls back to difference quotients (bdf)") {
  Decay sys;
  SimulationOptions opt;
  opt.t_end = 3;
  opt.output_dt = 0.5;
  opt.solver.method = "bdf";
  opt.solver.rtol = 1e-10;
  opt.solver.atol = 1e-14;
  const RunResult r = simulate(sys, opt, {});
  REQUIRE(r.status == "ok");
  CHECK(r.final_mode == 1);
  CHECK(sys.jacobian_refusals > 0);  // the mode without one was really integrated with Newton
  // Closed form: x = e^{-t} until t1 = ln 2, then x = e^{-2 (t - ln 2)} / 2.
  const double exact = 0.5 * std::exp(-2 * (3 - std::log(2.0)));
  CHECK(std::abs(r.x_final[0] - exact) < 1e-8 * exact);
}
