// The rolling coin (scenarios/rolling_coin.toml) and the ball on a turntable (scenarios/ball_on_turntable.toml)
// against closed forms: the coin's steady turning (Le Saux, Leine and Glocker 2005), its contact forces, its
// nutation frequency about steady turning and upright rolling (stable above sqrt(g a / 3)); the ball's centre
// turning at 2 Omega/7 on a circle of radius 3.5 d. docs/references-3d.md has the
// formulas and where they come from.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "rollsim/analysis/linear_model.hpp"
#include "rolling_3d_support.hpp"

namespace rollsim {

namespace {

const std::string kCoin = rollsim::test::source_dir() + "/scenarios/rolling_coin.toml";
const std::string kBall = rollsim::test::source_dir() + "/scenarios/ball_on_turntable.toml";

/// The uniform disk of the coin scenario (parameters read from it) on a steady turning motion: lean theta,
/// heading rate Omega, and the spin rate phi' the steady relation gives,
///   A Omega^2 sin(theta) cos(theta) - (C + m a^2) Omega omega3 cos(theta) = m g a sin(theta),
///   omega3 = phi' + Omega sin(theta), A = m a^2/4, C = m a^2/2,
/// solved for phi'.
struct SteadyCoin {
  double m, a, g, theta, Omega, phi_rate;
  SteadyCoin(const Scenario& sc, double theta_, double Omega_)
      : m(sc.real("parameters.m")), a(sc.real("parameters.a")), g(sc.real("parameters.g")), theta(theta_), Omega(Omega_) {
    const double A = m * a * a / 4, C = m * a * a / 2, s = std::sin(theta), c = std::cos(theta);
    const double omega3 = (A * Omega * Omega * s * c - m * g * a * s) / ((C + m * a * a) * Omega * c);
    phi_rate = omega3 - Omega * s;
  }
  std::vector<std::string> overrides() const {
    return {"initial.theta=" + test::digits(theta), "initial_rates.theta=0", "initial_rates.psi=" + test::digits(Omega),
            "initial_rates.phi=" + test::digits(phi_rate)};
  }
  /// The nutation frequency about the steady motion, squared (derived from the Lagrange-d'Alembert equations of
  /// the uniform disk in these coordinates; docs/references-3d.md):
  ///   w_n^2 = Omega^2 + (14/5) Omega phi' sin(theta) + (12/5) phi'^2 - (4 g / (5 a)) cos(theta).
  double nutation_squared() const {
    return Omega * Omega + 2.8 * Omega * phi_rate * std::sin(theta) + 2.4 * phi_rate * phi_rate -
           0.8 * g / a * std::cos(theta);
  }
};

LinearResult linearize_file(const std::string& path, const std::vector<std::string>& sets) {
  const Scenario sc = load_scenario(path, sets);
  auto sys = build_system(sc);
  return linearize_system(*sys, linear_options(sc), sc);
}

}  // namespace

TEST_CASE("rolling coin: a steady turning start keeps its lean to 1e-10 over 10 s, with the closed-form contact forces") {
  // Along the steady motion theta is constant, the centre of mass circles at the height a cos(theta): the normal
  // force is m g, and the horizontal force is the centripetal one, m |Omega| a |omega3| (the centre's speed is
  // a |omega3|). At rtol 1e-12 the integration's error stays well below 1e-10 over 10 s (at the scenario's 1e-10
  // theta moves by up to 6e-11: the integration error, at the bound).
  const Scenario base = load_scenario(kCoin, {});
  const SteadyCoin coin(base, test::start_number(base, "initial.theta"), test::start_number(base, "initial_rates.psi"));
  CHECK(std::abs(coin.phi_rate - test::start_number(base, "initial_rates.phi")) <= 1e-12 * std::abs(coin.phi_rate));
  auto sets = coin.overrides();
  const double t_end = test::full_or_sanitized(10.0, 2.0);
  sets.push_back("simulation.t_end=" + test::digits(t_end));
  sets.push_back("simulation.output_dt=0.01");
  sets.push_back("solver.rtol=1e-12");
  sets.push_back("solver.atol=1e-14");
  const test::Run r = test::run_text(test::read_file(kCoin), sets);
  const double rtol = r.scenario.real("solver.rtol");
  REQUIRE(r.result.completed());
  CHECK(std::abs(r.result.t_final - t_end) <= 1e-9);
  const test::RunSignals sig(r);
  const auto theta = sig("theta"), N = sig("normal_force_ground"), Fx = sig("tangential_force_x_ground"),
             Fy = sig("tangential_force_y_ground"), balance = sig("energy_balance"), T = sig("kinetic_energy"),
             V = sig("potential_energy"), gap = sig("gap_ground");
  const double F = coin.m * std::abs(coin.Omega) * coin.a * std::abs(coin.phi_rate + coin.Omega * std::sin(coin.theta));
  double dtheta = 0, dN = 0, dF = 0, drift = 0, scale = 0, gap_max = 0;
  for (std::size_t k = 0; k < theta.size(); ++k) {
    dtheta = std::max(dtheta, std::abs(theta[k] - coin.theta));
    dN = std::max(dN, std::abs(N[k] - coin.m * coin.g));
    dF = std::max(dF, std::abs(std::hypot(Fx[k], Fy[k]) - F));
    drift = std::max(drift, std::abs(balance[k] - balance[0]));
    scale = std::max(scale, std::abs(T[k]) + std::abs(V[k]));
    gap_max = std::max(gap_max, std::abs(gap[k]));
  }
  MESSAGE("coin: |theta - theta0| <= " << dtheta << ", |N - m g| <= " << dN << " N, |F_t - F| <= " << dF
                                       << " N (F = " << F << "), energy drift " << drift / scale << " relative, |gap| <= "
                                       << gap_max);
  CHECK(dtheta <= 1e-10);
  CHECK(dN <= 1e-9 * coin.m * coin.g);
  CHECK(dF <= 1e-9 * F);
  CHECK(drift <= 100 * rtol * scale);
  CHECK(gap_max <= 1e-10 * coin.a);
}

TEST_CASE("rolling coin: the nutation frequency about steady turning equals the closed form") {
  // The linearization keeps theta, its rate and the rates of psi and phi (x, y, psi, phi are ignorable; the
  // height z is eliminated by the contact's gap): two zero roots (the neighbouring steady motions) and +-i w_n.
  const Scenario base = load_scenario(kCoin, {});
  for (const auto& start : {std::pair{0.3, -3.0}, std::pair{0.6, 4.0}, std::pair{-0.6, 8.0}}) {
    const double theta = start.first, Omega = start.second;
    const SteadyCoin coin(base, theta, Omega);
    const double w2 = coin.nutation_squared();
    REQUIRE(w2 > 0);
    const LinearResult l = linearize_file(kCoin, coin.overrides());
    INFO("theta " << theta << ", Omega " << Omega << ": states " << l.state_names.size());
    REQUIRE(l.state_names.size() == 4);
    auto got = test::roots(l.ss.A);
    std::sort(got.begin(), got.end(), [](auto x, auto y) { return std::abs(x) < std::abs(y); });
    const double w = std::sqrt(w2);
    CHECK(std::abs(got[0]) <= 1e-9 * w);
    CHECK(std::abs(got[1]) <= 1e-9 * w);
    for (int k : {2, 3}) {
      CHECK(std::abs(got[k].real()) <= 1e-9 * w);
      CHECK(std::abs(std::abs(got[k].imag()) - w) <= 1e-9 * w);
    }
  }
}

TEST_CASE("rolling coin: nudged off its steady turn, the nonlinear run nutates at the closed-form frequency") {
  // A lean rate eps = 1e-6 rad/s at the start: theta' = eps cos(w_n t) to first order, so theta' crosses zero
  // every pi / w_n (the event der(theta) = 0, located by the solver). The start lies O(eps) off the steady turn,
  // and the neighbouring steady turn it oscillates about has a w_n that differs by a relative O(eps / w_n): the
  // measured frequency is compared to 1e-6 relative.
  const Scenario base = load_scenario(kCoin, {});
  const SteadyCoin coin(base, test::start_number(base, "initial.theta"), test::start_number(base, "initial_rates.psi"));
  auto sets = coin.overrides();
  const double t_end = test::full_or_sanitized(10.0, 2.0);
  for (const std::string s : {std::string("initial_rates.theta=1e-6"), std::string("events.nutation.when=\"der(theta)\""),
                              std::string("solver.rtol=1e-12"), std::string("solver.atol=1e-14"),
                              "simulation.t_end=" + test::digits(t_end), std::string("simulation.output_dt=0.01")})
    sets.push_back(s);
  const test::Run r = test::run_text(test::read_file(kCoin), sets);
  REQUIRE(r.result.completed());
  std::vector<double> crossings;
  for (const auto& e : r.rec.events)
    if (e.kind == "nutation") crossings.push_back(e.t);
  REQUIRE(crossings.size() >= 10);
  const double half_period = (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  const double w = M_PI / half_period, w_closed = std::sqrt(coin.nutation_squared());
  MESSAGE("nutation: " << crossings.size() << " crossings, w = " << test::digits(w) << " rad/s, closed form "
                       << test::digits(w_closed));
  CHECK(std::abs(w - w_closed) <= 1e-6 * w_closed);
}

TEST_CASE("rolling coin: upright rolling is stable above v = sqrt(g a / 3), with the closed-form nutation frequency") {
  // Upright rolling at speed v (theta = 0, psi' = 0, phi' = v/a) is the steady turning with theta = 0:
  //   w_n^2 = (4/5) (3 v^2/a^2 - g/a)   (Neimark and Fufaev 1972; the formula above with theta = Omega = 0),
  // with the spin held steady (its rate has no first-order terms there). Below v_c = sqrt(g a/3): a real pair
  // +-sqrt(-w_n^2), one unstable; above: +-i w_n. The third root is 0 (the steady turnings nearby).
  const Scenario base = load_scenario(kCoin, {});
  const double a = base.real("parameters.a"), g = base.real("parameters.g"), vc = std::sqrt(g * a / 3);
  for (double ratio : {0.5, 0.99, 1.01, 2.0, 5.0}) {
    const double v = ratio * vc, w2 = 0.8 * (3 * v * v / (a * a) - g / a), scale = std::sqrt(g / a);
    const LinearResult l = linearize_file(kCoin, {"initial.theta=0", "initial_rates.theta=0", "initial_rates.psi=0",
                                                  "initial_rates.phi=" + test::digits(v / a),
                                                  "linear.steady=[\"der_phi\"]"});
    INFO("v = " << ratio << " v_c");
    REQUIRE(l.state_names.size() == 3);
    auto got = test::roots(l.ss.A);
    std::sort(got.begin(), got.end(), [](auto x, auto y) { return std::abs(x) < std::abs(y); });
    CHECK(std::abs(got[0]) <= 1e-9 * scale);
    double max_real = -INFINITY;
    for (int k : {1, 2}) {
      max_real = std::max(max_real, got[k].real());
      // lambda^2 = -w_n^2 for both roots of the pair
      CHECK(std::abs((got[k] * got[k]).real() + w2) <= 1e-9 * scale * scale);
      CHECK(std::abs((got[k] * got[k]).imag()) <= 1e-9 * scale * scale);
    }
    if (ratio < 1)
      CHECK(max_real > 0.1 * std::sqrt(-w2));
    else
      CHECK(max_real <= 1e-9 * scale);
  }
}

TEST_CASE("ball on a turntable: the centre's velocity turns at 2 Omega/7 on a circle of radius 3.5 d") {
  // v' = (2/7) Omega e_z x v: the speed stays Omega d, the direction turns at 2 Omega / 7 from +y (the start at
  // (d, 0), at rest on the table), and the centre circles about (-2.5 d, 0) with radius 3.5 d. The normal force
  // is m g. At the scenario's tolerance (rtol 1e-10) over one circle the integration error stays below 1e-9 of
  // these.
  const Scenario base = load_scenario(kBall, {});
  const double Omega = base.real("parameters.Omega"), d = base.real("parameters.d"), m = base.real("parameters.m"),
               g = base.real("parameters.g");
  const double period = 7 * M_PI / Omega, t_end = test::full_or_sanitized(period, period / 4);
  CHECK(std::abs(base.real("simulation.t_end") - period) <= 1e-12 * period);
  CHECK(test::start_number(base, "initial.x") == d);
  CHECK(std::abs(test::start_number(base, "initial_rates.y") - Omega * d) <= 1e-15);
  const test::Run r = test::run_text(test::read_file(kBall), {"simulation.t_end=" + test::digits(t_end)});
  REQUIRE(r.result.completed());
  const double rtol = r.scenario.real("solver.rtol");
  const test::RunSignals sig(r);
  const auto t = r.rec.t, x = sig("x"), y = sig("y"), vx = sig("der_x"), vy = sig("der_y"), N = sig("normal_force_table"),
             balance = sig("energy_balance"), T = sig("kinetic_energy"), V = sig("potential_energy");
  double turn = 0, radius = 0, speed = 0, dN = 0, drift = 0, scale = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const double heading = M_PI / 2 + 2 * Omega / 7 * t[k];
    turn = std::max(turn, std::abs(std::remainder(std::atan2(vy[k], vx[k]) - heading, 2 * M_PI)));
    radius = std::max(radius, std::abs(std::hypot(x[k] + 2.5 * d, y[k]) - 3.5 * d));
    speed = std::max(speed, std::abs(std::hypot(vx[k], vy[k]) - Omega * d));
    dN = std::max(dN, std::abs(N[k] - m * g));
    drift = std::max(drift, std::abs(balance[k] - balance[0]));
    scale = std::max(scale, std::abs(T[k]) + std::abs(V[k]));
  }
  MESSAGE("ball: heading error " << turn << " rad, radius error " << radius << " m (3.5 d = " << 3.5 * d
                                 << "), speed error " << speed << ", |N - m g| " << dN << ", energy ledger drift "
                                 << drift / scale << " relative");
  CHECK(turn <= 1e-9);
  CHECK(radius <= 1e-9 * 3.5 * d);
  CHECK(speed <= 1e-9 * Omega * d);
  CHECK(dN <= 1e-9 * m * g);
  CHECK(drift <= 100 * rtol * scale);
}

}  // namespace rollsim
