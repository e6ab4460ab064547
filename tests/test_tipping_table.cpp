// The wheel on the tipping table against independent answers: Lagrange's equations of T and V obtained by
// hyper-dual differentiation, the benchmark's (1.3)-(1.4), energy conservation, contact forces, symmetry.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include <Eigen/Dense>
#include <unsupported/Eigen/AutoDiff>

#include "rollsim/models/tipping_table.hpp"
#include "rollsim/models/tipping_table_system.hpp"
#include "support.hpp"

using namespace rollsim;
namespace tt = rollsim::tipping_table;

namespace {

/// Hyper-dual numbers: f + a e1 + b e2 + c e1e2 with e1^2 = e2^2 = 0. c carries the exact mixed second derivative.
struct HD {
  double f = 0, a = 0, b = 0, c = 0;
  HD() = default;
  HD(double v) : f(v) {}  // NOLINT: implicit on purpose
  HD(double f_, double a_, double b_, double c_) : f(f_), a(a_), b(b_), c(c_) {}
};
HD operator+(HD x, HD y) { return {x.f + y.f, x.a + y.a, x.b + y.b, x.c + y.c}; }
HD operator-(HD x, HD y) { return {x.f - y.f, x.a - y.a, x.b - y.b, x.c - y.c}; }
HD operator*(HD x, HD y) { return {x.f * y.f, x.f * y.a + x.a * y.f, x.f * y.b + x.b * y.f, x.f * y.c + x.a * y.b + x.b * y.a + x.c * y.f}; }
HD sin(HD x) { return {std::sin(x.f), std::cos(x.f) * x.a, std::cos(x.f) * x.b, std::cos(x.f) * x.c - std::sin(x.f) * x.a * x.b}; }
HD cos(HD x) { return {std::cos(x.f), -std::sin(x.f) * x.a, -std::sin(x.f) * x.b, -std::sin(x.f) * x.c - std::cos(x.f) * x.a * x.b}; }

/// The Lagrangian L = T - V written from docs/equations.md §1 directly (general form), not from the model code.
/// z = (theta1, theta2, omega1, omega2).
HD lagrangian(const tt::Params& p, const HD* z) {
  const double r = p.wheel_radius, m = p.wheel_mass, g = p.gravity;
  const HD s = HD(r) * (z[0] - z[1]);
  const HD T = HD(0.5 * p.table_inertia) * z[2] * z[2] + HD(0.5 * p.wheel_inertia) * z[3] * z[3] +
               HD(0.5 * m) * (HD(r * r) * z[3] * z[3] + s * s * z[2] * z[2]);
  const HD V = HD(m * g) * (s * sin(z[0]) + HD(r) * cos(z[0]));
  return T - V;
}

/// d^2 L / dz_i dz_j and dL/dz_i by hyper-dual evaluation.
void derivatives(const tt::Params& p, const double* z, double H[4][4], double G[4]) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      HD zz[4];
      for (int k = 0; k < 4; ++k) zz[k] = HD(z[k], k == i ? 1.0 : 0.0, k == j ? 1.0 : 0.0, 0.0);
      const HD L = lagrangian(p, zz);
      H[i][j] = L.c;
      G[i] = L.a;
    }
}

/// Accelerations from Lagrange's equations: M q'' + C q' - dL/dq = Q, with M = d2L/dq'dq', C = d2L/dq'dq.
void lagrange_accelerations(const tt::Params& p, const double* z, double* acc) {
  double H[4][4], G[4];
  derivatives(p, z, H, G);
  const double Q[2] = {p.table_torque, 0.0};
  double rhs[2];
  for (int i = 0; i < 2; ++i) rhs[i] = Q[i] + G[i] - (H[2 + i][0] * z[2] + H[2 + i][1] * z[3]);
  const double a = H[2][2], b = H[2][3], c = H[3][2], d = H[3][3];
  const double det = a * d - b * c;
  acc[0] = (d * rhs[0] - b * rhs[1]) / det;
  acc[1] = (a * rhs[1] - c * rhs[0]) / det;
}

tt::Params random_params(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.3, 3.0);
  tt::Params p;
  p.wheel_mass = u(rng);
  p.wheel_radius = 0.1 * u(rng);
  p.wheel_inertia = 0.4 * p.wheel_mass * p.wheel_radius * p.wheel_radius * u(rng);
  p.table_length = u(rng);
  p.table_inertia = 0.1 * u(rng);
  p.gravity = 3.0 * u(rng);
  p.table_torque = u(rng) - 1.5;
  return p;
}

std::string digits17(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

const char* kBenchmarkRun = R"(
model = "tipping_table"
[initial]
theta1 = 0.01
[simulation]
t_end = 10
output_dt = 0.01
[events]
lift_off = "record"
)";

}  // namespace

TEST_CASE("tipping table: right-hand side equals Lagrange's equations of T and V (hyper-dual derivatives)") {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const tt::Params p = trial == 0 ? tt::Params{} : random_params(rng);
    const double x[4] = {0.5 * u(rng), 2.0 * u(rng), 3.0 * u(rng), 5.0 * u(rng)};
    double xdot[4], acc[2];
    tt::rhs(p, x, p.table_torque, xdot);
    lagrange_accelerations(p, x, acc);
    for (int i = 0; i < 2; ++i) {
      const double err = std::abs(xdot[2 + i] - acc[i]) / (1.0 + std::abs(acc[i]));
      worst = std::max(worst, err);
    }
    CHECK(xdot[0] == x[2]);
    CHECK(xdot[1] == x[3]);
  }
  CHECK(worst < 1e-13);
}

TEST_CASE("tipping table: benchmark values reduce to (1.3)-(1.4)") {
  const tt::Params p;  // defaults are the benchmark: m = 1, r = 0.25, l = 1, g = 9.81
  const double m = 1, r = 0.25, l = 1, g = 9.81;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    const double x[4] = {0.4 * u(rng), 2.0 * u(rng), 3.0 * u(rng), 4.0 * u(rng)};
    double xd[4];
    tt::rhs(p, x, 0.0, xd);
    const double t1 = x[0], t2 = x[1], w1 = x[2], w2 = x[3], a1 = xd[2], a2 = xd[3];
    const double eq13 = (l * l * m / 12 + m * r * r * (t2 - t1) * (t2 - t1)) * a1 +
                        m * r * (t2 - t1) * (r * (2 * w1 * w2 - w1 * w1) - g * std::cos(t1));
    const double eq14 = 1.5 * m * r * r * a2 - m * r * r * w1 * w1 * (t2 - t1) - m * g * r * std::sin(t1);
    CHECK(std::abs(eq13) < 1e-13);
    CHECK(std::abs(eq14) < 1e-13);
    // (1.1)-(1.2) against the general-form energies.
    const double T = l * l * m * w1 * w1 / 24 + m * r * r * w2 * w2 / 4 + 0.5 * m * r * r * ((t2 - t1) * (t2 - t1) * w1 * w1 + w2 * w2);
    const double V = m * g * r * ((t1 - t2) * std::sin(t1) + std::cos(t1));
    CHECK(tt::kinetic_energy(p, x) == doctest::Approx(T).epsilon(1e-14));
    CHECK(tt::potential_energy(p, x) == doctest::Approx(V).epsilon(1e-14));
  }
}

TEST_CASE("tipping table: contact forces at rest equal the wheel's weight") {
  tt::Params p;
  p.wheel_mass = 2.5;
  p.gravity = 9.0;
  const double x[4] = {0, 0, 0, 0};
  double n, t;
  tt::contact_forces(p, x, 0.0, n, t);
  CHECK(n == doctest::Approx(2.5 * 9.0).epsilon(1e-15));
  CHECK(std::abs(t) < 1e-15);
}

TEST_CASE("tipping table: contact forces agree with the wheel centre's acceleration from its sampled path") {
  // F = m p'' + m g y: differentiate the sampled wheel-centre path twice (central differences, h = 1e-4 s)
  // and compare with the contact forces resolved into the fixed frame.
  auto run = test::run_text(kBenchmarkRun, {"simulation.output_dt=1e-4", "simulation.t_end=1.7", "solver.rtol=1e-12",
                                         "solver.atol=1e-14"});
  const auto& rec = run.rec;
  const tt::Params p;
  const double h = 1e-4;
  double worst = 0;
  for (std::size_t k = 1; k + 1 < rec.t.size(); k += 97) {
    if (std::abs(rec.t[k + 1] - rec.t[k] - h) > 1e-12 || std::abs(rec.t[k] - rec.t[k - 1] - h) > 1e-12) continue;
    double px[3], py[3];
    for (int j = 0; j < 3; ++j) tt::wheel_centre(p, rec.x[k - 1 + j].data(), px[j], py[j]);
    const double ax = (px[2] - 2 * px[1] + px[0]) / (h * h), ay = (py[2] - 2 * py[1] + py[0]) / (h * h);
    const double th = rec.x[k][0];
    double n, t;
    tt::contact_forces(p, rec.x[k].data(), 0.0, n, t);
    const double fx = t * std::cos(th) - n * std::sin(th), fy = t * std::sin(th) + n * std::cos(th);
    worst = std::max({worst, std::abs(fx - p.wheel_mass * ax), std::abs(fy - p.wheel_mass * (ay + p.gravity))});
  }
  // Central differences: O(h^2 p'''') ~ 1e-8 m/s^2 here, plus rounding (1e-16 / h^2 ~ 1e-8).
  CHECK(worst < 1e-5);
}

TEST_CASE("tipping table: energy is conserved to the table edge, and the drift shrinks with rtol") {
  double prev = INFINITY;
  for (double rtol : {1e-6, 1e-8, 1e-10, 1e-12}) {
    for (const char* method : {"adams", "bdf"}) {
      auto run = test::run_text(kBenchmarkRun, {"solver.rtol=" + digits17(rtol), std::string("solver.method=") + method,
                                             "solver.atol=" + digits17(rtol * 1e-2)});
      CHECK(run.result.termination == "table_edge");
      const double drift = run.summary("energy_drift_rel");
      INFO("rtol " << rtol << " " << method << " drift " << drift);
      CHECK(drift < 100 * rtol);
      if (std::string(method) == "adams") {
        CHECK(drift < prev);
        prev = drift;
      }
    }
  }
}

TEST_CASE("tipping table: a negated initial state gives the negated trajectory") {
  const std::vector<std::string> base{"initial.theta1=0.02", "initial.theta2=0.01", "initial.omega1=0.1",
                                      "initial.omega2=-0.3"};
  auto a = test::run_text(kBenchmarkRun, base);
  auto b = test::run_text(kBenchmarkRun, {"initial.theta1=-0.02", "initial.theta2=-0.01", "initial.omega1=-0.1",
                                       "initial.omega2=0.3"});
  REQUIRE(a.rec.t.size() == b.rec.t.size());
  double worst = 0;
  for (std::size_t k = 0; k < a.rec.t.size(); ++k) {
    CHECK(a.rec.t[k] == doctest::Approx(b.rec.t[k]).epsilon(1e-12));
    for (int i = 0; i < 4; ++i) worst = std::max(worst, std::abs(a.rec.x[k][i] + b.rec.x[k][i]));
  }
  CHECK(worst < 1e-12);
  CHECK(a.result.t_final == doctest::Approx(b.result.t_final).epsilon(1e-12));
}

TEST_CASE("tipping table: states at a fixed time converge as rtol shrinks") {
  auto at = [](double rtol) {
    auto r = test::run_text(kBenchmarkRun, {"simulation.t_end=1.5", "solver.rtol=" + digits17(rtol),
                                         "solver.atol=" + digits17(rtol * 1e-2)});
    return r.result.x_final;
  };
  const auto ref = at(1e-13);
  double prev = INFINITY;
  for (double rtol : {1e-5, 1e-7, 1e-9, 1e-11}) {
    const auto x = at(rtol);
    double err = 0;
    for (int i = 0; i < 4; ++i) err = std::max(err, std::abs(x[i] - ref[i]));
    INFO("rtol " << rtol << " error " << err);
    CHECK(err < prev);
    CHECK(err < 1e3 * rtol);
    prev = err;
  }
}

TEST_CASE("tipping table: samples are on the output grid, from dense output, with event instants included") {
  auto r = test::run_text(kBenchmarkRun);
  const auto& t = r.rec.t;
  REQUIRE(t.size() > 100);
  for (std::size_t k = 1; k < t.size(); ++k) CHECK(t[k] >= t[k - 1]);
  // Samples 0..180 lie on the 0.01 s grid (the edge is reached at t ~ 1.82 s).
  for (std::size_t k = 0; k < 100; ++k) CHECK(t[k] == doctest::Approx(0.01 * static_cast<double>(k)).epsilon(1e-12));
  REQUIRE(r.rec.events.size() == 2);
  CHECK(r.rec.events[0].kind == "lift_off");
  CHECK(r.rec.events[1].kind == "table_edge");
  CHECK(t.back() == r.rec.events[1].t);
  // At the edge event |s| = l/2.
  CHECK(std::abs(tt::contact_position(tt::Params{}, r.rec.events[1].x.data())) == doctest::Approx(0.5).epsilon(1e-12));
}

namespace {

/// The column of an output signal of a recorded run, by name.
std::vector<double> output_column(const test::Run& r, const std::string& name) {
  const auto& outs = tt::outputs().signals();
  std::size_t k = outs.size();
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (outs[i].name == name) k = i;
  REQUIRE(k < outs.size());
  std::vector<double> c;
  for (const auto& y : r.rec.y) c.push_back(y[k]);
  return c;
}

const std::string kTableStart = "model = \"tipping_table\"\n[initial]\ntheta1 = 0.01\n";

}  // namespace

TEST_CASE("tipping table: friction_demand is |T_c|/N while N > 0 and NaN after a recorded lift-off") {
  const test::Run r = test::run_text(kTableStart, {"events.lift_off=record", "events.table_edge=stop"});
  REQUIRE(r.result.completed());
  const auto n = output_column(r, "normal_force"), t = output_column(r, "tangential_force"),
             d = output_column(r, "friction_demand");
  long negative = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (n[i] > 0) {
      CHECK(d[i] == doctest::Approx(std::abs(t[i]) / n[i]).epsilon(1e-15));
    } else {
      CHECK(std::isnan(d[i]));
      ++negative;
    }
  }
  CHECK(negative > 100);  // lift-off at 1.626 s, the edge at 1.820 s: ~190 samples with N < 0
}

TEST_CASE("tipping table: friction_demand_max does not depend on output_dt") {
  // To a stopped lift-off and to a recorded one: N -> 0 with T_c != 0, so the supremum is +inf; the largest
  // value while N >= 0.1 m_w g is finite, located on the window's edge. A run ended by t_end before lift-off,
  // and one with the wheel rolling (omega2 = 3 rad/s), have finite suprema.
  const std::vector<std::vector<std::string>> cases{
      {},
      {"events.lift_off=record", "events.table_edge=stop"},
      {"simulation.t_end=1.2"},
      {"initial.omega2=3", "simulation.t_end=0.4"},
      {"initial.theta1=0", "initial.omega1=0.3", "initial.omega2=-2", "simulation.t_end=0.5"},
      // A heavy table: the wheel crosses it to the edge, and D has its maximum inside the run, between steps
      // (9.680133e-2 at the steps alone, 9.680257e-2 located).
      {"parameters.table_inertia=5", "initial.theta1=0", "initial.omega1=0.5", "initial.omega2=-3",
       "events.table_edge=stop"},
  };
  for (const auto& c : cases) {
    std::vector<double> sup, loaded;
    for (const char* dt : {"20", "1", "0.001"}) {
      auto sets = c;
      sets.push_back(std::string("simulation.output_dt=") + dt);
      const test::Run r = test::run_text(kTableStart, sets);
      REQUIRE(r.result.completed());
      sup.push_back(r.summary("friction_demand_max"));
      loaded.push_back(r.summary("friction_demand_max_loaded"));
    }
    CAPTURE(c.size() ? c[0] : std::string("benchmark"));
    CAPTURE(sup[0]);
    CAPTURE(loaded[0]);
    for (std::size_t i = 1; i < sup.size(); ++i) {
      if (std::isinf(sup[0]))
        CHECK(sup[i] == sup[0]);
      else
        CHECK(sup[i] == doctest::Approx(sup[0]).epsilon(1e-9));
      CHECK(loaded[i] == doctest::Approx(loaded[0]).epsilon(1e-9));
    }
    // Against a dense sampling of the columns (1e-5 s): the largest sampled value, and where N crosses the
    // window's edge N_w, |T_c| / N_w with T_c interpolated linearly in N between the two samples around it.
    // Size: the release run compares every case; a sanitizer tree (test::sanitized) the two short ones alone (0.4 s
    // and 0.5 s, an eighth of the dense samples): the same sampling code, and the runs above cover each case's events.
    if (test::sanitized && &c != &cases[3] && &c != &cases[4]) continue;
    auto sets = c;
    sets.push_back("simulation.output_dt=1e-5");
    const test::Run dense = test::run_text(kTableStart, sets);
    const auto n = output_column(dense, "normal_force"), t = output_column(dense, "tangential_force"),
               d = output_column(dense, "friction_demand");
    const double n_w = tt::kDemandWindowFraction * 9.81;
    double sampled_sup = 0, sampled_loaded = 0;
    for (std::size_t i = 0; i < d.size() && n[i] > 0; ++i) {
      sampled_sup = std::max(sampled_sup, d[i]);
      if (n[i] >= n_w) sampled_loaded = std::max(sampled_loaded, d[i]);
      if (i + 1 < d.size() && (n[i] >= n_w) != (n[i + 1] >= n_w)) {
        const double w = (n[i] - n_w) / (n[i] - n[i + 1]);
        sampled_loaded = std::max(sampled_loaded, std::abs(t[i] + w * (t[i + 1] - t[i])) / n_w);
      }
    }
    CAPTURE(sampled_sup);
    CAPTURE(sampled_loaded);
    CHECK(sampled_loaded <= loaded[0] * (1 + 1e-9));
    CHECK(sampled_loaded >= loaded[0] * (1 - 1e-6));
    if (!std::isinf(sup[0])) {
      CHECK(sampled_sup <= sup[0] * (1 + 1e-9));
      CHECK(sampled_sup >= sup[0] * (1 - 1e-6));
    }
  }
}

TEST_CASE("tipping table: the witness rates equal a central difference of the witnesses along the motion") {
  // The model's own rates (forward differentiation: -2 s s', N', mu N' - sign(T_c) T_c') against a central
  // difference of its witness values along x' = f(x), at states spread over the table, with a torque and mu.
  tt::Params p;
  p.table_torque = 0.3;
  p.friction_coefficient = 0.4;
  const double x0[tt::kStates] = {0.01, 0, 0, 0};
  const auto sys = tt::make_system(p, x0, {});
  const auto* ode = facet<OdeSystem>(*sys);
  REQUIRE(ode != nullptr);
  const auto* ws = facet<WitnessSystem>(*sys);
  REQUIRE(ws != nullptr);
  REQUIRE(ws->witness_count(0) == 3);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-0.6, 0.6), rate(-3, 3);
  for (int k = 0; k < 50; ++k) {
    const double x[tt::kStates] = {angle(rng), angle(rng), rate(rng), rate(rng)};
    double f[tt::kStates], gdot[3], gp[3], gm[3], xp[tt::kStates], xm[tt::kStates];
    ode->rhs(0, x, 0, f);
    ws->witness_rates(0, x, f, 0, gdot);
    const double h = 1e-6;
    for (int i = 0; i < tt::kStates; ++i) {
      xp[i] = x[i] + h * f[i];
      xm[i] = x[i] - h * f[i];
    }
    ws->witness_values(h, xp, 0, gp);
    ws->witness_values(-h, xm, 0, gm);
    for (int w = 0; w < 3; ++w) {
      CAPTURE(k);
      CAPTURE(w);
      const double fd = (gp[w] - gm[w]) / (2 * h);
      CHECK(gdot[w] == doctest::Approx(fd).epsilon(1e-6).scale(1.0));
    }
  }
}

TEST_CASE("tipping table: the forces' rates by the chain rule equal forward-mode differentiation in any direction") {
  // contact_force_rates against Eigen's AutoDiffScalar through the templated contact_forces (the same equations,
  // differentiated by the library), at random states and random directions v (not only along the motion), with a
  // torque and parameters other than the benchmark's; the forces themselves equal the template's bit for bit.
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 1, 1>>;
  tt::Params p;
  p.table_torque = -0.7;
  p.wheel_mass = 1.3;
  p.table_inertia = 0.21;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> angle(-1.2, 1.2), rate(-4, 4);
  for (int k = 0; k < 200; ++k) {
    CAPTURE(k);
    const double x[tt::kStates] = {angle(rng), angle(rng), rate(rng), rate(rng)};
    const double v[tt::kStates] = {rate(rng), rate(rng), 10 * rate(rng), 10 * rate(rng)};
    const tt::ForceRates r = tt::contact_force_rates(p, x, v, p.table_torque);
    double n, t;
    tt::contact_forces<double>(p, x, p.table_torque, n, t);
    CHECK(r.n == n);
    CHECK(r.t == t);
    AD xa[tt::kStates], na, ta;
    for (int i = 0; i < tt::kStates; ++i) xa[i] = AD(x[i], Eigen::Matrix<double, 1, 1>(v[i]));
    tt::contact_forces<AD>(p, xa, AD(p.table_torque), na, ta);
    // Scale: the size of the terms the rates sum, m (|v| |x'| + g |v|) and the like, about 10^2 here.
    CHECK(r.n_rate == doctest::Approx(na.derivatives()[0]).epsilon(1e-12).scale(100.0));
    CHECK(r.t_rate == doctest::Approx(ta.derivatives()[0]).epsilon(1e-12).scale(100.0));
  }
}

TEST_CASE("tipping table: the contact forces kept per thread are those of the state and parameters asked for") {
  // The double overload keeps the last state's forces; interleaved states, torques and parameter sets must each get
  // their own forces, bit for bit those of the template (which keeps nothing).
  tt::Params a, b;
  b.wheel_mass = 2.0;
  b.gravity = 3.7;
  const double x1[tt::kStates] = {0.1, -0.2, 0.3, 1.0}, x2[tt::kStates] = {0.1, -0.2, 0.3, 1.5};
  const struct {
    const tt::Params* p;
    const double* x;
    double tau;
  } asks[] = {{&a, x1, 0}, {&a, x1, 0}, {&b, x1, 0}, {&a, x2, 0}, {&a, x2, 0.5}, {&a, x1, 0}, {&b, x2, 0.5}};
  for (const auto& q : asks) {
    double n, t, n_ref, t_ref;
    tt::contact_forces(*q.p, q.x, q.tau, n, t);
    tt::contact_forces<double>(*q.p, q.x, q.tau, n_ref, t_ref);
    CHECK(n == n_ref);
    CHECK(t == t_ref);
  }
}
