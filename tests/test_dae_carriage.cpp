// The carriage with pendulum and spring (exercise 4:14) in body coordinates on IDA, against its
// minimal-coordinate equations integrated here by a classical fourth-order Runge-Kutta at a fine fixed step.
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "support.hpp"
#include "rollsim/app/formulations.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/models/carriage_pendulum.hpp"
#include "rollsim/solve/simulate.hpp"

using namespace rollsim;
using carriage_pendulum::Params;

namespace {

using State = std::array<double, 4>;  // x, phi, x', phi'

/// The notes' equations of motion: M(phi) [x'', phi''] = [F - k x + m l phi'^2 sin phi, -m g l sin phi].
State minimal_rhs(const Params& p, const State& s) {
  const double m = p.bob_mass, mc = p.carriage_mass, l = p.rod_length;
  const double c = std::cos(s[1]), sn = std::sin(s[1]);
  const double a11 = m + mc, a12 = m * l * c, a22 = m * l * l;
  const double b1 = p.force - p.spring_stiffness * s[0] + m * l * s[3] * s[3] * sn;
  const double b2 = -m * p.gravity * l * sn;
  const double det = a11 * a22 - a12 * a12;
  return {s[2], s[3], (a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det};
}

State rk4(const Params& p, State s, double h) {
  auto add = [](const State& a, const State& b, double f) {
    State r;
    for (int i = 0; i < 4; ++i) r[i] = a[i] + f * b[i];
    return r;
  };
  const State k1 = minimal_rhs(p, s);
  const State k2 = minimal_rhs(p, add(s, k1, h / 2));
  const State k3 = minimal_rhs(p, add(s, k2, h / 2));
  const State k4 = minimal_rhs(p, add(s, k3, h));
  for (int i = 0; i < 4; ++i) s[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  return s;
}

/// Rod tension from the minimal state: T = m (l phi'^2 - x'' sin phi) + m g cos phi.
double minimal_tension(const Params& p, const State& s) {
  const State d = minimal_rhs(p, s);
  return p.bob_mass * (p.rod_length * s[3] * s[3] - d[2] * std::sin(s[1])) + p.bob_mass * p.gravity * std::cos(s[1]);
}

}  // namespace

TEST_CASE("carriage pendulum: constraint Jacobian and bias match finite differences") {
  carriage_pendulum::BodyModel m{Params{}};
  const double q[3] = {0.1, 0.6, -0.8}, v[3] = {0.4, -0.3, 0.7};
  double G[3], b, Gp[3], Gm[3];
  m.constraint_jacobian(q, G);
  m.constraint_bias(q, v, &b);
  const double h = 1e-6;
  double fd_b = 0;
  for (int k = 0; k < 3; ++k) {
    double qp[3] = {q[0], q[1], q[2]}, qm[3] = {q[0], q[1], q[2]}, cp, cm;
    qp[k] += h;
    qm[k] -= h;
    m.constraints(qp, &cp);
    m.constraints(qm, &cm);
    CHECK(G[k] == doctest::Approx((cp - cm) / (2 * h)).epsilon(1e-8));
  }
  double qp[3], qm[3];
  for (int j = 0; j < 3; ++j) {
    qp[j] = q[j] + h * v[j];
    qm[j] = q[j] - h * v[j];
  }
  m.constraint_jacobian(qp, Gp);
  m.constraint_jacobian(qm, Gm);
  for (int k = 0; k < 3; ++k) fd_b += (Gp[k] - Gm[k]) / (2 * h) * v[k];
  CHECK(b == doctest::Approx(fd_b).epsilon(1e-7));
}

TEST_CASE("carriage pendulum: body coordinates on IDA agree with the minimal equations") {
  struct Case {
    Params p;
    State s0;
  };
  Params forced;
  forced.force = 2.0;
  forced.bob_mass = 1.3;
  forced.spring_stiffness = 25.0;
  Params long_rod;
  long_rod.rod_length = 2.0;
  long_rod.carriage_mass = 0.2;
  const Case cases[] = {
      {Params{}, {0.0, 0.5, 0.0, 0.0}},
      {forced, {0.1, -1.0, 0.3, 1.5}},
      {long_rod, {-0.2, 2.0, 0.0, -0.5}},  // a large swing: well past the linear range
  };
  for (const auto& c : cases) {
    auto sys = carriage_pendulum::make_system(c.p, c.s0.data(), DaeOptions{}, false);
    SimulationOptions opt;
    opt.t_end = 5.0;
    opt.output_dt = 0.01;
    opt.solver.method = "bdf";
    // At rtol 1e-10 the two large-motion cases differ from the minimal form by up to 1.3e-7 (states) and
    // 1.4e-6 N (tension) after 5 s; the difference falls with rtol (5e-7, 1.3e-7, 1e-8, 6e-9 at rtol 1e-9 ...
    // 1e-12), so it is IDA's global error, not a modelling difference. The comparison runs at rtol 1e-12.
    opt.solver.rtol = 1e-12;
    opt.solver.atol = 1e-12;
    Recorder rec;
    const RunResult res = simulate(*sys, opt, {&rec});
    REQUIRE(res.completed());
    const auto &x = rec.column("x"), &phi = rec.column("phi"), &xd = rec.column("x_dot"), &phid = rec.column("phi_dot");
    const auto& tension = rec.column("rod_tension");
    const auto& constraint = rec.column("constraint_length");
    State s = c.s0;
    const double h = 1e-4;  // RK4 global error ~1e-13 here
    double t = 0, e_state = 0, e_tension = 0, e_c = 0;
    long checked = 0;
    for (size_t i = 0; i < rec.time.size(); ++i) {
      const long steps = std::lround((rec.time[i] - t) / h);
      if (std::abs(rec.time[i] - t - static_cast<double>(steps) * h) > 1e-12) continue;  // off-grid (event) samples
      for (long k = 0; k < steps; ++k) s = rk4(c.p, s, h);
      t = rec.time[i];
      e_state = std::max({e_state, std::abs(x[i] - s[0]), std::abs(phi[i] - s[1]), std::abs(xd[i] - s[2]),
                          std::abs(phid[i] - s[3])});
      e_tension = std::max(e_tension, std::abs(tension[i] - minimal_tension(c.p, s)));
      e_c = std::max(e_c, std::abs(constraint[i]));
      ++checked;
    }
    CAPTURE(e_state);
    CAPTURE(e_tension);
    CAPTURE(e_c);
    CHECK(checked == 501);
    CHECK(e_state < 1e-8);
    CHECK(e_tension < 1e-7);
    CHECK(e_c < 1e-9);
    // Energy (with the force's work) is conserved to the tolerance's order.
    double drift = NAN;
    for (const auto& it : res.summary)
      if (it.key == "energy_drift_abs") drift = it.number;
    CHECK(drift < 1e-8);  // 1.6e-9 to 3.7e-9 J measured: round-off over ~10^4 steps, not tolerance-limited
  }
}

TEST_CASE("carriage pendulum: the minimal form (formulation = ode) agrees with the body form on IDA") {
  // A second formulation of the same physics: the minimal equations on CVODE against the constrained
  // body coordinates on IDA, compared by rollsim check formulations at the scenario's tolerances.
  const std::string path = rollsim::test::source_dir() + "/scenarios/carriage_pendulum.toml";
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{}, {"parameters.force=2", "initial.phi=-1.2", "initial.x_dot=0.4"}}) {
    const FormulationCheck fc = check_formulations(path, sets);
    CAPTURE(fc.comparison.max_state);
    CAPTURE(fc.comparison.max_force);
    for (const auto& p : fc.comparison.problems) CAPTURE(p);
    CHECK(fc.comparison.passed);
    CHECK(fc.comparison.states.size() == 4);  // x, phi, x_dot, phi_dot: ODE states, DAE outputs
    CHECK(fc.comparison.forces.size() == 1);  // rod_tension
    CHECK(fc.comparison.n_common_samples > 900);
    CHECK(fc.comparison.max_state < 1e-7);
    CHECK(fc.comparison.max_force < 1e-6);
  }
}

TEST_CASE("carriage pendulum: every minimal-form output is a body-form output with the same value, by name") {
  Params p;
  p.force = 0.7;
  const double mn0[4] = {0.1, 0.3, -0.2, 0.5};
  auto ode = carriage_pendulum::make_minimal_system(p, mn0, false);
  auto dae = carriage_pendulum::make_system(p, mn0, DaeOptions{}, false);
  const Signals &oo = ode->outputs(), &od = dae->outputs();
  // Another state than the start, so that input_work is not 0: the body state with a consistent multiplier.
  const double mn[4] = {0.25, -0.6, 0.4, 1.3};
  std::vector<double> xb(dae->size()), yo(oo.size()), yd(od.size());
  carriage_pendulum::body_state(p, DaeOptions{}, mn, xb.data());
  ode->compute_outputs(0, mn, 0, yo.data());
  dae->compute_outputs(0, xb.data(), 0, yd.data());
  for (std::size_t i = 0; i < oo.size(); ++i) {
    CAPTURE(oo[i].name);
    const std::size_t j = signal_index(od, oo[i].name, "body form");
    CHECK(od[j].unit == oo[i].unit);
    CHECK(yd[j] == doctest::Approx(yo[i]).epsilon(1e-12).scale(1.0));
  }
  CHECK(yo[signal_index(oo, "input_work", "minimal form")] != 0.0);
  // The body form's minimal-coordinate columns are the state it was built from.
  for (int k = 0; k < 4; ++k)
    CHECK(yd[signal_index(od, ode->states()[static_cast<std::size_t>(k)].name, "body form")] ==
          doctest::Approx(mn[k]).epsilon(1e-12));
}
