// Dependent speeds chosen again during a run, and redundant constraint rows: the Chaplygin sleigh in (x, y, theta)
// turning through theta = pi/2 several times against its closed form (Neimark and Fufaev 1972) and against the
// predicted instants of the re-choices; the same sleigh with its constraint written twice (the minimum-norm
// multipliers against the closed-form side force); rows that contradict each other or lose rank.
#include <doctest/doctest.h>

#include <cmath>

#include "rolling_3d_support.hpp"

namespace rollsim {

namespace {

std::string rechoice_sleigh_text() { return test::scenario_text("chaplygin_sleigh.toml"); }

/// The sleigh with its no-slip row written a second time, multiplied by `factor` (a redundant, consistent row).
std::string twice_text(const std::string& factor) {
  std::string text = rechoice_sleigh_text();
  const std::string row = "[constraints.no_side_slip_again]\nvelocity = \"" + factor +
                          "*(-der(x)*sin(theta) + der(y)*cos(theta))\"\n\n";
  text.insert(text.find("[initial]\n"), row);
  return text;
}

double rechoice_gd(double x) { return 2 * std::atan(std::tanh(x / 2)); }

/// The sleigh's closed form: m v^2 + J w^2 conserved, v = V tanh(s), w = w0 cosh(c) / cosh(s), theta = sqrt(J/m)/a
/// (rechoice_gd(s) - rechoice_gd(c)), s = lambda t + c (Neimark and Fufaev 1972, Ch. III); theta0 = 0, w0 > 0.
struct Sleigh {
  double m = 1.0, I = 0.05, a, v0, w0;
  double J = I + m * a * a, V = std::sqrt(v0 * v0 + J * w0 * w0 / m), lambda = m * a * V / J, c = std::atanh(v0 / V);
  double v(double t) const { return V * std::tanh(lambda * t + c); }
  double w(double t) const { return w0 * std::cosh(c) / std::cosh(lambda * t + c); }
  double theta(double t) const { return std::sqrt(J / m) / a * (rechoice_gd(lambda * t + c) - rechoice_gd(c)); }
  /// The time the heading reaches th (rechoice_gd^-1(y) = artanh(sin y)).
  double time_of(double th) const { return (std::atanh(std::sin(rechoice_gd(c) + th * a / std::sqrt(J / m))) - c) / lambda; }
  /// The side force of the blade, m (v w + a w') = m I v w / J: the no-slip row's multiplier (the row's A is unit).
  double side_force(double t) const { return m * I * v(t) * w(t) / J; }
  double energy() const { return 0.5 * (m * v0 * v0 + J * w0 * w0); }
};

/// Backwards at 0.5 m/s, turning at 2 rad/s, with the centre of mass 2 cm ahead of the blade: the heading turns
/// through 26.8 rad (more than four turns) in 20 s.
const Sleigh kTurning{1.0, 0.05, 0.02, -0.5, 2.0};
const std::vector<std::string> kTurningSet{"parameters.a=0.02", "initial_rates.x=-0.5", "initial_rates.theta=2.0",
                                           "simulation.t_end=20", "solver.rtol=1e-12", "solver.atol=1e-14"};

/// The largest deviations of a run from the closed form s: forward speed, turning rate, heading; and the largest
/// residual of the no-slip row -x' sin(theta) + y' cos(theta) from the rates in every mode.
struct Deviation {
  double v = 0, w = 0, theta = 0, row = 0;
};
Deviation deviation(const test::Run& r, const Sleigh& s) {
  const test::RunSignals sig(r);
  const auto th = sig("theta"), xd = sig("rate_x"), yd = sig("der_y"), wd = sig("rate_theta");
  Deviation d;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const double t = r.rec.t[k];
    d.v = std::max(d.v, std::abs(xd[k] * std::cos(th[k]) + yd[k] * std::sin(th[k]) - s.v(t)));
    d.w = std::max(d.w, std::abs(wd[k] - s.w(t)));
    d.theta = std::max(d.theta, std::abs(th[k] - s.theta(t)));
    d.row = std::max(d.row, std::abs(-xd[k] * std::sin(th[k]) + yd[k] * std::cos(th[k])));
  }
  return d;
}

/// The run r follows the closed form s to 1e-8 and holds its row to round-off.
void check_closed_form(const test::Run& r, const Sleigh& s) {
  const Deviation d = deviation(r, s);
  CAPTURE(d.v);
  CAPTURE(d.w);
  CAPTURE(d.theta);
  CAPTURE(d.row);
  CHECK(d.v <= 1e-8);
  CHECK(d.w <= 1e-8);
  CHECK(d.theta <= 1e-8);
  CHECK(d.row <= 1e-12);
}

/// A particle of unit mass with the coordinates `coords` (m), two velocity rows and the [initial_rates] `rates`.
std::string particle_text(const std::vector<std::string>& coords, const std::string& name1, const std::string& row1,
                          const std::string& name2, const std::string& row2, const std::string& rates) {
  std::string text = "model = \"lagrangian\"\n[parameters]\nm = 1.0\n[coordinates]\n", kinetic;
  for (const auto& q : coords) {
    text += q + " = \"m\"\n";
    kinetic += (kinetic.empty() ? "" : " + ") + ("der(" + q + ")^2");
  }
  text += "[lagrangian]\nkinetic = \"m/2*(" + kinetic + ")\"\n";
  text += "[constraints." + name1 + "]\nvelocity = \"" + row1 + "\"\n[constraints." + name2 + "]\nvelocity = \"" + row2 + "\"\n";
  return text + "[initial_rates]\n" + rates + "\n";
}

}  // namespace

TEST_CASE("nonholonomic re-choice: the sleigh turns through theta = pi/2 four times over, on its closed form (1e-8)") {
  const test::Run r = test::run_text(rechoice_sleigh_text(), kTurningSet);
  REQUIRE(r.result.completed());
  CHECK(r.result.termination == "t_end");
  check_closed_form(r, kTurning);
  CHECK(r.summary("energy_drift_rel") <= 100 * 1e-12);
  CHECK(std::abs(r.summary("energy_initial") - kTurning.energy()) <= 1e-12);
  // The re-choices: with der_y dependent the row's A_D is cos(theta), with der_x dependent -sin(theta) (A is a unit
  // row); each is chosen again where |A_D| falls to a tenth of its start value (1), i.e. at theta = acos(0.1) + j pi/2,
  // alternately to der_x (mode 3: coordinates 0 and 1 changed their role) and back to der_y (mode 0, the start's).
  const double theta_end = kTurning.theta(20.0);
  std::vector<double> expected;
  for (double th = std::acos(0.1); th < theta_end; th += M_PI / 2) expected.push_back(kTurning.time_of(th));
  REQUIRE(expected.size() == 17);
  std::vector<EventRecord> changes;
  for (const auto& e : r.rec.events)
    if (e.kind == "dependent_speeds_changed") changes.push_back(e);
  REQUIRE(changes.size() == expected.size());
  CHECK(r.summary("dependent_speed_changes") == static_cast<double>(expected.size()));
  for (std::size_t j = 0; j < changes.size(); ++j) {
    CAPTURE(j);
    CHECK(std::abs(changes[j].t - expected[j]) <= 1e-6);
    CHECK(changes[j].mode_before == (j % 2 == 0 ? 0 : 3));
    CHECK(changes[j].mode_after == (j % 2 == 0 ? 3 : 0));
  }
  REQUIRE(r.item("dependent_speeds"));
  CHECK(r.item("dependent_speeds")->text == "der_x");  // 17 changes from der_y
  CHECK(r.item("dependent_speeds_start")->text == "der_y");
}

TEST_CASE("nonholonomic re-choice: a constraint written twice gives the same motion, its multipliers split equally") {
  const Sleigh shipped{1.0, 0.05, 0.2, 0.5, 1.0};
  const test::Run once = test::run_text(rechoice_sleigh_text());
  const test::Run twice = test::run_text(twice_text("1"));
  REQUIRE(once.result.completed());
  REQUIRE(twice.result.completed());
  check_closed_form(twice, shipped);
  CHECK(twice.item("dependent_speeds")->text == "der_y");
  const test::RunSignals s1(once), s2(twice);
  const auto l = s1("lambda_no_side_slip"), l1 = s2("lambda_no_side_slip"), l2 = s2("lambda_no_side_slip_again");
  const auto th1 = s1("theta"), th2 = s2("theta");
  REQUIRE(once.rec.t.size() == twice.rec.t.size());
  double worst_sum = 0, worst_split = 0, worst_force = 0, worst_same = 0;
  for (std::size_t k = 0; k < l.size(); ++k) {
    worst_sum = std::max(worst_sum, std::abs(l1[k] + l2[k] - l[k]));
    worst_split = std::max(worst_split, std::abs(l1[k] - l2[k]));
    worst_force = std::max(worst_force, std::abs(l1[k] + l2[k] - shipped.side_force(once.rec.t[k])));
    worst_same = std::max(worst_same, std::abs(th1[k] - th2[k]));
  }
  CAPTURE(worst_sum);
  CAPTURE(worst_split);
  CAPTURE(worst_force);
  CHECK(worst_sum <= 1e-8);
  CHECK(worst_split <= 1e-12);
  CHECK(worst_force <= 1e-8);
  CHECK(worst_same <= 1e-8);
}

TEST_CASE("nonholonomic re-choice: a row written twice, once doubled: the minimum-norm multipliers are 1/5 and 2/5") {
  // lambda_1 + 2 lambda_2 = F (the side force), least |lambda|: (lambda_1, lambda_2) = F (1, 2) / 5.
  const Sleigh shipped{1.0, 0.05, 0.2, 0.5, 1.0};
  const test::Run r = test::run_text(twice_text("2"), {"simulation.t_end=3"});
  REQUIRE(r.result.completed());
  const test::RunSignals sig(r);
  const auto l1 = sig("lambda_no_side_slip"), l2 = sig("lambda_no_side_slip_again");
  double worst = 0;
  for (std::size_t k = 0; k < l1.size(); ++k) {
    const double F = shipped.side_force(r.rec.t[k]);
    worst = std::max({worst, std::abs(l1[k] - F / 5), std::abs(l2[k] - 2 * F / 5)});
  }
  CAPTURE(worst);
  CHECK(worst <= 1e-8);
}

TEST_CASE("nonholonomic re-choice: the redundant sleigh also turns through theta = pi/2 on its closed form") {
  const test::Run r = test::run_text(twice_text("1"), kTurningSet);
  REQUIRE(r.result.completed());
  check_closed_form(r, kTurning);
  CHECK(r.summary("dependent_speed_changes") == 17);
}

TEST_CASE("nonholonomic re-choice: the exact Jacobian in every mode and with a redundant row equals central differences") {
  // States: x, y, theta, the two independent speeds' slots, work_constraints. Mode 0: der_y dependent (the slots hold
  // der_x, der_theta); mode 3: der_x dependent (they hold der_y, der_theta).
  for (const std::string& text : {rechoice_sleigh_text(), twice_text("1")}) {
    const auto sys = build_system(load_scenario_text(text, "sleigh.toml", {}));
    const auto* ode = facet<OdeSystem>(*sys);
    REQUIRE(ode);
    REQUIRE(sys->size() == 6);
    for (const int mode : {0, 3}) {
      CAPTURE(mode);
      const std::vector<double> x{0.2, -0.1, mode == 0 ? 0.3 : 1.3, 0.7, 0.4, 0.0};
      const std::size_t N = x.size();
      std::vector<double> J(N * N), fp(N), fm(N);
      REQUIRE(ode->jacobian(0.0, x.data(), mode, J.data()));
      double worst = 0;
      for (std::size_t j = 0; j < N; ++j) {
        std::vector<double> xp = x, xm = x;
        xp[j] += 1e-6;
        xm[j] -= 1e-6;
        ode->rhs(0.0, xp.data(), mode, fp.data());
        ode->rhs(0.0, xm.data(), mode, fm.data());
        for (std::size_t i = 0; i < N; ++i) worst = std::max(worst, std::abs(J[i + N * j] - (fp[i] - fm[i]) / 2e-6));
      }
      CAPTURE(worst);
      CHECK(worst <= 1e-7);
      // In mode 3 the first slot is der_y: x' = der_y / tan(theta) (the row), y' = der_y.
      std::vector<double> f(N);
      ode->rhs(0.0, x.data(), mode, f.data());
      if (mode == 3) {
        CHECK(std::abs(f[0] - 0.7 / std::tan(1.3)) <= 1e-14);
        CHECK(std::abs(f[1] - 0.7) <= 1e-15);
      }
    }
  }
}

TEST_CASE("nonholonomic re-choice: rows that contradict each other are an input error naming the residual") {
  // x' = 1 and x' = 2: no rate satisfies both; the closest, x' = 1.5, leaves the residuals 0.5 and -0.5.
  const std::string text = particle_text({"x", "y"}, "one", "der(x) - 1", "two", "der(x) - 2", "y = 0.3");
  try {
    build_system(load_scenario_text(text, "u.toml", {}));
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("contradict each other") != std::string::npos);
    CHECK((what.find("keeps the residual 0.5 ") != std::string::npos || what.find("keeps the residual -0.5 ") != std::string::npos));
    CHECK(what.find("u.toml:") != std::string::npos);
  }
}

TEST_CASE("nonholonomic re-choice: rows that lose rank during the run stop it with a solver error (no answer)") {
  // x' = 0 and x' + (1 - t) y' = 1: y' = 1 / (1 - t), and at t = 1 the rows read x' = 0 and x' = 1. No choice of
  // dependent speeds is better than (x, y): the run stops before t = 1, saying the rows lose rank. (At the default
  // rtol 1e-10 CVODE took 65,079 steps to get there, at 1e-8 929: the stop does not depend on it.)
  const std::string text = particle_text({"x", "y", "z"}, "still", "der(x)", "closing", "der(x) + (1 - t)*der(y) - 1",
                                          "z = 0.5\n[simulation]\nt_end = 2.0\n[solver]\nrtol = 1e-8\natol = 1e-10");
  const test::Run r = test::run_text(text);
  CHECK(r.result.status == "solver_failure");
  CAPTURE(r.result.message);
  CHECK(r.result.message.find("the rows lose rank here") != std::string::npos);
  CHECK(r.result.t_final < 1.0);
  CHECK(r.result.t_final > 0.99);
}

/// The sleigh with its no-slip row replaced by `row` (the scenario's own text otherwise).
std::string sleigh_with_row(const std::string& row) {
  std::string text = rechoice_sleigh_text();
  const std::string old = "velocity = \"-der(x)*sin(theta) + der(y)*cos(theta)\"";
  const auto at = text.find(old);
  REQUIRE(at != std::string::npos);
  return text.replace(at, old.size(), "velocity = \"" + row + "\"");
}

TEST_CASE("nonholonomic re-choice: a row that is zero at the start and stays zero leaves every speed free (rank 0)") {
  // x' sin(theta) = 0 with theta = 0 and theta' = 0: the row vanishes at the start, no speed is dependent, and with
  // no force the heading stays 0, so the row stays zero and the sleigh slides on: x = 0.5 t, y = 0, theta = 0.
  const test::Run r = test::run_text(sleigh_with_row("der(x)*sin(theta)"),
                                     {"initial_rates.x=0.5", "initial_rates.theta=0", "simulation.t_end=2"});
  REQUIRE(r.result.completed());
  CHECK(r.result.termination == "t_end");
  REQUIRE(r.item("dependent_speeds_start"));
  CHECK(r.item("dependent_speeds_start")->text == "none");
  CHECK(r.item("dependent_speeds")->text == "none");
  const test::RunSignals sig(r);
  const auto x = sig("x"), y = sig("y"), th = sig("theta");
  double worst = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k)
    worst = std::max({worst, std::abs(x[k] - 0.5 * r.rec.t[k]), std::abs(y[k]), std::abs(th[k])});
  CAPTURE(worst);
  CHECK(r.rec.t.back() == doctest::Approx(2.0).epsilon(1e-15));
  CHECK(worst <= 1e-12);
}

TEST_CASE("nonholonomic re-choice: a row zero at the start that the motion makes nonzero stops with a solver error") {
  // -x' sin(theta) cos(theta) = 0 at theta = 0 holds for any x', but the sleigh turns (theta' = 2) while x' = -0.5:
  // the row's rate there, -x' theta' cos(2 theta) = 1, cannot be cancelled (its coefficient of the accelerations is 0),
  // so no motion satisfies the row after t = 0. The run stops at once saying so (a fuzzing finding: the choice of no
  // dependent speed at all was decomposed as an empty matrix, which crashed).
  const test::Run r = test::run_text(sleigh_with_row("-der(x)*sin(theta)*cos(theta)"),
                                     {"initial_rates.x=-0.5", "initial_rates.theta=2"});
  CHECK(r.result.status == "solver_failure");
  CAPTURE(r.result.message);
  CHECK(r.result.message.find("no longer agree") != std::string::npos);
  CHECK(r.result.message.find("the number of independent speeds would change here") != std::string::npos);
  CHECK(r.result.t_final < 1e-3);
}

TEST_CASE("nonholonomic re-choice: rates whose products overflow are an input error at the largest given rate") {
  // x' = 1e308 with theta' = 2: the sleigh's accelerations hold x' theta', which is -inf in doubles (a fuzzing
  // finding: the start was accepted and the run met NaN in its first step). x' = 1e100 is a start like any other.
  std::string text = rechoice_sleigh_text();
  const std::string rate = "x = 0.5       # v0";
  const auto at = text.find(rate);
  REQUIRE(at != std::string::npos);
  try {
    build_system(load_scenario_text(std::string(text).replace(at, 7, "x = 1e308"), "u.toml", {}));
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("u.toml:") == 0);
    CHECK(what.find("not finite at the initial state") != std::string::npos);
    CHECK(what.find("(initial_rates.x = 1e+308)") != std::string::npos);
  }
  CHECK_NOTHROW(build_system(load_scenario_text(text.replace(at, 7, "x = 1e100"), "u.toml", {})));
}

}  // namespace rollsim
