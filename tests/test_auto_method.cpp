// solver.method = "auto", the default: which integrator it takes for each kind of system, the hand-over from
// DOP853 to BDF where Hairer's stiffness test finds a problem stiff, and answers that agree with every other method
// within the tolerance.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "rollsim/analysis/compare.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/solve/simulate.hpp"
#include "support.hpp"

namespace {

using namespace rollsim;

/// Prothero and Robinson's test equation x' = -L (x - cos t) - sin t, x(0) = 1: the solution is x = cos t for
/// every L, and L = 1e5 makes it stiff (an explicit method's step is bounded by its stability, ~6/L). A witness
/// x - 1/2 falls at t = pi/3 and switches to mode 1, the same equation; y' = x integrates x (y = sin t).
class ProtheroRobinson final : public OdeSystem, public WitnessSystem {
 public:
  explicit ProtheroRobinson(double lambda) : lambda_(lambda) {}
  std::string model_name() const override { return "prothero_robinson"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  bool has_modes() const override { return true; }
  void initial_state(double* x0) const override {
    x0[0] = 1;
    x0[1] = 0;
  }
  void rhs(double t, const double* x, int, double* f) const override {
    f[0] = -lambda_ * (x[0] - std::cos(t)) - std::sin(t);
    f[1] = x[0];
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
  double lambda_;
  Signals s_{{"x", "1", "state"}, {"y", "1", "its integral"}}, o_;
};

struct MethodRun {
  RunResult r;
  Recorder rec;
};

MethodRun run_method(const HybridSystem& sys, const std::string& method, double t_end, double max_step = 0) {
  SimulationOptions opt;
  opt.solver.max_step_size = max_step;
  opt.t_end = t_end;
  opt.output_dt = 0.1;
  opt.solver.method = method;
  opt.solver.rtol = 1e-9;
  opt.solver.atol = 1e-12;
  MethodRun m;
  m.r = simulate(sys, opt, {&m.rec});
  return m;
}

double event_time(const MethodRun& m) {
  REQUIRE(m.rec.events.size() == 1);
  return m.rec.events.front().t;
}

}  // namespace

TEST_CASE("auto method: the default of solver.method, its largest step a tenth of the run unless given") {
  CHECK(SolverOptions{}.method == "auto");
  CHECK(SimulationOptions{}.solver.method == "auto");
  SolverOptions o;
  CHECK(for_run(o, 1.0, 21.0).max_step_size == 2.0);
  o.max_step_size = 0.5;
  CHECK(for_run(o, 0.0, 100.0).max_step_size == 0.5);
  o.max_step_size = 0;
  o.method = "dop853";
  CHECK(for_run(o, 0.0, 100.0).max_step_size == 0);
}

TEST_CASE("auto method: a stiff problem is handed from DOP853 to BDF, with the closed-form answer") {
  const ProtheroRobinson stiff(1e5);
  const double t_end = 2.0;
  const MethodRun am = run_method(stiff, "auto", t_end);
  const RunResult& a = am.r;
  REQUIRE(a.status == "ok");
  INFO(a.stats.method);
  CHECK(a.stats.method.rfind("auto: dop853, then cvode-bdf from t = ", 0) == 0);
  CHECK(a.stats.method.find("stiff: h |lambda| above DOP853's stability boundary") != std::string::npos);
  CHECK(a.stats.get("n_method_switches") == 1);
  // The closed form: x = cos t, y = sin t, the event at cos t = 1/2.
  CHECK(std::abs(event_time(am) - std::acos(0.5)) < 1e-8);
  CHECK(std::abs(a.x_final[0] - std::cos(t_end)) < 1e-8);
  CHECK(std::abs(a.x_final[1] - std::sin(t_end)) < 1e-7);
  // DOP853 alone gets there too, on steps its stability bounds (h |lambda| below the boundary of its stability
  // region on the negative real axis, between the test's threshold 6.1 and 7): over ten times as many.
  const MethodRun dm = run_method(stiff, "dop853", t_end);
  const RunResult& d = dm.r;
  REQUIRE(d.status == "ok");
  CHECK(std::abs(event_time(dm) - std::acos(0.5)) < 1e-8);
  CHECK(d.stats.get("n_steps") > 10 * a.stats.get("n_steps"));
  CHECK(d.stats.get("n_steps") > static_cast<long>(t_end * 1e5 / 7));
}

TEST_CASE("auto method: a nonstiff problem stays with DOP853 and is its run step for step") {
  const ProtheroRobinson mild(1.0);
  // "auto" bounds the step by a tenth of the run where solver.max_step is not given (for_run); dop853 with that bound.
  const MethodRun am = run_method(mild, "auto", 3.0), dm = run_method(mild, "dop853", 3.0, 0.3);
  const RunResult &a = am.r, &d = dm.r;
  REQUIRE(a.status == "ok");
  CHECK(a.stats.method == "auto: dop853");
  CHECK(a.stats.get("n_method_switches") == 0);
  CHECK(a.stats.get("n_steps") == d.stats.get("n_steps"));
  CHECK(a.x_final == d.x_final);
  CHECK(event_time(am) == event_time(dm));
}

TEST_CASE("auto method: a sweep's reused integrator starts each run on DOP853 again") {
  const ProtheroRobinson stiff(1e5), mild(1.0);
  SolverWorkspace ws;
  SimulationOptions opt;
  opt.t_end = 1.0;
  opt.output_dt = 0.5;
  opt.solver.rtol = 1e-9;
  opt.solver.atol = 1e-12;
  const double x0[2] = {1, 0};
  const RunResult s = simulate(stiff, x0, opt, {}, &ws);
  CHECK(s.stats.get("n_method_switches") == 1);
  const RunResult m = simulate(mild, x0, opt, {}, &ws);
  CHECK(m.stats.method == "auto: dop853");
  opt.solver.method = "dop853";
  opt.solver.max_step_size = 0.1;  // "auto"'s bound for this run (for_run)
  CHECK(m.x_final == simulate(mild, x0, opt, {}).x_final);
}

TEST_CASE("auto method: each kind of model gets its method, and the same answer as every other method") {
  // The tipping table to the edge (an ODE: DOP853), its DAE formulation (IDA) and the rolling disk (its closed
  // form): the event times of "auto" and of each method the model has agree to the tolerance's order.
  struct Case {
    const char* scenario;
    std::vector<std::string> overrides;
    const char* chosen;
    std::vector<const char*> others;
    double agree;
  };
  using test::read_file;
  using test::run_text;
  using test::Run;
  const std::vector<Case> cases = {
      {"tipping_table.toml", {"simulation.t_end=1.7"}, "auto: dop853", {"adams", "bdf", "dop853", "dopri5"}, 1e-7},
      {"tipping_table_dae.toml", {}, "auto: ida-bdf", {"bdf"}, 0.0},
      {"disk_type_b.toml", {"simulation.t_end=20"}, "auto: exact", {"exact", "adams", "dop853"}, 1e-6},
  };
  for (const Case& c : cases) {
    INFO(c.scenario);
    const std::string text = read_file(rollsim::test::source_dir() + "/scenarios/" + c.scenario);
    auto with = [&](const std::string& method) {
      std::vector<std::string> o = c.overrides;
      o.push_back("solver.method=" + method);
      return run_text(text, o);
    };
    const Run a = with("auto");
    REQUIRE(a.result.status == "ok");
    CHECK(a.result.stats.method == c.chosen);
    REQUIRE(!a.rec.events.empty());
    for (const char* m : c.others) {
      INFO(m);
      const Run b = with(m);
      REQUIRE(b.result.status == "ok");
      const auto &ea = a.rec.events, &eb = b.rec.events;
      REQUIRE(eb.size() == ea.size());
      for (std::size_t i = 0; i < ea.size(); ++i) {
        CHECK(eb[i].kind == ea[i].kind);
        CHECK(std::abs(eb[i].t - ea[i].t) <= c.agree * std::max(1.0, ea[i].t));
      }
    }
  }
}
