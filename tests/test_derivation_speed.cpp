// The derivation's remembering differentiation (symbolic::Differentiator) against GiNaC's own ex::diff, a second
// implementation: every elementary function a user expression may call, powers with numeric and symbolic
// exponents, and a 3-D body's kinematics (rotation entries, angular velocities, a point's velocity, Kane's
// inertia forces, T), differentiated by every symbol, with one Differentiator for all of them (its remembered
// results reused across expressions), compared at random points and, for the elementary functions, exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "rollsim/kinematics/bodies.hpp"
#include "rollsim/symbolic/expression.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

using GiNaC::ex;

symbolic::LagrangeModel model(std::vector<std::string> coordinates, std::vector<std::string> parameters) {
  symbolic::LagrangeModel m;
  m.coordinates = std::move(coordinates);
  m.parameters = std::move(parameters);
  m.make_symbols(0);
  return m;
}

/// Every symbol of the model: t, q, q', a, p.
std::vector<ex> all_symbols(const symbolic::LagrangeModel& m) {
  std::vector<ex> v{m.t};
  for (const auto* block : {&m.q, &m.qd, &m.a, &m.p}) v.insert(v.end(), block->begin(), block->end());
  return v;
}

/// The value of e at a random point: q in [-0.6, 0.6], rates and accelerations in [-2, 2], parameters in
/// [0.5, 1.5], t in [0.1, 0.5].
struct Points {
  std::vector<GiNaC::exmap> at;
  Points(const symbolic::LagrangeModel& m, int count) {
    std::mt19937 rng(20261126);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < count; ++k) {
      GiNaC::exmap p{{m.t, 0.3 + 0.2 * u(rng)}};
      for (std::size_t i = 0; i < m.n(); ++i) {
        p[m.q[i]] = 0.6 * u(rng);
        p[m.qd[i]] = 2 * u(rng);
        p[m.a[i]] = 2 * u(rng);
      }
      for (const auto& s : m.p) p[s] = 1 + 0.5 * u(rng);
      at.push_back(p);
    }
  }
  static double value(const ex& e, const GiNaC::exmap& p) {
    return GiNaC::ex_to<GiNaC::numeric>(e.subs(p).evalf()).to_double();
  }
};

/// D(e, x) and e.diff(x) agree at every point, for every `stride`-th symbol x (all of them with 1); returns the
/// number of comparisons.
int check_against_ginac(symbolic::Differentiator& D, const symbolic::LagrangeModel& m, const ex& e, const Points& pts,
                        std::size_t stride = 1) {
  int compared = 0;
  const std::vector<ex> symbols = all_symbols(m);
  for (std::size_t k = 0; k < symbols.size(); k += stride) {
    const ex& x = symbols[k];
    const ex mine = D(e, x), ginac = e.diff(GiNaC::ex_to<GiNaC::symbol>(x));
    for (const auto& p : pts.at) {
      const double a = Points::value(mine, p), b = Points::value(ginac, p);
      CHECK(std::isfinite(b));
      CHECK(std::abs(a - b) <= 1e-12 * (1 + std::abs(b)));
      ++compared;
    }
  }
  return compared;
}

}  // namespace

TEST_CASE("derivation: the remembering differentiation equals GiNaC's diff on every elementary function") {
  auto m = model({"q1", "q2"}, {"k"});
  const ex q1 = m.q[0], q2 = m.q[1], u1 = m.qd[0], k = m.p[0], t = m.t;
  const ex step = GiNaC::function(symbolic::step_function_serial(), q1 - q2 * k);
  const std::vector<ex> cases{
      GiNaC::sin(q1 * u1) * GiNaC::cos(q2 + t),
      GiNaC::tan(q1 * k) + GiNaC::asin(GiNaC::numeric(3, 10) * GiNaC::sin(q2)) - GiNaC::acos(q1 / 2),
      GiNaC::atan(q1 * q2) + GiNaC::atan2(q2 + 2, q1 - 3 * u1),
      GiNaC::sinh(q1) * GiNaC::cosh(u1 * q2) - GiNaC::tanh(k * t),
      GiNaC::exp(-q1 * q1) * GiNaC::log(2 + GiNaC::cos(q2)) + GiNaC::sqrt(1 + q1 * q1 + u1 * u1),
      GiNaC::abs(q1 - q2) * u1 + step * q1 * q1,
      GiNaC::pow(1 + q1 * q1, q2) + GiNaC::pow(k, t * q1) + GiNaC::pow(q1 + u1, -3) * GiNaC::pow(2 + q2, GiNaC::numeric(5, 2)),
      GiNaC::sin(GiNaC::cos(GiNaC::sin(q1 * u1 + q2))) * (q1 + 2 * q2) * (q1 - q2) * k,
  };
  symbolic::Differentiator D;
  const Points pts(m, 4);
  int compared = 0;
  for (const auto& e : cases) {
    compared += check_against_ginac(D, m, e, pts);
    // Exactly: both derivatives are sums of products of the same functions, equal once expanded.
    for (const auto& x : all_symbols(m))
      CHECK((D(e, x) - e.diff(GiNaC::ex_to<GiNaC::symbol>(x))).expand().is_zero());
  }
  CHECK(compared == static_cast<int>(cases.size() * all_symbols(m).size() * pts.at.size()));
  // The step function's derivative is 0; a second call returns the remembered result; d() is the same rule.
  CHECK(D(step, q1).is_zero());
  CHECK(D(cases[0], q1).is_equal(D(cases[0], q1)));
  CHECK((symbolic::d(cases[4], q1) - D(cases[4], q1)).is_zero());
}

TEST_CASE("derivation: the remembering differentiation equals GiNaC's diff on a 3-D body's kinematics") {
  // Two bodies as in the bicycle: a rear frame by a ZXY sequence, a front frame turning about a tilted axis of it,
  // a point of the front frame, full inertia tensors.
  auto m = model({"x", "psi", "phi", "theta", "delta"}, {"lam", "d", "m1", "m2"});
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  using kinematics::Frame;
  using kinematics::Vec3;
  const Frame rear = Frame::from_sequence("rear", Frame::world(), "ZXY", {m.q[1], m.q[2], m.q[3]}, s);
  const Frame front = Frame::from_axis_angle("front", rear, {GiNaC::sin(m.p[0]), 0, -GiNaC::cos(m.p[0])}, m.q[4], s);
  const Vec3 g1{m.q[0], m.p[1] * GiNaC::sin(m.q[2]), m.p[1] * GiNaC::cos(m.q[2])};
  const Vec3 g2 = kinematics::relative_position(g1, front, {m.p[1], ex(0.1), ex(-0.2)});
  const kinematics::RigidBody b1{"rear", m.p[2], kinematics::inertia_tensor({9.2, 11, 2.8, 0, -2.4, 0}), g1, rear};
  const kinematics::RigidBody b2{"front", m.p[3], kinematics::inertia_tensor({0.05892, 0.06, 0.00708, 0, 0.00756, 0}),
                                 g2, front};
  std::vector<ex> F(m.n(), ex(0));
  b1.add_inertia_forces(s, F);
  b2.add_inertia_forces(s, F);
  std::vector<ex> cases{b1.kinetic_energy(s) + b2.kinetic_energy(s), F[1], F[4]};
  for (const auto* v : {&front.w_body, &front.w, &g2}) cases.insert(cases.end(), v->begin(), v->end());
  cases.push_back(front.R[2][0]);
  cases.push_back(s.rate(g2)[1]);
  symbolic::Differentiator D;
  // Every symbol at 2 points here; under a sanitizer (the -O0 tree, where this took 234 s) every 4th symbol at 1.
  const std::size_t stride = test::full_or_sanitized<std::size_t>(1, 4);
  const Points pts(m, test::full_or_sanitized(2, 1));
  int compared = 0;
  for (const auto& e : cases) compared += check_against_ginac(D, m, e, pts, stride);
  const std::size_t symbols = (all_symbols(m).size() + stride - 1) / stride;
  CHECK(compared == static_cast<int>(cases.size() * symbols * pts.at.size()));
}

}  // namespace rollsim
