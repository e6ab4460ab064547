// User models (model = "lagrangian") with holonomic constraints: the work of a moving (rheonomic) constraint in the
// DAE's energy balance, constraints held together with contacts on the contact engine, and the static friction
// coefficient. Each against a closed form or a second formulation of the same system.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "contact_support.hpp"

namespace rollsim {

namespace {

using test::events_of;
using test::number_text;
using test::SignalLookup;

}  // namespace

TEST_CASE("constrained contacts: a crank driven by a moving constraint does the work the slider's energy gains") {
  // A crank of radius r (inertia J) turned at the constant rate Omega by the constraint theta - Omega t = 0, a
  // massless rod of length l, a slider of mass m on the x axis: C_rod = (x - r cos theta)^2 + (r sin theta)^2 - l^2.
  // The slider is at x(t) = r cos(theta) + sqrt(l^2 - r^2 sin^2(theta)), theta = Omega t, so the kinetic energy is
  // T(t) = 1/2 m x'(t)^2 + 1/2 J Omega^2, V = 0, and the work of the constraint forces is W_C(t) = T(t) - T(0):
  // the driving torque (the crank constraint's multiplier) does it all, the rod (scleronomic) none.
  // The solver runs at rtol 1e-10: at 1e-9 the integration error of W_C over the 20 turns was 0.8e-7 to 1.16e-7,
  // at the bound, and which of those a run got depended on the compiled kernels' rounding (GiNaC orders the terms
  // of its derivation by addresses, so a fresh model cache may compile a different but equal expression); at
  // 1e-10 it is 1.1e-8 to 1.3e-8 under the same bound.
  const double r = 0.1, l = 0.3, m = 2.0, J = 0.01, Omega = 10.0;
  const std::string text = "model = \"lagrangian\"\n[parameters]\nr = " + number_text(r) + "\nl = " + number_text(l) +
                           "\nm = " + number_text(m) + "\nJ = " + number_text(J) + "\nOmega = " + number_text(Omega) +
                           R"toml(
[coordinates]
theta = "rad"
x = "m"
[lagrangian]
kinetic = "1/2*J*der(theta)^2 + 1/2*m*der(x)^2"
[constraints.drive]
expression = "theta - Omega*t"
[constraints.rod]
expression = "(x - r*cos(theta))^2 + (r*sin(theta))^2 - l^2"
[solver]
rtol = 1e-10
atol = 1e-12
[simulation]
t_end = 2
output_dt = 0.01
[initial]
x = 0.4
[initial_rates]
theta = 10.0
)toml";
  const test::Run run = test::run_text(text);
  REQUIRE_MESSAGE(run.result.completed(), run.result.message);
  const SignalLookup s(run.scenario);
  REQUIRE(s.has("work_constraints"));
  auto slider_speed = [&](double t) {
    const double th = Omega * t, root = std::sqrt(l * l - r * r * std::sin(th) * std::sin(th));
    return -r * Omega * std::sin(th) - r * r * Omega * std::sin(th) * std::cos(th) / root;
  };
  auto kinetic = [&](double t) { return 0.5 * m * slider_speed(t) * slider_speed(t) + 0.5 * J * Omega * Omega; };
  // The driving power tau Omega = dT/dt = m x' x'' (the crank turns uniformly), with
  // x'' = -r Omega^2 cos(theta) - r^2 Omega^2 (cos(2 theta)/S + r^2 sin^2(2 theta)/(4 S^3)), S = sqrt(l^2 - r^2 sin^2).
  auto power = [&](double t) {
    const double th = Omega * t, S = std::sqrt(l * l - r * r * std::sin(th) * std::sin(th));
    const double acc = -r * Omega * Omega * std::cos(th) -
                       r * r * Omega * Omega *
                           (std::cos(2 * th) / S + r * r * std::sin(2 * th) * std::sin(2 * th) / (4 * S * S * S));
    return m * slider_speed(t) * acc;
  };
  double worst_w = 0, worst_torque = 0, worst_trapezoid = 0, largest_w = 0, largest_torque = 0;
  double trapezoid = 0, trapezoid_exact = 0, quadrature_error = 0;
  for (std::size_t k = 0; k < run.rec.t.size(); ++k) {
    const double t = run.rec.t[k], w = s.at(run, k, "work_constraints"), tau = s.at(run, k, "lambda_drive");
    worst_w = std::max(worst_w, std::abs(w - (kinetic(t) - kinetic(0))));
    largest_w = std::max(largest_w, std::abs(w));
    worst_torque = std::max(worst_torque, std::abs(tau * Omega - power(t)));
    largest_torque = std::max(largest_torque, std::abs(tau));
    if (k > 0) {
      // The torque's power integrated by hand (trapezoidal rule over the samples), beside the same rule applied
      // to the exact power: that one's distance from T(t) - T(0) is the rule's own error at these samples.
      const double t0 = run.rec.t[k - 1], dt = t - t0;
      trapezoid += 0.5 * dt * Omega * (tau + s.at(run, k - 1, "lambda_drive"));
      trapezoid_exact += 0.5 * dt * (power(t) + power(t0));
      quadrature_error = std::max(quadrature_error, std::abs(trapezoid_exact - (kinetic(t) - kinetic(0))));
      worst_trapezoid = std::max(worst_trapezoid, std::abs(w - trapezoid));
    }
  }
  INFO("largest |W_C - (T(t) - T(0))| = " << worst_w << ", largest |W_C| = " << largest_w
                                          << ", largest |tau Omega - dT/dt| = " << worst_torque
                                          << ", largest |W_C - trapezoid of tau Omega| = " << worst_trapezoid
                                          << ", the trapezoidal rule's own error " << quadrature_error);
  // The slider's kinetic energy swings by about m (r Omega)^2 / 2 = 1 J: the work is not small.
  CHECK(largest_w > 0.5);
  CHECK(worst_w <= 1e-7);
  CHECK(worst_torque <= 1e-6 * largest_torque * Omega);
  CHECK(worst_trapezoid <= quadrature_error + 1e-6);
  // The energy balance h - W_C is flat: the driving work is not drift.
  CHECK(run.summary("energy_drift_abs") <= 1e-7);
  CHECK(run.summary("constraint_residual_max") <= 1e-8);
}

namespace {

/// Two blocks on a floor, linked by a rigid horizontal rod of length L: block 1 (mass m1) slides with Coulomb
/// friction mu, block 2 (mass m2) without. Redundant: coordinates (x1, y1, x2, y2), the rod as the constraint
/// x2 - x1 - L = 0, the floor as the gaps y1 >= 0, y2 >= 0. Minimal: (x, y1, y2), block 2 at x + L.
std::string linked_blocks(bool redundant, double v0) {
  std::string text = "model = \"lagrangian\"\n[parameters]\nm1 = 2.0\nm2 = 3.0\nmu = 0.4\ng = 9.81\nL = 0.5\n";
  if (redundant) {
    text += R"toml([coordinates]
x1 = "m"
y1 = "m"
x2 = "m"
y2 = "m"
[lagrangian]
kinetic = "1/2*m1*(der(x1)^2 + der(y1)^2) + 1/2*m2*(der(x2)^2 + der(y2)^2)"
potential = "m1*g*y1 + m2*g*y2"
[constraints.rod]
expression = "x2 - x1 - L"
[contacts.floor1]
gap = "y1"
slip_velocity = "der(x1)"
friction_coefficient = "mu"
[contacts.floor2]
gap = "y2"
[initial]
x2 = 0.5
[initial_rates]
)toml";
    text += "x1 = " + number_text(v0) + "\nx2 = " + number_text(v0) + "\n";
  } else {
    text += R"toml([coordinates]
x = "m"
y1 = "m"
y2 = "m"
[lagrangian]
kinetic = "1/2*m1*(der(x)^2 + der(y1)^2) + 1/2*m2*(der(x)^2 + der(y2)^2)"
potential = "m1*g*y1 + m2*g*y2"
[contacts.floor1]
gap = "y1"
slip_velocity = "der(x)"
friction_coefficient = "mu"
[contacts.floor2]
gap = "y2"
[initial_rates]
)toml";
    text += "x = " + number_text(v0) + "\n";
  }
  text += "[solver]\nrtol = 1e-10\natol = 1e-12\n[simulation]\nt_end = 1.5\noutput_dt = 0.01\n";
  return text;
}

}  // namespace

TEST_CASE("constrained contacts: blocks linked by a rod constraint slide with friction as the closed form says") {
  // Sliding: (m1 + m2) a = -mu m1 g, so a = -mu m1 g/(m1 + m2); the rod pulls block 2 back with
  // lambda = m2 a (the multiplier of C = x2 - x1 - L is the force on block 2 along x). The normal forces are m1 g and
  // m2 g (the rod is horizontal). The blocks stop at t* = v0/|a| and stick there for good (nothing pushes them):
  // the rod's force and the friction force are then zero.
  const double m1 = 2, m2 = 3, mu = 0.4, g = 9.81, v0 = 1.2;
  const double a = -mu * m1 * g / (m1 + m2), t_stop = v0 / -a, x_stop = v0 * t_stop + 0.5 * a * t_stop * t_stop;
  const test::Run red = test::run_text(linked_blocks(true, v0));
  REQUIRE_MESSAGE(red.result.completed(), red.result.message);
  const SignalLookup s(red.scenario);
  REQUIRE(s.has("lambda_rod"));
  REQUIRE(s.has("constraint_rod"));
  const auto sticks = events_of(red, "stick");
  REQUIRE(sticks.size() == 1);
  CHECK(sticks.front()->t == doctest::Approx(t_stop).epsilon(1e-8));
  CHECK(events_of(red, "impact").empty());
  CHECK(events_of(red, "lift_off").empty());
  for (std::size_t k = 0; k < red.rec.t.size(); ++k) {
    const double t = red.rec.t[k];
    INFO("t = " << t);
    const double te = std::min(t, t_stop);
    CHECK(s.at(red, k, "x1") == doctest::Approx(v0 * te + 0.5 * a * te * te).epsilon(1e-8));
    CHECK(s.at(red, k, "x2") - s.at(red, k, "x1") == doctest::Approx(0.5).epsilon(1e-9));
    CHECK(std::abs(s.at(red, k, "constraint_rod")) <= 1e-9);
    CHECK(s.at(red, k, "normal_force_floor1") == doctest::Approx(m1 * g).epsilon(1e-8));
    CHECK(s.at(red, k, "normal_force_floor2") == doctest::Approx(m2 * g).epsilon(1e-8));
    if (t < t_stop - 1e-6) {
      CHECK(s.at(red, k, "lambda_rod") == doctest::Approx(m2 * a).epsilon(1e-8));
      CHECK(s.at(red, k, "tangential_force_floor1") == doctest::Approx(-mu * m1 * g).epsilon(1e-8));
    } else if (t > t_stop + 1e-6) {
      CHECK(std::abs(s.at(red, k, "lambda_rod")) <= 1e-8);
      CHECK(std::abs(s.at(red, k, "tangential_force_floor1")) <= 1e-8);
    }
  }
  const std::size_t last = red.rec.t.size() - 1;
  CHECK(s.at(red, last, "x1") == doctest::Approx(x_stop).epsilon(1e-8));
  // The kinetic energy went to friction: D = 1/2 (m1 + m2) v0^2 (the rod is fixed in length: no work).
  CHECK(s.at(red, last, "dissipated_friction") == doctest::Approx(0.5 * (m1 + m2) * v0 * v0).epsilon(1e-8));
  if (s.has("work_constraints")) CHECK(std::abs(s.at(red, last, "work_constraints")) <= 1e-8);

  // The same system in minimal coordinates: the same trajectory and contact forces.
  const test::Run min = test::run_text(linked_blocks(false, v0));
  REQUIRE_MESSAGE(min.result.completed(), min.result.message);
  const SignalLookup sm(min.scenario);
  REQUIRE(min.rec.t.size() == red.rec.t.size());
  double worst = 0;
  for (std::size_t k = 0; k < red.rec.t.size(); ++k) {
    REQUIRE(min.rec.t[k] == doctest::Approx(red.rec.t[k]).epsilon(1e-12));
    worst = std::max({worst, std::abs(sm.at(min, k, "x") - s.at(red, k, "x1")),
                      std::abs(sm.at(min, k, "der_x") - s.at(red, k, "der_x1")),
                      std::abs(sm.at(min, k, "tangential_force_floor1") - s.at(red, k, "tangential_force_floor1")) / (m1 * g)});
  }
  INFO("largest difference of x, der(x) and the friction force / (m1 g) between the two formulations: " << worst);
  CHECK(worst <= 1e-8);
}

TEST_CASE("constrained contacts: a block on a spring on a driven belt sticks and slips with mu_s > mu_k") {
  // Mass m on a spring k (x = 0 unstretched), on a belt (position b, mass M) driven at v_b by the moving constraint
  // b - v_b t = 0; friction with a given normal force N = m g, slip velocity w = x' - b', kinetic mu_k and static
  // mu_s > mu_k. The constraint does the work that friction takes (the belt's drive): h - W_C + D is constant. Starting stuck (x = 0, x' = v_b), the block
  // rides the belt until the spring's pull k x reaches mu_s N: t1 = mu_s N/(k v_b). It then slips backwards
  // (w < 0) under m x'' = -k x + mu_k N, a harmonic motion about x_e = mu_k N/k with omega = sqrt(k/m), from
  // x - x_e = d = (mu_s - mu_k) N/k at speed v_b: u = A cos(phase), A = sqrt(d^2 + (v_b/omega)^2), phase from
  // -alpha to pi + alpha (alpha = atan2(v_b/omega, d)), where x' = v_b again at x - x_e = -d: it sticks (the pull
  // k x = (2 mu_k - mu_s) N is within mu_s N). Slip time (pi + 2 alpha)/omega; then it rides the belt from
  // x_e - d to x_e + d: stick time 2 d/v_b. The limit cycle repeats those two times from the first slip on.
  const double m = 1.0, k = 4.0, g = 9.81, mu_k = 0.2, mu_s = 0.4, v_b = 0.5;
  const double N = m * g, omega = std::sqrt(k / m), d = (mu_s - mu_k) * N / k;
  const double alpha = std::atan2(v_b / omega, d), t_slip = (std::numbers::pi + 2 * alpha) / omega,
               t_stick = 2 * d / v_b, t1 = mu_s * N / (k * v_b);
  const std::string text = "model = \"lagrangian\"\n[parameters]\nm = " + number_text(m) + "\nk = " + number_text(k) +
                           "\ng = " + number_text(g) + "\nmu_k = " + number_text(mu_k) + "\nmu_s = " +
                           number_text(mu_s) + "\nv_b = " + number_text(v_b) + R"toml(
[coordinates]
x = "m"
b = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2 + 1/2*5*m*der(b)^2"
potential = "1/2*k*x^2"
[constraints.drive]
expression = "b - v_b*t"
[contacts.belt]
slip_velocity = "der(x) - der(b)"
normal_force = "m*g"
friction_coefficient = "mu_k"
static_friction_coefficient = "mu_s"
[solver]
rtol = 1e-10
atol = 1e-12
[simulation]
t_end = 12
output_dt = 0.01
[initial_rates]
x = 0.5
b = 0.5
)toml";
  const test::Run r = test::run_text(text);
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  const auto slips = events_of(r, "slip");
  const auto sticks = events_of(r, "stick");
  REQUIRE(slips.size() >= 3);
  REQUIRE(sticks.size() >= 2);
  INFO("t1 = " << t1 << ", slip " << t_slip << " s, stick " << t_stick << " s");
  CHECK(slips[0]->t == doctest::Approx(t1).epsilon(1e-8));
  for (std::size_t i = 0; i < sticks.size(); ++i) {
    INFO("cycle " << i);
    CHECK(sticks[i]->t - slips[i]->t == doctest::Approx(t_slip).epsilon(1e-8));
    if (i + 1 < slips.size()) CHECK(slips[i + 1]->t - sticks[i]->t == doctest::Approx(t_stick).epsilon(1e-8));
  }
  const SignalLookup s(r.scenario);
  // Where it slips, the friction force is the kinetic mu_k N (dragging the block along the belt: +).
  for (std::size_t i = 0; i < r.rec.t.size(); ++i)
    if (s.at(r, i, "slip_velocity_belt") < -1e-6) {
      INFO("t = " << r.rec.t[i]);
      CHECK(s.at(r, i, "tangential_force_belt") == doctest::Approx(mu_k * N).epsilon(1e-9));
    }
  // The drive's work is what friction took out (the block's energy is back where a cycle started): over the run,
  // W_C = h(t) - h(0) + D(t), and the self-audit held the balance at every step.
  const std::size_t last = r.rec.t.size() - 1;
  CHECK(s.at(r, last, "work_constraints") ==
        doctest::Approx(s.at(r, last, "energy") - s.at(r, 0, "energy") + s.at(r, last, "dissipated_friction")).epsilon(1e-7));
  CHECK(s.at(r, last, "dissipated_friction") > 0.1);
}

TEST_CASE("constrained contacts: a multiplier or an output that would take another signal's name is an input error") {
  auto expect = [](const std::string& text, const std::vector<std::string>& parts) {
    try {
      build_system(load_scenario_text(text, "bad.toml", {}));
      FAIL("no error for:\n" << text);
    } catch (const InputError& e) {
      const std::string what = e.what();
      for (const auto& p : parts) CHECK_MESSAGE(what.find(p) != std::string::npos, what << "\n  lacks: " << p);
    }
  };
  const std::string base = R"toml(model = "lagrangian"
[parameters]
m = 1.0
[coordinates]
x = "m"
lambda_c = "m"
[lagrangian]
kinetic = "1/2*m*(der(x)^2 + der(lambda_c)^2)"
[constraints.c]
expression = "x - lambda_c"
)toml";
  // The multiplier of constraint c would be lambda_c, a coordinate.
  expect(base, {"bad.toml:10", "constraint c", "'lambda_c'"});
  // work_constraints is the constraints' work.
  expect(R"toml(model = "lagrangian"
[parameters]
m = 1.0
[coordinates]
x = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2"
[constraints.c]
expression = "x"
[outputs.work_constraints]
expression = "x"
)toml",
         {"bad.toml:11", "work_constraints", "taken"});
}

}  // namespace rollsim
