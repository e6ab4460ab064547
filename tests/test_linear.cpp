// Tests of the linear-analysis library against independent (closed-form or published) answers.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/analysis/linear.hpp"
#include "rollsim/models/tipping_table.hpp"

namespace lin = rollsim::linear;
namespace tt = rollsim::tipping_table;
using cd = std::complex<double>;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// The table model as xdot = f(x, u) with x = [th1, th2, w1, w2], u = [tau] and y = [th2].
lin::StateSpace linearize_table(const tt::Params& p) {
  auto f = [&p](const auto& x, const auto& u) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    lin::Vec<S> xd(tt::kStates);
    tt::rhs(p, x.data(), u(0), xd.data());
    return xd;
  };
  auto h = [](const auto& x, const auto&) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    lin::Vec<S> y(1);
    y(0) = x(1);
    return y;
  };
  return lin::linearize(f, h, Eigen::VectorXd::Zero(tt::kStates), Eigen::VectorXd::Zero(1));
}

/// Benchmark-type parameters: equal masses m, uniform disk of radius r, thin plate of length l.
tt::Params benchmark_type(double m, double g, double r, double l) {
  tt::Params p;
  p.wheel_mass = m;
  p.table_mass = m;
  p.wheel_radius = r;
  p.wheel_inertia = 0.5 * m * r * r;
  p.table_length = l;
  p.table_inertia = m * l * l / 12.0;
  p.gravity = g;
  return p;
}

double rel_close(double a, double b) { return std::abs(a - b) / std::abs(b); }

/// A state-space model from a strictly proper SISO numerator/denominator in controllable canonical
/// form: den = s^n + a[n-1] s^(n-1) + ... + a[0], num = b[n-1] s^(n-1) + ... + b[0].
lin::StateSpace canonical(const std::vector<double>& a, const std::vector<double>& b, double d) {
  const auto n = static_cast<Eigen::Index>(a.size());
  lin::StateSpace s;
  s.A = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i + 1 < n; ++i) s.A(i, i + 1) = 1.0;
  for (Eigen::Index j = 0; j < n; ++j) s.A(n - 1, j) = -a[static_cast<std::size_t>(j)];
  s.B = Eigen::MatrixXd::Zero(n, 1);
  s.B(n - 1, 0) = 1.0;
  s.C = Eigen::MatrixXd::Zero(1, n);
  for (Eigen::Index j = 0; j < n; ++j) s.C(0, j) = b[static_cast<std::size_t>(j)];
  s.D = Eigen::MatrixXd::Constant(1, 1, d);
  return s;
}

void check_zeros(const std::vector<cd>& got, const std::vector<cd>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("zero " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}

}  // namespace

TEST_CASE("linear: AD Jacobian of a nonlinear function is exact at a non-equilibrium point") {
  auto f = [](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    using std::cos;
    using std::exp;
    using std::log;
    using std::sin;
    using std::sqrt;
    lin::Vec<S> y(5);
    y(0) = x(0) * x(0) * x(1) + sin(x(2));
    y(1) = exp(x(0) * x(1)) / x(2);
    y(2) = sqrt(x(0)) * cos(x(1)) + x(2) * x(2) * x(2);
    y(3) = log(x(0) + x(2)) * x(1);
    y(4) = S(2.5);  // constant: no gradient at all
    return y;
  };
  const double x0 = 0.7, x1 = -1.3, x2 = 2.1;
  Eigen::VectorXd x(3);
  x << x0, x1, x2;
  Eigen::VectorXd val;
  const Eigen::MatrixXd J = lin::jacobian(f, x, &val);
  const double e = std::exp(x0 * x1);
  Eigen::MatrixXd R(5, 3);
  R << 2 * x0 * x1, x0 * x0, std::cos(x2),                                        //
      x1 * e / x2, x0 * e / x2, -e / (x2 * x2),                                    //
      std::cos(x1) / (2 * std::sqrt(x0)), -std::sqrt(x0) * std::sin(x1), 3 * x2 * x2,  //
      x1 / (x0 + x2), std::log(x0 + x2), x1 / (x0 + x2),                          //
      0, 0, 0;
  REQUIRE(J.rows() == 5);
  REQUIRE(J.cols() == 3);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) {
      INFO("J(" << i << "," << j << ") = " << J(i, j) << " vs " << R(i, j));
      CHECK(std::abs(J(i, j) - R(i, j)) <= 1e-15 * std::max(1.0, std::abs(R(i, j))));
    }
  CHECK(val(0) == doctest::Approx(x0 * x0 * x1 + std::sin(x2)).epsilon(1e-15));
  CHECK(val(4) == 2.5);
}

TEST_CASE("linear: table Jacobian at the benchmark equilibrium equals the closed form of (1.5)") {
  const tt::Params p;  // IFToMM defaults
  const lin::StateSpace ss = linearize_table(p);
  const double m = 1.0, g = 9.81, r = 0.25, l = 1.0;
  Eigen::Matrix2d M, K;
  M << m * l * l / 12.0, 0, 0, 1.5 * m * r * r;
  K << m * g * r, -m * g * r, -m * g * r, 0;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(4, 4);
  A.topRightCorner(2, 2).setIdentity();
  A.bottomLeftCorner(2, 2) = -M.inverse() * K;
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(4, 1);
  B(2, 0) = 1.0 / (m * l * l / 12.0);
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(1, 4);
  C(0, 1) = 1.0;
  CHECK((ss.A - A).norm() <= 1e-14 * A.norm());
  CHECK((ss.B - B).norm() <= 1e-14 * B.norm());
  CHECK((ss.C - C).norm() == 0.0);
  CHECK(ss.D.norm() == 0.0);
  CHECK(ss.f0.norm() == 0.0);  // an equilibrium
  CHECK(ss.y0.norm() == 0.0);
  CHECK(ss.states() == 4);
  CHECK(ss.inputs() == 1);
  CHECK(ss.outputs() == 1);
}

TEST_CASE("linear: benchmark eigenvalues, IFToMM error and results text") {
  const lin::StateSpace ss = linearize_table(tt::Params{});
  const lin::EigenResult er = lin::eigen_analysis(ss.A);
  std::vector<cd> ev(er.values.data(), er.values.data() + er.values.size());
  const double err = lin::iftomm_error(ev);
  MESSAGE("IFToMM error (computed vs benchmark): " << err);
  CHECK(err <= 1e-12);
  // The closed form (1.7) reproduces the published digits as well.
  CHECK(lin::iftomm_error(lin::iftomm_eigenvalues(9.81, 0.25, 1.0)) <= 1e-14);
  // Order: the imaginary pair (+i first), then the positive and the negative real root.
  CHECK(er.values(0).imag() > 6.79);
  CHECK(er.values(1).imag() < -6.79);
  CHECK(er.values(2).real() > 4.08);
  CHECK(er.values(3).real() < -4.08);
  // The error is insensitive to the order of the computed list (it is sorted first).
  std::vector<cd> shuffled = {ev[3], ev[1], ev[2], ev[0]};
  CHECK(lin::iftomm_error(shuffled) == err);
  CHECK(std::isinf(lin::iftomm_error({ev[0], ev[1]})));
  // Eigenvectors: A v = lambda v, unit norm, largest component real positive.
  for (Eigen::Index k = 0; k < 4; ++k) {
    const Eigen::VectorXcd v = er.vectors.col(k);
    CHECK((ss.A.cast<cd>() * v - er.values(k) * v).norm() <= 1e-13 * std::abs(er.values(k)));
    CHECK(v.norm() == doctest::Approx(1.0).epsilon(1e-15));
    Eigen::Index j;
    v.cwiseAbs().maxCoeff(&j);
    CHECK(v(j).imag() == 0.0);
    CHECK(v(j).real() > 0.0);
  }
  // Results text: a header and four lines of 17 significant digits.
  const std::string text = lin::iftomm_results_text(lin::iftomm_benchmark_eigenvalues());
  CHECK(text ==
        "# IFToMM wheel on tipping table: eigenvalues [rad/s], one per line: real imag\n"
        "0.0000000000000000e+00 6.7913418692190817e+00\n"
        "0.0000000000000000e+00 -6.7913418692190817e+00\n"
        "4.0856241120064052e+00 0.0000000000000000e+00\n"
        "-4.0856241120064052e+00 0.0000000000000000e+00\n");
  CHECK(lin::iftomm_results_text({cd(1.0, -2.0)}, false) == "1.0000000000000000e+00 -2.0000000000000000e+00\n");
}

TEST_CASE("linear: modal table reproduces EoM's figures for the benchmark") {
  const lin::StateSpace ss = linearize_table(tt::Params{});
  const lin::ModalTable t = lin::modal_table(lin::eigen_analysis(ss.A).values);
  REQUIRE(t.rows.size() == 4);
  // EoM Table 2.1 / 2.2, to the digits printed there (11 significant digits).
  const double digits = 5e-11;
  CHECK(rel_close(t.rows[0].imag_rad_s, 6.7913418692) < digits);
  CHECK(rel_close(t.rows[1].imag_rad_s, -6.7913418692) < digits);
  CHECK(rel_close(t.rows[2].real_rad_s, 4.0856241120) < digits);
  CHECK(rel_close(t.rows[3].real_rad_s, -4.0856241120) < digits);
  CHECK(rel_close(t.rows[0].imag_hz, 1.0808756287) < digits);
  CHECK(rel_close(t.rows[1].imag_hz, -1.0808756287) < digits);
  CHECK(rel_close(t.rows[2].real_hz, 6.5024727304e-1) < digits);
  CHECK(rel_close(t.rows[3].real_hz, -6.5024727304e-1) < digits);
  CHECK(rel_close(t.rows[0].natural_frequency_hz, 1.0808756287) < digits);
  CHECK(rel_close(t.rows[1].natural_frequency_hz, 1.0808756287) < digits);
  CHECK(rel_close(t.rows[0].wavelength_s, 9.2517582360e-1) < digits);
  CHECK(rel_close(t.rows[1].wavelength_s, 9.2517582360e-1) < digits);
  CHECK(rel_close(t.rows[2].time_constant_s, -2.4476064674e-1) < digits);
  CHECK(rel_close(t.rows[3].time_constant_s, 2.4476064674e-1) < digits);
  // The oscillatory pair's real part is round-off: its damping ratio is tiny, |tau| huge.
  CHECK(std::abs(t.rows[0].damping_ratio) < 1e-14);
  CHECK(std::abs(t.rows[0].time_constant_s) > 1e13);
  // Real roots have no frequency, damping ratio or wavelength.
  for (int k : {2, 3}) {
    CHECK(std::isnan(t.rows[static_cast<std::size_t>(k)].natural_frequency_hz));
    CHECK(std::isnan(t.rows[static_cast<std::size_t>(k)].damping_ratio));
    CHECK(std::isnan(t.rows[static_cast<std::size_t>(k)].wavelength_s));
    CHECK_FALSE(t.rows[static_cast<std::size_t>(k)].oscillatory);
  }
  CHECK(t.rows[0].stability == lin::Stability::Undamped);
  CHECK(t.rows[2].stability == lin::Stability::Unstable);
  CHECK(t.rows[3].stability == lin::Stability::Damped);
  // Counts with the default tolerances.
  CHECK(t.counts.degrees_of_freedom == 2);
  CHECK(t.counts.modes == 3);
  CHECK(t.counts.oscillatory == 1);
  CHECK(t.counts.damped == 1);
  CHECK(t.counts.undamped == 1);
  CHECK(t.counts.unstable == 1);
  CHECK(t.counts.rigid_body == 0);
  CHECK(lin::summary_line(t.counts) ==
        "2 degrees of freedom; 1 oscillatory, 1 damped, 1 undamped, 1 unstable, 0 rigid body modes");
  CHECK(lin::classification_rule().find("tol_abs = 1e-06 rad/s, tol_rel = 1e-08") != std::string::npos);
}

TEST_CASE("linear: EoM's own roots with zero tolerances give EoM's summary and table") {
  Eigen::VectorXcd eom(4);
  eom << cd(-9.5135819144e-16, 6.7913418692), cd(-9.5135819144e-16, -6.7913418692), cd(4.0856241120, 0),
      cd(-4.0856241120, 0);
  const lin::ModalTable t = lin::modal_table(eom, lin::Tolerances{0.0, 0.0});
  CHECK(t.counts.oscillatory == 1);
  CHECK(t.counts.damped == 2);
  CHECK(t.counts.unstable == 1);
  CHECK(t.counts.undamped == 0);
  CHECK(t.counts.rigid_body == 0);
  CHECK(lin::summary_line(t.counts) ==
        "2 degrees of freedom; 1 oscillatory, 2 damped, 0 undamped, 1 unstable, 0 rigid body modes");
  // EoM Table 2.2, rows 1-2, computed from EoM's rounded roots (so to ~1e-10 only).
  CHECK(rel_close(t.rows[0].damping_ratio, 1.4008397895e-16) < 1e-9);
  CHECK(rel_close(t.rows[0].time_constant_s, 1.0511288062e15) < 1e-9);
  CHECK(rel_close(t.rows[0].real_hz, -1.5141335882e-16) < 1e-9);
  // The same roots with the default tolerances: the pair is undamped.
  const lin::ModalTable d = lin::modal_table(eom);
  CHECK(d.counts.damped == 1);
  CHECK(d.counts.undamped == 1);
}

TEST_CASE("linear: rigid-body modes and an exactly zero real part") {
  // Two masses joined by a spring, free otherwise: one rigid-body coordinate and one oscillation.
  const double m1 = 1.0, m2 = 2.0, k = 3.0;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(4, 4);
  A.topRightCorner(2, 2).setIdentity();
  A(2, 0) = -k / m1;
  A(2, 1) = k / m1;
  A(3, 0) = k / m2;
  A(3, 1) = -k / m2;
  // A similarity with a full matrix, so the double zero root is only round-off small.
  Eigen::MatrixXd T(4, 4);
  T << 1, 0.3, -0.2, 0.5, 0.1, 1, 0.4, -0.3, 0.2, -0.1, 1, 0.6, -0.4, 0.2, 0.1, 1;
  const Eigen::MatrixXd At = T * A * T.inverse();
  const lin::EigenResult er = lin::eigen_analysis(At);
  const double w = std::sqrt(k / m1 + k / m2);
  CHECK(std::abs(er.values(0) - cd(0, w)) < 1e-12);
  CHECK(std::abs(er.values(1) - cd(0, -w)) < 1e-12);
  const lin::ModalTable t = lin::modal_table(er.values);
  CHECK(t.counts.degrees_of_freedom == 2);
  CHECK(t.counts.oscillatory == 1);
  CHECK(t.counts.undamped == 1);
  CHECK(t.counts.rigid_body == 2);
  CHECK(t.counts.modes == 3);
  CHECK(t.rows[2].stability == lin::Stability::RigidBody);
  // An exactly zero real part: infinite time constant.
  Eigen::VectorXcd z(2);
  z << cd(0.0, 2.0), cd(-0.0, -2.0);
  const lin::ModalTable tz = lin::modal_table(z);
  CHECK(std::isinf(tz.rows[0].time_constant_s));
  CHECK(tz.rows[0].time_constant_s > 0);
  CHECK(tz.rows[1].time_constant_s > 0);
  CHECK(tz.rows[0].damping_ratio == 0.0);
}

TEST_CASE("linear: sort order") {
  std::vector<cd> r = {cd(-1, 0), cd(-0.5, -3), cd(2, 0), cd(-0.1, 1), cd(-0.5, 3), cd(-0.1, -1), cd(0, 0)};
  const auto s = lin::sort_eigenvalues(r);
  const std::vector<cd> want = {cd(-0.1, 1), cd(-0.1, -1), cd(-0.5, 3), cd(-0.5, -3), cd(2, 0), cd(0, 0), cd(-1, 0)};
  CHECK(s == want);
  CHECK_THROWS_AS(lin::sort_eigenvalues({cd(0, 1), cd(0, 2)}), std::invalid_argument);
}

TEST_CASE("linear: formula (1.7) against computed eigenvalues for other benchmark-type tables") {
  struct Case {
    double m, g, r, l;
  };
  for (const Case c : {Case{1.0, 9.81, 0.25, 1.0}, Case{2.5, 9.81, 0.1, 2.0}, Case{0.3, 1.62, 0.4, 0.5},
                       Case{7.0, 24.8, 0.05, 3.0}, Case{1.0, 9.81, 1.0, 0.2}}) {
    const lin::StateSpace ss = linearize_table(benchmark_type(c.m, c.g, c.r, c.l));
    const Eigen::VectorXcd v = lin::eigen_analysis(ss.A).values;
    const std::vector<cd> computed(v.data(), v.data() + v.size());
    const std::vector<cd> closed = lin::iftomm_eigenvalues(c.g, c.r, c.l);
    const double scale = std::abs(closed[0]);
    INFO("m=" << c.m << " g=" << c.g << " r=" << c.r << " l=" << c.l);
    CHECK(lin::iftomm_error(computed, closed) <= 1e-13 * scale);
    // Closed form is in the documented order already.
    CHECK(lin::sort_eigenvalues(closed) == closed);
  }
  CHECK_THROWS_AS(lin::iftomm_eigenvalues(9.81, 0.0, 1.0), std::invalid_argument);
}

TEST_CASE("linear: frequency response of the table equals the hand-derived transfer function") {
  // From (1.5) with the torque tau on the table: (M s^2 + K) [th1; th2] = [tau; 0], so
  // th2 / tau = -K21 / det(M s^2 + K) = m g r / ((I s^2 + m g r) (3/2 m r^2 s^2) - (m g r)^2).
  const double m = 1.0, g = 9.81, r = 0.25, l = 1.0, I = m * l * l / 12.0, J = 1.5 * m * r * r, k = m * g * r;
  const lin::StateSpace ss = linearize_table(tt::Params{});
  const std::vector<double> f = lin::log_grid(1e-3, 1e3, 241);
  const lin::FrequencyResponse fr = lin::frequency_response(ss, f);
  REQUIRE(fr.channels.size() == 1);
  const auto& ch = fr.channels[0];
  double worst = 0.0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double w = 2.0 * kPi * f[i];
    const cd s(0.0, w);
    const cd G = k / ((I * s * s + k) * (J * s * s) - k * k);
    worst = std::max(worst, std::abs(ch.h[i] - G) / std::abs(G));
    CHECK(ch.magnitude_db[i] == doctest::Approx(20.0 * std::log10(std::abs(G))).epsilon(1e-12));
  }
  MESSAGE("worst relative frequency-response error: " << worst);
  CHECK(worst <= 1e-12);
  // G is real on the imaginary axis: negative below the resonance at 1.08 Hz, positive above it
  // (up to the real pole pair's effect), so the phase is 180 deg, then jumps by 180 at the resonance.
  CHECK(ch.phase_deg.front() == doctest::Approx(180.0));
  // The jump at the resonance is +-180 deg: which way depends on round-off, so compare modulo 360.
  CHECK(std::remainder(ch.phase_deg.back(), 360.0) == doctest::Approx(0.0).scale(1.0).epsilon(1e-9));
  // Steady-state gain D - C A^-1 B = m g r / det K = -1 / (m g r).
  const lin::SteadyStateGain sg = lin::steady_state_gain(ss);
  CHECK_FALSE(sg.a_singular);
  CHECK(sg.gain(0, 0) == doctest::Approx(-1.0 / k).epsilon(1e-14));
  // No finite transmission zeros (the numerator is a constant).
  const lin::ZerosResult zr = lin::transmission_zeros(ss);
  CHECK_FALSE(zr.degenerate);
  CHECK(zr.zeros.empty());
}

TEST_CASE("linear: phase unwrapping along the grid") {
  // 1 / (s + 1)^3: the phase is -3 atan(w), reaching -270 deg without wrapping.
  const lin::StateSpace ss = canonical({1, 3, 3}, {1, 0, 0}, 0.0);
  const std::vector<double> f = lin::log_grid(1e-3, 1e3, 121);
  const auto fr = lin::frequency_response(ss, f);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double w = 2.0 * kPi * f[i];
    CHECK(fr.channels[0].phase_deg[i] == doctest::Approx(-3.0 * std::atan(w) * 180.0 / kPi).epsilon(1e-10));
    CHECK(fr.channels[0].magnitude_db[i] ==
          doctest::Approx(-30.0 * std::log10(1.0 + w * w)).epsilon(1e-10));
  }
}

TEST_CASE("linear: log grid") {
  const auto g = lin::log_grid(0.1, 1000.0, 5);
  REQUIRE(g.size() == 5);
  CHECK(g[0] == 0.1);
  CHECK(g[1] == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(g[2] == doctest::Approx(10.0).epsilon(1e-15));
  CHECK(g[4] == 1000.0);
  CHECK(lin::log_grid(2.0, 5.0, 1) == std::vector<double>{2.0});
  CHECK_THROWS_AS(lin::log_grid(0.0, 1.0, 3), std::invalid_argument);
  CHECK_THROWS_AS(lin::log_grid(2.0, 1.0, 3), std::invalid_argument);
  CHECK_THROWS_AS(lin::log_grid(1.0, 2.0, 0), std::invalid_argument);
}

TEST_CASE("linear: transmission zeros and steady-state gain of systems with known answers") {
  // (s + 2)(s - 3) / ((s + 1)(s + 4)(s + 5)) = (s^2 - s - 6) / (s^3 + 10 s^2 + 29 s + 20).
  const lin::StateSpace g1 = canonical({20, 29, 10}, {-6, -1, 1}, 0.0);
  check_zeros(lin::transmission_zeros(g1).zeros, {cd(3, 0), cd(-2, 0)}, 1e-12);
  CHECK(lin::steady_state_gain(g1).gain(0, 0) == doctest::Approx(-6.0 / 20.0).epsilon(1e-14));
  // Relative degree 2: (s - 3) / den.
  check_zeros(lin::transmission_zeros(canonical({20, 29, 10}, {-3, 1, 0}, 0.0)).zeros, {cd(3, 0)}, 1e-12);
  // Complex zeros: (s^2 + 2 s + 5) / den, zeros -1 +- 2i.
  check_zeros(lin::transmission_zeros(canonical({20, 29, 10}, {5, 2, 1}, 0.0)).zeros, {cd(-1, 2), cd(-1, -2)},
              1e-12);
  // Biproper: (s + 2)(s - 3)(s + 6) / den = 1 + (-5 s^2 - 41 s - 56) / den.
  const lin::StateSpace g3 = canonical({20, 29, 10}, {-56, -41, -5}, 1.0);
  check_zeros(lin::transmission_zeros(g3).zeros, {cd(3, 0), cd(-2, 0), cd(-6, 0)}, 1e-12);
  CHECK(lin::steady_state_gain(g3).gain(0, 0) == doctest::Approx(-36.0 / 20.0).epsilon(1e-14));

  // A 2 x 2 system: diag(g3, g2) with g2 = (s + 7) / (s^2 + 3 s + 2), mixed by invertible input
  // and output matrices and a state similarity, so D has rank 1 and nothing is diagonal. The
  // zeros of diag(g3, g2) are those of g3 and of g2; the mixing leaves them unchanged.
  const lin::StateSpace g2 = canonical({2, 3}, {7, 1}, 0.0);
  lin::StateSpace d;
  d.A = Eigen::MatrixXd::Zero(5, 5);
  d.A.topLeftCorner(3, 3) = g3.A;
  d.A.bottomRightCorner(2, 2) = g2.A;
  d.B = Eigen::MatrixXd::Zero(5, 2);
  d.B.block(0, 0, 3, 1) = g3.B;
  d.B.block(3, 1, 2, 1) = g2.B;
  d.C = Eigen::MatrixXd::Zero(2, 5);
  d.C.block(0, 0, 1, 3) = g3.C;
  d.C.block(1, 3, 1, 2) = g2.C;
  d.D = Eigen::MatrixXd::Zero(2, 2);
  d.D(0, 0) = 1.0;
  Eigen::Matrix2d Tin, Tout;
  Tin << 1.0, 2.0, 0.5, -1.0;
  Tout << 0.3, 1.0, -2.0, 0.7;
  Eigen::MatrixXd T(5, 5);
  T << 1, 0.2, 0, -0.3, 0.1, 0.4, 1, 0.2, 0, -0.2, 0, 0.3, 1, 0.1, 0.2, -0.1, 0, 0.5, 1, 0.3, 0.2, -0.4, 0, 0.2, 1;
  const Eigen::MatrixXd Ti = T.inverse();
  lin::StateSpace mix;
  mix.A = T * d.A * Ti;
  mix.B = T * d.B * Tin;
  mix.C = Tout * d.C * Ti;
  mix.D = Tout * d.D * Tin;
  const lin::ZerosResult zm = lin::transmission_zeros(mix);
  CHECK_FALSE(zm.degenerate);
  check_zeros(zm.zeros, {cd(3, 0), cd(-2, 0), cd(-6, 0), cd(-7, 0)}, 1e-10);
  // Its gain: Tout diag(-36/20, 7/2) Tin.
  Eigen::Matrix2d G0 = Eigen::Matrix2d::Zero();
  G0(0, 0) = -36.0 / 20.0;
  G0(1, 1) = 7.0 / 2.0;
  const Eigen::Matrix2d want = Tout * G0 * Tin;
  const lin::SteadyStateGain sg = lin::steady_state_gain(mix);
  CHECK((sg.gain - want).norm() <= 1e-12 * want.norm());

  // Two identical inputs: the pencil is singular for every s.
  lin::StateSpace dup = mix;
  dup.B.col(1) = dup.B.col(0);
  dup.D.col(1) = dup.D.col(0);
  CHECK(lin::transmission_zeros(dup).degenerate);
  // Not square: two outputs, one input.
  lin::StateSpace tall = g1;
  tall.C = Eigen::MatrixXd::Ones(2, 3);
  tall.D = Eigen::MatrixXd::Zero(2, 1);
  CHECK_THROWS_AS(lin::transmission_zeros(tall), std::invalid_argument);

  // A singular A (an integrator): the gain is flagged and NaN, and the note says there is none.
  const lin::StateSpace integ = canonical({0, 1}, {1, 0}, 0.0);  // 1 / (s (s + 1))
  const lin::SteadyStateGain si = lin::steady_state_gain(integ);
  CHECK(si.a_singular);
  CHECK(std::isnan(si.gain(0, 0)));
  CHECK_FALSE(si.exists());
  CHECK(lin::steady_state_gain_note(si).rfind("none: ", 0) == 0);
  CHECK(lin::steady_state_gain_note(sg).empty());  // a regular A needs no note
}

TEST_CASE("linear: a root at 0 of A that the input does not reach or the output does not see leaves a finite gain") {
  // g1 = (s + 2)(s - 3) / ((s + 1)(s + 4)(s + 5)), gain -6/20, with a fourth state appended: its row and column of
  // A are zero (a root at 0), as an energy ledger's state in a linearisation.
  const lin::StateSpace g1 = canonical({20, 29, 10}, {-6, -1, 1}, 0.0);
  auto with_zero_state = [&](double b4, double c4) {
    lin::StateSpace s;
    s.A = Eigen::MatrixXd::Zero(4, 4);
    s.A.topLeftCorner(3, 3) = g1.A;
    s.B = Eigen::MatrixXd::Zero(4, 1);
    s.B.topRows(3) = g1.B;
    s.B(3, 0) = b4;
    s.C = Eigen::MatrixXd::Zero(1, 4);
    s.C.leftCols(3) = g1.C;
    s.C(0, 3) = c4;
    s.D = g1.D;
    return s;
  };
  // Not seen at the output (the input drives it: x4' = u): the transfer function is g1's.
  const lin::SteadyStateGain unseen = lin::steady_state_gain(with_zero_state(1.0, 0.0));
  CHECK(unseen.a_singular);
  CHECK(unseen.gain(0, 0) == doctest::Approx(-6.0 / 20.0).epsilon(1e-13));
  // Seen but not driven (y = g1's output + x4): still g1's.
  CHECK(lin::steady_state_gain(with_zero_state(0.0, 1.0)).gain(0, 0) == doctest::Approx(-6.0 / 20.0).epsilon(1e-13));
  CHECK(lin::steady_state_gain_note(unseen).find("cancels") != std::string::npos);
  // Driven and seen: G = g1 + 1/s has a pole at 0, no steady state.
  const lin::SteadyStateGain both = lin::steady_state_gain(with_zero_state(1.0, 1.0));
  CHECK(std::isnan(both.gain(0, 0)));
  CHECK(lin::steady_state_gain_note(both).rfind("none: ", 0) == 0);
  // A double root at 0 (a Jordan block): x1' = x2 + u, x2' = 0. From u, y = x2 is 0 for every s (x2 is not driven);
  // y = x1 is 1/s, no steady state. The root's eigenvector alone (x1) would not tell them apart.
  lin::StateSpace jordan;
  jordan.A = Eigen::MatrixXd::Zero(2, 2);
  jordan.A(0, 1) = 1.0;
  jordan.B = Eigen::MatrixXd::Zero(2, 1);
  jordan.B(0, 0) = 1.0;
  jordan.C = Eigen::MatrixXd::Zero(2, 2);
  jordan.C(0, 1) = 1.0;  // y0 = x2
  jordan.C(1, 0) = 1.0;  // y1 = x1
  jordan.D = Eigen::MatrixXd::Zero(2, 1);
  const lin::SteadyStateGain gj = lin::steady_state_gain(jordan);
  CHECK(gj.gain(0, 0) == 0.0);
  CHECK(std::isnan(gj.gain(1, 0)));
  CHECK(lin::steady_state_gain_note(gj).rfind("none (NaN in the file) in 1 of 2 channels", 0) == 0);
}

// ---------------------------------------------------------------------------------------------
// Linear analysis of every smooth model through the scenario path, refusals, and the growth check.

#include <algorithm>

#include "rollsim/analysis/growth.hpp"
#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/io/hdf5.hpp"
#include "support.hpp"

namespace {

struct Linearized {
  rollsim::Scenario sc;
  std::unique_ptr<rollsim::HybridSystem> system;
  rollsim::LinearResult result;
};

Linearized linearize_text(const std::string& text, const std::vector<std::string>& sets = {}) {
  Linearized l;
  l.sc = rollsim::load_scenario_text(text, "test.toml", sets);
  l.system = rollsim::build_system(l.sc);
  l.result = rollsim::linearize_system(*l.system, rollsim::linear_options(l.sc), l.sc);
  return l;
}

std::vector<cd> sorted_by_imag(const Eigen::VectorXcd& v) {
  std::vector<cd> r(v.data(), v.data() + v.size());
  std::sort(r.begin(), r.end(), [](cd a, cd b) { return a.imag() < b.imag(); });
  return r;
}

}  // namespace

TEST_CASE("linear: carriage pendulum (minimal form) eigenvalues equal the roots of det(lambda^2 M + K) = 0") {
  // Linearising M(phi) [x'', phi''] = [F - k x + m l phi'^2 sin phi, -m g l sin phi] about the equilibrium
  // x = F / k, phi = 0 (phi'^2 sin phi and the phi-dependence of M are of second order there) gives
  //   M0 q'' + C q' + K q = 0,  M0 = [[m + m_c, m l], [m l, m l^2]],  C = 0,  K = [[k, 0], [0, m g l]],
  // whose eigenvalues solve det(lambda^2 M0 + K) = 0:
  //   (lambda^2 (m + m_c) + k) (lambda^2 m l^2 + m g l) - lambda^4 m^2 l^2 = 0, i.e. with mu = lambda^2,
  //   m_c l mu^2 + ((m + m_c) g + k l) mu + k g = 0,
  // two negative roots mu, so four undamped roots lambda = +-i sqrt(-mu). Solved here by the quadratic formula.
  struct Case {
    double mc, m, l, k, g, F;
  };
  const Case cases[] = {{1.0, 0.5, 1.0, 10.0, 9.81, 0.0}, {1.0, 0.5, 1.0, 10.0, 9.81, 2.0}, {0.3, 2.0, 0.7, 45.0, 3.7, -1.5}};
  for (const auto& c : cases) {
    auto num = [](double v) {
      char b[40];
      std::snprintf(b, sizeof b, "%.17g", v);
      return std::string(b);
    };
    const std::string text = "model = \"carriage_pendulum\"\nformulation = \"ode\"\n[parameters]\ncarriage_mass = " +
                             num(c.mc) + "\nbob_mass = " + num(c.m) + "\nrod_length = " + num(c.l) +
                             "\nspring_stiffness = " + num(c.k) + "\ngravity = " + num(c.g) + "\nforce = " + num(c.F) +
                             "\n[initial]\nx = " + num(c.F / c.k) + "\n";
    const Linearized l = linearize_text(text);
    CHECK(l.result.equilibrium_residual < 1e-14);
    const double a = c.mc * c.l, b = (c.m + c.mc) * c.g + c.k * c.l, cc = c.k * c.g;
    const double disc = std::sqrt(b * b - 4 * a * cc);
    const double mu1 = (-b + disc) / (2 * a), mu2 = (-b - disc) / (2 * a);
    REQUIRE(mu1 < 0);
    const double w1 = std::sqrt(-mu1), w2 = std::sqrt(-mu2);
    const std::vector<cd> expected{{0, -w2}, {0, -w1}, {0, w1}, {0, w2}};
    const std::vector<cd> got = sorted_by_imag(l.result.eig.values);
    REQUIRE(got.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(std::abs(got[i] - expected[i]) < 1e-12 * w2);
    }
    CHECK(l.result.modal.counts.undamped == 2);
    CHECK(l.result.modal.counts.oscillatory == 2);
  }
}

TEST_CASE("linear: an undamped pair's round-off real part is zero: damping ratio 0, time constant infinite") {
  // The carriage pendulum without damping at its equilibrium: M0 q'' + K q = 0 (the case above) has the four roots
  // +-i w1, +-i w2, so every real part the eigenvalue iteration returns is round-off.
  const Linearized l = linearize_text("model = \"carriage_pendulum\"\nformulation = \"ode\"\n");
  const lin::ModalTable& t = l.result.modal;
  const double floor = lin::kRealPartFloorUlps * std::numeric_limits<double>::epsilon() * l.result.ss.A.norm();
  CHECK(t.real_floor == floor);
  REQUIRE(t.rows.size() == 4);
  for (const auto& row : t.rows) {
    CAPTURE(row.lambda);
    CHECK(std::abs(row.real_rad_s) <= floor);
    CHECK(row.damping_ratio == 0.0);
    CHECK_FALSE(std::signbit(row.damping_ratio));
    CHECK(std::isinf(row.time_constant_s));
    CHECK(row.time_constant_s > 0);
    CHECK(row.stability == lin::Stability::Undamped);
  }
  CHECK(l.result.rule.find("256 eps ||A||_F") != std::string::npos);
  // Above the floor a real part is kept: a lightly damped pair keeps its damping ratio and time constant.
  Eigen::VectorXcd z(4);
  z << cd(-1e-11, 2.0), cd(-1e-11, -2.0), cd(-1e-13, 3.0), cd(-1e-13, -3.0);
  const lin::ModalTable kept = lin::modal_table(z, {}, 1e-12);
  CHECK(kept.rows[0].damping_ratio == doctest::Approx(1e-11 / std::abs(z(0))).epsilon(1e-12));
  CHECK(kept.rows[0].time_constant_s == doctest::Approx(1e11).epsilon(1e-12));
  CHECK(kept.rows[2].damping_ratio == 0.0);
  CHECK(std::isinf(kept.rows[2].time_constant_s));
}

TEST_CASE("linear: the shipped carriage-pendulum linear scenario linearises and passes the growth check") {
  std::string out;
  const std::string scenario = rollsim::test::source_dir() + "/scenarios/carriage_pendulum_linear.toml";
  CHECK(rollsim::test::run_binary("linearize " + scenario, out) == 0);
  CHECK(out.find("2 oscillatory, 0 damped, 2 undamped") != std::string::npos);
  // Its modal table: an undamped row's damping ratio is 0 and its time constant, infinite, is printed "-".
  const auto table = out.find("Modal table");
  REQUIRE(table != std::string::npos);
  std::istringstream rows(out.substr(table));
  std::string line;
  std::getline(rows, line);  // the title
  std::getline(rows, line);  // the header
  for (int k = 1; k <= 4; ++k) {
    REQUIRE(std::getline(rows, line));
    std::istringstream cells(line);
    std::string no, f, zeta, tau, wl, cls;
    cells >> no >> f >> zeta >> tau >> wl >> cls;
    CHECK(no == std::to_string(k));
    CHECK(std::stod(zeta) == 0.0);
    CHECK(tau == "-");
    CHECK(cls == "undamped");
  }
  // Its steady-state gain from the force: x = F / k in statics, phi unmoved (K = diag(k, m g l)).
  CHECK(out.find("steady-state gain: 1.0000000000e-01 ") != std::string::npos);
  CHECK(rollsim::test::run_binary("check growth " + scenario, out) == 0);
  CHECK(out.find("PASS") != std::string::npos);
}

TEST_CASE("linear: rollsim linearize gives the gain where A's root at 0 cancels and says in words where none exists") {
  // The damped carriage pendulum as a user model at phi = 0: its state work_forces (the damper's work) adds a root at
  // 0 that the forces' linear part does not drive and x does not see, so the gain is the mechanics' alone: in
  // statics K q = F with K = diag(k, m g l), so x = force_x / k (k = 10 N/m) and force_phi leaves x at 0.
  rollsim::test::TempDir dir;
  const std::string scenario = rollsim::test::source_dir() + "/scenarios/user_carriage_pendulum.toml";
  const std::string out = (dir.path / "lin.h5").string();
  std::string text;
  REQUIRE(rollsim::test::run_binary("linearize " + scenario + " --set initial.phi=0 -o " + out, text) == 0);
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("steady-state gain: 1.0000000000e-01 ") != std::string::npos);
  CHECK(text.find("so it cancels") != std::string::npos);
  {
    rollsim::h5::Handle f = rollsim::h5::open_file_readonly(out);
    rollsim::h5::Handle g = rollsim::h5::open_group(f.get(), "linear");
    const auto gain = rollsim::h5::read_vector(g.get(), "steady_state_gain");
    REQUIRE(gain.size() == 2);
    CHECK(gain[0] == doctest::Approx(1.0 / 10.0).epsilon(1e-12));
    CHECK(std::abs(gain[1]) < 1e-12);
  }
  // A free carriage (k = 0): a constant force on it moves it without bound, so force_x has no steady state; the
  // file's gain holds NaN there and its note says so.
  REQUIRE(rollsim::test::run_binary("linearize " + scenario + " --set initial.phi=0 --set parameters.k=0 -o " + out,
                                    text) == 0);
  CHECK(text.find("steady-state gain: none ") != std::string::npos);
  CHECK(text.find("no steady state") != std::string::npos);
  rollsim::h5::Handle f = rollsim::h5::open_file_readonly(out);
  rollsim::h5::Handle g = rollsim::h5::open_group(f.get(), "linear");
  CHECK(std::isnan(rollsim::h5::read_vector(g.get(), "steady_state_gain")[0]));
  CHECK(rollsim::h5::read_attr_string(g.get(), "steady_state_gain_note").rfind("none (NaN in the file)", 0) == 0);
}

TEST_CASE("linear: nonsmooth models and constrained formulations are refused with exit 2 and the reason") {
  const std::string dir = rollsim::test::source_dir() + "/scenarios/";
  std::string out;
  for (const char* command : {"linearize", "check growth"}) {
    CAPTURE(command);
    for (const char* nonsmooth : {"disk_type_a.toml", "relay_feedback.toml"}) {
      CAPTURE(nonsmooth);
      CHECK(rollsim::test::run_binary(std::string(command) + " " + dir + nonsmooth, out) == 2);
      CHECK(out.find("nonsmooth (a Filippov system)") != std::string::npos);
      CHECK(out.find("no Jacobian") != std::string::npos);
      CHECK(out.find("rollsim run") != std::string::npos);
      CHECK(out.find("internal error") == std::string::npos);
    }
    for (const char* dae : {"tipping_table_dae.toml", "carriage_pendulum.toml"}) {
      CAPTURE(dae);
      CHECK(rollsim::test::run_binary(std::string(command) + " " + dir + dae, out) == 2);
      CHECK(out.find("formulation = \"dae\"") != std::string::npos);
      CHECK(out.find("--set formulation=ode") != std::string::npos);
    }
  }
  // The minimal form of the same scenarios is accepted.
  CHECK(rollsim::test::run_binary("linearize " + dir + "carriage_pendulum.toml --set formulation=ode --set initial.phi=0",
                                  out) == 0);
  CHECK(rollsim::test::run_binary("linearize " + dir + "tipping_table_dae.toml --set formulation=ode --set initial.theta1=0",
                                  out) == 0);
}

TEST_CASE("growth: exit 1 only for a failed check, a perturbed run that cannot finish is a solver failure (3)") {
  const std::string scenario = rollsim::test::source_dir() + "/scenarios/tipping_table_linear.toml";
  std::string out;
  CHECK(rollsim::test::run_binary("check growth " + scenario, out) == 0);
  // A tolerance below every row's integration floor: no row can be judged, so the check fails and says why.
  CHECK(rollsim::test::run_binary("check growth " + scenario + " --set growth.tolerance=1e-12", out) == 1);
  CHECK(out.find("FAIL") != std::string::npos);
  CHECK(out.find("no row with epsilon <= growth.small_epsilon") != std::string::npos);
  CHECK(rollsim::test::run_binary("check growth " + scenario + " --set solver.max_steps=5", out) == 3);
  CHECK(out.find("solver failure in a perturbed run") != std::string::npos);
}

namespace {

/// The growth check on the benchmark table, optionally with a table torque and theta2 at its equilibrium.
rollsim::GrowthResult table_growth(double torque) {
  const double g = 9.81, r = 0.25, m = 1.0;
  // Equilibrium with torque tau: theta1 = 0 and m g s = tau, so s = r (theta1 - theta2) = tau / (m g).
  const double theta2 = -torque / (m * g) / r;
  char buf[64];
  std::snprintf(buf, sizeof buf, "initial.theta2=%.17g", theta2);
  const Linearized l = linearize_text(rollsim::test::read_file(rollsim::test::source_dir() +
                                                               "/scenarios/tipping_table_linear.toml"),
                                      {"parameters.table_torque=" + std::to_string(torque), buf});
  const auto& model = rollsim::linearizable(*l.system, l.sc);
  return rollsim::check_growth(rollsim::simulation_options(l.sc), model, l.result, rollsim::growth_options(l.sc));
}

}  // namespace

TEST_CASE("growth: the error's order is 2 at the symmetric equilibrium and 1 with a table torque") {
  // At theta1 = theta2 = 0 with no torque the model is odd in the state (x -> -x maps solutions to
  // solutions), so the quadratic terms vanish and the error of the fitted rate falls as epsilon^2. A torque
  // moves the equilibrium to s = tau / (m g) != 0, where quadratic terms exist: the error falls as epsilon.
  for (double torque : {0.0, 0.5}) {
    CAPTURE(torque);
    const rollsim::GrowthResult g = table_growth(torque);
    CHECK(g.passed);
    REQUIRE(g.orders.size() == 3);  // the oscillatory pair and the two real roots
    for (const auto& o : g.orders) {
      CAPTURE(o.label);
      CHECK(o.points >= 2);
      if (torque == 0)
        CHECK(std::abs(o.order - 2.0) <= 0.05);
      else
        CHECK(std::abs(o.order - 1.0) <= 0.1);
    }
    // The floor is an estimate, not a measurement: it is positive and finite for every row, and it grows as
    // epsilon shrinks only where the equilibrium is away from x = 0 (the round-off of u |x0|).
    for (const auto& row : g.rows) CHECK((row.floor > 0 && std::isfinite(row.floor)));
    // At small epsilon the measured error is at most the floor plus the nonlinear error, the latter
    // extrapolated from epsilon = 1e-3 with the theoretical order (2 at x0 = 0, 1 with the torque).
    const double p = torque == 0 ? 2.0 : 1.0;
    for (const auto& row : g.rows) {
      if (row.epsilon > 1e-6) continue;
      double ref = NAN;
      for (const auto& other : g.rows)
        if (other.mode == row.mode && std::abs(other.epsilon - 1e-3) < 1e-15) ref = other.rel_error;
      CAPTURE(row.label);
      CAPTURE(row.epsilon);
      CHECK(row.rel_error <= row.floor + 2 * ref * std::pow(row.epsilon / 1e-3, p));
    }
    const auto& first = g.rows.front();  // smallest epsilon of the first mode
    const auto& last = g.rows[7];        // largest
    if (torque == 0)
      CHECK(first.floor < 10 * last.floor);
    else
      CHECK(first.floor > 1e3 * last.floor);
  }
}
