// The damped double pendulum against independent answers: the small-angle normal modes in closed form (from the
// mass and stiffness matrices written here), energy conservation without damping, and E + D conserved with it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <sstream>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/models/double_pendulum.hpp"
#include "support.hpp"

using namespace rollsim;
using DoublePendulumParams = double_pendulum::Params;

namespace {

/// The small-angle mass and stiffness matrices M = [[A, B], [B, C]] = [[(m1+m2) l1^2, m2 l1 l2],
/// [m2 l1 l2, m2 l2^2]] and K = diag(Ka, Kc) = diag((m1+m2) g l1, m2 g l2), from the energies T and V.
struct Matrices {
  double A, B, C, Ka, Kc;
  explicit Matrices(const DoublePendulumParams& p)
      : A((p.mass1 + p.mass2) * p.length1 * p.length1),
        B(p.mass2 * p.length1 * p.length2),
        C(p.mass2 * p.length2 * p.length2),
        Ka((p.mass1 + p.mass2) * p.gravity * p.length1),
        Kc(p.mass2 * p.gravity * p.length2) {}
};

/// The squared small-angle frequencies from det(K - w^2 M) = 0: (AC - B^2) w^4 - (Ka C + Kc A) w^2 + Ka Kc = 0.
std::array<double, 2> mode_frequencies_squared(const DoublePendulumParams& p) {
  const auto [A, B, C, Ka, Kc] = Matrices(p);
  const double a = A * C - B * B, b = -(Ka * C + Kc * A), c = Ka * Kc;
  const double disc = std::sqrt(b * b - 4 * a * c);
  return {(-b - disc) / (2 * a), (-b + disc) / (2 * a)};
}

/// The Jacobian of the model's right-hand side at rest (by its AD interface) and its eigenvalues.
std::vector<std::complex<double>> eigenvalues_at_rest(const DoublePendulumParams& p) {
  const double x0[4] = {0, 0, 0, 0};
  auto sys = double_pendulum::make_system(p, x0);
  const auto* lin = dynamic_cast<const Linearizable*>(sys.get());
  REQUIRE(lin != nullptr);
  constexpr int n = double_pendulum::kStates;
  using AD = Linearizable::AD;
  std::vector<AD> x(n), u(1), f(n);
  for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = AD(0.0, n, i);
  u[0] = AD(0.0, Eigen::VectorXd::Zero(n));
  lin->rhs_ad(x.data(), u.data(), f.data());
  Eigen::MatrixXd J(n, n);
  for (int i = 0; i < n; ++i) J.row(i) = f[static_cast<std::size_t>(i)].derivatives().transpose();
  return test::roots(J);
}

/// Upward zero crossings of theta1 over the samples, linearly interpolated (exact to O(dt^3) where theta1'' = 0).
std::vector<double> upward_crossings(const test::Run& r) {
  std::vector<double> t;
  for (std::size_t k = 1; k < r.rec.t.size(); ++k) {
    const double a = r.rec.x[k - 1][0], b = r.rec.x[k][0];
    if (a < 0 && b >= 0) t.push_back(r.rec.t[k - 1] + (r.rec.t[k] - r.rec.t[k - 1]) * (-a) / (b - a));
  }
  return t;
}

/// A number as TOML text, to the last digit.
std::string exact(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::size_t column(const test::Run& r, const std::string& name) {
  const auto sys = build_system(r.scenario);
  return signal_index(sys->outputs(), name, "test");
}

}  // namespace

TEST_CASE("double pendulum: small-angle normal modes, equal masses and lengths: w^2 = (2 -+ sqrt 2) g / l") {
  DoublePendulumParams p;  // m1 = m2 = 1 kg, l1 = l2 = 1 m
  const double g = p.gravity, l = p.length1;
  const double slow = std::sqrt((2 - std::sqrt(2.0)) * g / l), fast = std::sqrt((2 + std::sqrt(2.0)) * g / l);
  SUBCASE("the linearisation's eigenvalues: +-i w for both modes, and 0 for the dissipated energy") {
    auto ev = eigenvalues_at_rest(p);
    std::vector<double> im;
    for (const auto& e : ev) {
      CHECK(std::abs(e.real()) < 1e-12);
      im.push_back(e.imag());
    }
    std::sort(im.begin(), im.end());
    REQUIRE(im.size() == 5);
    CHECK(im[0] == doctest::Approx(-fast).epsilon(1e-12));
    CHECK(im[1] == doctest::Approx(-slow).epsilon(1e-12));
    CHECK(std::abs(im[2]) < 1e-12);
    CHECK(im[3] == doctest::Approx(slow).epsilon(1e-12));
    CHECK(im[4] == doctest::Approx(fast).epsilon(1e-12));
  }
  SUBCASE("the nonlinear run started in each mode shape (theta2 = +-sqrt 2 theta1) oscillates at its frequency") {
    for (const auto& shape : {std::pair{std::sqrt(2.0), slow}, std::pair{-std::sqrt(2.0), fast}}) {
      const double ratio = shape.first, w = shape.second;  // not a structured binding: CAPTURE's lambda takes it
      CAPTURE(ratio);
      const double a = 1e-5;  // amplitude: the nonlinear frequency shift is O(a^2) ~ 1e-10 relative
      const double period = 2 * M_PI / w;
      const test::Run r = test::run_text(
          "model = \"double_pendulum\"\n", {"initial.theta1=" + exact(a), "initial.theta2=" + exact(ratio * a),
                                            "simulation.t_end=" + exact(20.5 * period),
                                            "simulation.output_dt=1e-3", "solver.rtol=1e-12", "solver.atol=1e-16"});
      REQUIRE(r.result.completed());
      const auto c = upward_crossings(r);
      REQUIRE(c.size() >= 20);
      const double measured = (c.back() - c.front()) / static_cast<double>(c.size() - 1);
      CHECK(measured == doctest::Approx(period).epsilon(1e-7));
      // A pure mode: theta2 / theta1 stays at the ratio (checked where |theta1| is near its amplitude).
      for (std::size_t k = 0; k < r.rec.t.size(); ++k)
        if (std::abs(r.rec.x[k][0]) > 0.9 * a) CHECK(r.rec.x[k][1] / r.rec.x[k][0] == doctest::Approx(ratio).epsilon(1e-6));
    }
  }
}

TEST_CASE("double pendulum: unequal masses and lengths: the linearisation's frequencies solve det(K - w^2 M) = 0") {
  DoublePendulumParams p;
  p.mass1 = 2.0;
  p.mass2 = 0.5;
  p.length1 = 1.2;
  p.length2 = 0.7;
  p.gravity = 3.7;
  const auto w2 = mode_frequencies_squared(p);
  std::vector<double> im;
  for (const auto& e : eigenvalues_at_rest(p))
    if (e.imag() > 0) im.push_back(e.imag());
  std::sort(im.begin(), im.end());
  REQUIRE(im.size() == 2);
  CHECK(im[0] == doctest::Approx(std::sqrt(w2[0])).epsilon(1e-12));
  CHECK(im[1] == doctest::Approx(std::sqrt(w2[1])).epsilon(1e-12));
}

TEST_CASE("double pendulum: damped eigenvalues are roots of det(s^2 M + s C + K) = 0") {
  DoublePendulumParams p;
  p.mass2 = 0.6;
  p.length2 = 0.8;
  p.damping1 = 0.4;
  p.damping2 = 0.25;
  // M, K as above; the Rayleigh function 1/2 c1 w1^2 + 1/2 c2 (w2 - w1)^2 gives C = [[c1 + c2, -c2], [-c2, c2]].
  const auto [A, B, Cm, Ka, Kc] = Matrices(p);
  int oscillatory = 0;
  for (const auto& s : eigenvalues_at_rest(p)) {
    if (std::abs(s) < 1e-12) continue;  // the dissipated energy's integrator
    ++oscillatory;
    CHECK(s.real() < 0);
    const std::complex<double> m11 = s * s * A + s * (p.damping1 + p.damping2) + Ka, m12 = s * s * B - s * p.damping2,
                               m22 = s * s * Cm + s * p.damping2 + Kc;
    const double scale = std::abs(s * s * A + Ka) * std::abs(s * s * Cm + Kc);
    CHECK(std::abs(m11 * m22 - m12 * m12) / scale < 1e-12);
  }
  CHECK(oscillatory == 4);
}

TEST_CASE("double pendulum: without damping the energy is conserved and nothing is dissipated") {
  const test::Run r = test::run_text("model = \"double_pendulum\"\n[initial]\ntheta1 = 1.2\ntheta2 = -0.5\nomega2 = 2\n",
                                     {"simulation.t_end=10", "simulation.output_dt=0.01"});
  REQUIRE(r.result.completed());
  CHECK(r.result.status == "ok");  // the self-audit's energy ledger included
  const std::size_t e = column(r, "total_energy");
  const double e0 = r.rec.y.front()[e];
  double drift = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    drift = std::max(drift, std::abs(r.rec.y[k][e] - e0));
    CHECK(r.rec.x[k][4] == 0.0);
  }
  // The scale of the energy: (m1 + m2) g l1 = 19.62 J; rtol = 1e-10 over 10 s of large-amplitude motion.
  MESSAGE("largest energy drift " << drift << " J of E(0) = " << e0 << " J");
  CHECK(drift < 1e-6 * 19.62);
  // The motion is large: the tip swings through a wide range.
  const std::size_t tx = column(r, "tip_x");
  double lo = 0, hi = 0;
  for (const auto& y : r.rec.y) {
    lo = std::min(lo, y[tx]);
    hi = std::max(hi, y[tx]);
  }
  CHECK(hi - lo > 1.0);
}

TEST_CASE("double pendulum: with damping E falls, D rises, and E + D stays at E(0)") {
  const test::Run r =
      test::run_text("model = \"double_pendulum\"\n[parameters]\ndamping1 = 0.3\ndamping2 = 0.2\n"
                     "[initial]\ntheta1 = 1.2\ntheta2 = -0.5\n",
                     {"simulation.t_end=20", "simulation.output_dt=0.01"});
  REQUIRE(r.result.completed());
  CHECK(r.result.status == "ok");
  const std::size_t e = column(r, "total_energy"), ed = column(r, "energy_with_dissipated");
  const double e0 = r.rec.y.front()[e];
  const double e_rest = -(1.0 + 1.0) * 9.81 * 1.0 - 1.0 * 9.81 * 1.0;  // both masses hanging at rest
  double worst = 0, d_prev = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const double d = r.rec.x[k][4];
    CHECK(d >= d_prev);
    d_prev = d;
    worst = std::max(worst, std::abs(r.rec.y[k][e] + d - e0));
    CHECK(r.rec.y[k][ed] == doctest::Approx(r.rec.y[k][e] + d).epsilon(1e-14));
  }
  // Most of the energy above rest is gone into the dampers.
  CHECK(r.rec.y.back()[e] - e_rest < 0.2 * (e0 - e_rest));
  MESSAGE("largest |E + D - E(0)| " << worst << " J; dissipated " << d_prev << " J");
  CHECK(worst < 1e-6 * 19.62);
}

TEST_CASE("double pendulum: bad parameters are input errors naming the key and the range") {
  try {
    (void)test::run_text("model = \"double_pendulum\"\n[parameters]\ndamping1 = -0.1\n");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("damping1") != std::string::npos);
    CHECK(m.find("-0.1") != std::string::npos);
  }
}
