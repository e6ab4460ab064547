// The Whipple bicycle of scenarios/bicycle_meijaard.toml against the benchmark's published answers: Meijaard,
// Papadopoulos, Ruina and Schwab 2007, Proc. R. Soc. A 463:1955-1982, Table 2 (eigenvalues), eq. (5.4) (the
// linearized matrices M, C1, K0, K2), the weave and capsize speeds; the nonlinear runs of the IFToMM
// "uncontrolled bicycle" manoeuvres at 4 m/s (the weave grows at Table 2's rate), 4.6 m/s (the roll decays) and
// 8 m/s (the capsize root's growth), energy conserved in each; the static wheel loads of straight running. The numbers are copied in docs/references-3d.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include <Eigen/Dense>

#include "rollsim/analysis/linear_model.hpp"
#include "rolling_3d_support.hpp"

namespace rollsim {

namespace {

using cd = std::complex<double>;

const std::string kScenario = rollsim::test::source_dir() + "/scenarios/bicycle_meijaard.toml";

/// The overrides of upright straight running at forward speed v (the scenario's parameter v, which sets the rear
/// wheel's rate v/rR), no roll rate.
std::vector<std::string> straight_running(double v) { return {"parameters.v=" + test::digits(v), "initial_rates.phi=0"}; }

struct Linearized {
  Scenario sc;
  LinearResult result;
  /// A over (phi, delta, der_phi, der_delta), in that order, from the result's kept states.
  Eigen::Matrix4d A;
};

Linearized linearize_at(double v) {
  Linearized l;
  l.sc = load_scenario(kScenario, straight_running(v));
  auto sys = build_system(l.sc);
  l.result = linearize_system(*sys, linear_options(l.sc), l.sc);
  const auto& names = l.result.state_names;
  REQUIRE_MESSAGE(names.size() == 4, "the reduced state should be roll, steer and their rates; it is " << names.size()
                                                                                                     << " states");
  const char* order[] = {"phi", "delta", "der_phi", "der_delta"};
  Eigen::Index at[4];
  for (int i = 0; i < 4; ++i) {
    const auto it = std::find(names.begin(), names.end(), order[i]);
    REQUIRE_MESSAGE(it != names.end(), "state " << order[i] << " is not among the linearization's states");
    at[i] = it - names.begin();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) l.A(i, j) = l.result.ss.A(at[i], at[j]);
  return l;
}

/// Meijaard et al. 2007, eq. (5.4): M q'' + v C1 q' + (g K0 + v^2 K2) q = 0, q = (phi, delta).
struct Benchmark {
  Eigen::Matrix2d M, C1, K0, K2;
  double g = 9.81;
  Benchmark() {
    M << 80.81722, 2.31941332208709, 2.31941332208709, 0.29784188199686;
    C1 << 0, 33.86641391492494, -0.85035641456978, 1.68540397397560;
    K0 << -80.95, -2.59951685249872, -2.59951685249872, -0.80329488458618;
    K2 << 0, 76.59734589573222, 0, 2.65431523794604;
  }
  /// The state matrix over (phi, delta, phi', delta').
  Eigen::Matrix4d A(double v) const {
    Eigen::Matrix4d a = Eigen::Matrix4d::Zero();
    a.topRightCorner<2, 2>() = Eigen::Matrix2d::Identity();
    a.bottomLeftCorner<2, 2>() = -M.inverse() * (g * K0 + v * v * K2);
    a.bottomRightCorner<2, 2>() = -v * M.inverse() * C1;
    return a;
  }
};

/// Table 2: the weave pair (re, im), then the two real roots; at v = 0 the four real roots +-3.13..., +-5.53....
struct Table2Row {
  double v, re, im, r1, r2;
};
const Table2Row kTable2[] = {
    {1, 3.52696170990070, 0.80774027519930, -3.13423125066578, -7.11008014637442},
    {2, 2.68234517512745, 1.68066296590675, -3.07158645641514, -8.67387984831735},
    {3, 1.70675605663975, 2.31582447384325, -2.63366137253667, -10.35101467245920},
    {4, 0.41325331521125, 3.07910818603206, -1.42944427361326, -12.15861426576450},
    {5, -0.77534188219585, 4.46486771378823, -0.32286642900409, -14.07838969279820},
    {6, -1.52644486584142, 5.87673060598709, -0.00406690076970, -16.08537123098030},
    {7, -2.13875644258362, 7.19525913329805, 0.10268170574766, -18.15788466125262},
    {8, -2.69348683581097, 8.46037971396931, 0.14327879765713, -20.27940894394569},
    {9, -3.21675402252485, 9.69377351531791, 0.15790184030917, -22.43788559040858},
    {10, -3.72016840437287, 10.90681139476287, 0.16105338653172, -24.62459635017404}};

/// The largest distance from each expected root to the nearest computed one (and back), over 4 roots.
double root_error(std::vector<cd> got, std::vector<cd> want) {
  double worst = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const cd& w : want) {
      double best = INFINITY;
      for (const cd& g : got) best = std::min(best, std::abs(g - w));
      worst = std::max(worst, best);
    }
    std::swap(got, want);
  }
  return worst;
}

/// The weave mode's real part: the complex pair's (the v range of the searches below has one pair).
double weave_real(double v) {
  for (const cd& e : test::roots(linearize_at(v).A))
    if (std::abs(e.imag()) > 1e-6) return e.real();
  FAIL("no complex pair at v = " << v);
  return NAN;
}

/// The capsize mode: the largest real root.
double capsize_root(double v) {
  double best = -INFINITY;
  for (const cd& e : test::roots(linearize_at(v).A))
    if (std::abs(e.imag()) <= 1e-6) best = std::max(best, e.real());
  return best;
}

/// A root of the smooth f near [a, b] (f(a), f(b) of opposite signs) by the secant method, to a step <= tol.
template <class F>
double root_of(F f, double a, double b, double tol) {
  double fa = f(a), fb = f(b);
  REQUIRE(fa * fb < 0);
  for (int k = 0; k < 40; ++k) {
    if (fb == 0 || fb == fa) return b;
    const double c = b - fb * (b - a) / (fb - fa);
    if (std::abs(c - b) <= tol) return c;
    a = b, fa = fb;
    b = c, fb = f(c);
  }
  FAIL("the secant iteration did not converge");
  return NAN;
}

/// The peaks of |s| after t0 (a sample above both neighbours), each placed by the parabola through it and its two
/// neighbours: (time, |s| there).
std::vector<std::pair<double, double>> abs_peaks(const std::vector<double>& t, const std::vector<double>& s, double t0) {
  std::vector<std::pair<double, double>> out;
  for (std::size_t k = 1; k + 1 < t.size(); ++k) {
    const double a = std::abs(s[k - 1]), b = std::abs(s[k]), c = std::abs(s[k + 1]);
    if (t[k] < t0 || !(b >= a && b > c)) continue;
    const double curv = a - 2 * b + c, off = curv != 0 ? 0.5 * (a - c) / curv : 0.0;
    out.emplace_back(t[k] + off * (t[k + 1] - t[k]), b - 0.25 * (a - c) * off);
  }
  return out;
}

/// The energy ledger's largest change over a run, relative to the energy's scale max |T| + |V|.
double energy_drift(const test::RunSignals& column) {
  const auto balance = column("energy_balance"), T = column("kinetic_energy"), V = column("potential_energy");
  double scale = 0, drift = 0;
  for (std::size_t k = 0; k < balance.size(); ++k) {
    scale = std::max(scale, std::abs(T[k]) + std::abs(V[k]));
    drift = std::max(drift, std::abs(balance[k] - balance[0]));
  }
  return drift / scale;
}

}  // namespace

TEST_CASE("bicycle: the linearization about upright straight running gives Meijaard's Table 2 eigenvalues") {
  // Table 2 gives 14 decimals. The linearization's A comes from exact derivatives of the equations; the
  // eigenvalues of a 4 x 4 matrix of norm ~ 400 carry round-off of about 1e-13: the goal is 1e-12.
  double worst = 0;
  {
    const auto got = test::roots(linearize_at(0).A);
    const std::vector<cd> want{3.13164324790656, -3.13164324790656, 5.53094371765393, -5.53094371765393};
    const double e = root_error(got, want);
    INFO("v = 0: error " << e);
    CHECK(e <= 1e-12);
    worst = std::max(worst, e);
  }
  for (const auto& row : kTable2) {
    const auto got = test::roots(linearize_at(row.v).A);
    const std::vector<cd> want{{row.re, row.im}, {row.re, -row.im}, row.r1, row.r2};
    const double e = root_error(got, want);
    INFO("v = " << row.v << ": error " << e);
    CHECK(e <= 1e-12);
    worst = std::max(worst, e);
  }
  MESSAGE("Table 2, v = 0..10 m/s: largest eigenvalue error " << worst);
}

TEST_CASE("bicycle: the linearized state matrix equals the one of eq. (5.4) M, C1, K0, K2") {
  // A = [[0, I], [-M^-1 (g K0 + v^2 K2), -v M^-1 C1]]. The published entries have 14 significant digits;
  // M^-1 (condition number about 350) turns their rounding (5e-15 relative) into about 2e-12 of A's lower
  // blocks, whose entries reach 10^3 at v = 10: each entry is compared to 1e-11 relative to its block's largest.
  const Benchmark b;
  double worst = 0;
  for (double v : {0.0, 1.0, 4.6, 10.0}) {
    const Eigen::Matrix4d got = linearize_at(v).A, want = b.A(v);
    INFO("v = " << v << "\ngot\n" << got << "\nwant\n" << want);
    CHECK((got.topRows<2>() - want.topRows<2>()).cwiseAbs().maxCoeff() <= 1e-12);
    const Eigen::Matrix2d K = got.bottomLeftCorner<2, 2>() - want.bottomLeftCorner<2, 2>();
    const Eigen::Matrix2d C = got.bottomRightCorner<2, 2>() - want.bottomRightCorner<2, 2>();
    CHECK(K.cwiseAbs().maxCoeff() <= 1e-11 * want.bottomLeftCorner<2, 2>().cwiseAbs().maxCoeff());
    CHECK(C.cwiseAbs().maxCoeff() <= 1e-11 * std::max(1.0, want.bottomRightCorner<2, 2>().cwiseAbs().maxCoeff()));
    worst = std::max({worst, K.cwiseAbs().maxCoeff() / want.bottomLeftCorner<2, 2>().cwiseAbs().maxCoeff(),
                      C.cwiseAbs().maxCoeff() / std::max(1.0, want.bottomRightCorner<2, 2>().cwiseAbs().maxCoeff())});
  }
  MESSAGE("eq. (5.4): largest difference of A's lower blocks " << worst << " of the block's largest entry");
}

TEST_CASE("bicycle: the weave and capsize speeds by a root search on the linearization") {
  // Meijaard et al. 2007: v_w = 4.29238253634111, v_c = 6.02426201538837 m/s; the self-stable range between.
  const double vw = root_of(weave_real, 4.0, 5.0, 1e-13);
  const double vc = root_of(capsize_root, 5.5, 6.5, 1e-13);
  MESSAGE("weave speed " << test::digits(vw) << ", capsize speed " << test::digits(vc));
  CHECK(std::abs(vw - 4.29238253634111) <= 1e-10);
  CHECK(std::abs(vc - 6.02426201538837) <= 1e-10);
}

TEST_CASE("bicycle: the IFToMM manoeuvre at 4.6 m/s (roll rate 0.5 rad/s): the roll decays, energy is conserved") {
  // Inside the self-stable range (4.29 < v < 6.02) every mode of the linearization decays; the slowest at 4.6 m/s
  // decays at about 0.3/s (Table 2 between 4 and 5 m/s), so over 15 s the roll's envelope falls by a factor far
  // below 0.1. The energy of ideal rolling is conserved: its ledger to 100 rtol of the energy's scale. The contacts
  // stay closed (positive normal forces) and the front gap stays at the integration error.
  const double t_end = test::full_or_sanitized(20.0, 5.0);
  const double rtol = 1e-10;
  test::Run r = test::run_text(test::read_file(kScenario),
                               {"simulation.t_end=" + test::digits(t_end), "simulation.output_dt=0.01", "solver.rtol=" + test::digits(rtol)});
  REQUIRE(r.result.completed());
  CHECK(std::abs(r.result.t_final - t_end) <= 1e-9);
  const test::RunSignals column(r);
  const auto t = r.rec.t, phi = column("phi"), balance = column("energy_balance"), T = column("kinetic_energy"),
             V = column("potential_energy"), nf = column("normal_force_front"), nr = column("normal_force_rear"),
             gap = column("gap_front"), speed = column("forward_speed");
  auto envelope = [&](double t0, double t1) {
    double m = 0;
    for (std::size_t k = 0; k < t.size(); ++k)
      if (t[k] >= t0 && t[k] <= t1) m = std::max(m, std::abs(phi[k]));
    return m;
  };
  double scale = 0, drift = 0, gap_max = 0, n_min = INFINITY;
  for (std::size_t k = 0; k < t.size(); ++k) {
    scale = std::max(scale, std::abs(T[k]) + std::abs(V[k]));
    drift = std::max(drift, std::abs(balance[k] - balance[0]));
    gap_max = std::max(gap_max, std::abs(gap[k]));
    n_min = std::min({n_min, nf[k], nr[k]});
  }
  MESSAGE("roll envelope 0-2 s " << envelope(0, 2) << ", last 2 s " << envelope(t_end - 2, t_end) << "; energy drift "
                                 << drift / scale << " of " << scale << " J; |front gap| <= " << gap_max
                                 << " m; smallest normal force " << n_min << " N");
  CHECK(std::abs(speed.front() - 4.6) <= 1e-12);
  CHECK(drift <= 100 * rtol * scale);
  CHECK(gap_max <= 1e-8);
  CHECK(n_min > 0);
  if (!test::sanitized) CHECK(envelope(t_end - 5, t_end) <= 0.1 * envelope(0, 5));
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("bicycle: the IFToMM manoeuvre at 8 m/s (roll rate 0.05 rad/s) capsizes at Table 2's rate") {
  // Above the capsize speed the capsize root 0.14327879765713/s (Table 2, v = 8 m/s) is the only growing mode; the
  // weave (-2.69/s) has died out by t = 12 s, so the roll grows as exp(0.1433 t) from there. The nonlinear run's
  // rate differs by terms of relative order phi^2 (phi <= 0.06 rad here) and by the forward speed's slow change.
  const double v = 8, sigma = 0.14327879765713;
  const double t0 = 12, t1 = test::full_or_sanitized(20.0, 14.0);
  test::Run r = test::run_text(test::read_file(kScenario),
                               {"parameters.v=" + test::digits(v), "initial_rates.phi=0.05",
                                "simulation.t_end=" + test::digits(t1), "simulation.output_dt=0.01"});
  REQUIRE(r.result.completed());
  const test::RunSignals column(r);
  const auto t = r.rec.t, phi = column("phi"), speed = column("forward_speed");
  auto at = [&](const std::vector<double>& s, double when) {
    const auto k = std::min_element(t.begin(), t.end(), [&](double a, double b) {
                     return std::abs(a - when) < std::abs(b - when);
                   }) - t.begin();
    return s[static_cast<std::size_t>(k)];
  };
  const double rate = std::log(at(phi, t1) / at(phi, t0)) / (t1 - t0);
  double phi_max = 0, dv = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    phi_max = std::max(phi_max, std::abs(phi[k]));
    dv = std::max(dv, std::abs(speed[k] - v));
  }
  const double drift = energy_drift(column);
  MESSAGE("capsize rate " << rate << " /s from the nonlinear run (Table 2: " << sigma << "); |phi| <= " << phi_max
                          << ", |speed - 8| <= " << dv << "; energy drift " << drift << " of its scale");
  CHECK(std::abs(rate - sigma) <= phi_max * phi_max * sigma);
  // Ideal rolling conserves energy: the ledger to 100 rtol of the energy's scale (the scenario's rtol).
  CHECK(drift <= 100 * simulation_options(r.scenario).solver.rtol);
}

TEST_CASE("bicycle: at 4 m/s, below the weave speed, the weave grows at Table 2's rate and frequency") {
  // Table 2, v = 4 m/s: the weave pair 0.41325331521125 +- 3.07910818603206 i grows; the capsize root -1.429 and
  // the castor root -12.16 decay. From a roll rate of 1e-5 rad/s the roll stays below 1e-3 rad over 14 s, so the
  // nonlinear run follows the linearization: the peaks of |phi| are pi / omega apart and grow as exp(sigma t).
  // The rate is read from the peaks after t = 5 s, where the capsize mode's share has fallen by
  // exp(-(1.429 + 0.413) 5) = 1.0e-4 against the weave's: over the 9 s between the first and the last peak that
  // bends the log-amplitude's slope by at most 1.0e-4 / 9 = 1.1e-5 /s (2.7e-5 relative); the nonlinear terms are
  // of relative order phi^2 <= 1e-6 (from 1e-4 rad/s the same reading is off by 3 phi^2); the peaks are located
  // by a parabola through three samples 1 ms apart (an error of order (omega dt)^4, 1e-10). The bound below is
  // their sum, 3e-5, rounded up to 5e-5.
  // The run is the 4 m/s manoeuvre's below at a smaller start; a sanitizer tree runs that one (14 s of 1 ms samples
  // took 76 s there).
  if (test::sanitized) return;
  const double sigma = 0.41325331521125, omega = 3.07910818603206;
  test::Run r = test::run_text(test::read_file(kScenario), {"parameters.v=4", "initial_rates.phi=1e-5",
                                                            "simulation.t_end=14", "simulation.output_dt=0.001"});
  REQUIRE(r.result.completed());
  const test::RunSignals column(r);
  const auto peaks = abs_peaks(r.rec.t, column("phi"), 5.0);
  REQUIRE(peaks.size() >= 6);
  const double rate = std::log(peaks.back().second / peaks.front().second) / (peaks.back().first - peaks.front().first);
  double spacing = 0;
  for (std::size_t k = 1; k < peaks.size(); ++k)
    spacing = std::max(spacing, std::abs(peaks[k].first - peaks[k - 1].first - M_PI / omega));
  MESSAGE("weave at 4 m/s: growth rate " << test::digits(rate) << " /s (Table 2: " << sigma << "), peak spacing off "
                                           "pi/omega by at most " << spacing << " s over " << peaks.size() << " peaks");
  CHECK(std::abs(rate - sigma) <= 5e-5 * sigma);
  // The spacing: the capsize mode's share shifts a peak by at most its relative size over omega, 1.0e-4 / 3.08.
  CHECK(spacing <= 1.0e-4 / omega);
}

TEST_CASE("bicycle: the IFToMM manoeuvre at 4 m/s (roll rate 0.05 rad/s): the weave grows, energy is conserved") {
  // The manoeuvre itself: from a roll rate of 0.05 rad/s the weave grows (linear rate 0.413/s, Table 2) until the
  // roll is of order 0.1 rad, where the nonlinear terms slow it; the run covers the 20 s with ideal rolling's
  // energy conserved (100 rtol of its scale), both wheels on the ground (positive normal forces).
  const double t_end = test::full_or_sanitized(20.0, 6.0);
  test::Run r = test::run_text(test::read_file(kScenario),
                               {"parameters.v=4", "initial_rates.phi=0.05", "simulation.t_end=" + test::digits(t_end),
                                "simulation.output_dt=0.01"});
  REQUIRE(r.result.completed());
  CHECK(std::abs(r.result.t_final - t_end) <= 1e-9);
  const test::RunSignals column(r);
  const auto peaks = abs_peaks(r.rec.t, column("phi"), 1.0);
  REQUIRE(peaks.size() >= 4);
  // The second peak after t = 1 s is one weave period after the first: the linear growth over it is
  // exp(sigma 2 pi / omega) = 2.32; the amplitude here (< 0.06 rad) keeps at least half of that growth in log.
  const double growth = peaks[2].second / peaks[0].second;
  double n_min = INFINITY;
  for (const char* name : {"normal_force_front", "normal_force_rear"})
    for (double n : column(name)) n_min = std::min(n_min, n);
  const double drift = energy_drift(column);
  MESSAGE("weave at 4 m/s from 0.05 rad/s: |phi| " << peaks[0].second << " -> " << peaks[2].second << " over one period ("
                                                  << growth << "x); energy drift " << drift << "; smallest N " << n_min);
  CHECK(growth >= std::exp(0.5 * 0.41325331521125 * 2 * M_PI / 3.07910818603206));
  CHECK(drift <= 100 * simulation_options(r.scenario).solver.rtol);
  CHECK(n_min > 0);
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("bicycle: upright straight running carries the static wheel loads") {
  // Running straight and upright at constant speed nothing accelerates, so the contact forces are the static ones:
  // the front normal force is g sum_i m_i x_i / w (moments about the rear contact, x_i the centres' distances
  // ahead of it: 0, xB, xH and w), the rear one the rest of the weight, and the tangential forces vanish.
  const Scenario base = load_scenario(kScenario, {});
  auto p = [&](const char* name) { return base.real(std::string("parameters.") + name); };
  const double weight = p("g") * (p("mR") + p("mB") + p("mH") + p("mF"));
  const double front = p("g") * (p("mB") * p("xB") + p("mH") * p("xH") + p("mF") * p("w")) / p("w");
  test::Run r = test::run_text(test::read_file(kScenario),
                               {"initial_rates.phi=0", "simulation.t_end=1", "simulation.output_dt=0.1"});
  REQUIRE(r.result.completed());
  const test::RunSignals column(r);
  const auto nf = column("normal_force_front"), nr = column("normal_force_rear");
  double worst = 0;
  for (const char* name : {"tangential_force_x_front", "tangential_force_y_front", "tangential_force_x_rear",
                           "tangential_force_y_rear"})
    for (double f : column(name)) worst = std::max(worst, std::abs(f));
  for (std::size_t k = 0; k < nf.size(); ++k) {
    worst = std::max(worst, std::abs(nf[k] - front));
    worst = std::max(worst, std::abs(nr[k] - (weight - front)));
  }
  MESSAGE("static loads: front " << front << " N, rear " << weight - front << " N; largest difference " << worst << " N");
  CHECK(worst <= 1e-10 * weight);
}

}  // namespace rollsim
