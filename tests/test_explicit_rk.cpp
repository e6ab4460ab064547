// solver.method = "dopri5" (Boost.Odeint's Dormand-Prince 5(4)) and "dop853" (Dormand-Prince 8(5,3)), the
// explicit Runge-Kutta integrators behind the Integrator interface, against answers they do not produce
// themselves: CVODE at tight tolerance and the DAE formulation on IDA for the tipping table, the
// closed-form (exact) method for the rolling disk, energy conservation, and convergence as rtol shrinks. Its
// events come from its own root finder on the dense output; the self-audit passes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "support.hpp"

using namespace rollsim;

namespace {

/// The explicit methods, the name their statistics give, and the right-hand sides an accepted step costs at least.
struct Method {
  const char* name;
  const char* stats_name;
  long rhs_per_step;
};
constexpr Method kMethods[] = {{"dopri5", "odeint-dopri5", 6}, {"dop853", "dop853", 12}};

std::string scenario(const std::string& name) {
  return test::read_file(rollsim::test::source_dir() + "/scenarios/" + name);
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

test::Run table(const std::string& method, double rtol, std::vector<std::string> more = {}) {
  std::vector<std::string> sets{"events.lift_off=record", "solver.method=\"" + method + "\"",
                                "solver.rtol=" + num(rtol), "solver.atol=" + num(rtol * 1e-2)};
  for (auto& s : more) sets.push_back(std::move(s));
  return test::run_text(scenario("tipping_table.toml"), sets);
}

/// The disk in dimensionless units from (x, y, z) with inertia ratio j to tau_end (scenarios/disk_type_b.toml with
/// its values set).
test::Run disk_run(double j, double x, double y, double z, double tau_end, const char* method, double rtol) {
  return test::run_text(
      scenario("disk_type_b.toml"),
      {"parameters.inertia_ratio=" + num(j), "initial.x=" + num(x), "initial.y=" + num(y), "initial.z=" + num(z),
       "simulation.t_end=" + num(tau_end), "simulation.output_dt=0.05", std::string("solver.method=\"") + method + "\"",
       "solver.rtol=" + num(rtol), "solver.atol=1e-14"});
}

std::string text_of(const test::Run& r, const std::string& key) {
  auto* s = r.item(key);
  return s ? s->text : "";
}

/// Checks that run's events have ref's kinds and modes after, one for one; returns the largest difference of
/// their times.
double worst_event_time_difference(const test::Run& run, const test::Run& ref) {
  double worst = 0;
  for (std::size_t k = 0; k < ref.rec.events.size(); ++k) {
    CHECK(run.rec.events[k].kind == ref.rec.events[k].kind);
    CHECK(run.rec.events[k].mode_after == ref.rec.events[k].mode_after);
    worst = std::max(worst, std::abs(run.rec.events[k].t - ref.rec.events[k].t));
  }
  return worst;
}

double event_time(const test::Run& r, const std::string& kind) {
  for (const auto& e : r.rec.events)
    if (e.kind == kind) return e.t;
  return NAN;
}

}  // namespace

TEST_CASE("explicit RK: the table's lift-off and edge agree with CVODE and with the DAE formulation") {
  const auto cv = table("adams", 1e-13);
  // The index-1 DAE on IDA: another formulation (Lagrange multipliers) and another method.
  const auto dae = test::run_text(scenario("tipping_table_dae.toml"), {"solver.rtol=1e-12", "solver.atol=1e-14"});
  REQUIRE(cv.result.completed());
  REQUIRE(dae.result.completed());
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    const auto dp = table(m.name, 1e-10);
    REQUIRE(dp.result.completed());
    CHECK(dp.result.stats.method == m.stats_name);
    CHECK(dp.result.termination == "table_edge");
    REQUIRE(dp.rec.events.size() == 2);
    CHECK(dp.rec.events[0].kind == "lift_off");
    CHECK(dp.rec.events[1].kind == "table_edge");
    for (const char* kind : {"lift_off", "table_edge"}) {
      CAPTURE(kind);
      CHECK(std::abs(event_time(dp, kind) - event_time(cv, kind)) < 1e-8);
      CHECK(std::abs(event_time(dp, kind) - event_time(dae, kind)) < 1e-8);
    }
    // Its own root finder reported both events: the loop's search found nothing it missed.
    CHECK(dp.result.stats.get("n_located_by_search") == 0);
    CHECK(dp.result.stats.get("n_steps") > 0);
    CHECK(dp.result.stats.get("n_rhs_evals") >= m.rhs_per_step * dp.result.stats.get("n_steps"));
    // At the edge the witness |s| = l/2 holds to round-off of the located time.
    const auto& edge = dp.rec.events[1].x;
    const double s = 0.25 * (edge[0] - edge[1]);
    CHECK(std::abs(std::abs(s) - 0.5) < 1e-12);
  }
}

TEST_CASE("explicit RK: energy is conserved to the edge, and the state converges to CVODE's as rtol shrinks") {
  const auto ref = table("adams", 1e-13, {"simulation.t_end=1.5", "events.table_edge=record"});
  REQUIRE(ref.result.completed());
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    double prev = INFINITY;
    for (double rtol : {1e-6, 1e-8, 1e-10}) {
      CAPTURE(rtol);
      const auto dp = table(m.name, rtol, {"simulation.t_end=1.5", "events.table_edge=record"});
      REQUIRE(dp.result.completed());
      CHECK(dp.result.t_final == 1.5);
      double err = 0;
      for (std::size_t i = 0; i < 4; ++i) err = std::max(err, std::abs(dp.result.x_final[i] - ref.result.x_final[i]));
      INFO("max |x - x_ref| at 1.5 s: " << err);
      CHECK(err < 50 * rtol);  // about 2 rtol measured: the global error of a tolerance-proportional method
      CHECK(err < prev);
      prev = err;
      // The conservative table (no torque): T + V constant, to the local errors summed over the steps.
      CHECK(dp.summary("energy_drift_rel") < 10 * rtol);
    }
  }
}

TEST_CASE("explicit RK: the slip onset of a table with friction agrees with CVODE") {
  const std::vector<std::string> friction{"parameters.friction_coefficient=0.3", "events.slip_onset=record"};
  const auto cv = table("adams", 1e-13, friction);
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    const auto dp = table(m.name, 1e-10, friction);
    REQUIRE(dp.result.completed());
    const double t_dp = event_time(dp, "slip_onset"), t_cv = event_time(cv, "slip_onset");
    REQUIRE(std::isfinite(t_cv));
    CHECK(std::abs(t_dp - t_cv) < 1e-8);
    CHECK(dp.summary("t_slip_onset") == t_dp);
  }
}

TEST_CASE("explicit RK: the disk's stick, slip and sliding events follow the closed form, with the audit passed") {
  struct Start {
    double j, x, y, z, tau;
  };
  for (const Start& s : {Start{0.5, 3.0, 0.0, 1.0, 60.0}, Start{0.4, 0.5, 0.3, 2.0, 30.0},
                         Start{1.0, -4.0, 1.0, -2.0, 60.0}, Start{0.5, 0.0, 0.0, 3.0, 40.0}}) {
    INFO("j " << s.j << " start " << s.x << " " << s.y << " " << s.z);
    const auto exact = disk_run(s.j, s.x, s.y, s.z, s.tau, "exact", 1e-10);
    REQUIRE(exact.result.completed());
    for (const Method& m : kMethods) {
      INFO("method " << std::string(m.name));
      const auto dp = disk_run(s.j, s.x, s.y, s.z, s.tau, m.name, 1e-10);
      REQUIRE(dp.result.completed());
      CHECK(text_of(dp, "symbols") == text_of(exact, "symbols"));
      CHECK(text_of(dp, "audit").rfind("passed", 0) == 0);
      REQUIRE(dp.rec.events.size() == exact.rec.events.size());
      const double worst = worst_event_time_difference(dp, exact);
      INFO("worst event-time difference " << worst);
      // The bound CVODE meets in test_exact_method.cpp at the same tolerance.
      CHECK(worst < 1e4 * 1e-10);
    }
  }
}

TEST_CASE("explicit RK: event times converge to the closed form's as rtol shrinks") {
  const auto exact = disk_run(0.5, 3.0, 0.0, 1.0, 60.0, "exact", 1e-10);
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    double prev = INFINITY;
    for (double rtol : {1e-7, 1e-9, 1e-11}) {
      const auto dp = disk_run(0.5, 3.0, 0.0, 1.0, 60.0, m.name, rtol);
      REQUIRE(dp.rec.events.size() == exact.rec.events.size());
      double worst = 0;
      for (std::size_t k = 0; k < exact.rec.events.size(); ++k)
        worst = std::max(worst, std::abs(dp.rec.events[k].t - exact.rec.events[k].t));
      INFO("rtol " << rtol << " worst event-time difference " << worst);
      CHECK(worst < prev);
      CHECK(worst < 1e4 * rtol);
      prev = worst;
    }
  }
}

TEST_CASE("explicit RK: the relay feedback system (three states, the integrator's vector state) slides as CVODE's") {
  const std::string relay = scenario("relay_feedback.toml");
  const auto cv = test::run_text(relay, {"solver.rtol=1e-12", "solver.atol=1e-14"});
  REQUIRE(cv.result.completed());
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    const auto dp = test::run_text(relay, {std::string("solver.method=\"") + m.name + "\""});
    REQUIRE(dp.result.completed());
    REQUIRE(dp.result.x_final.size() == 3);
    CHECK(text_of(dp, "symbols") == text_of(cv, "symbols"));
    CHECK(text_of(dp, "audit").rfind("passed", 0) == 0);
    REQUIRE(dp.rec.events.size() == cv.rec.events.size());
    for (std::size_t k = 0; k < cv.rec.events.size(); ++k) {
      CHECK(dp.rec.events[k].kind == cv.rec.events[k].kind);
      CHECK(std::abs(dp.rec.events[k].t - cv.rec.events[k].t) < 1e-8);
    }
  }
}

TEST_CASE("explicit RK: the table's contact phases (impacts, capture, slip, edge, lift-off) follow CVODE's") {
  const std::string text = scenario("tipping_table_contact.toml");
  const auto cv = test::run_text(text, {"solver.rtol=1e-12", "solver.atol=1e-14"});
  REQUIRE(cv.result.completed());
  REQUIRE(cv.rec.events.size() > 10);
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    const auto rk = test::run_text(text, {std::string("solver.method=\"") + m.name + "\""});
    REQUIRE(rk.result.completed());
    CHECK(text_of(rk, "audit").rfind("passed", 0) == 0);
    REQUIRE(rk.rec.events.size() == cv.rec.events.size());
    const double worst = worst_event_time_difference(rk, cv);
    INFO("worst event-time difference " << worst);
    // The scenario's rtol is 1e-10; measured 1.6e-10 (dopri5) and 1.3e-10 (dop853).
    CHECK(worst < 1e-8);
  }
}

TEST_CASE("explicit RK: the stop time is reached exactly, and solver.max_step bounds the steps") {
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    const auto r = table(m.name, 1e-8, {"simulation.t_end=0.7", "events.table_edge=record"});
    REQUIRE(r.result.completed());
    CHECK(r.result.termination == "t_end");
    CHECK(r.result.t_final == 0.7);
    const auto capped =
        table(m.name, 1e-8, {"simulation.t_end=0.7", "events.table_edge=record", "solver.max_step=0.001"});
    REQUIRE(capped.result.completed());
    CHECK(capped.result.stats.get("n_steps") >= 700);
    CHECK(r.result.stats.get("n_steps") < capped.result.stats.get("n_steps"));
  }
}

TEST_CASE("explicit RK: a DAE is refused with a clear message") {
  for (const Method& m : kMethods)
    CHECK_THROWS_WITH_AS(
        test::run_text(scenario("tipping_table_dae.toml"), {std::string("solver.method=\"") + m.name + "\""}),
        doctest::Contains(m.name), InputError);
}

namespace {

/// x' = 1 until x = 1, then a right-hand side that is not a number: the integrator cannot go on.
class Breaks final : public OdeSystem {
 public:
  std::string model_name() const override { return "breaks"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x0) const override { x0[0] = 0; }
  void rhs(double, const double* x, int, double* f) const override { f[0] = x[0] < 1 ? 1.0 : NAN; }
  void compute_outputs(double, const double*, int, double*) const override {}

 private:
  Signals s_{{"x", "1", "x' = 1 while x < 1"}}, o_;
};

}  // namespace

TEST_CASE("explicit RK: a right-hand side that is not a number ends the run as a solver failure, with its reason") {
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    Breaks sys;
    SimulationOptions opt;
    opt.t_end = 3;
    opt.output_dt = 0.5;
    opt.solver.method = m.name;
    const RunResult r = simulate(sys, opt, {});
    CHECK(r.status == "solver_failure");
    CHECK_FALSE(r.completed());
    CHECK(r.message.find("TOO_SMALL_STEP") != std::string::npos);
    CHECK(r.message.find("not finite") != std::string::npos);
    // It stopped where x reaches 1 (t = 1), not past it, and what it reached is finite.
    CHECK(r.t_final <= 1.0 + 1e-9);
    CHECK(r.t_final > 0.9);
    CHECK(std::isfinite(r.x_final[0]));
    CHECK(r.message.find(std::string(m.name) + " step") != std::string::npos);
  }
}

TEST_CASE("explicit RK: a restart continues with the step size reached, at no cost in steps or accuracy") {
  // The oscillator x = cos t integrated to t = 10, once straight through and once restarted (reset) at the first step
  // end past t = 5 with its own state: the restart's first step is the size the run had reached, not a new estimate
  // an order of magnitude smaller, and the run takes at most one step more than the one without the restart.
  test::Oscillator sys;
  for (const Method& m : kMethods) {
    INFO("method " << std::string(m.name));
    SolverOptions opt;
    opt.method = m.name;
    opt.rtol = 1e-10;
    opt.atol = 1e-12;
    struct Outcome {
      long steps = 0;
      double h_before = 0, h_after = 0, x = 0, v = 0;
    };
    auto run = [&](bool restart) {
      Outcome out;
      auto integ = make_integrator(sys, opt);
      const double x0[2] = {1, 0};
      integ->reset(0, x0, 0);
      bool restarted = !restart;
      while (integ->t() < 10) {
        integ->step(10);
        ++out.steps;
        if (restarted) continue;
        if (integ->t() >= 5) {
          out.h_before = integ->last_step_size();
          integ->reset(integ->t(), integ->x(), 0);
          integ->step(10);
          ++out.steps;
          out.h_after = integ->last_step_size();
          restarted = true;
        }
      }
      out.x = integ->x()[0];
      out.v = integ->x()[1];
      return out;
    };
    const Outcome straight = run(false), restarted = run(true);
    CHECK(restarted.h_after >= 0.5 * restarted.h_before);
    CHECK(restarted.steps <= straight.steps + 1);
    CHECK(std::abs(restarted.x - std::cos(10.0)) < 1e-8);
    CHECK(std::abs(restarted.v + std::sin(10.0)) < 1e-8);
  }
}
