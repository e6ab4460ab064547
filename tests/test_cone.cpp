// The Coulomb cone at a 3-D point contact (hybrid/cone.hpp) against independent answers: the sliding sphere's
// slip law and stick time in closed form, the isotropic consistent direction in closed form, the anisotropic one
// from its secular equation and from a dense scan, rotation covariance, the frictionless limit, a non-positive
// definite W with its directions found by hand, and the polar slip variables against finite differences.
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <Eigen/LU>
#include <doctest/doctest.h>

#include "rollsim/core/crossing.hpp"
#include "rollsim/hybrid/cone.hpp"

namespace rollsim {

namespace {

using cone::ConeData;
using cone::Mat2;
using cone::Vec2;

constexpr double kPi = std::numbers::pi;

Vec2 unit(double angle) { return {std::cos(angle), std::sin(angle)}; }

Mat2 rotation(double angle) {
  Mat2 r;
  r << std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle);
  return r;
}

/// The angle difference folded into (-pi, pi].
double angle_gap(double a, double b) { return std::remainder(a - b, 2 * kPi); }

/// Every angle where cross(d, a(d)) changes sign, with kappa > 0, from a dense scan written out here
/// (n samples offset from the round angles, no refinement): the brute-force reference for the module's root search.
std::vector<double> scan_directions(const ConeData& c, int n) {
  std::vector<double> out;
  const auto g = [&](double t) {
    const Vec2 d = unit(t), a = c.a_free - c.mu * c.normal_force * c.W * d;
    return d.x() * a.y() - d.y() * a.x();
  };
  for (int k = 0; k < n; ++k) {
    const double t0 = 2 * kPi * (k + 0.377) / n, t1 = 2 * kPi * (k + 1.377) / n;
    if ((g(t0) > 0) != (g(t1) > 0)) {
      const double t = 0.5 * (t0 + t1);
      const Vec2 d = unit(t);
      if (d.dot(c.a_free - c.mu * c.normal_force * c.W * d) > 0) out.push_back(t);
    }
  }
  return out;
}

/// For W = diag(w1, w2) the consistent direction solves a_i = (kappa + w_i mu N) d_i with |d| = 1:
/// sum_i a_i^2 / (kappa + w_i mu N)^2 = 1, decreasing in kappa > 0 when w_i > 0; bisection on kappa.
double secular_kappa(const Vec2& a, double w1, double w2, double muN) {
  const auto f = [&](double k) {
    return a.x() * a.x() / std::pow(k + w1 * muN, 2) + a.y() * a.y() / std::pow(k + w2 * muN, 2) - 1;
  };
  double lo = 0, hi = a.norm() + 1;
  REQUIRE(f(lo) > 0);
  REQUIRE(f(hi) < 0);
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

TEST_CASE("cone: a sliding sphere's slip decelerates at (7/2) mu g along a fixed direction and sticks at 2|u0|/(7 mu g)") {
  // A solid sphere on a level plane: the contact point's slip responds to a tangential force F by
  // a = F/m + r^2/I F (translation plus the rotation about the centre), I = 2/5 m r^2; a_free = 0, N = m g.
  const double m = 1.7, r = 0.23, g = 9.81, mu = 0.35, inertia = 0.4 * m * r * r;
  ConeData c;
  c.W = (1 / m + r * r / inertia) * Mat2::Identity();
  c.mu = mu;
  c.normal_force = m * g;
  const double decel = 3.5 * mu * g;  // the closed form
  for (double angle : {0.0, 0.7, 2.0, 3.3, 5.9}) {
    const Vec2 d = unit(angle);
    CHECK((cone::slip_acceleration(c, d) + decel * d).norm() <= 1e-13 * decel);
    const Vec2 u0 = 1.9 * d;
    CHECK((cone::sliding_force(c, u0) + mu * m * g * d).norm() <= 1e-13 * mu * m * g);
    const cone::PolarRates rates = cone::sliding_rates(c, cone::to_polar(u0));
    CHECK(rates.s_dot == doctest::Approx(-decel).epsilon(1e-13));
    CHECK(std::abs(rates.phi_dot) <= 1e-13 * decel);
    CHECK(rates.direction_defined);
  }
  // The stick: integrate the polar slip (s, phi) with RK4 in steps of 1 ms, the field of the current direction
  // continued through s = 0, and locate the sign change of s inside the step that holds it.
  const Vec2 u0(1.2, -0.5);
  const double t_star = 2 * u0.norm() / (7 * mu * g);
  const auto advance = [&](cone::Polar p, double h) {
    const auto f = [&](const cone::Polar& q) {
      const cone::PolarRates k = cone::sliding_rates(c, q);
      return std::pair{k.s_dot, k.phi_dot};
    };
    const auto add = [](cone::Polar q, std::pair<double, double> k, double dt) {
      return cone::Polar{q.s + dt * k.first, q.phi + dt * k.second};
    };
    const auto k1 = f(p), k2 = f(add(p, k1, h / 2)), k3 = f(add(p, k2, h / 2)), k4 = f(add(p, k3, h));
    return cone::Polar{p.s + h / 6 * (k1.first + 2 * k2.first + 2 * k3.first + k4.first),
                       p.phi + h / 6 * (k1.second + 2 * k2.second + 2 * k3.second + k4.second)};
  };
  cone::Polar p = cone::to_polar(u0);
  const double phi0 = p.phi, h = 1e-3;
  double t = 0;
  while (advance(p, h).s > 0) {
    p = advance(p, h);
    t += h;
  }
  const cone::Polar start = p;
  const double t_event = locate_crossing(t, t + h, -start.s, -advance(start, h).s,
                                         [&](double tt) { return -advance(start, tt - t).s; });
  CHECK(t_event == doctest::Approx(t_star).epsilon(1e-12));
  CHECK(std::abs(p.phi - phi0) <= 1e-15);
  // At rest on a level plane nothing drives the slip: sticking holds with zero force.
  const cone::RestDecision rest = cone::decide_at_rest(c);
  CHECK(rest.outcome == cone::RestOutcome::stick);
  CHECK(rest.stick.demand == 0);
}

TEST_CASE("cone: an isotropic W slips along a_free with kappa = |a_free| - w mu N, and sticks where |a_free| <= w mu N") {
  for (double w : {0.5, 2.0, 7.0})
    for (double muN : {0.0, 0.3, 1.1})
      for (double angle : {0.0, 1.0, kPi / 2, 2.9, kPi, 4.4, 6.0})
        for (double size : {0.2, 1.0, 5.0}) {
          ConeData c;
          c.W = w * Mat2::Identity();
          c.mu = 0.5;
          c.normal_force = muN / c.mu;
          c.a_free = size * unit(angle);
          const double kappa = size - w * muN;
          const std::vector<cone::SlipDirection> dirs = cone::consistent_directions(c);
          const cone::RestDecision rest = cone::decide_at_rest(c);
          if (kappa > 0) {
            REQUIRE(dirs.size() == 1);
            CHECK((dirs[0].d - c.a_free / size).norm() <= 1e-14);
            CHECK(std::abs(angle_gap(dirs[0].angle, angle)) <= 1e-14);
            CHECK(dirs[0].angle >= 0);
            CHECK(dirs[0].angle < 2 * kPi);
            CHECK(dirs[0].kappa == doctest::Approx(kappa).epsilon(1e-13));
            CHECK(dirs[0].residual <= 1e-14 * (size + w * muN));
            CHECK(rest.outcome == cone::RestOutcome::slip);
            CHECK(rest.unique);
            CHECK(rest.chosen.angle == dirs[0].angle);
          } else {
            CHECK(dirs.empty());
            CHECK(rest.outcome == cone::RestOutcome::stick);
            CHECK((rest.stick.force + c.a_free / w).norm() <= 1e-15 * size);
          }
        }
}

TEST_CASE("cone: an anisotropic W = diag(w1, w2) gives the direction of its secular equation and of a dense scan") {
  const double w1 = 1.0, w2 = 4.0, muN = 0.8;
  for (double angle : {0.0, 0.3, 1.0, kPi / 2, 2.5, 4.0, 5.5})
    for (double size : {4.0, 10.0}) {
      ConeData c;
      c.W = Vec2(w1, w2).asDiagonal();
      c.mu = 0.4;
      c.normal_force = muN / c.mu;
      c.a_free = size * unit(angle);
      REQUIRE_FALSE(cone::sticking_force(c).feasible);  // |W^-1 a| >= size / w2 >= 1 > mu N
      const std::vector<cone::SlipDirection> dirs = cone::consistent_directions(c);
      REQUIRE(dirs.size() == 1);  // W positive definite: one direction (the convex problem's unique minimiser)
      const cone::SlipDirection& s = dirs[0];
      const double scale = size + w2 * muN;
      CHECK(std::abs(s.d.norm() - 1) <= 1e-15);
      CHECK(std::abs(c.a_free.x() - (s.kappa + w1 * muN) * s.d.x()) <= 1e-12 * scale);
      CHECK(std::abs(c.a_free.y() - (s.kappa + w2 * muN) * s.d.y()) <= 1e-12 * scale);
      const double kappa = secular_kappa(c.a_free, w1, w2, muN);
      CHECK(s.kappa == doctest::Approx(kappa).epsilon(1e-12));
      const Vec2 d(c.a_free.x() / (kappa + w1 * muN), c.a_free.y() / (kappa + w2 * muN));
      CHECK((s.d - d).norm() <= 1e-12);
      const std::vector<double> scan = scan_directions(c, 100000);
      REQUIRE(scan.size() == 1);
      CHECK(std::abs(angle_gap(s.angle, scan[0])) <= 2 * kPi / 100000);
    }
}

TEST_CASE("cone: random invertible W: every root the dense scan finds, and at least one where sticking fails") {
  // A fixed linear congruential sequence of matrices, positive definite or not, and free accelerations.
  unsigned long state = 12345;
  const auto next = [&]() {
    state = (state * 6364136223846793005ul + 1442695040888963407ul);
    return static_cast<double>(state >> 11) / 9007199254740992.0 * 6 - 3;  // in [-3, 3)
  };
  int infeasible = 0;
  for (int trial = 0; trial < 60; ++trial) {
    ConeData c;
    c.W << next(), next(), next(), next();
    c.a_free << next(), next();
    c.mu = 0.5;
    c.normal_force = 2;
    if (std::abs(c.W.determinant()) < 0.1) continue;
    const cone::RestDecision rest = cone::decide_at_rest(c);
    const double demand = (c.W.inverse() * c.a_free).norm();
    if (std::abs(demand - c.limit()) < 1e-3) continue;  // too close to the boundary for the scan
    CHECK(rest.stick.feasible == (demand <= c.limit()));
    const std::vector<cone::SlipDirection> dirs = cone::consistent_directions(c);
    const std::vector<double> scan = scan_directions(c, 200000);
    CHECK(dirs.size() == scan.size());
    for (double t : scan) {
      bool found = false;
      for (const cone::SlipDirection& s : dirs) found = found || std::abs(angle_gap(s.angle, t)) <= 2 * kPi / 200000;
      CHECK(found);
    }
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      const Vec2 a = c.a_free - c.limit() * c.W * dirs[i].d;
      CHECK(std::abs(dirs[i].d.x() * a.y() - dirs[i].d.y() * a.x()) <= 1e-13 * (a.norm() + 1));
      if (i > 0) CHECK(dirs[i - 1].kappa >= dirs[i].kappa);
    }
    if (!rest.stick.feasible) {
      ++infeasible;
      CHECK(rest.outcome == cone::RestOutcome::slip);
      CHECK_FALSE(dirs.empty());  // the degree argument of the header
    }
  }
  CHECK(infeasible >= 10);
}

TEST_CASE("cone: a rotated W = R diag R^T gives the rotated directions of the diagonal case") {
  const Vec2 a0(3.0, -2.0);
  ConeData base;
  base.W = Vec2(0.7, 3.0).asDiagonal();
  base.mu = 0.6;
  base.normal_force = 1.5;
  const std::vector<cone::SlipDirection> d0 = cone::consistent_directions(ConeData{a0, base.W, base.mu, base.normal_force});
  REQUIRE(d0.size() == 1);
  for (double theta : {0.4, 1.9, 3.0, -2.2}) {
    const Mat2 r = rotation(theta);
    ConeData c = base;
    c.W = r * base.W * r.transpose();
    c.a_free = r * a0;
    const std::vector<cone::SlipDirection> d1 = cone::consistent_directions(c);
    REQUIRE(d1.size() == 1);
    CHECK((d1[0].d - r * d0[0].d).norm() <= 1e-13);
    CHECK(d1[0].kappa == doctest::Approx(d0[0].kappa).epsilon(1e-13));
  }
}

TEST_CASE("cone: W not positive definite: several consistent directions, ordered by kappa, the largest chosen") {
  // W = diag(1, -1), mu N = 1, a_free = (a, 0). By hand, a(d) = kappa d reads a = (kappa + 1) d_x,
  // 0 = (kappa - 1) d_y. On the axis (d_y = 0): d = (1, 0), kappa = a - 1; d = (-1, 0), kappa = -a - 1.
  // Off it: kappa = 1, d_x = a/2 (a pair for |a| < 2). Sticking needs the force (-a, 0): |a| <= 1.
  ConeData c;
  c.W = Vec2(1.0, -1.0).asDiagonal();
  c.mu = 1;
  c.normal_force = 1;
  c.a_free = Vec2(1.5, 0);
  const double off = std::acos(0.75);
  const cone::RestDecision rest = cone::decide_at_rest(c);
  CHECK(rest.stick.demand == doctest::Approx(1.5).epsilon(1e-15));
  REQUIRE(rest.outcome == cone::RestOutcome::slip);
  CHECK_FALSE(rest.unique);
  REQUIRE(rest.directions.size() == 3);  // kappa 1, 1 (ties by angle), then 0.5
  CHECK(rest.directions[0].angle == doctest::Approx(off).epsilon(1e-14));
  CHECK(rest.directions[1].angle == doctest::Approx(2 * kPi - off).epsilon(1e-14));
  CHECK(std::abs(angle_gap(rest.directions[2].angle, 0)) <= 1e-14);  // the root finder's resolution
  CHECK(rest.directions[0].kappa == doctest::Approx(1).epsilon(1e-14));
  CHECK(rest.directions[1].kappa == doctest::Approx(1).epsilon(1e-14));
  CHECK(rest.directions[2].kappa == doctest::Approx(0.5).epsilon(1e-14));
  CHECK(rest.chosen.angle == rest.directions[0].angle);
  // With a_free = (0.5, 0) sticking holds (force (-0.5, 0)), though the pair d_x = 1/4 is consistent too: the
  // law is not unique there; the decision reports the sticking, the directions are listed on request.
  c.a_free = Vec2(0.5, 0);
  CHECK(cone::decide_at_rest(c).outcome == cone::RestOutcome::stick);
  const std::vector<cone::SlipDirection> pair = cone::consistent_directions(c);
  REQUIRE(pair.size() == 2);
  CHECK(pair[0].d.x() == doctest::Approx(0.25).epsilon(1e-14));
  CHECK(pair[1].d.x() == doctest::Approx(0.25).epsilon(1e-14));
}

TEST_CASE("cone: two roots closer than the sampling are both found") {
  // a_free = 0, W = [[0, 2 - e], [e, 0]], mu N = 1: cross(d, W d) = e cos^2 - (2 - e) sin^2 = (e - 1) + cos 2th,
  // so g = -(e - 1 + cos 2th) vanishes at cos 2th = 1 - e: th = +-th0 and pi +- th0, th0 = acos(1 - e)/2, here
  // 7e-4 rad apart from 0 (the samples are 6e-3 apart). kappa = -d.W d = -sin 2th > 0 at -th0 and pi - th0.
  const double e = 1e-6, th0 = 0.5 * std::acos(1 - e);
  ConeData c;
  c.W << 0, 2 - e, e, 0;
  c.mu = 1;
  c.normal_force = 1;
  const std::vector<cone::SlipDirection> dirs = cone::consistent_directions(c);
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0].angle == doctest::Approx(kPi - th0).epsilon(1e-13));
  CHECK(dirs[1].angle == doctest::Approx(2 * kPi - th0).epsilon(1e-13));
  for (const cone::SlipDirection& s : dirs) CHECK(s.kappa == doctest::Approx(std::sin(2 * th0)).epsilon(1e-8));
}

TEST_CASE("cone: mu = 0 is frictionless: no force, the slip follows a_free, at rest only for a_free = 0") {
  ConeData c;
  c.W << 2.0, 0.5, 0.5, 1.0;
  c.mu = 0;
  c.normal_force = 30;
  c.a_free = Vec2(-0.4, 1.3);
  CHECK(cone::sliding_force(c, Vec2(1, 2)).norm() == 0);
  const cone::RestDecision slip = cone::decide_at_rest(c);
  REQUIRE(slip.outcome == cone::RestOutcome::slip);
  CHECK(slip.unique);
  CHECK((slip.chosen.d - c.a_free.normalized()).norm() <= 1e-15);
  CHECK(slip.chosen.kappa == doctest::Approx(c.a_free.norm()).epsilon(1e-15));
  c.a_free = Vec2(1e-300, 0);  // a tiny drive still slips: no friction holds it
  CHECK(cone::decide_at_rest(c).outcome == cone::RestOutcome::slip);
  c.a_free = Vec2::Zero();
  const cone::RestDecision rest = cone::decide_at_rest(c);
  CHECK(rest.outcome == cone::RestOutcome::stick);  // at rest, consistent: zero force, zero slip acceleration
  CHECK(rest.stick.demand == 0);
  CHECK(cone::consistent_directions(c).empty());  // every direction has kappa = 0: none grows
}

TEST_CASE("cone: polar slip variables: round trip, continuity, and the rates against finite differences") {
  for (const Vec2& u : {Vec2(1, 0), Vec2(-2, 0.5), Vec2(0.3, -4), Vec2(-1e-3, -1e-3)}) {
    const cone::Polar p = cone::to_polar(u);
    CHECK(p.s == doctest::Approx(u.norm()).epsilon(1e-15));
    CHECK((cone::from_polar(p) - u).norm() <= 1e-15 * u.norm());
    const cone::Polar q = cone::to_polar(u, p.phi + 20 * kPi + 3);  // the branch within pi of the hint
    CHECK(std::abs(q.phi - (p.phi + 20 * kPi)) <= 1e-13);
    // The signed speed: (-s, phi) is the same slip as (s, phi + pi).
    CHECK((cone::from_polar({-p.s, p.phi}) - cone::from_polar({p.s, p.phi + kPi})).norm() <= 1e-15 * u.norm());
  }
  // Near phi = pi the hint keeps the angle continuous across atan2's cut.
  CHECK(cone::to_polar(Vec2(-1, -1e-9), 3.1).phi > 3.1);
  CHECK(cone::to_polar(Vec2::Zero(), 1.25).phi == 1.25);
  // s' = d.a and phi' = d_perp.a / s against central differences of |u + a t| and its angle.
  for (const Vec2& u : {Vec2(1, 0.2), Vec2(-0.3, 2)})
    for (const Vec2& a : {Vec2(0.5, -1.5), Vec2(-3, 0.1)}) {
      const double h = 1e-6;
      const cone::Polar p = cone::to_polar(u), pp = cone::to_polar(u + h * a, p.phi),
                        pm = cone::to_polar(u - h * a, p.phi);
      const cone::PolarRates r = cone::polar_rates(p, a);
      CHECK(r.s_dot == doctest::Approx((pp.s - pm.s) / (2 * h)).epsilon(1e-8));
      CHECK(r.phi_dot == doctest::Approx((pp.phi - pm.phi) / (2 * h)).epsilon(1e-8));
    }
  const cone::PolarRates at_zero = cone::polar_rates({0, 0.3}, Vec2(1, 1));
  CHECK_FALSE(at_zero.direction_defined);
  CHECK(at_zero.phi_dot == 0);
}

TEST_CASE("cone: bad data is refused with its value") {
  ConeData c;
  c.mu = -0.1;
  CHECK_THROWS_WITH_AS(cone::decide_at_rest(c), doctest::Contains("-0.1"), std::invalid_argument);
  c.mu = 0.2;
  c.normal_force = std::nan("");
  CHECK_THROWS_AS(cone::consistent_directions(c), std::invalid_argument);
  c.normal_force = 1;
  c.W << 1, 2, 2, 4;  // singular: the sticking force is not unique
  CHECK_THROWS_WITH_AS(cone::sticking_force(c), doctest::Contains("det W"), std::invalid_argument);
  c.W = Mat2::Identity();
  CHECK_THROWS_AS(cone::sliding_force(c, Vec2::Zero()), std::invalid_argument);
}

}  // namespace rollsim
