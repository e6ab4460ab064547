// The contact engine's rules against independent answers: the LCP path and the full enumeration agree on
// statically indeterminate contacts; a friction coefficient that turns negative during a run stops it; a belt
// moving at a fixed speed (a slip velocity with a part that does not vanish with the rates) sticks and slips as
// its closed form says, with its work on the block in the energy balance.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "rollsim/core/error.hpp"
#include "contact_support.hpp"

namespace rollsim {

namespace {

const std::string kLadder = test::scenario_text("ladder.toml");

}  // namespace

TEST_CASE("contact rules: the LCP path and the full enumeration give the same run on indeterminate contacts") {
  // The ladder at rest (friction at both ends), sliding below the critical friction, and the flat rod's bounces:
  // the modes chosen through the LCP (nonsmooth.mode_selection = "lcp") and by enumerating every combination
  // ("enumerate") must be the same, so the two runs agree sample by sample to round-off.
  const std::string rod = test::read_file(rollsim::test::source_dir() + "/scenarios/flat_rod.toml");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {kLadder, {"solver.rtol=1e-10", "simulation.t_end=1.5"}},
      {kLadder, {"solver.rtol=1e-10", "simulation.t_end=1.5", "parameters.mu_f=0.1", "parameters.mu_w=0.1"}},
      {rod, {}},
  };
  for (const auto& [text, overrides] : cases) {
    std::vector<std::string> lcp = overrides, enumerate = overrides;
    lcp.push_back("nonsmooth.mode_selection=lcp");
    enumerate.push_back("nonsmooth.mode_selection=enumerate");
    const test::Run a = test::run_text(text, lcp), b = test::run_text(text, enumerate);
    REQUIRE_MESSAGE(a.result.completed(), a.result.message);
    REQUIRE_MESSAGE(b.result.completed(), b.result.message);
    REQUIRE(a.rec.events.size() == b.rec.events.size());
    for (std::size_t i = 0; i < a.rec.events.size(); ++i) {
      CHECK(a.rec.events[i].kind == b.rec.events[i].kind);
      CHECK(a.rec.events[i].mode_after == b.rec.events[i].mode_after);
    }
    REQUIRE(a.rec.t.size() == b.rec.t.size());
    for (std::size_t k = 0; k < a.rec.t.size(); ++k)
      for (std::size_t i = 0; i < a.rec.x[k].size(); ++i)
        CHECK(a.rec.x[k][i] == doctest::Approx(b.rec.x[k][i]).epsilon(1e-12).scale(1));
  }
}

TEST_CASE("contact rules: a friction coefficient that turns negative during a run stops it with the time (exit 3)") {
  // mu = 0.3 - t on the ladder's floor: the ladder rests while mu is above 0.2887 (cot(60 deg)/2 with a frictionless
  // wall) and slides after; at t = 0.3 the coefficient reaches 0 and then turns negative: the run must stop there
  // with a SolverError naming the contact and a time just past 0.3, keeping what it computed.
  std::string text = kLadder;
  const std::string from = "friction_coefficient = \"mu_f\"";
  text.replace(text.find(from), from.size(), "friction_coefficient = \"mu_f - t\"");
  const test::Run r = test::run_text(text, {"parameters.mu_w=0", "solver.rtol=1e-10"});
  CHECK(!r.result.completed());
  CHECK(r.result.message.find("contact floor: the friction coefficient is mu = -") != std::string::npos);
  // The check runs at every step: the time it names is the first step's end past t = 0.3.
  const auto at = r.result.message.find(" at t = ");
  REQUIRE(at != std::string::npos);
  const double t_stop = std::stod(r.result.message.substr(at + 8));
  CHECK(t_stop > 0.3);
  CHECK(t_stop < 0.31);
  REQUIRE(!r.rec.t.empty());
  CHECK(r.rec.t.back() <= t_stop + 1e-9);  // the message prints the time to 10 digits
}

TEST_CASE("contact rules: a block on a belt at a fixed speed sticks and slips as the closed form says, and the belt's "
          "work is in the energy balance") {
  // m x'' = -k x + F, the belt moving at v_b: slip w = x' - v_b. Stuck to the belt from x = 0 (x = v_b t), it slips
  // where k x = mu_s N (t1 = mu_s N/(k v_b)); then x = d + (x1 - d) cos(w t') + (v_b/w) sin(w t') with the kinetic
  // friction mu_k N pulling it forward (d = mu_k N/k), until x' = v_b again (a stick), after which it rides the belt
  // to x1 again. The belt's work on the block is the friction force times v_b (while stuck, the spring's force k x),
  // so E - W_belt + D stays constant, with D >= 0 the dissipation in the slips.
  const double m = 1, k = 10, g = 9.81, vb = 0.5, mus = 0.4, muk = 0.2, N = m * g, w = std::sqrt(k / m);
  const std::string text =
      "model = \"lagrangian\"\n[parameters]\nm = 1.0\nk = 10.0\ng = 9.81\nvb = 0.5\nmus = 0.4\nmuk = 0.2\n"
      "[coordinates]\nx = \"m\"\n[lagrangian]\nkinetic = \"1/2*m*der(x)^2\"\npotential = \"1/2*k*x^2\"\n"
      "[contacts.belt]\nnormal_force = \"m*g\"\nslip_velocity = \"der(x) - vb\"\nfriction_coefficient = \"muk\"\n"
      "static_friction_coefficient = \"mus\"\n[initial_rates]\nx = 0.5\n[simulation]\nt_end = 5.0\n"
      "output_dt = 0.01\n[solver]\nrtol = 1e-10\n";
  const test::Run r = test::run_text(text);
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  std::vector<double> slips, sticks;
  for (const auto& e : r.rec.events) {
    if (e.kind == "slip") slips.push_back(e.t);
    if (e.kind == "stick") sticks.push_back(e.t);
  }
  REQUIRE(slips.size() >= 2);
  REQUIRE(sticks.size() >= 2);
  const double x1 = mus * N / k, t1 = x1 / vb, d = muk * N / k;
  // The slip phase: x(t') - d = (x1 - d) cos(w t') + (v_b/w) sin(w t'), x' = v_b again where
  // x' = -(x1 - d) w sin(w t') + v_b cos(w t') = R cos(w t' + p) = v_b, with R cos p = v_b, R sin p = (x1 - d) w:
  // the next root after t' = 0 is w t' = 2 pi - 2 p.
  const double p = std::atan2((x1 - d) * w, vb);
  const double ts = (2 * std::numbers::pi - 2 * p) / w;  // the next root of cos(w t' + p) = v_b/R = cos(p)
  const double x2 = d + (x1 - d) * std::cos(w * ts) + vb / w * std::sin(w * ts);
  const double period = ts + (x1 - x2) / vb;
  CHECK(slips[0] == doctest::Approx(t1).epsilon(1e-8));
  CHECK(sticks[0] == doctest::Approx(t1 + ts).epsilon(1e-8));
  CHECK(slips[1] == doctest::Approx(t1 + period).epsilon(1e-8));
  CHECK(sticks[1] == doctest::Approx(t1 + period + ts).epsilon(1e-8));
  // The ledger: the balance output is flat, and the dissipation never decreases.
  std::size_t balance = r.rec.y.front().size(), dissipated = r.rec.x.front().size(), work = dissipated;
  auto sys = build_system(r.scenario);
  for (std::size_t i = 0; i < sys->outputs().size(); ++i)
    if (sys->outputs()[i].name == "energy_balance") balance = i;
  for (std::size_t i = 0; i < sys->states().size(); ++i) {
    if (sys->states()[i].name == "dissipated_friction") dissipated = i;
    if (sys->states()[i].name == "work_surfaces") work = i;
  }
  REQUIRE(balance < r.rec.y.front().size());
  REQUIRE(dissipated < r.rec.x.front().size());
  REQUIRE(work < r.rec.x.front().size());
  const double b0 = r.rec.y.front()[balance];
  double last_d = 0, largest_work = 0;
  for (std::size_t s = 0; s < r.rec.t.size(); ++s) {
    CHECK(r.rec.y[s][balance] == doctest::Approx(b0).epsilon(1e-7).scale(1));
    CHECK(r.rec.x[s][dissipated] >= last_d - 1e-12);
    last_d = r.rec.x[s][dissipated];
    largest_work = std::max(largest_work, std::abs(r.rec.x[s][work]));
  }
  CHECK(largest_work > 0.1);  // the belt does real work on the block
}

}  // namespace rollsim
