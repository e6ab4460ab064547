// The Coulomb rolling/sliding disk against its closed form (every mode is linear).
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <iomanip>
#include <cmath>
#include <string>
#include <tuple>

#include "disk_closed_form.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/models/rolling_disk.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"
#include "support.hpp"

using namespace rollsim;
using DiskRecorder = disk_test::Recorder;

namespace {

constexpr int kTotal = 2;  // output index of total_energy (dimensionless runs)

DiskRecorder run_disk(double j, double x, double y, double z, double t_end, double rtol = 1e-10,
                  const std::string& method = "adams", double dt = 0.01) {
  rolling_disk::Params p;
  p.inertia_ratio = j;
  const double q0[3] = {x, y, z};
  auto sys = rolling_disk::make_system(p, q0);
  SimulationOptions opt;
  opt.t_end = t_end;
  opt.output_dt = dt;
  opt.solver.method = method;
  opt.solver.rtol = rtol;
  opt.solver.atol = rtol * 1e-2;
  DiskRecorder rec;
  simulate(*sys, opt, {&rec});
  return rec;
}

struct Check {
  double max_dt = 0, max_stick_x = 0, max_slip_dev = 0, max_energy_rel = 0, max_radius_dev = 0;
};

/// Compares a run with the closed form; fills the largest deviations.
Check compare(const DiskRecorder& rec, const disk_test::CfRun& cf, bool check_times = true) {
  Check c;
  REQUIRE(rec.result.status == "ok");
  CHECK(rec.symbols() == cf.symbols);
  REQUIRE(rec.events.size() == cf.events.size());
  for (size_t i = 0; i < cf.events.size(); ++i) {
    const auto& e = rec.events[i];
    const auto& f = cf.events[i];
    CHECK(e.kind == f.kind);
    CHECK(e.mode_before == f.before);
    CHECK(e.mode_after == f.after);
    c.max_dt = std::max(c.max_dt, std::abs(e.t - f.t));
    if (e.kind == "stick") {
      c.max_stick_x = std::max(c.max_stick_x, std::abs(e.x[0]));
      CHECK(e.x[2] == 0.0);  // projected onto z = 0
      CHECK(e.extra.at("residual") == 0.0);
    }
    if (e.kind == "slip") c.max_slip_dev = std::max(c.max_slip_dev, std::abs(std::abs(e.x[0]) - 1));
  }
  if (check_times) CHECK(c.max_dt < 1e-8);
  CHECK(c.max_stick_x < 1);
  CHECK(c.max_slip_dev < 1e-9);
  // Energy balance and rolling circles, over every sample.
  const double e0 = rec.samples.front().y[kTotal];
  double r_roll = -1;
  size_t next_event = 0;
  for (const auto& s : rec.samples) {
    c.max_energy_rel = std::max(c.max_energy_rel, std::abs(e0 - s.y[kTotal] - s.x[3]) / e0);
    while (next_event < rec.events.size() && rec.events[next_event].t <= s.t) {
      const auto& e = rec.events[next_event++];
      r_roll = e.mode_after == 0 ? std::hypot(e.x[0], e.x[1]) : -1;
    }
    if (s.mode == 0) {
      if (r_roll < 0) r_roll = std::hypot(s.x[0], s.x[1]);  // started rolling
      c.max_radius_dev = std::max(c.max_radius_dev, std::abs(std::hypot(s.x[0], s.x[1]) - r_roll));
      c.max_radius_dev = std::max(c.max_radius_dev, std::abs(s.x[2]));  // and z stays exactly 0
    }
  }
  CHECK(c.max_radius_dev < 1e-8);
  return c;
}

std::string item_text(const DiskRecorder& r, const std::string& k) {
  const auto* i = r.item(k);
  return i ? i->text : "";
}

}  // namespace

TEST_CASE("rolling_disk: type A orbit (+0) against the closed form") {
  const double j = 0.5;
  const auto cf = disk_test::closed_form(j, 0, 0, 3, 40);
  CHECK(cf.symbols == "+0");
  const DiskRecorder rec = run_disk(j, 0, 0, 3, 40);
  const Check c = compare(rec, cf);
  CHECK(c.max_energy_rel < 1e-8);
  CHECK(item_text(rec, "classification") == "A");
  CHECK(rec.item("rolling_radius")->number == doctest::Approx(cf.radii.back()).epsilon(1e-9));
  MESSAGE("type A: max |dt| = " << c.max_dt << ", energy balance rel " << c.max_energy_rel);
}

TEST_CASE("rolling_disk: mirrored type A orbit (-0) and a longer type A transient") {
  const double j = 0.5;
  for (auto q : {std::array<double, 3>{0, 0, -3}, std::array<double, 3>{0.5, 2.0, 1.0},
                 std::array<double, 3>{-0.8, -1.0, -0.3}}) {
    CAPTURE(q[0]);
    CAPTURE(q[2]);
    const auto cf = disk_test::closed_form(j, q[0], q[1], q[2], 40);
    const DiskRecorder rec = run_disk(j, q[0], q[1], q[2], 40, 1e-12);
    const Check c = compare(rec, cf);
    CHECK(c.max_energy_rel < 1e-8);
    if (cf.final_mode == 0 && std::hypot(cf.x, cf.y) <= 1) CHECK(item_text(rec, "classification") == "A");
  }
}

// At rtol 1e-10 the rolling phases drift in phase by ~2.5e-9 per unit tau (the integrator's global error, which
// scales with rtol: see the diagnostic case below), and a slip at small |y| amplifies a phase error by 1/|y|:
// event times stay within 1e-8 up to tau ~ 12 at rtol 1e-10 (2e-8 at tau = 30), and up to tau = 100 at rtol 1e-12.
TEST_CASE("rolling_disk: type B orbit against the closed form") {
  const double j = 0.5;
  for (auto [q, t_end, rtol] : {std::tuple{std::array<double, 3>{3, 0, 1}, 12.0, 1e-10},
                                std::tuple{std::array<double, 3>{-2, 1, -0.5}, 12.0, 1e-10},
                                std::tuple{std::array<double, 3>{1.5, 0, 0.2}, 12.0, 1e-10},
                                std::tuple{std::array<double, 3>{-2, 1, -0.5}, 100.0, 1e-12},
                                std::tuple{std::array<double, 3>{3, 0, 1}, 100.0, 1e-12},
                                std::tuple{std::array<double, 3>{1.5, 0, 0.2}, 100.0, 1e-12}}) {
    const double x0 = q[0], rtol_ = rtol;  // copies: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(x0);
    CAPTURE(rtol_);
    const auto cf = disk_test::closed_form(j, q[0], q[1], q[2], t_end);
    const DiskRecorder rec = run_disk(j, q[0], q[1], q[2], t_end, rtol);
    const Check c = compare(rec, cf);
    CHECK(c.max_energy_rel < 1e-8);
    if (t_end > 50) CHECK(item_text(rec, "classification") == "B");  // needs a few +0-0 cycles
    // Evidence for rule B: the stick radii of the closed form are > 1 and strictly decreasing in the tail.
    for (size_t i = cf.radii.size() - 6; i + 1 < cf.radii.size(); ++i) {
      CHECK(cf.radii[i + 1] < cf.radii[i]);
      CHECK(cf.radii[i + 1] > 1);
    }
    MESSAGE("type B from x = " << q[0] << ", rtol " << rtol << ", tau " << t_end << ": " << cf.events.size() << " events, max |dt| = " << c.max_dt
                               << ", energy balance rel " << c.max_energy_rel);
  }
}

TEST_CASE("rolling_disk: BDF gives the same events") {
  const auto cf = disk_test::closed_form(0.5, 3, 0, 1, 30);
  const DiskRecorder rec = run_disk(0.5, 3, 0, 1, 30, 1e-10, "bdf");
  const Check c = compare(rec, cf, false);
  CHECK(c.max_dt < 1e-7);
  MESSAGE("bdf: max |dt| = " << c.max_dt);
}

TEST_CASE("rolling_disk: starting on the switching plane") {
  // z = 0, |x| < 1: rolling; z = 0, |x| >= 1: the side the field gives (x >= 1: F- ; x <= -1: F+).
  // On the edge |x| = 1: rolling when the rolling circle goes inwards (x y <= 0), else sliding outwards.
  for (auto [x, y, mode] : {std::tuple{0.5, 0.0, 0}, std::tuple{1.0, 0.0, 0}, std::tuple{1.0, -0.5, 0}, std::tuple{1.0, 0.5, -1},
                            std::tuple{2.0, 0.0, -1}, std::tuple{-1.0, 0.0, 0}, std::tuple{-1.0, -0.5, 1}, std::tuple{-3.0, 0.0, 1}}) {
    const double x_ = x, y_ = y;  // copies: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(x_);
    CAPTURE(y_);
    const DiskRecorder rec = run_disk(0.5, x, y, 0, 10, 1e-12);
    CHECK(rec.samples.front().mode == mode);
    const auto cf = disk_test::closed_form(0.5, x, y, 0, 10);
    CHECK(rec.symbols() == cf.symbols);
    if (rec.events.size() == cf.events.size())
      for (size_t i = 0; i < cf.events.size(); ++i) CHECK(std::abs(rec.events[i].t - cf.events[i].t) < 1e-8);
  }
}

TEST_CASE("rolling_disk: long type B run, tau = 2000") {
  const double j = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const DiskRecorder rec = run_disk(j, 3, 0, 1, 2000, 1e-10, "adams", 1.0);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto cf = disk_test::closed_form(j, 3, 0, 1, 2000);
  REQUIRE(rec.result.status == "ok");
  CHECK(rec.events.size() > 1000);
  CHECK(rec.events.size() == cf.events.size());
  CHECK(rec.symbols() == cf.symbols);
  const double r_sim = rec.item("rolling_radius")->number;
  // The energy balance drifts by ~5e-7 (relative) over tau = 2000 at rtol 1e-10, so R to ~2.5e-7.
  CHECK(r_sim == doctest::Approx(cf.radii.back()).epsilon(1e-6));
  double max_dt = 0;
  for (size_t i = 0; i < std::min(rec.events.size(), cf.events.size()); ++i)
    max_dt = std::max(max_dt, std::abs(rec.events[i].t - cf.events[i].t));
  CHECK(max_dt < 1e-4);  // phase drift ~2.5e-9 per unit tau, amplified by 1/|y| ~ 27 at the last slips
  const double steps = static_cast<double>(rec.result.stats.get("n_steps"));
  const double per_event = steps / static_cast<double>(rec.events.size());
  CHECK(per_event < 100);
  // Bounded, not growing: the second half of the run costs no more per event than the first.
  const DiskRecorder half = run_disk(j, 3, 0, 1, 1000, 1e-10, "adams", 1.0);
  const double steps_half = static_cast<double>(half.result.stats.get("n_steps"));
  const double per_event_second = (steps - steps_half) / static_cast<double>(rec.events.size() - half.events.size());
  const double per_event_first = steps_half / static_cast<double>(half.events.size());
  CHECK(per_event_second < 1.2 * per_event_first);
  MESSAGE("steps/event: tau 0-1000 " << per_event_first << ", tau 1000-2000 " << per_event_second);
  CHECK(item_text(rec, "classification") == "B");
  MESSAGE("long run: " << rec.events.size() << " events, final rolling radius " << std::setprecision(12) << r_sim << " (closed form "
                       << cf.radii.back() << "), " << std::setprecision(6) << per_event << " steps/event, max |dt| = " << max_dt
                       << ", energy balance rel " << rec.item("energy_balance_error_rel")->number << ", wall "
                       << wall << " s");
}


TEST_CASE("rolling_disk: no chattering while rolling") {
  // Rolling on a circle of radius 0.5 (|x| < 1 throughout) costs the steps of a smooth oscillator.
  const DiskRecorder roll = run_disk(0.5, 0.5, 0, 0, 200);
  REQUIRE(roll.events.empty());
  test::Oscillator osc(0.5);
  SimulationOptions opt;
  opt.t_end = 200;
  opt.output_dt = 0.01;
  opt.solver.method = "adams";  // the disk's method here (run_disk)
  opt.solver.rtol = 1e-10;
  opt.solver.atol = 1e-12;
  DiskRecorder ref;
  simulate(osc, opt, {&ref});
  const double a = static_cast<double>(roll.result.stats.get("n_steps")), b = static_cast<double>(ref.result.stats.get("n_steps"));
  CHECK(a / b < 1.5);
  MESSAGE("steps per unit time: rolling disk " << a / 200 << ", harmonic oscillator " << b / 200);
  // In the B tail, rolling phases between events are not more expensive either.
  const DiskRecorder tail = run_disk(0.5, 3, 0, 1, 200);
  double roll_time = 0;
  for (size_t i = 0; i + 1 < tail.events.size(); ++i)
    if (tail.events[i].mode_after == 0) roll_time += tail.events[i + 1].t - tail.events[i].t;
  MESSAGE("type B run to 200: " << tail.result.stats.get("n_steps") << " steps, " << tail.events.size()
                                << " events, rolling time " << roll_time);
  CHECK(static_cast<double>(tail.result.stats.get("n_steps")) < 2.0 * b + 60.0 * static_cast<double>(tail.events.size()));
}

TEST_CASE("rolling_disk: physical units agree with the dimensionless run under the scaling") {
  const std::string text = R"(model = "rolling_disk"
units = "physical"
[parameters]
mass = 2.0
radius = 0.1
inertia = 0.01
stiffness = 200.0
friction_coefficient = 0.3
gravity = 9.81
[initial]
u = 0.25
v = 0.0
w = 0.5
[simulation]
t_end = 10.0
output_dt = 0.01
)";
  const Scenario sc = load_scenario_text(text, "phys.toml");
  auto sys = find_model("rolling_disk")->make_system(sc);
  DiskRecorder ph;
  simulate(*sys, simulation_options(sc), {&ph});
  REQUIRE(ph.result.status == "ok");
  CHECK(ph.result.stats.method == "auto: exact");  // the default: the closed form, compared with the closed form

  rolling_disk::Params p;
  p.physical = true;
  p.mass = 2;
  p.inertia_ratio = 0.5;
  p.stiffness = 200;
  p.friction_coefficient = 0.3;
  p.gravity = 9.81;
  const auto s = rolling_disk::scales(p);
  CHECK(s.omega0 == doctest::Approx(std::sqrt(200.0 / 3.0)));
  double q[3];
  rolling_disk::to_dimensionless(p, 0.25, 0, 0.5, q);
  const DiskRecorder dl = run_disk(0.5, q[0], q[1], q[2], 10 * s.omega0, 1e-10, "exact");
  CHECK(ph.symbols() == dl.symbols());
  REQUIRE(ph.events.size() == dl.events.size());
  double max_dt = 0;
  for (size_t i = 0; i < ph.events.size(); ++i) {
    max_dt = std::max(max_dt, std::abs(ph.events[i].t * s.omega0 - dl.events[i].t));
    CHECK(ph.events[i].x[0] == doctest::Approx(dl.events[i].x[0]).epsilon(1e-8));
  }
  CHECK(max_dt < 1e-8);
  // Energies: E = E* e; the first sample's outputs (u, v, w, kinetic, potential, total, ...).
  CHECK(ph.samples.front().y[5] == doctest::Approx(s.energy * dl.samples.front().y[kTotal]).epsilon(1e-12));
  CHECK(ph.samples.front().y[0] == doctest::Approx(0.25).epsilon(1e-14));
  CHECK(ph.samples.front().y[2] == doctest::Approx(0.5).epsilon(1e-14));
  // 1/2 m v^2 + 1/2 J Omega^2 + 1/2 k u^2 with Omega = (v - w)/r
  const double e_phys = 0.5 * 0.01 * std::pow(0.5 / 0.1, 2) + 0.5 * 200 * 0.25 * 0.25;
  CHECK(ph.samples.front().y[5] == doctest::Approx(e_phys).epsilon(1e-12));
  CHECK(ph.item("energy_balance_error_rel")->number < 1e-8);
  MESSAGE("physical vs dimensionless: " << ph.events.size() << " events, max |Omega0 t - tau| = " << max_dt);
}

namespace {
std::string input_error(const std::string& text) {
  try {
    const Scenario sc = load_scenario_text(text, "bad.toml");
    find_model("rolling_disk")->make_system(sc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("rolling_disk: input errors name the key and its place") {
  const std::string mixed = "model = \"rolling_disk\"\nunits = \"dimensionless\"\n[parameters]\ninertia_ratio = 0.5\nmass = 2.0\n";
  std::string m = input_error(mixed);
  CHECK(m.find("bad.toml:5:") != std::string::npos);
  CHECK(m.find("'parameters.mass' belongs to units = \"physical\"") != std::string::npos);

  const std::string mixed2 =
      "model = \"rolling_disk\"\n[parameters]\nmass = 2.0\ninertia_ratio = 0.5\nstiffness = 1.0\nfriction_coefficient = 0.3\n"
      "[initial]\nx = 0.5\n";
  m = input_error(mixed2);
  CHECK(m.find("bad.toml:8:") != std::string::npos);
  CHECK(m.find("belongs to units = \"dimensionless\"") != std::string::npos);

  const std::string both =
      "model = \"rolling_disk\"\n[parameters]\nmass = 2.0\nradius = 0.1\ninertia = 0.01\ninertia_ratio = 0.5\n"
      "stiffness = 1.0\nfriction_coefficient = 0.3\n";
  m = input_error(both);
  CHECK(m.find("bad.toml:5:") != std::string::npos);
  CHECK(m.find("exactly one of parameters.inertia and parameters.inertia_ratio") != std::string::npos);

  const std::string missing = "model = \"rolling_disk\"\nunits = \"dimensionless\"\n";
  CHECK(input_error(missing).find("requires parameters.inertia_ratio") != std::string::npos);

  const std::string unknown_method =
      "model = \"rolling_disk\"\nunits = \"dimensionless\"\n[parameters]\ninertia_ratio = 0.5\n[solver]\nmethod = \"rk4\"\n";
  m = input_error(unknown_method);
  CHECK(m.find("\"exact\"") != std::string::npos);
  CHECK(m.find("bad.toml:6:") != std::string::npos);

  const std::string bad_units = "model = \"rolling_disk\"\nunits = \"imperial\"\n";
  CHECK_THROWS_AS(load_scenario_text(bad_units, "bad.toml"), InputError);
}

TEST_CASE("rolling_disk: parameters whose units overflow or vanish, and starts whose rates overflow, are input errors") {
  // g = 1e308 makes E* = m U^2 Omega0^2 = inf (a fuzzing input: the run went on, its dissipation rate inf, until the
  // self-audit stopped it); g = 1e-308 makes it 0 and the start u / U inf. Each names the key and its place.
  const std::string physical = "model = \"rolling_disk\"\n[parameters]\nmass = 2.0\ninertia_ratio = 0.5\nstiffness = 200.0\n"
                               "friction_coefficient = 0.3\ngravity = ";
  std::string m = input_error(physical + "1e308\n[initial]\nu = 0.25\n");
  CHECK_MESSAGE(m.find("bad.toml:7:11: the disk's unit E* = m U^2 Omega0^2 = inf") == 0, m);
  CHECK(m.find("parameters.gravity = 1e+308") != std::string::npos);
  m = input_error(physical + "1e-308\n[initial]\nu = 0.25\n");
  CHECK_MESSAGE(m.find("bad.toml:7:11: the disk's unit E* = m U^2 Omega0^2 = 0") == 0, m);
  // Dimensionless: (1 + j) x overflows with j = 1e300 and x = 1e10.
  m = input_error("model = \"rolling_disk\"\nunits = \"dimensionless\"\n[parameters]\ninertia_ratio = 1e300\n[initial]\nx = 1e10\n");
  CHECK_MESSAGE(m.find("bad.toml:6:5: 'initial.x' = 1e+10") == 0, m);
  CHECK(m.find("rates are not finite") != std::string::npos);
  // The same parameters far from 1 but in range run: g = 1e150 (U about 1e148 m).
  CHECK(input_error(physical + "1e150\n[initial]\nu = 0.25\n").empty());
}

TEST_CASE("rolling_disk: classification rule") {
  using rolling_disk::classify;
  CHECK(classify("+0", {0.6}, 0, 0.6) == "A");
  CHECK(classify("+-0+0-0", {1.2, 1.1, 0.9}, 0, 0.9) == "A");
  CHECK(classify("+-+-0+0-0+0-0", {1.3, 1.2, 1.1, 1.05}, 0, 1.05) == "B");
  CHECK(classify("+-+-0+0-0+0-0+", {1.3, 1.2, 1.1}, 1, 1.05) == "B");
  CHECK(classify("+-+-0+0-0+0-0", {1.3, 1.3, 1.1}, 0, 1.1) == "undetermined");  // radii not decreasing
  CHECK(classify("+-+-+-0", {1.3}, 0, 1.3) == "undetermined");                     // transient
  CHECK(classify("+0+0+0+0+0", {1.5, 1.4, 1.3}, 0, 1.3) == "undetermined");         // not alternating
}

TEST_CASE("rolling_disk: scenarios run and classify as intended") {
  for (auto [name, cls] : {std::pair<std::string, std::string>{"disk_type_a", "A"}, {"disk_type_b", "B"}, {"disk_physical", "B"}}) {
    const std::string name_ = name;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(name_);
    const Scenario sc = load_scenario(rollsim::test::source_dir() + "/scenarios/" + name + ".toml");
    auto sys = find_model("rolling_disk")->make_system(sc);
    DiskRecorder rec;
    simulate(*sys, simulation_options(sc), {&rec});
    REQUIRE(rec.result.status == "ok");
    CHECK(item_text(rec, "classification") == cls);
  }
}

TEST_CASE("rolling_disk: event time error growth (diagnostic)" * doctest::skip()) {
  for (double rtol : {1e-10, 1e-12}) {
    const auto cf = disk_test::closed_form(0.5, 3, 0, 1, 200);
    const DiskRecorder rec = run_disk(0.5, 3, 0, 1, 200, rtol);
    for (size_t i = 0; i < std::min(cf.events.size(), rec.events.size()); i += 8)
      MESSAGE(rtol << " " << i << " t=" << cf.events[i].t << " " << cf.events[i].kind << " dt=" << rec.events[i].t - cf.events[i].t
                   << " y=" << cf.events[i].y);
  }
}
