// The tipping table in body coordinates (DAE, IDA) against the minimal-coordinate ODE (CVODE).
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "support.hpp"
#include "rollsim/app/formulations.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/models/constrained_mechanics.hpp"
#include "rollsim/models/tipping_table_dae.hpp"
#include "rollsim/scenario/scenario.hpp"

using namespace rollsim;

namespace {

const std::string kScenario = rollsim::test::source_dir() + "/scenarios/tipping_table_dae.toml";

double summary(const Recorder& r, const std::string& key) {
  for (const auto& it : r.result.summary)
    if (it.key == key) return it.number;
  FAIL("no summary item " << key);
  return NAN;
}

}  // namespace

TEST_CASE("tipping table DAE: constraint Jacobian and bias match finite differences") {
  tipping_table::BodyModel m{tipping_table::Params{}};
  const double q[4] = {0.07, -0.4, 0.11, 0.26}, v[4] = {0.3, -1.2, 0.4, -0.2};
  double G[8], b[2];
  m.constraint_jacobian(q, G);
  m.constraint_bias(q, v, b);
  const double h = 1e-6;
  for (int k = 0; k < 4; ++k) {
    double qp[4], qm[4], cp[2], cm[2];
    for (int j = 0; j < 4; ++j) qp[j] = qm[j] = q[j];
    qp[k] += h;
    qm[k] -= h;
    m.constraints(qp, cp);
    m.constraints(qm, cm);
    for (int i = 0; i < 2; ++i) CHECK(G[i + 2 * k] == doctest::Approx((cp[i] - cm[i]) / (2 * h)).epsilon(1e-8));
  }
  // (dG/dt) v = d/de [G(q + e v) v] at e = 0
  double qp[4], qm[4], Gp[8], Gm[8];
  for (int j = 0; j < 4; ++j) {
    qp[j] = q[j] + h * v[j];
    qm[j] = q[j] - h * v[j];
  }
  m.constraint_jacobian(qp, Gp);
  m.constraint_jacobian(qm, Gm);
  for (int i = 0; i < 2; ++i) {
    double fd = 0;
    for (int k = 0; k < 4; ++k) fd += (Gp[i + 2 * k] - Gm[i + 2 * k]) / (2 * h) * v[k];
    CHECK(b[i] == doctest::Approx(fd).epsilon(1e-7));
  }
}

TEST_CASE("tipping table DAE: the multipliers at the start are the ODE's contact forces") {
  tipping_table::Params p;
  p.table_torque = 0.3;
  const double xm[4] = {0.02, -0.5, 0.1, -0.3};
  double xb[tipping_table::kDaeStates];
  tipping_table::body_state(p, DaeOptions{}, xm, xb);
  double n, t;
  tipping_table::contact_forces(p, xm, p.table_torque, n, t);
  CHECK(xb[8] == doctest::Approx(n).epsilon(1e-12));
  CHECK(xb[9] == doctest::Approx(t).epsilon(1e-12));
  double c[2];
  tipping_table::BodyModel{p}.constraints(xb, c);
  CHECK(std::abs(c[0]) < 1e-15);
  CHECK(std::abs(c[1]) < 1e-15);
}

TEST_CASE("tipping table DAE: formulation = dae with solver.method = adams is an input error naming the key") {
  const std::string text = "model = \"tipping_table\"\nformulation = \"dae\"\n[solver]\nmethod = \"adams\"\n";
  try {
    load_scenario_text(text, "t.toml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("solver.method") != std::string::npos);
    CHECK(std::string(e.what()).find("t.toml:4") != std::string::npos);
  }
  CHECK_NOTHROW(load_scenario_text("model = \"tipping_table\"\nformulation = \"dae\"\n", "t.toml"));
  CHECK_THROWS_AS(load_scenario_text("model = \"tipping_table\"\nformulation = \"odd\"\n", "t.toml"), InputError);
}

TEST_CASE("tipping table DAE against ODE at rtol 1e-10, several initial states, to the table edge") {
  struct Case {
    const char* name;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases{
      {"benchmark 0.01 rad, ODE by Adams", {"solver.method=adams"}},
      {"benchmark 0.01 rad, ODE by BDF", {}},
      {"tilted the other way, wheel spinning",
       {"initial.theta1=-0.015", "initial.theta2=0.2", "initial.omega2=0.3"}},
      {"table turning, wheel off centre", {"initial.theta1=0.005", "initial.theta2=-0.4", "initial.omega1=0.05"}},
      {"torque on the table", {"initial.theta1=0.01", "parameters.table_torque=0.05"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const FormulationCheck fc = check_formulations(kScenario, c.sets);
    const Comparison& cmp = fc.comparison;
    for (const auto& p : cmp.problems) INFO(p);
    CHECK(fc.ode.result.termination == "table_edge");
    CHECK(fc.dae.result.termination == "table_edge");
    CHECK(cmp.states.size() == 4);  // theta1, theta2, omega1, omega2 in both
    CHECK(cmp.forces.size() == 2);  // normal_force, tangential_force
    CHECK(cmp.n_common_samples > 100);
    CHECK(cmp.max_state < 1e-7);
    CHECK(cmp.max_force < 1e-6);
    CHECK(!cmp.events.empty());
    CHECK(cmp.max_event_time < 1e-8);
    CHECK(cmp.passed);
    // Energy drift of the same order in both: neither beyond 1e-8 J (rtol 1e-10 of about 2.5 J, with
    // the accumulation over a few hundred steps), and the DAE's no more than ten times the ODE's.
    const double de_ode = summary(fc.ode, "energy_drift_abs"), de_dae = summary(fc.dae, "energy_drift_abs");
    CAPTURE(de_ode);
    CAPTURE(de_dae);
    CHECK(de_ode < 1e-8);
    CHECK(de_dae < 1e-8);
    CHECK(de_dae < 10 * std::max(de_ode, 1e-10));
    // Position-level drift of both constraints, over every sample and step: within 1e-9 m
    // (r = 0.25 m: four times rtol-relative accuracy accumulated over ~1000 steps).
    CHECK(summary(fc.dae, "constraint_normal_max") < 1e-9);
    CHECK(summary(fc.dae, "constraint_rolling_max") < 1e-9);
  }
}

TEST_CASE("tipping table DAE: the benchmark's lift-off and edge times") {
  const FormulationCheck fc = check_formulations(kScenario, {});
  REQUIRE(fc.dae.events.size() == 2);
  CHECK(fc.dae.events[0].kind == "lift_off");
  CHECK(fc.dae.events[0].t == doctest::Approx(1.626).epsilon(1e-3));
  CHECK(fc.dae.events[1].kind == "table_edge");
  CHECK(fc.dae.events[1].t == doctest::Approx(1.820).epsilon(1e-3));
}

TEST_CASE("check formulations: tolerances from the scenario decide the verdict") {
  const FormulationCheck tight = check_formulations(kScenario, {"check.state_tol=1e-13"});
  CHECK_FALSE(tight.comparison.passed);
  const std::string bin = rollsim::test::binary();
  CHECK(std::system((bin + " check formulations " + kScenario + " > /dev/null").c_str()) == 0);
  const int rc = std::system((bin + " check formulations " + kScenario + " --set check.force_tol=1e-12 > /dev/null").c_str());
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 1);
}

namespace {

/// The index of a signal by name, or -1.
int find_signal(const Signals& s, const std::string& name) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST_CASE("tipping table DAE: every ODE output is a DAE output with the ODE's value, by name, constraint columns "
          "hold the residuals") {
  tipping_table::Params p;
  p.table_torque = 0.3;
  p.friction_coefficient = 0.4;
  const double x0[tipping_table::kStates] = {0.02, -0.1, 0.05, 0.3};
  auto ode = tipping_table::make_system(p, x0, tipping_table::EventActions{});
  auto dae = tipping_table::make_dae_system(p, x0, tipping_table::EventActions{}, DaeOptions{});
  const Signals& oo = ode->outputs();
  const Signals& od = dae->outputs();
  // At another state than the start (so that input_work is not 0 in both): the DAE's body state with
  // consistent multipliers, built from the same minimal state.
  const double xm[tipping_table::kStates] = {0.07, -0.4, -0.2, 1.1};
  std::vector<double> xb(dae->size()), yo(oo.size()), yd(od.size());
  tipping_table::body_state(p, DaeOptions{}, xm, xb.data());
  ode->compute_outputs(0, xm, 0, yo.data());
  dae->compute_outputs(0, xb.data(), 0, yd.data());
  for (std::size_t i = 0; i < oo.size(); ++i) {
    CAPTURE(oo[i].name);
    const int j = find_signal(od, oo[i].name);
    REQUIRE(j >= 0);
    CHECK(od[static_cast<std::size_t>(j)].unit == oo[i].unit);
    CHECK(yd[static_cast<std::size_t>(j)] == doctest::Approx(yo[i]).epsilon(1e-12).scale(1.0));
  }
  CHECK(yo[static_cast<std::size_t>(find_signal(oo, "input_work"))] != 0.0);

  // Off the constraint manifold, the residuals computed here from their definitions.
  std::vector<double> xoff = xb;
  xoff[0] += 1e-3;   // theta1
  xoff[1] -= 2e-3;   // theta2
  xoff[2] += 3e-3;   // wheel_x
  xoff[3] -= 1.5e-3; // wheel_y
  REQUIRE(find_signal(dae->states(), "wheel_x") == 2);
  REQUIRE(find_signal(dae->states(), "wheel_y") == 3);
  dae->compute_outputs(0, xoff.data(), 0, yd.data());
  const double th1 = xoff[0], th2 = xoff[1], px = xoff[2], py = xoff[3], r = p.wheel_radius;
  const double normal = -px * std::sin(th1) + py * std::cos(th1) - r;
  const double rolling = r * (th1 - th2) - (px * std::cos(th1) + py * std::sin(th1));
  REQUIRE(std::abs(normal) > 1e-4);
  REQUIRE(std::abs(rolling) > 1e-4);
  CHECK(yd[static_cast<std::size_t>(find_signal(od, "constraint_normal"))] == doctest::Approx(normal).epsilon(1e-12));
  CHECK(yd[static_cast<std::size_t>(find_signal(od, "constraint_rolling"))] == doctest::Approx(rolling).epsilon(1e-12));
}

TEST_CASE("output lists: a formulation's extension keeps every shared output first, in order, names are unique") {
  const auto& ode = tipping_table::outputs();
  auto dae = tipping_table::make_dae_system(tipping_table::Params{}, std::array<double, 4>{0.01, 0, 0, 0}.data(),
                                            tipping_table::EventActions{}, DaeOptions{});
  const Signals& od = dae->outputs();
  REQUIRE(od.size() > ode.size());
  for (std::size_t i = 0; i < ode.size(); ++i) {
    CHECK(od[i].name == ode.signals()[i].name);
    CHECK(od[i].unit == ode.signals()[i].unit);
    CHECK(od[i].description == ode.signals()[i].description);
    CHECK(ode.index(od[i].name) == i);
  }
  CHECK_THROWS_AS(ode.index("no_such_output"), std::logic_error);
  using O = tipping_table::Outputs;
  CHECK_THROWS_AS(ode.extended({O::output("normal_force", "N", "again", [](const auto& c) { return c.normal; })}),
                  std::logic_error);
}
