// Statically indeterminate contacts (more closed contact rows than freedoms), mu = 0 and accumulating impacts on
// the contact engine: a ladder between a floor and a wall with friction at both ends, a rod landing flat, a plank on
// three feet and a bouncing ball, each against its statics, its closed form or a Newton-Euler integration written
// here.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include <Eigen/Dense>

#include "contact_support.hpp"

namespace rollsim {

namespace {

using test::events_of;
using test::extra;
using test::number_text;
using test::scenario_text;
using test::SignalLookup;

/// The text with one line removed (it must be there).
std::string without_line(std::string text, const std::string& line) {
  const auto p = text.find(line + "\n");
  REQUIRE_MESSAGE(p != std::string::npos, "no line " << line);
  return text.erase(p, line.size() + 1);
}

// ---- the ladder ------------------------------------------------------------------------------------------------

/// A uniform ladder of length 2 l, mass m, inertia m l^2/3 about its centre (x, y), at theta from the floor: its
/// foot at (x + l cos theta, y - l sin theta) on the floor y = 0, its top at (x - l cos theta, y + l sin theta) on
/// the wall x = 0. The gaps' gradients and the slips' rate gradients (the directions of the normal and the
/// friction forces in (x, y, theta)):
///   floor: W_N = (0, 1, -l cos theta), W_T = (1, 0, -l sin theta);
///   wall:  W_N = (1, 0,  l sin theta), W_T = (0, 1,  l cos theta).
const std::string kLadder = test::scenario_text("ladder.toml");  // scenarios/ladder.toml

const char* const kWallSlip = "slip_velocity = \"der(y) + l*cos(theta)*der(theta)\"";
const char* const kWallFriction = "friction_coefficient = \"mu_w\"";

struct Ladder {
  double m = 1.0, l = 1.0, g = 9.81, theta0 = std::numbers::pi / 3;
  double I() const { return m * l * l / 3; }
  /// The overrides that put the test's values into the scenario: resting on both surfaces at theta0.
  std::vector<std::string> overrides(double mu_f, double mu_w) const {
    return {"parameters.m=" + number_text(m), "parameters.l=" + number_text(l), "parameters.g=" + number_text(g),
            "parameters.mu_f=" + number_text(mu_f), "parameters.mu_w=" + number_text(mu_w),
            "initial.theta=" + number_text(theta0), "initial.x=" + number_text(l * std::cos(theta0)),
            "initial.y=" + number_text(l * std::sin(theta0))};
  }
  /// The generalized directions of the forces (N_f, F_f, N_w, F_w), one per row, at theta.
  Eigen::Matrix<double, 4, 3> directions(double theta) const {
    const double c = std::cos(theta), s = std::sin(theta);
    Eigen::Matrix<double, 4, 3> W;
    W << 0, 1, -l * c, 1, 0, -l * s, 1, 0, l * s, 0, 1, l * c;
    return W;
  }
  /// The ladder at rest needs sum of lambda_i W_i = grad V = (0, m g, 0): force balance in x and y and the moment
  /// about the centre. Returns the residual.
  Eigen::Vector3d statics_residual(double theta, const Eigen::Vector4d& f) const {
    return directions(theta).transpose() * f - Eigen::Vector3d(0, m * g, 0);
  }
  /// At rest with friction at both ends (Coulomb, equal or different coefficients) exactly where
  /// 2 mu_f tan(theta) >= 1 - mu_f mu_w (the limit with both ends about to slip).
  bool rests(double mu_f, double mu_w) const { return 2 * mu_f * std::tan(theta0) >= 1 - mu_f * mu_w; }
};

/// The forces (N_f, F_f, N_w, F_w) at sample k; F_w = 0 for a wall without friction keys (it has no such output).
Eigen::Vector4d ladder_forces(const SignalLookup& s, const test::Run& r, std::size_t k) {
  const bool wall_friction =
      std::find(s.outputs.begin(), s.outputs.end(), "tangential_force_wall") != s.outputs.end();
  return {s.at(r, k, "normal_force_floor"), s.at(r, k, "tangential_force_floor"), s.at(r, k, "normal_force_wall"),
          wall_friction ? s.at(r, k, "tangential_force_wall") : 0.0};
}

/// The cone margins of (N_f, F_f, N_w, F_w): N_f, mu_f N_f - F_f, mu_f N_f + F_f, and the same for the wall.
std::array<double, 6> cone_margins(const Eigen::Vector4d& f, double mu_f, double mu_w) {
  return {f(0), mu_f * f(0) - f(1), mu_f * f(0) + f(1), f(2), mu_w * f(2) - f(3), mu_w * f(2) + f(3)};
}

/// The distribution rule for the ladder at rest at theta (force_distribution.hpp), computed here on its own: the
/// forces solving the statics are lambda0 + z n, lambda0 the least-norm one and n spanning the null space of the
/// directions (one dimension: four rows, three freedoms). If every cone margin of lambda0 is at least 1e-3 of
/// max |lambda0|, lambda0; else the z that maximises the smallest margin, found exactly as the best of the
/// crossings of the margins' lines (each margin is linear in z).
Eigen::Vector4d ladder_rule(const Ladder& L, double theta, double mu_f, double mu_w, double& best_margin) {
  const Eigen::Matrix<double, 4, 3> W = L.directions(theta);
  const Eigen::Vector3d load(0, L.m * L.g, 0);
  const Eigen::Vector4d lambda0 = W * (W.transpose() * W).ldlt().solve(load);
  const Eigen::Matrix<double, 3, 4> Wt = W.transpose();
  const Eigen::Vector4d n = Wt.fullPivLu().kernel().col(0).normalized();
  auto smallest = [&](double z) {
    const auto mg = cone_margins(lambda0 + z * n, mu_f, mu_w);
    return *std::min_element(mg.begin(), mg.end());
  };
  const auto a = cone_margins(lambda0, mu_f, mu_w);
  std::array<double, 6> b{};
  for (std::size_t i = 0; i < 6; ++i) b[i] = cone_margins(lambda0 + n, mu_f, mu_w)[i] - a[i];
  double z_best = 0;
  best_margin = smallest(0);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = i + 1; j < 6; ++j) {
      if (b[i] == b[j]) continue;
      const double z = (a[j] - a[i]) / (b[i] - b[j]);
      if (smallest(z) > best_margin) {
        best_margin = smallest(z);
        z_best = z;
      }
    }
  if (smallest(0) >= 1e-3 * lambda0.cwiseAbs().maxCoeff()) return lambda0;
  return lambda0 + z_best * n;
}

/// Checks a run of the ladder that must stay at rest at theta0: positions unchanged to 1e-12, no events, and at
/// every sample the forces in statics and inside the cones (the sticking bound mu_s, the static coefficient where
/// one is given).
void check_ladder_at_rest(const Ladder& L, const test::Run& r, double mu_f, double mu_w) {
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  CHECK(r.result.t_final == doctest::Approx(2.0).epsilon(1e-15));
  CHECK(r.rec.events.empty());
  const SignalLookup s(r.scenario);
  const double x0 = s.at(r, 0, "x"), y0 = s.at(r, 0, "y");
  CHECK(std::abs(x0 - L.l * std::cos(L.theta0)) <= 1e-15);
  CHECK(std::abs(y0 - L.l * std::sin(L.theta0)) <= 1e-15);
  const double W = L.m * L.g;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    INFO("t = " << r.rec.t[k]);
    CHECK(std::abs(s.at(r, k, "x") - x0) <= 1e-12);
    CHECK(std::abs(s.at(r, k, "y") - y0) <= 1e-12);
    CHECK(std::abs(s.at(r, k, "theta") - L.theta0) <= 1e-12);
    const Eigen::Vector4d f = ladder_forces(s, r, k);
    INFO("forces N_f, F_f, N_w, F_w = " << f.transpose());
    const Eigen::Vector3d res = L.statics_residual(L.theta0, f);
    CHECK(std::abs(res(0)) <= 1e-10 * W);  // force balance in x
    CHECK(std::abs(res(1)) <= 1e-10 * W);  // in y
    CHECK(std::abs(res(2)) <= 1e-10 * W * L.l);  // moment
    for (const double margin : cone_margins(f, mu_f, mu_w)) CHECK(margin >= -1e-12 * W);
  }
}

}  // namespace

TEST_CASE("indeterminate contacts: the ladder with friction at floor and wall stays at rest, its forces in statics, "
          "inside the cones and distributed by the stated rule") {
  // mu_f = mu_w = 0.3 above the critical sec(theta) - tan(theta) = 0.268 of equal coefficients at 60 degrees: four
  // contact rows (two normal, two sticking) on three freedoms, which the engine used to refuse as singular.
  const Ladder L;
  const double mu = 0.3;
  REQUIRE(L.rests(mu, mu));
  REQUIRE(mu > 1 / std::cos(L.theta0) - std::tan(L.theta0));
  const test::Run r = test::run_text(kLadder, L.overrides(mu, mu));
  check_ladder_at_rest(L, r, mu, mu);
  // The rule (force_distribution.hpp) picks one distribution of the many: here the least-norm one carries half the
  // weight on the wall's friction with N_w = 0 (on the cone's edge), so the rule takes the one of the largest
  // smallest margin, computed here on its own (positive: the ladder holds with every force inside its cone).
  double best = 0;
  const Eigen::Vector4d expected = ladder_rule(L, L.theta0, mu, mu, best);
  CHECK(best > 0.01 * L.m * L.g);
  const SignalLookup s(r.scenario);
  for (std::size_t k = 0; k < r.rec.t.size(); k += 50) {
    INFO("t = " << r.rec.t[k]);
    const Eigen::Vector4d f = ladder_forces(s, r, k);
    CHECK((f - expected).cwiseAbs().maxCoeff() <= 1e-9 * L.m * L.g);
    const auto mg = cone_margins(f, mu, mu);
    CHECK(*std::min_element(mg.begin(), mg.end()) == doctest::Approx(best).epsilon(1e-9));
  }
}

TEST_CASE("indeterminate contacts: the ladder against a frictionless wall rests with the determinate forces "
          "N_f = m g, N_w = |F_f| = m g cot(theta)/2") {
  // A frictionless wall makes the statics determinate: F_w = 0, so N_f = m g; F_f = -N_w; the moment about the
  // centre, -l cos N_f + 2 l sin N_w = 0. The floor alone must hold |F_f|/N_f = cot(theta)/2 = 0.2887: both
  // mu_f = 0.5 and mu_f = 0.3 do. The wall frictionless in two ways: mu_w = 0, and no friction keys at all.
  const Ladder L;
  const double N_f = L.m * L.g, N_w = L.m * L.g / std::tan(L.theta0) / 2;
  struct Case {
    double mu_f;
    bool keys;
  };
  for (const Case c : {Case{0.5, true}, Case{0.3, true}, Case{0.5, false}, Case{0.3, false}}) {
    INFO("mu_f = " << c.mu_f << (c.keys ? ", mu_w = 0" : ", the wall without friction keys"));
    REQUIRE(c.mu_f > N_w / N_f);
    const std::string text = c.keys ? kLadder : without_line(without_line(kLadder, kWallSlip), kWallFriction);
    std::vector<std::string> sets = L.overrides(c.mu_f, 0.0);
    const test::Run r = test::run_text(text, sets);
    check_ladder_at_rest(L, r, c.mu_f, 0.0);
    const SignalLookup s(r.scenario);
    for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
      INFO("t = " << r.rec.t[k]);
      CHECK(s.at(r, k, "normal_force_floor") == doctest::Approx(N_f).epsilon(1e-12));
      CHECK(s.at(r, k, "tangential_force_floor") == doctest::Approx(-N_w).epsilon(1e-12));
      CHECK(s.at(r, k, "normal_force_wall") == doctest::Approx(N_w).epsilon(1e-12));
      if (c.keys) CHECK(s.at(r, k, "tangential_force_wall") == 0.0);  // mu = 0: no friction force at all
    }
  }
}

TEST_CASE("indeterminate contacts: the ladder started one ulp off (or into) the wall or the floor stays at rest") {
  // A gap of one ulp either way is within the gap tolerance: the same rest, the same statics.
  const Ladder L;
  const double mu = 0.3, x0 = L.l * std::cos(L.theta0), y0 = L.l * std::sin(L.theta0);
  const double inf = std::numeric_limits<double>::infinity();
  for (const std::string& set : {"initial.x=" + number_text(std::nextafter(x0, inf)),
                                 "initial.x=" + number_text(std::nextafter(x0, -inf)),
                                 "initial.y=" + number_text(std::nextafter(y0, inf)),
                                 "initial.y=" + number_text(std::nextafter(y0, -inf))}) {
    INFO(set);
    std::vector<std::string> sets = L.overrides(mu, mu);
    sets.push_back(set);
    const test::Run r = test::run_text(kLadder, sets);
    REQUIRE_MESSAGE(r.result.completed(), r.result.message);
    CHECK(r.rec.events.empty());
    const SignalLookup s(r.scenario);
    const double xs = s.at(r, 0, "x"), ys = s.at(r, 0, "y");
    CHECK(std::abs(xs - x0) <= 2.3e-16);
    CHECK(std::abs(ys - y0) <= 2.3e-16);
    for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
      INFO("t = " << r.rec.t[k]);
      CHECK(std::abs(s.at(r, k, "x") - x0) <= 1e-12);
      CHECK(std::abs(s.at(r, k, "y") - y0) <= 1e-12);
      CHECK(std::abs(s.at(r, k, "theta") - L.theta0) <= 1e-12);
      const Eigen::Vector4d f = ladder_forces(s, r, k);
      CHECK(L.statics_residual(L.theta0, f).cwiseAbs().maxCoeff() <= 1e-10 * L.m * L.g);
      for (const double margin : cone_margins(f, mu, mu)) CHECK(margin >= -1e-12 * L.m * L.g);
    }
  }
}

namespace {

/// The ladder sliding on both surfaces (the foot away from the wall, s_f = +1; the top down, s_w = -1) with
/// kinetic friction F_f = -mu_f s_f N_f, F_w = -mu_w s_w N_w, by Newton-Euler:
///   m x'' = F_f + N_w,  m y'' = -m g + N_f + F_w,
///   I theta'' = -l cos N_f - l sin F_f + l sin N_w + l cos F_w,
///   both gaps held: y'' - l cos theta'' + l sin theta'^2 = 0, x'' + l sin theta'' + l cos theta'^2 = 0;
/// five linear equations in x'', y'', theta'', N_f, N_w at each stage of a classical RK4 of fixed step.
struct LadderSlide {
  Ladder L;
  double mu_f, mu_w, s_f = 1, s_w = -1;
  using State = std::array<double, 6>;  // x, y, theta, x', y', theta'
  /// The accelerations and the normal forces (x'', y'', theta'', N_f, N_w).
  Eigen::Matrix<double, 5, 1> solve(const State& q) const {
    const double c = std::cos(q[2]), s = std::sin(q[2]), w = q[5], l = L.l, m = L.m;
    Eigen::Matrix<double, 5, 5> A;
    Eigen::Matrix<double, 5, 1> b;
    A << m, 0, 0, mu_f * s_f, -1,                                                //
        0, m, 0, -1, mu_w * s_w,                                                 //
        0, 0, L.I(), l * c - mu_f * s_f * l * s, -l * s + mu_w * s_w * l * c,    //
        0, 1, -l * c, 0, 0,                                                      //
        1, 0, l * s, 0, 0;
    b << 0, -m * L.g, 0, -l * s * w * w, -l * c * w * w;
    return A.partialPivLu().solve(b);
  }
  State rate(const State& q) const {
    const auto a = solve(q);
    return {q[3], q[4], q[5], a(0), a(1), a(2)};
  }
  State step(const State& q, double h) const {
    auto add = [](const State& a, const State& b, double f) {
      State r;
      for (std::size_t i = 0; i < 6; ++i) r[i] = a[i] + f * b[i];
      return r;
    };
    const State k1 = rate(q), k2 = rate(add(q, k1, h / 2)), k3 = rate(add(q, k2, h / 2)), k4 = rate(add(q, k3, h));
    State r;
    for (std::size_t i = 0; i < 6; ++i) r[i] = q[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    return r;
  }
  /// From q at t to t + dt in steps no longer than h.
  State advance(State q, double dt, double h) const {
    const long n = std::max(1L, static_cast<long>(std::ceil(dt / h)));
    for (long i = 0; i < n; ++i) q = step(q, dt / static_cast<double>(n));
    return q;
  }
};

/// Compares a run of the ladder released at rest at theta0 and sliding on both surfaces against LadderSlide (RK4,
/// step 1e-4 s) until the wall's normal force of the reference falls to zero, where the top leaves the wall:
/// x, y, theta and the normal forces at every sample before it, and the time of the run's lift-off event against the
/// reference's zero of N_w (found by bisection on the RK4 step), or no lift-off where the reference has none before
/// the run's end.
void compare_ladder_slide(const test::Run& r, const LadderSlide& ref, double tol) {
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  const SignalLookup s(r.scenario);
  const Ladder& L = ref.L;
  const double h = 1e-4;
  LadderSlide::State q{L.l * std::cos(L.theta0), L.l * std::sin(L.theta0), L.theta0, 0, 0, 0};
  // The reference's lift-off: the first step over which N_w turns negative, then bisection on its length
  // (infinity where the top stays on the wall to the run's end).
  double t_lift = 0;
  {
    LadderSlide::State p = q;
    while (ref.solve(p)(4) > 0 && t_lift <= r.result.t_final) {
      const LadderSlide::State next = ref.step(p, h);
      if (ref.solve(next)(4) <= 0) {
        double lo = 0, hi = h;
        for (int i = 0; i < 60; ++i) {
          const double mid = 0.5 * (lo + hi);
          (ref.solve(ref.step(p, mid))(4) > 0 ? lo : hi) = mid;
        }
        t_lift += 0.5 * (lo + hi);
        break;
      }
      p = next;
      t_lift += h;
    }
    if (t_lift > r.result.t_final) t_lift = std::numeric_limits<double>::infinity();
  }
  const auto lifts = events_of(r, "lift_off");
  const double t_lift_run = lifts.empty() ? std::numeric_limits<double>::infinity() : lifts.front()->t;
  if (std::isfinite(t_lift)) {
    REQUIRE(!lifts.empty());
    CHECK(t_lift_run == doctest::Approx(t_lift).epsilon(tol));
    // The wall is the contact that leaves.
    CHECK(s.after(*lifts.front(), "x") - L.l * std::cos(s.after(*lifts.front(), "theta")) >= 0);
  } else {
    CHECK(lifts.empty());
  }
  // Nothing happens before the lift-off.
  for (const auto& e : r.rec.events)
    if (e.t < t_lift_run) CHECK_MESSAGE(false, "event " << e.kind << " at t = " << e.t << " before the lift-off");
  double t = 0;
  std::size_t compared = 0;
  for (std::size_t k = 0; k < r.rec.t.size() && r.rec.t[k] < std::min(t_lift, t_lift_run); ++k) {
    q = ref.advance(q, r.rec.t[k] - t, h);
    t = r.rec.t[k];
    INFO("t = " << t);
    const double ex = std::abs(s.at(r, k, "x") - q[0]), ey = std::abs(s.at(r, k, "y") - q[1]),
                 et = std::abs(s.at(r, k, "theta") - q[2]);
    CHECK(ex <= tol);
    CHECK(ey <= tol);
    CHECK(et <= tol);
    const auto a = ref.solve(q);
    const double W = L.m * L.g;
    CHECK(std::abs(s.at(r, k, "normal_force_floor") - a(3)) <= tol * W);
    CHECK(std::abs(s.at(r, k, "normal_force_wall") - a(4)) <= tol * W);
    if (t > 0) {
      // Sliding in the reference's directions, with Coulomb's kinetic friction at both ends.
      CHECK(s.at(r, k, "slip_velocity_floor") * ref.s_f > 0);
      CHECK(s.at(r, k, "slip_velocity_wall") * ref.s_w > 0);
      CHECK(std::abs(s.at(r, k, "tangential_force_floor") + ref.mu_f * ref.s_f * s.at(r, k, "normal_force_floor")) <=
            1e-9 * W);
      CHECK(std::abs(s.at(r, k, "tangential_force_wall") + ref.mu_w * ref.s_w * s.at(r, k, "normal_force_wall")) <=
            1e-9 * W);
    }
    ++compared;
  }
  CHECK(compared >= 20);
}

}  // namespace

TEST_CASE("indeterminate contacts: the ladder below the critical friction slides as Newton-Euler's equations with "
          "kinetic friction at both ends, until the top leaves the wall") {
  // mu_f = mu_w = 0.1: the rest needs 2 mu_f tan(theta) >= 1 - mu_f mu_w (0.35 < 0.99), the floor alone 0.2887.
  // Released at rest, both ends slide at once (the foot away from the wall, the top down).
  // Size: the release run takes the three pairs; a sanitizer tree (test::sanitized) the first and the frictionless
  // wall, the reference's integration in the test being most of the time there.
  const Ladder L;
  for (const auto& mus : {std::pair{0.1, 0.1}, std::pair{0.2, 0.05}, std::pair{0.1, 0.0}}) {
    const double mu_f = mus.first, mu_w = mus.second;  // not a structured binding: INFO's lambda takes them
    if (test::sanitized && mu_f == 0.2) continue;
    INFO("mu_f = " << mu_f << ", mu_w = " << mu_w);
    REQUIRE_FALSE(L.rests(mu_f, mu_w));
    std::vector<std::string> sets = L.overrides(mu_f, mu_w);
    sets.push_back("solver.rtol=1e-12");
    const test::Run r = test::run_text(kLadder, sets);
    compare_ladder_slide(r, LadderSlide{L, mu_f, mu_w}, 1e-8);
  }
}

TEST_CASE("indeterminate contacts: the ladder's rest ends at Coulomb's limit mu_c = sec(theta) - tan(theta): held "
          "just above it with the largest smallest margin, sliding just below it") {
  // With equal coefficients the ladder rests exactly where mu >= mu_c (2 mu tan(theta) >= 1 - mu^2): there the
  // stick mode's dependent rows admit a distribution inside every cone, its best smallest margin s* > 0, and
  // crosses zero at mu_c. 0.1 % either side of it.
  const Ladder L;
  const double mu_c = 1 / std::cos(L.theta0) - std::tan(L.theta0);
  {
    const double mu = mu_c * (1 + 1e-3);
    REQUIRE(L.rests(mu, mu));
    const test::Run r = test::run_text(kLadder, L.overrides(mu, mu));
    check_ladder_at_rest(L, r, mu, mu);
    double best = 0;
    const Eigen::Vector4d expected = ladder_rule(L, L.theta0, mu, mu, best);
    CHECK(best > 0);
    CHECK(best < 1e-3 * L.m * L.g);  // near the edge of the cones: the largest smallest margin is small
    const SignalLookup s(r.scenario);
    const Eigen::Vector4d f = ladder_forces(s, r, r.rec.t.size() - 1);
    CHECK((f - expected).cwiseAbs().maxCoeff() <= 1e-9 * L.m * L.g);
    const auto mg = cone_margins(f, mu, mu);
    CHECK(*std::min_element(mg.begin(), mg.end()) == doctest::Approx(best).epsilon(1e-6));
  }
  {
    const double mu = mu_c * (1 - 1e-3);
    REQUIRE_FALSE(L.rests(mu, mu));
    double best = 0;
    ladder_rule(L, L.theta0, mu, mu, best);
    CHECK(best < 0);  // no distribution inside the cones: the stick mode is refused
    std::vector<std::string> sets = L.overrides(mu, mu);
    sets.push_back("solver.rtol=1e-12");
    const test::Run r = test::run_text(kLadder, sets);
    compare_ladder_slide(r, LadderSlide{L, mu, mu}, 1e-8);
    const SignalLookup s(r.scenario);
    CHECK(s.at(r, r.rec.t.size() - 1, "theta") < L.theta0 - 1e-3);  // it has moved
  }
}

TEST_CASE("indeterminate contacts: a static coefficient holds the ladder that the kinetic one lets slide") {
  // mu_k = 0.1 at both ends (slides, above), mu_s = 0.3 above the critical 0.268: the ladder sticks, its forces
  // inside the static cones and distributed by the rule with mu_s. mu_s = 0.25 below it: it slides as with
  // mu_k alone.
  const Ladder L;
  const double mu_k = 0.1;
  auto with_static = [](double mu_s) {
    std::string text = kLadder;
    for (const std::string& key : {std::string("friction_coefficient = \"mu_f\""), std::string(kWallFriction)}) {
      const auto p = text.find(key + "\n");
      REQUIRE(p != std::string::npos);
      text.insert(p + key.size() + 1, "static_friction_coefficient = " + number_text(mu_s) + "\n");
    }
    return text;
  };
  {
    const double mu_s = 0.3;
    REQUIRE(L.rests(mu_s, mu_s));
    REQUIRE_FALSE(L.rests(mu_k, mu_k));
    const test::Run r = test::run_text(with_static(mu_s), L.overrides(mu_k, mu_k));
    check_ladder_at_rest(L, r, mu_s, mu_s);
    double best = 0;
    const Eigen::Vector4d expected = ladder_rule(L, L.theta0, mu_s, mu_s, best);
    const SignalLookup s(r.scenario);
    CHECK((ladder_forces(s, r, r.rec.t.size() - 1) - expected).cwiseAbs().maxCoeff() <= 1e-9 * L.m * L.g);
  }
  {
    const double mu_s = 0.25;
    REQUIRE_FALSE(L.rests(mu_s, mu_s));
    std::vector<std::string> sets = L.overrides(mu_k, mu_k);
    sets.push_back("solver.rtol=1e-12");
    const test::Run r = test::run_text(with_static(mu_s), sets);
    compare_ladder_slide(r, LadderSlide{L, mu_k, mu_k}, 1e-8);
  }
}

TEST_CASE("indeterminate contacts: mu = 0 is frictionless: the ladder's trajectory equals the model's without friction "
          "keys, and its top leaves the wall at 2/3 of its height") {
  // The frictionless ladder released at rest leaves the wall where sin(theta) = 2/3 sin(theta0) (energy and the
  // wall's force vanishing: the classic result).
  const Ladder L;
  std::vector<std::string> sets = L.overrides(0.0, 0.0);
  sets.push_back("solver.rtol=1e-12");
  const test::Run zero = test::run_text(kLadder, sets);
  std::string frictionless = kLadder;
  for (const char* line : {"slip_velocity = \"der(x) - l*sin(theta)*der(theta)\"", "friction_coefficient = \"mu_f\"",
                           kWallSlip, kWallFriction})
    frictionless = without_line(frictionless, line);
  const test::Run none = test::run_text(frictionless, sets);
  REQUIRE_MESSAGE(zero.result.completed(), zero.result.message);
  REQUIRE_MESSAGE(none.result.completed(), none.result.message);
  const SignalLookup sz(zero.scenario), sn(none.scenario);
  // mu = 0: closed contacts in the one mode "stick" (0), no slip events, no friction force, nothing dissipated.
  for (const char* kind : {"slip", "stick", "reversal"}) CHECK(events_of(zero, kind).empty());
  REQUIRE(zero.item("symbols_floor"));
  CHECK(zero.item("symbols_floor")->text == "0");
  CHECK(zero.item("symbols_wall")->text == "0o");
  CHECK(zero.item("symbols_wall")->text == none.item("symbols_wall")->text);
  REQUIRE(zero.rec.events.size() == none.rec.events.size());
  for (std::size_t i = 0; i < zero.rec.events.size(); ++i) {
    CHECK(zero.rec.events[i].kind == none.rec.events[i].kind);
    CHECK(zero.rec.events[i].t == doctest::Approx(none.rec.events[i].t).epsilon(1e-12));
  }
  REQUIRE(zero.rec.t.size() == none.rec.t.size());
  for (std::size_t k = 0; k < zero.rec.t.size(); ++k) {
    INFO("t = " << zero.rec.t[k]);
    CHECK(zero.rec.t[k] == doctest::Approx(none.rec.t[k]).epsilon(1e-12));
    for (const char* q : {"x", "y", "theta", "der_x", "der_y", "der_theta", "normal_force_floor", "normal_force_wall"})
      CHECK(std::abs(sz.at(zero, k, q) - sn.at(none, k, q)) <= 1e-12 * (1 + std::abs(sn.at(none, k, q))));
    CHECK(sz.at(zero, k, "tangential_force_floor") == 0.0);
    CHECK(sz.at(zero, k, "tangential_force_wall") == 0.0);
    CHECK(sz.at(zero, k, "dissipated_friction") == 0.0);
  }
  // The top leaves the wall at sin(theta) = 2/3 sin(theta0); that is also the frictionless Newton-Euler solution.
  const auto lifts = events_of(zero, "lift_off");
  REQUIRE(!lifts.empty());
  CHECK(std::sin(sz.after(*lifts.front(), "theta")) == doctest::Approx(2.0 / 3 * std::sin(L.theta0)).epsilon(1e-8));
  compare_ladder_slide(zero, LadderSlide{L, 0.0, 0.0}, 1e-8);
}

TEST_CASE("indeterminate contacts: the ladder runs at each of mu = 0, 0.1 and 0.5, resting exactly above the "
          "critical coefficient") {
  const Ladder L;
  for (const double mu : {0.0, 0.1, 0.5}) {
    INFO("mu = " << mu);
    const test::Run r = test::run_text(kLadder, L.overrides(mu, mu));
    REQUIRE_MESSAGE(r.result.completed(), r.result.message);
    CHECK(r.result.t_final == doctest::Approx(2.0).epsilon(1e-15));
    const bool rests = L.rests(mu, mu);
    CHECK(rests == (mu == 0.5));
    CHECK(events_of(r, "lift_off").empty() == rests);
    const SignalLookup s(r.scenario);
    CHECK((std::abs(s.at(r, r.rec.t.size() - 1, "theta") - L.theta0) <= 1e-12) == rests);
    if (rests) check_ladder_at_rest(L, r, mu, mu);
  }
}

// ---- the rod landing flat -----------------------------------------------------------------------------------------

namespace {

/// scenarios/flat_rod.toml's closed form (its header derives it).
struct FlatRod {
  double m = 1.0, l = 0.5, g = 9.81, mu = 1.0, e = 0.5, h = 1.0, u = 10.0;
  double t0() const { return std::sqrt(2 * h / g); }
  double v(int n) const { return std::sqrt(2 * g * h) * std::pow(e, n - 1); }  ///< approach speed of landing n
  /// der(x) after landing n.
  double u_after(int n) const {
    double un = u;
    for (int i = 1; i <= n; ++i) un = std::max(0.0, un - mu * (1 + e) * v(i));
    return un;
  }
  double t_impact(int n) const { return t0() * (1 + 2 * e * (1 - std::pow(e, n - 1)) / (1 - e)); }
  double t_inf() const { return t0() * (1 + e) / (1 - e); }
  std::vector<std::string> overrides() const {
    return {"parameters.m=" + number_text(m), "parameters.l=" + number_text(l), "parameters.g=" + number_text(g),
            "parameters.mu=" + number_text(mu), "parameters.e=" + number_text(e), "initial.y=" + number_text(h),
            "initial_rates.x=" + number_text(u)};
  }
};

/// Checks the landing impacts of a flat rod against the closed form: Newton's law vertically (both ends),
/// the normal impulse m (1 + e) v_n split equally, no spin, Coulomb's law for the total tangential impulse (and each
/// end's inside its cone). Landings while the bounce is taller than 1e-6 m.
void check_landings(const FlatRod& rod, const test::Run& r, std::size_t checked_at_least) {
  const SignalLookup s(r.scenario);
  std::vector<const EventRecord*> landings = events_of(r, "impact");
  const auto caps = events_of(r, "capture");
  landings.insert(landings.end(), caps.begin(), caps.end());
  std::sort(landings.begin(), landings.end(), [](auto* a, auto* b) { return a->t < b->t; });
  std::size_t checked = 0;
  for (std::size_t i = 0; i < landings.size(); ++i) {
    const int n = static_cast<int>(i) + 1;
    if (std::pow(rod.e, 2 * n) * rod.h <= 1e-6 && rod.e > 0) break;
    const EventRecord& ev = *landings[i];
    INFO("landing " << n << " (" << ev.kind << ") at t = " << ev.t);
    const double vn = rod.v(n), Pn = rod.m * (1 + rod.e) * vn;
    CHECK(ev.t == doctest::Approx(rod.t_impact(n)).epsilon(1e-9));
    CHECK(s.after(ev, "der_y") == doctest::Approx(rod.e * vn).epsilon(1e-8));
    CHECK(std::abs(s.after(ev, "der_theta")) <= 1e-9 * vn / rod.l);
    CHECK(std::abs(s.after(ev, "theta")) <= 1e-12);
    const double PL = extra(ev, "impulse_normal_left"), PR = extra(ev, "impulse_normal_right");
    CHECK(PL + PR == doctest::Approx(Pn).epsilon(1e-8));
    CHECK(PL == doctest::Approx(Pn / 2).epsilon(1e-8));
    CHECK(PR == doctest::Approx(Pn / 2).epsilon(1e-8));
    const double TL = extra(ev, "impulse_tangential_left"), TR = extra(ev, "impulse_tangential_right");
    const double u_before = rod.u_after(n - 1), u_after = rod.u_after(n);
    CHECK(s.after(ev, "der_x") == doctest::Approx(u_after).epsilon(1e-8).scale(rod.u));
    CHECK(TL + TR == doctest::Approx(rod.m * (u_after - u_before)).epsilon(1e-8).scale(rod.m * rod.u));
    CHECK(std::abs(TL) <= rod.mu * PL * (1 + 1e-12) + 1e-12);
    CHECK(std::abs(TR) <= rod.mu * PR * (1 + 1e-12) + 1e-12);
    ++checked;
  }
  CHECK(checked >= checked_at_least);
}

}  // namespace

TEST_CASE("indeterminate contacts: a rod landing flat plastically (e = 0) takes Newton's and Coulomb's impulses, "
          "slides with mu g and sticks at the closed-form time, with mu = 0 it keeps its speed") {
  // e = 0: the landing at t0 takes the vertical speed v1 (P_N = m v1), and der(x) becomes u - mu v1 (sliding) or 0.
  // Then both ends slide with N = m g/2 each and the rod decelerates at mu g until it sticks at
  // t0 + (u - mu v1)/(mu g), at x(t0) + (u - mu v1)^2/(2 mu g).
  for (const double u : {10.0, 3.0}) {
    for (const double mu : {1.0, 0.0}) {
      FlatRod rod;
      rod.e = 0;
      rod.u = u;
      rod.mu = mu;
      INFO("u = " << u << ", mu = " << mu);
      const test::Run r = test::run_text(scenario_text("flat_rod.toml"), rod.overrides());
      REQUIRE_MESSAGE(r.result.completed(), r.result.message);
      const SignalLookup s(r.scenario);
      const auto landings = events_of(r, "impact"), caps = events_of(r, "capture");
      REQUIRE(landings.size() + caps.size() == 1);
      check_landings(rod, r, 1);
      const double t0 = rod.t0(), u1 = rod.u_after(1), x1 = u * t0;
      if (mu == 0) CHECK(u1 == u);
      const double W = rod.m * rod.g;
      const auto sticks = events_of(r, "stick");
      if (mu > 0 && u1 > 0) {
        REQUIRE(sticks.size() == 1);
        CHECK(sticks.front()->t == doctest::Approx(t0 + u1 / (mu * rod.g)).epsilon(1e-9));
        CHECK(s.after(*sticks.front(), "x") == doctest::Approx(x1 + u1 * u1 / (2 * mu * rod.g)).epsilon(1e-9));
      } else {
        CHECK(sticks.empty());
      }
      CHECK(events_of(r, "slip").empty());
      CHECK(events_of(r, "lift_off").empty());
      const double t_stop = mu > 0 ? t0 + u1 / (mu * rod.g) : std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
        const double t = r.rec.t[k];
        if (t <= t0 + 1e-9) continue;
        INFO("t = " << t);
        const double tau = std::min(t, t_stop) - t0;
        const double x = x1 + u1 * tau - (mu > 0 ? 0.5 * mu * rod.g * tau * tau : 0.0);
        CHECK(s.at(r, k, "x") == doctest::Approx(x).epsilon(1e-9));
        CHECK(std::abs(s.at(r, k, "y")) <= 1e-12);
        CHECK(std::abs(s.at(r, k, "theta")) <= 1e-12);
        CHECK(s.at(r, k, "normal_force_left") == doctest::Approx(W / 2).epsilon(1e-9));
        CHECK(s.at(r, k, "normal_force_right") == doctest::Approx(W / 2).epsilon(1e-9));
        const double F = s.at(r, k, "tangential_force_left") + s.at(r, k, "tangential_force_right");
        if (t < t_stop - 1e-6) CHECK(F == doctest::Approx(-mu * W).epsilon(1e-9));  // kinetic friction, sliding +
        if (t > t_stop + 1e-6) CHECK(std::abs(F) <= 1e-9 * W);  // at rest: nothing pulls
      }
    }
  }
}

TEST_CASE("indeterminate contacts: a rod landing flat with restitution bounces by Newton's and Coulomb's laws "
          "(sliding, then sticking impulses) and is captured at rest") {
  // scenarios/flat_rod.toml: der(x) = 10 -> 3.36 -> 0.04 -> 0 over the first three landings; the bounces
  // accumulate at t_inf = 1.35 s (the default capture ends them); then at rest, each end carrying m g/2. At
  // three tolerances; and with mu = 0 der(x) stays u through every impact.
  for (const double mu : {1.0, 0.0}) {
    for (const double rtol : {1e-8, 1e-10, 1e-12}) {
      FlatRod rod;
      rod.mu = mu;
      INFO("mu = " << mu << ", rtol = " << rtol);
      std::vector<std::string> sets = rod.overrides();
      sets.push_back("solver.rtol=" + number_text(rtol));
      const test::Run r = test::run_text(scenario_text("flat_rod.toml"), sets);
      REQUIRE_MESSAGE(r.result.completed(), r.result.message);
      const SignalLookup s(r.scenario);
      const auto caps = events_of(r, "capture");
      REQUIRE(caps.size() == 1);
      CHECK(caps.front()->t <= rod.t_inf() * (1 + 1e-6));
      for (const auto* ev : events_of(r, "impact")) CHECK(ev->t < caps.front()->t);
      check_landings(rod, r, 5);
      if (mu > 0) CHECK(rod.u_after(3) == 0.0);
      for (const auto* ev : events_of(r, "impact"))
        if (mu == 0) CHECK(s.after(*ev, "der_x") == doctest::Approx(rod.u).epsilon(1e-12));
      const double W = rod.m * rod.g;
      std::size_t resting = 0;
      for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
        if (r.rec.t[k] <= caps.front()->t + 1e-9) continue;
        INFO("t = " << r.rec.t[k]);
        ++resting;
        CHECK(std::abs(s.at(r, k, "y")) <= 1e-12);
        CHECK(std::abs(s.at(r, k, "der_y")) <= 1e-12);
        CHECK(std::abs(s.at(r, k, "der_theta")) <= 1e-12);
        CHECK(s.at(r, k, "der_x") == doctest::Approx(mu > 0 ? 0.0 : rod.u).epsilon(1e-12));
        CHECK(s.at(r, k, "normal_force_left") == doctest::Approx(W / 2).epsilon(1e-9));
        CHECK(s.at(r, k, "normal_force_right") == doctest::Approx(W / 2).epsilon(1e-9));
      }
      CHECK(resting >= 100);
    }
  }
}

TEST_CASE("indeterminate contacts: mu = 0 is frictionless through impacts: the flat rod's bounces equal those of the "
          "rod without friction keys") {
  FlatRod rod;
  rod.mu = 0;
  const std::string text = scenario_text("flat_rod.toml");
  std::string frictionless = text;
  for (const char* line : {"slip_velocity = \"der(x) + l*sin(theta)*der(theta)\"",
                           "slip_velocity = \"der(x) - l*sin(theta)*der(theta)\"", "friction_coefficient = \"mu\"",
                           "friction_coefficient = \"mu\""})
    frictionless = without_line(frictionless, line);
  const test::Run zero = test::run_text(text, rod.overrides());
  const test::Run none = test::run_text(frictionless, rod.overrides());
  REQUIRE_MESSAGE(zero.result.completed(), zero.result.message);
  REQUIRE_MESSAGE(none.result.completed(), none.result.message);
  const SignalLookup sz(zero.scenario), sn(none.scenario);
  REQUIRE(zero.rec.events.size() == none.rec.events.size());
  CHECK(events_of(zero, "impact").size() >= 5);
  for (std::size_t i = 0; i < zero.rec.events.size(); ++i) {
    INFO("event " << i << ": " << zero.rec.events[i].kind << " at t = " << zero.rec.events[i].t);
    CHECK(zero.rec.events[i].kind == none.rec.events[i].kind);
    CHECK(zero.rec.events[i].t == doctest::Approx(none.rec.events[i].t).epsilon(1e-12));
    for (const char* q : {"x", "y", "theta", "der_x", "der_y", "der_theta"})
      CHECK(std::abs(sz.after(zero.rec.events[i], q) - sn.after(none.rec.events[i], q)) <=
            1e-12 * (1 + std::abs(sn.after(none.rec.events[i], q))));
    if (zero.rec.events[i].kind == "impact") {
      CHECK(extra(zero.rec.events[i], "impulse_tangential_left") == 0.0);
      CHECK(extra(zero.rec.events[i], "impulse_tangential_right") == 0.0);
    }
  }
  REQUIRE(zero.rec.t.size() == none.rec.t.size());
  for (std::size_t k = 0; k < zero.rec.t.size(); ++k) {
    INFO("t = " << zero.rec.t[k]);
    for (const char* q : {"x", "y", "theta", "der_x", "der_y", "der_theta", "normal_force_left", "normal_force_right"})
      CHECK(std::abs(sz.at(zero, k, q) - sn.at(none, k, q)) <= 1e-12 * (1 + std::abs(sn.at(none, k, q))));
    CHECK(sz.at(zero, k, "der_x") == doctest::Approx(rod.u).epsilon(1e-12));
  }
}

TEST_CASE("indeterminate contacts: a bouncing ball without nonsmooth.capture_velocity is captured by default into "
          "persistent contact before t_inf") {
  // scenarios/bouncing_ball.toml without its capture velocity: the impacts at t_n (closed form) while the bounce
  // is tall, one capture no later than the accumulation time t_inf = t0 (1 + e)/(1 - e), then rest with N = m g.
  const std::string text = without_line(without_line(scenario_text("bouncing_ball.toml"), "[nonsmooth]"),
                                        "capture_velocity = 1e-6");
  const double m = 1.3, g = 9.81, e = 0.8, h = 1.0;
  const double t0 = std::sqrt(2 * h / g), t_inf = t0 * (1 + e) / (1 - e);
  auto t_impact = [&](int n) { return t0 * (1 + 2 * e * (1 - std::pow(e, n - 1)) / (1 - e)); };
  for (const double rtol : {1e-8, 1e-10, 1e-12}) {
    INFO("rtol = " << rtol);
    const test::Run r = test::run_text(
        text, {"parameters.m=" + number_text(m), "parameters.g=" + number_text(g), "parameters.e=" + number_text(e),
               "initial.y=" + number_text(h), "solver.rtol=" + number_text(rtol), "solver.atol=1e-12"});
    REQUIRE_MESSAGE(r.result.completed(), r.result.message);
    const SignalLookup s(r.scenario);
    const auto impacts = events_of(r, "impact"), caps = events_of(r, "capture");
    REQUIRE(caps.size() == 1);
    REQUIRE(impacts.size() >= 20);
    for (std::size_t i = 0; i < impacts.size(); ++i) {
      const int n = static_cast<int>(i) + 1;
      if (std::pow(e, 2 * n) * h > 1e-4) CHECK(impacts[i]->t == doctest::Approx(t_impact(n)).epsilon(1e-7));
      CHECK(impacts[i]->t < caps.front()->t);
    }
    CHECK(caps.front()->t <= t_inf * (1 + 1e-6));
    CHECK(caps.front()->t > t_impact(static_cast<int>(impacts.size())) * (1 - 1e-6));
    std::size_t resting = 0;
    for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
      if (r.rec.t[k] <= caps.front()->t + 1e-9) continue;
      ++resting;
      CHECK(std::abs(s.at(r, k, "y")) <= 1e-12);
      CHECK(std::abs(s.at(r, k, "der_y")) <= 1e-12);
      CHECK(s.at(r, k, "normal_force_floor") == doctest::Approx(m * g).epsilon(1e-9));
    }
    CHECK(resting >= 1000);
  }
}

// ---- bad input ------------------------------------------------------------------------------------------------------

TEST_CASE("indeterminate contacts: a negative friction coefficient at the start is bad input (exit 2, "
          "file:line:column, the value and the allowed range)") {
  test::TempDir dir;
  // In the file (a number, and an expression of a parameter), on the command line, and an expression of a
  // coordinate that is negative at the initial state.
  struct Case {
    std::string text, sets, expect;
  };
  const std::string wall = "friction_coefficient = \"mu_w\"";
  auto replaced = [&](const std::string& by) {
    std::string t = kLadder;
    const auto p = t.find(wall);
    REQUIRE(p != std::string::npos);
    return t.replace(p, wall.size(), by);
  };
  // The line and column of the wall's friction coefficient's value in the ladder's text.
  const std::string text = kLadder;
  const auto pos = text.find(wall);
  const long line = std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n') + 1;
  const std::string at = ":" + std::to_string(line) + ":" + std::to_string(wall.find('"') + 1) + ":";
  for (const Case& c : {Case{replaced("friction_coefficient = -0.2"), "", "is -0.2"},
                        Case{kLadder, " --set parameters.mu_w=-0.1", "is -0.1"},
                        Case{replaced("friction_coefficient = \"0.1 - x\""), "", "at the initial state"}}) {
    INFO(c.expect << c.sets);
    const std::string file = dir.file("ladder.toml", c.text);
    std::string out;
    const int code =
        test::run_binary("run " + file + " -o " + (dir.path / "ladder.h5").string() + c.sets, out);
    CHECK(code == 2);
    CHECK_MESSAGE(out.find("ladder.toml" + at) != std::string::npos, out);
    CHECK_MESSAGE(out.find("contacts.wall.friction_coefficient") != std::string::npos, out);
    CHECK_MESSAGE(out.find(c.expect) != std::string::npos, out);
    CHECK_MESSAGE(out.find("allowed range [0, inf)") != std::string::npos, out);
    CHECK_FALSE(std::filesystem::exists(dir.path / "ladder.h5"));
  }
}

// ---- the plank on three feet ----------------------------------------------------------------------------------

TEST_CASE("indeterminate contacts: a plank on three feet pushed sideways below mu m g stays at rest, the feet's "
          "friction balancing the push") {
  // The plank of tests/test_contacts.cpp (unit mass, inertia 1/12, g = 9.81) on feet at -0.4, 0 and 0.4, mu = 0.5,
  // pushed by P = 0.8 mu m g (the potential -P x). Six rows (three normal, three sticking) on three freedoms.
  // Statics: sum N = m g, sum arm N = 0, sum F = -P, each |F| <= mu N. The least-norm distribution (the rule's
  // choice while it lies inside the cones with a margin) is N = m g/3 and F = -P/3 at each foot.
  const double m = 1, g = 9.81, mu = 0.5, P = 0.8 * mu * m * g;
  const std::array<double, 3> arms{-0.4, 0.0, 0.4};
  std::string text = "model = \"lagrangian\"\n[coordinates]\nx = \"m\"\ny = \"m\"\na = \"rad\"\n[lagrangian]\n"
                     "kinetic = \"1/2*" + number_text(m) + "*(der(x)^2 + der(y)^2) + 1/24*" + number_text(m) +
                     "*der(a)^2\"\npotential = \"" + number_text(m * g) + "*y - " + number_text(P) + "*x\"\n";
  for (std::size_t k = 0; k < arms.size(); ++k) {
    const std::string arm = number_text(arms[k]);
    text += "[contacts.foot" + std::to_string(k) + "]\ngap = \"y + " + arm + "*sin(a)\"\nslip_velocity = \"der(x) - " +
            arm + "*sin(a)*der(a)\"\nfriction_coefficient = \"" + number_text(mu) + "\"\n";
  }
  text += "[simulation]\nt_end = 1\noutput_dt = 0.01\n";
  const test::Run r = test::run_text(text);
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  CHECK(r.rec.events.empty());
  const SignalLookup s(r.scenario);
  const double W = m * g;
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) {
    INFO("t = " << r.rec.t[i]);
    for (const char* q : {"x", "y", "a"}) CHECK(std::abs(s.at(r, i, q)) <= 1e-12);
    double force = 0, moment = 0, friction = 0;
    for (std::size_t k = 0; k < arms.size(); ++k) {
      const std::string foot = "foot" + std::to_string(k);
      const double N = s.at(r, i, "normal_force_" + foot), F = s.at(r, i, "tangential_force_" + foot);
      CHECK(N >= -1e-12 * W);
      CHECK(std::abs(F) <= mu * N + 1e-12 * W);
      force += N;
      moment += arms[k] * N;
      friction += F;
      CHECK(N == doctest::Approx(W / 3).epsilon(1e-9));
      CHECK(F == doctest::Approx(-P / 3).epsilon(1e-9));
    }
    CHECK(force == doctest::Approx(W).epsilon(1e-12));
    CHECK(std::abs(moment) <= 1e-12 * W);
    CHECK(friction == doctest::Approx(-P).epsilon(1e-12));
  }
}

}  // namespace rollsim
