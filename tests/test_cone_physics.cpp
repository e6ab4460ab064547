// The Coulomb cone at 3-D contacts of the user model (hybrid/cone_engine.hpp), run from the shipped scenarios and
// checked against answers found without the program: closed forms (the sliding sphere's stick time and rolling
// velocity, the upright disk's, the planar rolling/sliding disk of Antali and Stepan written in 3-D, a block on a
// tilted plane at both sides of its stick/slip boundary, a block on a spring), conservation laws (Jellett's integral
// of the tippe top, the energy balance), and the steady motion of Euler's disk. Each scenario's header has its
// derivation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tilted_block.hpp"
#include "rollsim/hybrid/cone_engine.hpp"
#include "rolling_3d_support.hpp"

namespace rollsim {

namespace {

using test::scenario_text;
using test::spread;

/// The events of a run of this kind (copies).
std::vector<EventRecord> events_named(const test::Run& r, const std::string& kind) {
  std::vector<EventRecord> out;
  for (const auto& e : r.rec.events)
    if (e.kind == kind) out.push_back(e);
  return out;
}

/// The number of a run's events whose kind starts with `prefix`.
std::size_t count_prefix(const test::Run& r, const std::string& prefix) {
  return static_cast<std::size_t>(std::count_if(r.rec.events.begin(), r.rec.events.end(),
                                                [&](const EventRecord& e) { return e.kind.rfind(prefix, 0) == 0; }));
}

double largest_deviation(const std::vector<double>& v, double ref) {
  double d = 0;
  for (double x : v) d = std::max(d, std::abs(x - ref));
  return d;
}

/// The first root after 0 of a function that starts positive (scanned in steps of h, then bisected to round-off).
double first_root(const std::function<double(double)>& f, double h, double t_max) {
  double a = 0, b = h;
  while (f(b) > 0) {
    a = b;
    b += h;
    REQUIRE(b < t_max);
  }
  for (int i = 0; i < 200 && b - a > 1e-17; ++i) {
    const double c = 0.5 * (a + b);
    (f(c) > 0 ? a : b) = c;
  }
  return 0.5 * (a + b);
}

}  // namespace

TEST_CASE("cone physics: a sliding sphere rolls from t* = 2|u0|/(7 mu g) on at v0 - (2/7) u0, at four angles of u0 to v0") {
  // scenarios/sliding_sphere.toml: v0 = (1, 0) m/s, |u0| = 0.5 m/s at 0, 60, 135 and 180 degrees to v0 (60: the
  // scenario's own start), a spin of 5 rad/s about the vertical. The slip's speed falls linearly, but it is formed
  // from the rates of the angles, which the integrator carries with its relative error: at rtol 1e-13 the stick
  // time is off by up to 2e-12 relative (135 degrees), at rtol 1e-14 by 3e-13.
  const Scenario base = load_scenario_text(scenario_text("sliding_sphere.toml"), "sliding_sphere.toml", {});
  const double m = base.real("parameters.m"), r = base.real("parameters.r"), g = base.real("parameters.g"),
               mu = base.real("parameters.mu");
  const double v0 = 1.0, speed = 0.5, t_star = 2 * speed / (7 * mu * g);
  for (const double degrees : {0.0, 60.0, 135.0, 180.0}) {
    CAPTURE(degrees);
    const double angle = degrees * M_PI / 180, ux = speed * std::cos(angle), uy = speed * std::sin(angle);
    const test::Run run_ = test::run_scenario("sliding_sphere.toml",
                               {"initial_rates.x=" + test::digits(v0), "initial_rates.y=0",
                                "initial_rates.theta=" + test::digits(uy / r), "initial_rates.phi=" + test::digits((v0 - ux) / r),
                                "initial_rates.psi=5", "solver.rtol=1e-14", "solver.atol=1e-15"});
    REQUIRE(run_.result.completed());
    // One event: the stick. The slip keeps its direction, so no slip_direction event either.
    const auto sticks = events_named(run_, "stick_floor");
    REQUIRE(sticks.size() == 1);
    CHECK(run_.rec.events.size() == 1);
    CHECK(std::abs(sticks[0].t - t_star) <= 1e-12 * t_star);
    const test::RunSignals sig(run_);
    const auto sx = sig("slip_x_floor"), sy = sig("slip_y_floor"), vx = sig("der_x"), vy = sig("der_y"),
               N = sig("normal_force_floor"), D = sig("dissipated_friction");
    // While sliding: the slip's part across u0 stays zero and its part along u0 falls as |u0| - (7/2) mu g t.
    double across = 0, decay = 0, after = 0;
    for (std::size_t k = 0; k < run_.rec.t.size(); ++k) {
      const double t = run_.rec.t[k], s = std::hypot(sx[k], sy[k]);
      if (t < t_star - 1e-3) {
        across = std::max(across, std::abs(sx[k] * uy - sy[k] * ux) / speed);
        decay = std::max(decay, std::abs((sx[k] * ux + sy[k] * uy) / speed - (speed - 3.5 * mu * g * t)));
      } else if (t > t_star + 1e-3) {
        after = std::max(after, s);
      }
    }
    CHECK(across <= 1e-12);
    CHECK(decay <= 1e-12);
    // Sticking, the slip is held at zero (v' = -a v) against the integration's error in the rates, about
    // rtol |w| r = 1e-14 (15 rad/s) (0.1 m) per step.
    CHECK(after <= 1e-11);
    CHECK(std::abs(vx.back() - (v0 - 2.0 / 7 * ux)) <= 1e-12);
    CHECK(std::abs(vy.back() - (-2.0 / 7 * uy)) <= 1e-12);
    CHECK(largest_deviation(N, m * g) <= 1e-12 * m * g);
    CHECK(std::abs(D.back() - m * speed * speed / 7) <= 1e-12 * m * speed * speed);
  }
}

namespace {

/// Jellett's integral L . (G - P) of the tippe top (scenarios/tippe_top.toml) at one sample: k = R e_z with
/// R = R_Z(psi) R_X(theta) R_Z(phi), w = psi' e_z + theta' (R_Z(psi) e_x) + phi' k, L = A w + (C - A)(w . k) k,
/// G - P = R_sphere e_z - e k.
double jellett(double psi, double theta, double dpsi, double dtheta, double dphi, double A, double C, double R, double e) {
  const double k[3] = {std::sin(psi) * std::sin(theta), -std::cos(psi) * std::sin(theta), std::cos(theta)};
  double w[3] = {dtheta * std::cos(psi), dtheta * std::sin(psi), dpsi};
  for (int i = 0; i < 3; ++i) w[i] += dphi * k[i];
  const double wk = w[0] * k[0] + w[1] * k[1] + w[2] * k[2];
  double lambda = 0;
  for (int i = 0; i < 3; ++i) {
    const double L = A * w[i] + (C - A) * wk * k[i];
    const double GP = (i == 2 ? R : 0.0) - e * k[i];
    lambda += L * GP;
  }
  return lambda;
}

}  // namespace

TEST_CASE("cone physics: the tippe top keeps Jellett's integral to 1e-10, loses energy only to friction and turns over") {
  // scenarios/tippe_top.toml: spun at 180 rad/s about the vertical, the stem tilted 0.1 rad, it turns over in
  // about 1.2 s (the event inverted at theta = 0.9 pi ends the run). No torque acts about the normal, so Jellett's
  // integral is conserved; at rtol 1e-12 its integration error stays near 1e-11 relative (at 1e-10, 3e-10).
  // In a sanitizer tree the run stops at 0.4 s, on the way up.
  const double t_end = test::full_or_sanitized(10.0, 0.4);
  const test::Run top = test::run_scenario("tippe_top.toml", {"solver.rtol=1e-12", "solver.atol=1e-14", "simulation.t_end=" + test::digits(t_end)});
  REQUIRE(top.result.completed());
  const Scenario& sc = top.scenario;
  const double A = sc.real("parameters.A"), C = sc.real("parameters.C"), R = sc.real("parameters.R"), e = sc.real("parameters.e");
  const test::RunSignals sig(top);
  const auto psi = sig("psi"), theta = sig("theta"), dpsi = sig("der_psi"), dtheta = sig("der_theta"), dphi = sig("der_phi"),
             z = sig("z"), output = sig("jellett"), balance = sig("energy_balance"), D = sig("dissipated_friction"),
             Dimp = sig("dissipated_impact"), E = sig("energy");
  std::vector<double> lambda;
  double output_error = 0;
  for (std::size_t k = 0; k < psi.size(); ++k) {
    lambda.push_back(jellett(psi[k], theta[k], dpsi[k], dtheta[k], dphi[k], A, C, R, e));
    output_error = std::max(output_error, std::abs(output[k] - lambda.back()));
  }
  // At the start w = n e_z: lambda = R (A n + (C - A) n cos^2(theta0)) - e C n cos(theta0).
  const double n = sc.real("parameters.n"), c0 = std::cos(sc.real("parameters.theta0"));
  const double lambda0 = R * (A * n + (C - A) * n * c0 * c0) - e * C * n * c0;
  CHECK(std::abs(lambda.front() - lambda0) <= 1e-14 * lambda0);
  CHECK(spread(lambda) <= 1e-10 * lambda0);
  CHECK(output_error <= 1e-13 * lambda0);  // the scenario's output jellett is the same integral
  // The energy: E + D_friction + D_impact constant, D_friction never decreasing, E never increasing.
  CHECK(spread(balance) <= 1e-10 * balance.front());
  double d_down = 0, e_up = 0;
  for (std::size_t k = 1; k < D.size(); ++k) {
    d_down = std::max(d_down, D[k - 1] - D[k]);
    e_up = std::max(e_up, E[k] - E[k - 1]);
  }
  CHECK(d_down <= 0.0);
  CHECK(e_up <= 1e-12 * E.front());
  CHECK(D.back() > 0.0);
  CHECK(largest_deviation(Dimp, 0.0) == 0.0);  // the top never leaves the table
  CHECK(count_prefix(top, "lift_off_") == 0);
  if (!test::sanitized) {
    // It turned over: the stem points down (theta = 0.9 pi) and the centre of mass rose from R - e cos(theta0)
    // to R - e cos(0.9 pi).
    CHECK(top.result.termination == "inverted");
    CHECK(std::abs(theta.back() - 0.9 * M_PI) <= 1e-9);
    CHECK(std::abs(z.back()) <= 1e-9 * R);
  } else {
    CHECK(theta.back() > theta.front());
  }
}

TEST_CASE("cone physics: the tippe top does the same at rtol 1e-8 and 1e-10, and rolls on upright when started without slip about the vertical") {
  // Turning over is a slow drift driven by the sliding friction, not a sensitive motion: both tolerances turn over
  // at the same time to far better than 1e-5 (the difference is of the integration error, about 1e-7).
  // Started instead spinning about its own axis with O at rest, the slip vanishes within 0.05 s (stick) and the top
  // rolls without dissipation, its stem staying near the vertical.
  if (!test::sanitized) {
    std::vector<double> times;
    for (const char* rtol : {"1e-8", "1e-10"}) {
      CAPTURE(rtol);
      const test::Run top = test::run_scenario("tippe_top.toml", {std::string("solver.rtol=") + rtol, "solver.atol=1e-14"});
      REQUIRE(top.result.completed());
      CHECK(top.result.termination == "inverted");
      CHECK(count_prefix(top, "stick_") == 0);
      times.push_back(top.result.t_final);
    }
    CHECK(std::abs(times[0] - times[1]) <= 1e-5 * times[1]);
  }
  const double t_end = test::full_or_sanitized(2.0, 0.2);
  const test::Run roll = test::run_scenario("tippe_top.toml", {"initial_rates.psi=0", "initial_rates.phi=180", "initial_rates.x=0",
                                                "simulation.t_end=" + test::digits(t_end)});
  REQUIRE(roll.result.completed());
  CHECK(roll.result.termination == "t_end");
  const auto sticks = events_named(roll, "stick_table");
  REQUIRE(sticks.size() == 1);
  CHECK(sticks[0].t < 0.05);
  const test::RunSignals sig(roll);
  const auto theta = sig("theta"), D = sig("dissipated_friction");
  CHECK(*std::max_element(theta.begin(), theta.end()) < M_PI / 2);  // the stem never goes below the horizontal
  CHECK(std::abs(D.back() - D[D.size() / 2]) <= 1e-15);             // nothing dissipated once it rolls
}

TEST_CASE("cone physics: Euler's disk started on its steady motion (Omega^2 sin(alpha) = 4 g / a) stays on it") {
  // scenarios/euler_disk.toml without its spin friction (the key spin_friction_radius removed; the shipped disk spins
  // down through it, tests/test_cone_scenarios.cpp): lean alpha = 0.5 rad to the table, the centre fixed, the
  // contact sticking (no friction force is needed). Over 2 s (13 turns) at rtol 1e-12 the angle, the centre and the
  // turning rate stay constant to the integration error (about 1e-11 here), the normal force is m g and the energy
  // (3/2) m g a sin(alpha).
  const double t_end = test::full_or_sanitized(2.0, 0.3);
  std::string text = scenario_text("euler_disk.toml");
  const std::string spin_key = "spin_friction_radius = \"Rs\"\n";
  REQUIRE(text.find(spin_key) != std::string::npos);
  text.erase(text.find(spin_key), spin_key.size());
  const test::Run disk =
      test::run_text(text, {"solver.rtol=1e-12", "solver.atol=1e-14", "simulation.t_end=" + test::digits(t_end)});
  REQUIRE(disk.result.completed());
  const Scenario& sc = disk.scenario;
  const double m = sc.real("parameters.m"), a = sc.real("parameters.a"), g = sc.real("parameters.g"),
               alpha = sc.real("parameters.alpha");
  const double Omega = std::sqrt(4 * g / (a * std::sin(alpha)));
  CHECK(disk.rec.events.empty());
  const test::RunSignals sig(disk);
  const auto theta = sig("theta"), cx = sig("centre_x"), cy = sig("centre_y"), N = sig("normal_force_table"),
             E = sig("energy"), dpsi = sig("der_psi"), Fx = sig("friction_x_table"), Fy = sig("friction_y_table");
  CHECK(std::all_of(disk.rec.mode.begin(), disk.rec.mode.end(), [](int md) { return md == ConeEngine::kStick; }));
  CHECK(largest_deviation(theta, M_PI / 2 - alpha) <= 1e-10);
  CHECK(largest_deviation(cx, 0.0) <= 1e-10 * a);
  CHECK(largest_deviation(cy, -a * std::cos(alpha)) <= 1e-10 * a);  // (x, y) - a sin(theta) (-sin psi, cos psi) at psi = 0
  CHECK(largest_deviation(dpsi, Omega) <= 1e-9 * Omega);
  CHECK(largest_deviation(N, m * g) <= 1e-9 * m * g);
  CHECK(std::max(largest_deviation(Fx, 0.0), largest_deviation(Fy, 0.0)) <= 1e-9 * m * g);
  CHECK(largest_deviation(E, 1.5 * m * g * a * std::sin(alpha)) <= 1e-12 * m * g * a);
}

TEST_CASE("cone physics: an upright disk launched with slip rolls from t* = |u0|/(3 mu g) on, at v0 - u0/3") {
  // scenarios/rolling_coin_slip.toml stood upright (theta = 0, no turning): the planar problem. Slips backwards
  // (spin too fast), forwards (too slow) and while moving backwards; at rtol 1e-13 the stick time to 1e-12.
  const Scenario base = load_scenario_text(scenario_text("rolling_coin_slip.toml"), "rolling_coin_slip.toml", {});
  const double m = base.real("parameters.m"), a = base.real("parameters.a"), g = base.real("parameters.g"),
               mu = base.real("parameters.mu");
  struct Start {
    double v0, spin;
  };
  for (const Start s : {Start{1.0, 30.0}, Start{1.0, 10.0}, Start{-0.4, 4.0}}) {
    CAPTURE(s.v0);
    CAPTURE(s.spin);
    const double u0 = s.v0 - a * s.spin, t_star = std::abs(u0) / (3 * mu * g);
    const test::Run coin = test::run_scenario("rolling_coin_slip.toml",
                               {"initial.theta=0", "initial_rates.psi=0", "initial_rates.x=" + test::digits(s.v0),
                                "initial_rates.phi=" + test::digits(s.spin), "simulation.t_end=0.2", "solver.rtol=1e-13",
                                "solver.atol=1e-15"});
    REQUIRE(coin.result.completed());
    const auto sticks = events_named(coin, "stick_ground");
    REQUIRE(sticks.size() == 1);
    CHECK(coin.rec.events.size() == 1);
    CHECK(std::abs(sticks[0].t - t_star) <= 1e-12 * t_star);
    const test::RunSignals sig(coin);
    const auto vx = sig("der_x"), dphi = sig("der_phi"), theta = sig("theta"), y = sig("y"), psi = sig("psi"),
               D = sig("dissipated_friction");
    CHECK(std::abs(vx.back() - (s.v0 - u0 / 3)) <= 1e-12);
    CHECK(std::abs(a * dphi.back() - (s.v0 - u0 / 3)) <= 1e-12);
    CHECK(std::max({largest_deviation(theta, 0.0), largest_deviation(y, 0.0), largest_deviation(psi, 0.0)}) <= 1e-12);
    CHECK(std::abs(D.back() - m * u0 * u0 / 6) <= 1e-12 * m * u0 * u0);
  }
}

namespace {

/// The planar rolling/sliding disk of Antali and Stepan (docs/equations.md, section 2) in closed form: mass m,
/// inertia ratio j, spring k on the centre, friction mu; u the centre's displacement, v its velocity, w the contact
/// point's slip. Sliding with s = sign(w):
///   u = -s c + (u0 + s c) cos(W t) + (v0/W) sin(W t),  c = mu g m / k, W = sqrt(k/m),  w = w0 + (v - v0) - s mu g t / j;
/// where w reaches zero it sticks if k j |u| <= mu g m (1 + j), else it slides on the other way (a reversal).
/// Rolling: u = u0 cos(W1 t) + (v0/W1) sin(W1 t), W1 = sqrt(k / (m (1 + j))), until |u| reaches that bound, where it
/// slides away from the spring's pull (u > 0: s = -1). The events up to t_end, and u at t_end.
struct PlanarDisk {
  double m, j, k, mu, g;
  struct Event {
    double t;
    std::string kind;  ///< "restart" (a reversal), "stick", "slip" (from rolling)
  };
  std::vector<Event> events;
  double u_end = 0;
  void run(double u, double v, double w, double t_end) {
    const double W = std::sqrt(k / m), W1 = std::sqrt(k / (m * (1 + j))), c = mu * g * m / k,
                 bound = mu * g * m * (1 + j) / (k * j);
    double t = 0, s = w > 0 ? 1 : -1;
    while (true) {
      const double u0 = u, v0 = v, w0 = w, s0 = s;
      if (s0 != 0) {
        const auto at = [=, this](double tt, double& uu, double& vv) {
          uu = -s0 * c + (u0 + s0 * c) * std::cos(W * tt) + v0 / W * std::sin(W * tt);
          vv = -(u0 + s0 * c) * W * std::sin(W * tt) + v0 * std::cos(W * tt);
          return w0 + (vv - v0) - s0 * mu * g * tt / j;
        };
        const double dt = first_root([&](double tt) {
          double uu, vv;
          return s0 * at(tt, uu, vv);
        }, 1e-3, 100.0);
        if (t + dt > t_end) {
          double vv;
          at(t_end - t, u_end, vv);
          return;
        }
        at(dt, u, v);
        t += dt;
        w = 0;
        const bool sticks = std::abs(u) <= bound;
        events.push_back({t, sticks ? "stick" : "restart"});
        s = sticks ? 0 : -s0;
      } else {
        const auto at = [=](double tt, double& uu, double& vv) {
          uu = u0 * std::cos(W1 * tt) + v0 / W1 * std::sin(W1 * tt);
          vv = -u0 * W1 * std::sin(W1 * tt) + v0 * std::cos(W1 * tt);
        };
        if (std::hypot(u0, v0 / W1) <= bound) {  // rolls for ever
          double vv;
          at(t_end - t, u_end, vv);
          return;
        }
        const double dt = first_root([&](double tt) {
          double uu, vv;
          at(tt, uu, vv);
          return bound - std::abs(uu);
        }, 1e-3, 100.0);
        if (t + dt > t_end) {
          double vv;
          at(t_end - t, u_end, vv);
          return;
        }
        at(dt, u, v);
        t += dt;
        events.push_back({t, "slip"});
        s = u > 0 ? -1 : 1;
      }
    }
  }
};

}  // namespace

TEST_CASE("cone physics: the rolling/sliding disk of Antali and Stepan written in 3-D slides, reverses, sticks and slips at the planar closed form's times") {
  // The upright coin of rolling_coin_slip.toml as the disk of scenarios/disk_physical.toml (m = 2 kg, r = 0.1 m,
  // j = 1/2, k = 200 N/m on the centre, mu = 0.3; u = 0.25 m, v = 0, the contact sliding forward at w = 0.5 m/s).
  // The 3-D model's slip stays in the plane of the disk (x), and its events come at the planar closed form's times:
  // reversals at 0.0148, 0.2258 and 0.6138 s, a stick at 0.8917 s, rolling until the spring's pull exceeds the
  // friction cone at 0.9238 s, a stick at 1.2244 s, a slip at 1.3141 s.
  // In a sanitizer tree the run ends at 0.7 s, after the three reversals.
  PlanarDisk planar{2, 0.5, 200, 0.3, 9.81, {}, 0};
  const double t_end = test::full_or_sanitized(1.4, 0.7);
  planar.run(0.25, 0.0, 0.5, t_end);
  REQUIRE(planar.events.size() == test::full_or_sanitized<std::size_t>(7, 3));
  const test::Run disk = test::run_scenario("rolling_coin_slip.toml",
                             {"parameters.m=2", "parameters.a=0.1", "parameters.mu=0.3", "parameters.k=200",
                              "lagrangian.potential=1/2*k*(x + a*sin(theta)*sin(psi))^2", "initial.theta=0", "initial.x=0.25",
                              "initial_rates.x=0", "initial_rates.psi=0", "initial_rates.phi=-5",
                              "simulation.t_end=" + test::digits(t_end), "solver.rtol=1e-12", "solver.atol=1e-14"});
  CHECK(disk.scenario.real("parameters.g") == planar.g);
  CHECK_MESSAGE(disk.result.completed(), disk.result.message);
  std::vector<EventRecord> seen;
  for (const auto& e : disk.rec.events)
    if (e.kind.rfind("slip_direction_", 0) != 0) seen.push_back(e);
  for (std::size_t i = 0; i < std::min(seen.size(), planar.events.size()); ++i) {
    CAPTURE(i);
    const std::string kind = planar.events[i].kind == "restart" ? "slip_restart_ground" : planar.events[i].kind + "_ground";
    CHECK(seen[i].kind == kind);
    CHECK(std::abs(seen[i].t - planar.events[i].t) <= 1e-9 * planar.events[i].t);
  }
  CHECK(seen.size() == planar.events.size());
  REQUIRE(disk.result.completed());
  const test::RunSignals sig(disk);
  const auto x = sig("x"), theta = sig("theta");
  CHECK(std::abs(x.back() - planar.u_end) <= 1e-8);
  // The disk stays upright: nothing in the law pushes it sideways, only round-off does, and upright rolling slower
  // than sqrt(g a / 3) = 0.57 m/s is unstable (growth at most sqrt(4 g / (5 a)) = 8.9/s): a lean of 1e-16 grows to
  // at most 1e-16 exp(8.9 t_end) = 3e-11 by t_end.
  CHECK(largest_deviation(theta, 0.0) <= 1e-9);
}

TEST_CASE("cone physics: a block on a tilted plane pushed sideways rests below the critical push and slides above it") {
  // scenarios/block_tilted_plane.toml: the critical push P_c = m g sqrt(mu_s^2 cos^2(beta) - sin^2(beta)); at
  // (1 - 1e-4) P_c the needed friction |F| lies between mu N and mu_s N (both resting and sliding obey Coulomb's
  // law; the static coefficient keeps it at rest); at (1 + 1e-4) P_c it slides from rest along F/|F| at
  // (|F| - mu N)/m. Both directions of the push. 1e-4 is well inside what the choice at rest resolves: its stick
  // margin mu_s N - |F| = (P_c^2 / (mu_s N)) 1e-4 = 2.9e-4 N is 3.1e-5 of the largest force N, above the 1e-6 below
  // which a margin counts as borderline (docs/user-models.md; tests/test_cone_scenarios.cpp checks that limit).
  const test::TiltedBlock block;
  const Scenario& base = block.base;
  const double m = block.m, g = block.g, beta = block.beta, mu = block.mu, mu_s = block.mu_s, N = block.N, slope = block.slope, Pc = block.Pc;
  for (const double push : {1 - 1e-4, -(1 - 1e-4), 1 + 1e-4, -(1 + 1e-4)}) {
    CAPTURE(push);
    const double P = push * Pc, F = std::hypot(slope, P);
    REQUIRE(F > mu * N);  // the case where only mu_s decides
    const test::Run block =
        test::run_scenario("block_tilted_plane.toml", {"parameters.push=" + test::digits(push), "solver.rtol=1e-12", "solver.atol=1e-14"});
    REQUIRE(block.result.completed());
    CHECK(block.rec.events.empty());
    const test::RunSignals sig(block);
    const auto x = sig("x"), y = sig("y"), z = sig("z"), Fx = sig("friction_x_plane"), Fy = sig("friction_y_plane"),
               Nn = sig("normal_force_plane"), sx = sig("slip_x_plane"), sy = sig("slip_y_plane");
    CHECK(largest_deviation(Nn, N) <= 1e-12 * N);
    CHECK(largest_deviation(z, 0.0) <= 1e-12);
    if (std::abs(push) < 1) {
      CHECK(F <= mu_s * N);
      CHECK(std::all_of(block.rec.mode.begin(), block.rec.mode.end(), [](int md) { return md == ConeEngine::kStick; }));
      CHECK(std::max(largest_deviation(x, 0.0), largest_deviation(y, 0.0)) <= 1e-12);
      CHECK(largest_deviation(Fx, -slope) <= 1e-12 * F);
      CHECK(largest_deviation(Fy, -P) <= 1e-12 * F);
    } else {
      CHECK(F > mu_s * N);
      CHECK(std::all_of(block.rec.mode.begin(), block.rec.mode.end(), [](int md) { return md == ConeEngine::kSlide; }));
      // The slip stays on the line of F (its part across F is of the integration's absolute error, atol 1e-14 on
      // the rates), the friction is mu N against the slip, and the position is the closed form's.
      const double acc = (F - mu * N) / m;
      double across = 0, law = 0, position = 0;
      for (std::size_t k = 0; k < x.size(); ++k) {
        const double t = block.rec.t[k], sp = std::hypot(sx[k], sy[k]);
        across = std::max(across, std::abs(sx[k] * P - sy[k] * slope) / F);
        if (t > 0) law = std::max({law, std::abs(Fx[k] + mu * N * sx[k] / sp), std::abs(Fy[k] + mu * N * sy[k] / sp)});
        position = std::max({position, std::abs(x[k] - 0.5 * acc * t * t * slope / F), std::abs(y[k] - 0.5 * acc * t * t * P / F)});
      }
      CHECK(across <= 1e-12);
      CHECK(law <= 1e-12 * N);
      CHECK(position <= 1e-12);
    }
  }
}

TEST_CASE("cone physics: a block on a spring reverses at every half period, losing 2 mu m g / k of amplitude, and sticks") {
  // The block of scenarios/block_tilted_plane.toml on a level plane (beta = 0, no push) tied to x = 0 by a spring k,
  // released at rest at x0: each half period pi/W (W = sqrt(k/m)) is half an oscillation about the offset
  // -+ mu m g / k, so the block comes to rest at t_n = n pi / W at x_n = (-1)^n (x0 - 2 n mu m g / k), and stays
  // there (sticks) once |k x_n| <= mu_s m g. With k = 100 N/m and x0 = 0.25 m: reversals at x_1 = -0.17152 and
  // x_2 = 0.09304 m, the stick at x_3 = -0.01456 m.
  const Scenario base = load_scenario_text(scenario_text("block_tilted_plane.toml"), "block_tilted_plane.toml", {});
  const double m = base.real("parameters.m"), g = base.real("parameters.g"), mu = base.real("parameters.mu"),
               mu_s = base.real("parameters.mu_s");
  const double k = 100, x0 = 0.25, W = std::sqrt(k / m), step = 2 * mu * m * g / k;
  const test::Run block = test::run_scenario("block_tilted_plane.toml", {"parameters.beta=0", "parameters.push=0", "parameters.k=100",
                                                          "lagrangian.potential=1/2*k*x^2", "initial.x=0.25",
                                                          "simulation.t_end=1.5", "solver.rtol=1e-12", "solver.atol=1e-14"});
  REQUIRE(block.result.completed());
  REQUIRE(block.rec.events.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const int n = static_cast<int>(i) + 1;
    const double xn = (n % 2 ? -1 : 1) * (x0 - n * step);
    const bool sticks = std::abs(k * xn) <= mu_s * m * g;
    CHECK(block.rec.events[i].kind == (sticks ? "stick_plane" : "slip_restart_plane"));
    CHECK(sticks == (n == 3));
    CHECK(std::abs(block.rec.events[i].t - n * M_PI / W) <= 1e-10);
    CHECK(std::abs(block.rec.events[i].x[0] - xn) <= 1e-10);
  }
  const test::RunSignals sig(block);
  const auto x = sig("x");
  CHECK(std::abs(x.back() - (-(x0 - 3 * step))) <= 1e-10);
}

TEST_CASE("cone physics: the leaning coin launched with slip (rolling_coin_slip.toml) slides, sticks once and rolls on") {
  // The scenario as shipped: one stick, then rolling to the end with the friction inside the cone: no slip event, no
  // dissipation after the stick, the contact point moving at a der(phi) along the heading, the energy balance
  // constant.
  const test::Run coin = test::run_scenario("rolling_coin_slip.toml", {"simulation.t_end=" + test::digits(test::full_or_sanitized(3.0, 0.5))});
  REQUIRE(coin.result.completed());
  const auto sticks = events_named(coin, "stick_ground");
  REQUIRE(sticks.size() == 1);
  CHECK(count_prefix(coin, "slip_ground") == 0);
  CHECK(count_prefix(coin, "slip_restart_") == 0);
  CHECK(count_prefix(coin, "lift_off_") == 0);
  const double a = coin.scenario.real("parameters.a");
  const test::RunSignals sig(coin);
  const auto D = sig("dissipated_friction"), balance = sig("energy_balance"), vx = sig("der_x"), vy = sig("der_y"),
             psi = sig("psi"), dphi = sig("der_phi"), ratio = sig("cone_ratio_ground");
  CHECK(spread(balance) <= 1e-8 * balance.front());
  double rolling = 0, d_after = 0, ratio_after = 0;
  double D_first = -1;
  for (std::size_t k = 0; k < D.size(); ++k) {
    if (coin.rec.t[k] <= sticks[0].t + 1e-3) continue;
    if (D_first < 0) D_first = D[k];
    d_after = std::max(d_after, std::abs(D[k] - D_first));
    rolling = std::max({rolling, std::abs(vx[k] - a * dphi[k] * std::cos(psi[k])), std::abs(vy[k] - a * dphi[k] * std::sin(psi[k]))});
    ratio_after = std::max(ratio_after, ratio[k]);
  }
  CHECK(d_after <= 1e-12);
  CHECK(rolling <= 1e-8);
  CHECK(ratio_after < 1.0);
}

TEST_CASE("cone physics: the coin of rolling_coin.toml started spinning too fast sticks, slips again where the cone is reached, and keeps its balance") {
  // The steady turning of rolling_coin.toml (lean 0.3 rad, heading rate -3 rad/s, the contact point moving at
  // a (14.2259 rad/s) = 0.7113 m/s) with the spin 20 rad/s instead of 14.2259 and Coulomb friction mu = 0.2: the
  // slip vanishes (stick), the coin then nutates strongly and the friction it needs to roll reaches mu N, where
  // Coulomb's law makes it slide again (the slide along minus the sticking force is consistent there: the
  // friction is continuous at the cone). Whatever follows, the law holds: the friction never leaves the cone, the
  // energy balance is constant and the dissipation never decreases.
  // The rolling (stick) phase is stiff for CVODE's Adams (the stabilised constraint's rate): some 9,000 steps from
  // t = 0.29 to 0.45 against BDF's far fewer. A sanitizer's build, where a step costs a hundred times more (70 s),
  // runs BDF to 0.6 s; the release build the default to 1.5 s. (BDF's balance to 1.5 s spreads 1.5e-8 of it at
  // rtol 1e-10, to 0.6 s 5.8e-9.)
  const double t_end = test::full_or_sanitized(1.5, 0.6);
  for (const char* method : {test::sanitized ? "bdf" : "auto"}) {
    CAPTURE(method);
    const test::Run coin = test::run_scenario("rolling_coin_slip.toml", {"initial.theta=0.3", "initial_rates.psi=-3", "initial_rates.phi=20",
                                                          "initial_rates.x=0.7112930499816459",
                                                          "simulation.t_end=" + test::digits(t_end),
                                                          std::string("solver.method=") + method});
    CHECK_MESSAGE(coin.result.completed(), coin.result.message);
    CHECK(!events_named(coin, "stick_ground").empty());
    const auto slips = events_named(coin, "slip_ground");
    CHECK(!slips.empty());
    const test::RunSignals sig(coin);
    const auto D = sig("dissipated_friction"), balance = sig("energy_balance"), ratio = sig("cone_ratio_ground");
    CHECK(spread(balance) <= 1e-8 * balance.front());
    double d_down = 0;
    for (std::size_t k = 1; k < D.size(); ++k) d_down = std::max(d_down, D[k - 1] - D[k]);
    CHECK(d_down <= 0.0);
    CHECK(*std::max_element(ratio.begin(), ratio.end()) <= 1 + 1e-9);
  }
}

}  // namespace rollsim
