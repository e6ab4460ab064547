// The kinematics layer against second formulations and closed forms: the angular velocity of a rotation sequence,
// an axis and angle and a matrix against the skew part of R' R^T; the charts' determinants against cos and sin of
// the middle angle; Kane's inertia forces against Lagrange's d/dt dT/dq' - dT/dq of the same T; the contact point
// and gap of a tilted disk and of a sphere, their no-slip rows and the embedded rule.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include <Eigen/Dense>

#include "rollsim/kinematics/bodies.hpp"
#include "rollsim/kinematics/contact.hpp"

namespace rollsim {

namespace {

using GiNaC::ex;
using kinematics::Frame;
using kinematics::Mat3;
using kinematics::Vec3;

/// A model with the given coordinates and parameters, its symbols made.
symbolic::LagrangeModel model(std::vector<std::string> coordinates, std::vector<std::string> parameters = {}) {
  symbolic::LagrangeModel m;
  m.coordinates = std::move(coordinates);
  m.parameters = std::move(parameters);
  m.make_symbols(0);
  return m;
}

/// A random point (t, q, q', a, p) of a model, as a substitution.
struct Point {
  GiNaC::exmap at;
  Point(const symbolic::LagrangeModel& m, std::mt19937& rng, std::vector<double> p = {}) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    at[m.t] = 0.3 + 0.2 * u(rng);
    for (std::size_t i = 0; i < m.n(); ++i) {
      at[m.q[i]] = 0.6 * u(rng);
      at[m.qd[i]] = 2 * u(rng);
      at[m.a[i]] = 2 * u(rng);
    }
    for (std::size_t i = 0; i < m.p.size(); ++i) at[m.p[i]] = i < p.size() ? p[i] : 1 + 0.5 * u(rng);
  }
  double operator()(const ex& e) const { return GiNaC::ex_to<GiNaC::numeric>(e.subs(at).evalf()).to_double(); }
  Eigen::Vector3d operator()(const Vec3& v) const { return {(*this)(v[0]), (*this)(v[1]), (*this)(v[2])}; }
  Eigen::Matrix3d operator()(const Mat3& m) const {
    Eigen::Matrix3d r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r(i, j) = (*this)(m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
    return r;
  }
};

/// w = vee(skew(R' R^T)) and w_body = vee(skew(R^T R')) at a point, from the symbolic R and its total derivative.
void check_angular_velocity(const symbolic::LagrangeModel& m, const Frame& f, int points = 6) {
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  const Mat3 Rd = s.rate(f.R);
  std::mt19937 rng(7);
  for (int k = 0; k < points; ++k) {
    const Point at(m, rng);
    const Eigen::Matrix3d R = at(f.R), D = at(Rd);
    CHECK((R * R.transpose() - Eigen::Matrix3d::Identity()).norm() <= 1e-13);
    const Eigen::Matrix3d S = D * R.transpose(), Sb = R.transpose() * D;
    const Eigen::Vector3d w(S(2, 1) - S(1, 2), S(0, 2) - S(2, 0), S(1, 0) - S(0, 1)),
        wb(Sb(2, 1) - Sb(1, 2), Sb(0, 2) - Sb(2, 0), Sb(1, 0) - Sb(0, 1));
    CHECK((at(f.w) - 0.5 * w).norm() <= 1e-12 * (1 + w.norm()));
    CHECK((at(f.w_body) - 0.5 * wb).norm() <= 1e-12 * (1 + wb.norm()));
    // S is skew: R' R^T has no symmetric part for an orthonormal R.
    CHECK((S + S.transpose()).norm() <= 1e-12 * (1 + S.norm()));
  }
}

/// Kane's generalized inertia forces of `bodies` against Lagrange's d/dt dT/dq' - dT/dq of their T, at random
/// states (t, q, q', a), relative to the size of the terms.
void check_kane_equals_lagrange(const symbolic::LagrangeModel& m, const std::vector<kinematics::RigidBody>& bodies) {
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  std::vector<ex> F(m.n(), 0);
  ex T = 0;
  for (const auto& b : bodies) {
    b.add_inertia_forces(s, F);
    T += b.kinetic_energy(s);
  }
  std::mt19937 rng(11);
  for (int k = 0; k < 6; ++k) {
    const Point at(m, rng);
    for (std::size_t i = 0; i < m.n(); ++i) {
      const ex lagrange = s.rate(symbolic::d(T, m.qd[i])) - symbolic::d(T, m.q[i]);
      const double l = at(lagrange), kane = at(F[i]);
      CAPTURE(i);
      CHECK(std::abs(l - kane) <= 1e-12 * (1 + std::abs(l)));
    }
  }
}

}  // namespace

TEST_CASE("kinematics: the angular velocity of sequences, an axis and angle and a matrix is the skew part of R' R^T") {
  auto m = model({"psi", "theta", "phi", "delta"}, {"lam"});
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  // Angles that are expressions of the coordinates and of t, not only symbols.
  const std::vector<ex> angles{m.q[0] + ex(m.t) / 3, m.q[1], 2 * m.q[2] - m.q[0]};
  for (const std::string seq : {"ZXY", "ZXZ", "XYZ", "YZY", "Y", "ZX"}) {
    CAPTURE(seq);
    std::vector<ex> a(angles.begin(), angles.begin() + static_cast<std::ptrdiff_t>(seq.size()));
    const Frame f = Frame::from_sequence("b", Frame::world(), seq, a, s);
    check_angular_velocity(m, f);
    // A child frame about a fixed axis of the parent (the bicycle's steer axis), and a child by a sequence.
    const Frame axis = Frame::from_axis_angle("c", f, {-GiNaC::sin(m.p[0]), 0, GiNaC::cos(m.p[0])}, m.q[3], s);
    check_angular_velocity(m, axis);
    check_angular_velocity(m, Frame::from_sequence("d", axis, "Y", {m.q[2] * m.q[3]}, s));
  }
  // A matrix of expressions (here Rz(psi) Rx(theta) written out), alone and under a parent.
  const ex c1 = GiNaC::cos(m.q[0]), s1 = GiNaC::sin(m.q[0]), c2 = GiNaC::cos(m.q[1]), s2 = GiNaC::sin(m.q[1]);
  const Mat3 M{Vec3{c1, -s1 * c2, s1 * s2}, Vec3{s1, c1 * c2, -c1 * s2}, Vec3{0, s2, c2}};
  const Frame mf = Frame::from_matrix("m", Frame::world(), M, s);
  check_angular_velocity(m, mf);
  check_angular_velocity(m, Frame::from_matrix("n", Frame::from_sequence("p", Frame::world(), "Y", {m.q[3]}, s), M, s));
  // The matrix frame equals the sequence frame of the same rotation: the same angular velocity.
  const Frame zx = Frame::from_sequence("q", Frame::world(), "ZX", {m.q[0], m.q[1]}, s);
  std::mt19937 rng(3);
  const Point at(m, rng);
  CHECK((at(mf.w) - at(zx.w)).norm() <= 1e-13);
  CHECK((at(mf.w_body) - at(zx.w_body)).norm() <= 1e-13);
}

TEST_CASE("kinematics: a sequence's chart determinant is cos of the middle angle (Tait-Bryan), +-sin (proper Euler)") {
  auto m = model({"a", "b", "c"});
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  // Columns e_1, R_1 e_2, R_1 R_2 e_3: for ZXY det[e_z, e_x, (0, cos b, sin b)] = cos b; for ZXZ
  // det[e_z, e_x, (0, -sin b, cos b)] = -sin b; cyclic and anticyclic orders give +-cos b.
  const std::vector<std::pair<std::string, std::function<double(double)>>> cases{
      {"ZXY", [](double b) { return std::cos(b); }},  {"XYZ", [](double b) { return std::cos(b); }},
      {"ZYX", [](double b) { return -std::cos(b); }}, {"ZXZ", [](double b) { return -std::sin(b); }},
      {"YZY", [](double b) { return -std::sin(b); }}, {"XYX", [](double b) { return -std::sin(b); }}};
  std::mt19937 rng(5);
  for (const auto& c : cases) {
    const std::string& seq = c.first;  // a reference, not a structured binding: CAPTURE's lambda takes it (clang 14)
    const auto& closed = c.second;
    const Frame f = Frame::from_sequence("b", Frame::world(), seq, {m.q[0], m.q[1], m.q[2]}, s);
    REQUIRE(f.sequence);
    CHECK(*f.sequence == seq);
    for (int k = 0; k < 4; ++k) {
      const Point at(m, rng);
      CAPTURE(seq);
      CHECK(std::abs(at(f.chart_determinant) - closed(at(m.q[1]))) <= 1e-14);
    }
  }
  // Fewer than three angles, an axis and angle, a matrix: no chart.
  CHECK_FALSE(Frame::from_sequence("b", Frame::world(), "ZX", {m.q[0], m.q[1]}, s).sequence);
  CHECK_FALSE(Frame::from_axis_angle("b", Frame::world(), {0, 0, 1}, m.q[0], s).sequence);
  CHECK_THROWS_AS(Frame::from_sequence("b", Frame::world(), "ZZX", {m.q[0], m.q[1], m.q[2]}, s), std::invalid_argument);
  CHECK_THROWS_AS(Frame::from_sequence("b", Frame::world(), "ZQX", {m.q[0], m.q[1], m.q[2]}, s), std::invalid_argument);
  CHECK_THROWS_AS(Frame::from_sequence("b", Frame::world(), "ZX", {m.q[0]}, s), std::invalid_argument);
}

TEST_CASE("kinematics: Kane's inertia forces equal Lagrange's terms of T (coin, 6-value inertia chain, matrix)") {
  SUBCASE("a coin: ZXY, its centre over the contact point (x, y, z)") {
    auto m = model({"x", "y", "z", "psi", "theta", "phi"}, {"mass", "a", "A", "C"});
    const kinematics::Symbols s = kinematics::Symbols::of(m);
    const ex psi = m.q[3], th = m.q[4], a = m.p[1];
    kinematics::RigidBody coin{"coin", m.p[0], kinematics::inertia_tensor({m.p[2], m.p[3], m.p[2]}),
                               {m.q[0] + a * GiNaC::sin(th) * GiNaC::sin(psi), m.q[1] - a * GiNaC::sin(th) * GiNaC::cos(psi),
                                m.q[2] + a * GiNaC::cos(th)},
                               Frame::from_sequence("coin", Frame::world(), "ZXY", {psi, th, m.q[5]}, s)};
    check_kane_equals_lagrange(m, {coin});
  }
  SUBCASE("two bodies: a parent by a sequence with a full 6-value inertia, a child about the parent's fixed axis") {
    auto m = model({"x", "psi", "phi", "delta"}, {"m1", "m2", "lam", "d"});
    const kinematics::Symbols s = kinematics::Symbols::of(m);
    const Frame rear = Frame::from_sequence("rear", Frame::world(), "ZXY", {m.q[1], m.q[2], ex(0.3) * m.q[0]}, s);
    const Frame front = Frame::from_axis_angle("front", rear, {-GiNaC::sin(m.p[2]), 0, GiNaC::cos(m.p[2])}, m.q[3], s);
    const Vec3 g1{m.q[0], 0, ex(1)};
    const Vec3 g2 = kinematics::relative_position(g1, front, {m.p[3], ex(0.1), ex(-0.2)});
    kinematics::RigidBody b1{"rear", m.p[0], kinematics::inertia_tensor({9.2, 11, 2.8, 0.3, -2.4, 0.1}), g1, rear};
    kinematics::RigidBody b2{"front", m.p[1], kinematics::inertia_tensor({0.05892, 0.06, 0.00708, 0.0, 0.00756, 0.0}), g2, front};
    check_kane_equals_lagrange(m, {b1, b2});
  }
  SUBCASE("a matrix orientation with explicit time") {
    auto m = model({"psi", "theta"}, {"mass"});
    const kinematics::Symbols s = kinematics::Symbols::of(m);
    const ex u = m.q[0] + m.t, c1 = GiNaC::cos(u), s1 = GiNaC::sin(u), c2 = GiNaC::cos(m.q[1]), s2 = GiNaC::sin(m.q[1]);
    const Mat3 M{Vec3{c1, -s1 * c2, s1 * s2}, Vec3{s1, c1 * c2, -c1 * s2}, Vec3{0, s2, c2}};
    const Frame f = Frame::from_matrix("b", Frame::world(), M, s);
    kinematics::RigidBody b{"b", m.p[0], kinematics::inertia_tensor({1, 2, 3, 0.1, 0.2, 0.3}),
                            kinematics::relative_position({0, 0, 0}, f, {0.1, 0.2, 0.5}), f};
    check_kane_equals_lagrange(m, {b});
  }
}

TEST_CASE("kinematics: a tilted disk's contact point and gap, a sphere's, their no-slip rows and the embedded rule") {
  auto m = model({"x", "y", "z", "psi", "theta", "phi"}, {"a", "Omega"});
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  const ex x = m.q[0], y = m.q[1], z = m.q[2], psi = m.q[3], th = m.q[4], a = m.p[0];
  const Frame f = Frame::from_sequence("coin", Frame::world(), "ZXY", {psi, th, m.q[5]}, s);
  // The centre at (X, Y, Z) free: the gap of a disk of lean theta is Z - a cos(theta), its contact point
  // (X - a sin(theta) sin(psi), Y + a sin(theta) cos(psi), Z - a cos(theta)).
  const kinematics::RigidBody free_coin{"coin", 1, kinematics::inertia_tensor({1, 2, 1}), {x, y, z}, f};
  kinematics::RollingContact disk{"ground", &free_coin, kinematics::RollingContact::Shape::Disk, a, {0, 1, 0}, 0, "k"};
  std::mt19937 rng(13);
  for (int k = 0; k < 6; ++k) {
    const Point at(m, rng);
    const double X = at(x), Y = at(y), Z = at(z), ps = at(psi), t = at(th), r = at(a);
    CHECK(std::abs(at(disk.gap()) - (Z - r * std::cos(t))) <= 1e-14);
    const Eigen::Vector3d p(X - r * std::sin(t) * std::sin(ps), Y + r * std::sin(t) * std::cos(ps), Z - r * std::cos(t));
    CHECK((at(disk.point()) - p).norm() <= 1e-14);
  }
  // Rolling rows: the contact material point's velocity; with the centre over the contact point, x' and y' enter.
  const auto rows = disk.rows(s, false);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "ground_x");
  CHECK(rows[2].kind == symbolic::LagrangeModel::VelocityConstraint::Kind::Normal);
  REQUIRE(rows[2].position);
  CHECK(disk.rows(s, true).size() == 2);
  // The normal row is the gap's time derivative.
  for (int k = 0; k < 4; ++k) {
    const Point at(m, rng);
    CHECK(std::abs(at(rows[2].rate) - at(s.rate(*rows[2].position))) <= 1e-13);
  }
  // A coin whose centre height is a cos(theta): the gap is identically zero (embedded); with z it is not.
  const kinematics::RigidBody coin{"coin", 1, kinematics::inertia_tensor({1, 2, 1}),
                                   {x + a * GiNaC::sin(th) * GiNaC::sin(psi), y - a * GiNaC::sin(th) * GiNaC::cos(psi), a * GiNaC::cos(th)}, f};
  kinematics::RollingContact on_plane{"ground", &coin, kinematics::RollingContact::Shape::Disk, a, {0, 2, 0}, 0, "k"};
  const std::vector<double> q0{0, 0, 0, 0.1, 0.4, 0}, p{0.3, 0};
  CHECK(kinematics::vanishes_identically(on_plane.gap(), {a}, m, p, q0));
  CHECK_FALSE(kinematics::vanishes_identically(disk.gap(), {a}, m, p, q0));
  // Rolling without slip of that coin (x, y the contact point): the contact's velocity is the rate of (x, y) less
  // the material point's... in closed form u_x = x' - a phi' cos(psi) (and likewise y) when theta' = psi' = 0.
  for (int k = 0; k < 4; ++k) {
    Point at(m, rng);
    at.at[m.qd[3]] = 0;
    at.at[m.qd[4]] = 0;
    const auto r = on_plane.rows(s, true);
    const double ps = at(psi), rr = at(a), ph = at(m.qd[5]);
    CHECK(std::abs(at(r[0].rate) - (at(m.qd[0]) - rr * ph * std::cos(ps))) <= 1e-13);
    CHECK(std::abs(at(r[1].rate) - (at(m.qd[1]) - rr * ph * std::sin(ps))) <= 1e-13);
  }
  // A sphere on a turning plane: u = v_G + w x (-r e_z) - Omega e_z x p, p = G - r e_z.
  const kinematics::RigidBody ball{"ball", 1, kinematics::inertia_tensor({1, 1, 1}), {x, y, a}, f};
  kinematics::RollingContact sphere{"table", &ball, kinematics::RollingContact::Shape::Sphere, a, {0, 0, 1}, m.p[1], "k"};
  CHECK(kinematics::vanishes_identically(sphere.gap(), {a}, m, p, q0));
  for (int k = 0; k < 4; ++k) {
    const Point at(m, rng);
    const Eigen::Vector3d w = at(f.w), v(at(m.qd[0]), at(m.qd[1]), 0), P(at(x), at(y), 0);
    const double r = at(a), W = at(m.p[1]);
    const Eigen::Vector3d u = v + w.cross(Eigen::Vector3d(0, 0, -r)) - Eigen::Vector3d(0, 0, W).cross(P);
    const auto rr = sphere.rows(s, true);
    CHECK(std::abs(at(rr[0].rate) - u(0)) <= 1e-13);
    CHECK(std::abs(at(rr[1].rate) - u(1)) <= 1e-13);
  }
}

}  // namespace rollsim
