// Sweeps: grid and zip expansion, validation of the [sweep] section with positions, failed points recorded
// without stopping the sweep, results independent of the thread count, rows equal to single runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "rollsim/scenario/toml_text.hpp"
#include "rollsim/sweep/sweep.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

const std::string kBase = R"(model = "tipping_table"
[parameters]
wheel_mass = 1.0
wheel_radius = 0.25
table_length = 1.0
[initial]
theta1 = 0.01
[simulation]
t_end = 0.2
output_dt = 0.05
[solver]
rtol = 1e-8
[events]
lift_off = "record"
)";

sweep::Spec spec_of(const std::string& sweep_text, const std::vector<std::string>& sets = {}) {
  const Scenario sc = load_scenario_text(kBase + sweep_text, "test.toml", sets);
  return sweep::parse_spec(sc, sets);
}

std::string error_of(const std::string& sweep_text, const std::vector<std::string>& sets = {}) {
  try {
    spec_of(sweep_text, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The base text has 14 lines; [sweep] starts on line 15.
constexpr int kSweepLine = 15;
std::string at(int line_in_sweep, int column) {
  return "test.toml:" + std::to_string(kSweepLine + line_in_sweep) + ":" + std::to_string(column);
}

}  // namespace

TEST_CASE("sweep: linear and log spacing hit their end points exactly") {
  const auto lin = sweep::spaced(0.01, 0.1, 10, false);
  REQUIRE(lin.size() == 10);
  CHECK(lin.front() == 0.01);
  CHECK(lin.back() == 0.1);
  for (std::size_t i = 0; i < lin.size(); ++i) CHECK(lin[i] == doctest::Approx(0.01 + 0.01 * i).epsilon(1e-14));
  const auto lg = sweep::spaced(1e-3, 1e3, 7, true);
  REQUIRE(lg.size() == 7);
  for (std::size_t i = 0; i < lg.size(); ++i) CHECK(lg[i] == std::pow(10.0, -3.0 + i));
  CHECK(lg.front() == 1e-3);
  CHECK(lg.back() == 1e3);
  CHECK(sweep::spaced(0.5, 0.7, 1, false) == std::vector<double>{0.5});
}

TEST_CASE("sweep: float_text reads back as the same double and as a TOML float") {
  for (double v : {0.1, 1.0, 1e-300, 2.0 / 3.0, -123456789.125, 1e22, 5e-324}) {
    const std::string s = toml_text::float_text(v);
    CHECK(std::strtod(s.c_str(), nullptr) == v);
    CHECK(s.find_first_of(".e") != std::string::npos);
  }
}

TEST_CASE("sweep: a grid runs the last key fastest, in file order") {
  const auto spec = spec_of(R"([sweep]
"parameters.wheel_mass" = [1.0, 2.0, 3.0]
"initial.theta1" = { from = 0.01, to = 0.02, n = 2 }
)");
  CHECK(spec.mode == "grid");
  REQUIRE(spec.axes.size() == 2);
  CHECK(spec.axes[0].key == "parameters.wheel_mass");  // file order, not alphabetical
  CHECK(spec.axes[1].key == "initial.theta1");
  CHECK(spec.axes[0].unit == "kg");
  CHECK(spec.n_points == 6);
  const std::vector<std::vector<std::string>> expect{
      {"parameters.wheel_mass=1.0", "initial.theta1=0.01"}, {"parameters.wheel_mass=1.0", "initial.theta1=0.02"},
      {"parameters.wheel_mass=2.0", "initial.theta1=0.01"}, {"parameters.wheel_mass=2.0", "initial.theta1=0.02"},
      {"parameters.wheel_mass=3.0", "initial.theta1=0.01"}, {"parameters.wheel_mass=3.0", "initial.theta1=0.02"}};
  for (std::size_t i = 0; i < 6; ++i) CHECK(spec.overrides(i) == expect[i]);
}

TEST_CASE("sweep: a point's value index on each axis is its mixed-radix digit, last axis fastest (grid) or i (zip)") {
  const auto grid = spec_of(R"([sweep]
"parameters.wheel_mass" = [1.0, 2.0]
"initial.theta1" = [0.01, 0.02, 0.03]
"initial.theta2" = [0.0, 0.1, 0.2, 0.3]
)");
  REQUIRE(grid.n_points == 24);
  for (std::size_t i = 0; i < 24; ++i) {
    const std::vector<std::size_t> digits{i / 12, (i / 4) % 3, i % 4};
    CHECK(grid.indices(i) == digits);
    for (std::size_t k = 0; k < 3; ++k) CHECK(grid.index(i, k) == digits[k]);
  }
  const auto zip = spec_of(R"([sweep]
mode = "zip"
"parameters.wheel_mass" = [1.0, 2.0, 3.0]
"initial.theta1" = [0.01, 0.02, 0.03]
)");
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(zip.indices(i) == std::vector<std::size_t>{i, i});
    CHECK(zip.index(i, 1) == i);
  }
}

TEST_CASE("sweep: zip pairs the i-th values, nested keys, integers, strings and log ranges") {
  const auto spec = spec_of(R"([sweep]
mode = "zip"
initial.theta1 = [0.01, 0.02, 0.03]
solver = { method = ["adams", "bdf", "adams"], max_steps = { from = 1000, to = 3000, n = 3 } }
"solver.rtol" = { from = 1e-6, to = 1e-8, n = 3, spacing = "log" }
)");
  CHECK(spec.mode == "zip");
  REQUIRE(spec.axes.size() == 4);
  CHECK(spec.n_points == 3);
  INFO(spec.overrides(1)[0], " ", spec.overrides(1)[1], " ", spec.overrides(1)[2], " ", spec.overrides(1)[3]);
  CHECK(spec.overrides(1) == std::vector<std::string>{"initial.theta1=0.02", "solver.method=\"bdf\"",
                                                      "solver.max_steps=2000", "solver.rtol=1e-07"});
  CHECK_FALSE(spec.axes[1].numeric);
  CHECK(spec.axes[1].labels[1] == "bdf");
}

TEST_CASE("sweep: errors in the [sweep] section name file:line:column") {
  struct Case {
    std::string text, where, fragment;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases{
      {"[sweep]\n\"initial.theta3\" = [1.0]\n", at(1, 20), "unknown key 'initial.theta3'", {}},
      {"[sweep]\n\"initial.theta1\" = []\n", at(1, 20), "empty", {}},
      {"[sweep]\n\"initial.theta1\" = { from = 0.1, to = 0.2, n = 0 }\n", at(1, 48), "n must be at least 1", {}},
      {"[sweep]\n\"initial.theta1\" = { from = 0.1, to = 0.2, n = 1.5 }\n", at(1, 48), "n must be an integer", {}},
      {"[sweep]\n\"initial.theta1\" = { from = -0.1, to = 0.2, n = 3, spacing = \"log\" }\n", at(1, 29),
       "log spacing needs from > 0", {}},
      {"[sweep]\n\"initial.theta1\" = { from = 0.1, to = 0.0, n = 3, spacing = \"log\" }\n", at(1, 39),
       "log spacing needs to > 0", {}},
      {"[sweep]\n\"initial.theta1\" = { from = 0.1, to = 0.2, n = 3, spacing = \"cubic\" }\n", at(1, 61),
       "spacing must be", {}},
      {"[sweep]\n\"initial.theta1\" = { from = 0.1, too = 0.2, n = 3 }\n", at(1, 40), "did you mean 'to'", {}},
      {"[sweep]\n\"initial.theta1\" = { from = 0.1, n = 3 }\n", at(1, 20), "needs 'to'", {}},
      {"[sweep]\nmode = \"zip\"\n\"initial.theta1\" = [0.1, 0.2]\n\"initial.omega1\" = [0.0]\n", at(3, 20),
       "equal length", {}},
      {"[sweep]\nmode = \"diagonal\"\n\"initial.theta1\" = [0.1]\n", at(1, 8), "grid", {}},
      {"[sweep]\n\"initial.theta1\" = 0.1\n", at(1, 20), "a list of values or a range", {}},
      {"[sweep]\n\"initial.theta1\" = [0.1, [0.2]]\n", at(1, 26), "number, a string or a boolean", {}},
      {"[sweep]\n\"initial.theta1\" = [0.1]\ninitial.theta1 = [0.2]\n", at(2, 18), "swept twice", {}},
      {"[sweep]\n\"solver.max_steps\" = { from = 1, to = 2, n = 3 }\n", at(1, 22), "integer key", {}},
      {"[sweep]\n\"model\" = [\"tipping_table\"]\n", at(1, 11), "cannot be swept", {}},
      {"[sweep]\nmode = \"grid\"\n", at(0, 1), "sweeps no key", {}},
      {"", "test.toml:1:1", "no [sweep] section", {}},
      {"[sweep]\n\"initial.theta1\" = [0.1]\n", "--set initial.theta1=0.2", "cannot also be set", {"initial.theta1=0.2"}},
      {"[sweep]\n\"initial.theta1\" = [0.1]\n", "--set sweep.mode=zip", "cannot be changed with --set",
       {"sweep.mode=zip"}},
      {"[sweep]\nsummary = \"t_edge\"\n\"initial.theta1\" = [0.1]\n", at(1, 11), "must be a list of summary item names",
       {}},
      {"[sweep]\nsummary = [\"t_edge\", 3]\n\"initial.theta1\" = [0.1]\n", at(1, 22), "the name of a summary item", {}},
      {"[sweep]\nsummary = [\"t_edge\", \"t_edge\"]\n\"initial.theta1\" = [0.1]\n", at(1, 22),
       "'t_edge' is listed twice (first at " + at(1, 12) + ")", {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const std::string msg = error_of(c.text, c.sets);
    CHECK_MESSAGE(msg.rfind(c.where, 0) == 0, msg);
    CHECK_MESSAGE(msg.find(c.fragment) != std::string::npos, msg);
  }
}

TEST_CASE("sweep: failed points are recorded and the sweep goes on") {
  // theta2 = -3 puts the contact at s = 0.25 (0.01 + 3) = 0.7525 m, beyond the edge at 0.5 m: an input error.
  // max_steps = 5 cannot reach t_end: a solver failure.
  const auto spec = spec_of(R"([sweep]
"initial.theta2" = [0.0, -3.0]
"solver.max_steps" = [100000, 5]
)");
  const Scenario base = load_scenario_text(kBase + "[sweep]\n\"initial.theta2\" = [0.0]\n", "test.toml");
  REQUIRE(spec.n_points == 4);
  std::vector<sweep::PointResult> rows(4);
  std::vector<std::size_t> all{0, 1, 2, 3};
  sweep::run_points(base, {}, spec, all, 2, false, [&](std::size_t k, sweep::PointResult&& r) { rows[k] = std::move(r); },
                    nullptr);
  CHECK(rows[0].status == "ok");
  CHECK(rows[0].termination == "t_end");
  CHECK(rows[1].status == "solver_failure");
  CHECK_FALSE(rows[1].message.empty());
  for (std::size_t i : {2u, 3u}) {
    CHECK(rows[i].status.rfind("input_error: ", 0) == 0);
    CHECK(rows[i].status.find("beyond the table edge") != std::string::npos);
    CHECK(std::isnan(rows[i].t_final));
  }
  const auto cols = sweep::build_table(spec, rows);
  const auto find = [&](const std::string& name) -> const sweep::Column& {
    for (const auto& c : cols)
      if (c.name == name) return c;
    FAIL("no column " << name);
    return cols.front();
  };
  CHECK(find("initial.theta2").numbers == std::vector<double>{0.0, 0.0, -3.0, -3.0});
  CHECK(find("solver.max_steps").numbers == std::vector<double>{100000, 5, 100000, 5});
  CHECK(find("final_theta1").numbers.size() == 4);
  CHECK(std::isnan(find("final_theta1").numbers[2]));
  CHECK(find("energy_drift_rel").numbers[0] < 1e-6);
  CHECK(find("status").strings[1] == "solver_failure");
  CHECK(find("n_events").ints.size() == 4);
}

TEST_CASE("sweep: the table does not depend on the thread count, and rows equal single runs") {
  const std::string sweep_text = R"([sweep]
"initial.theta1" = { from = 0.005, to = 0.05, n = 5, spacing = "log" }
"parameters.wheel_inertia" = [0.02, 0.03125]
)";
  const Scenario base = load_scenario_text(kBase + sweep_text, "test.toml", {"simulation.t_end=3"});
  const auto spec = sweep::parse_spec(base, {"simulation.t_end=3"});
  std::vector<std::size_t> all(spec.n_points);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto table = [&](int threads) {
    std::vector<sweep::PointResult> rows(spec.n_points);
    sweep::run_points(base, {"simulation.t_end=3"}, spec, all, threads, false,
                      [&](std::size_t k, sweep::PointResult&& r) { rows[k] = std::move(r); }, nullptr);
    return std::make_pair(rows, sweep::build_table(spec, rows));
  };
  const auto [rows1, t1] = table(1);
  const auto [rows3, t3] = table(3);
  REQUIRE(t1.size() == t3.size());
  for (std::size_t c = 0; c < t1.size(); ++c) {
    const std::string name = t1[c].name;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(name);
    CHECK(t1[c].name == t3[c].name);
    REQUIRE(t1[c].numbers.size() == t3[c].numbers.size());
    if (!t1[c].numbers.empty())
      CHECK(std::memcmp(t1[c].numbers.data(), t3[c].numbers.data(), t1[c].numbers.size() * sizeof(double)) == 0);
    CHECK(t1[c].ints == t3[c].ints);
    CHECK(t1[c].strings == t3[c].strings);
  }
  // Each row against a run of the same point built by hand (load_scenario_text + simulate, with a recorder).
  for (std::size_t i = 0; i < spec.n_points; ++i) {
    const auto idx = spec.indices(i);
    const double th = spec.axes[0].numbers[idx[0]], j = spec.axes[1].numbers[idx[1]];
    char a[64], b[64];
    std::snprintf(a, sizeof a, "initial.theta1=%.17g", th);
    std::snprintf(b, sizeof b, "parameters.wheel_inertia=%.17g", j);
    const auto run = test::run_text(kBase, {"simulation.t_end=3", a, b});
    CHECK(rows1[i].status == "ok");
    CHECK(rows1[i].termination == run.result.termination);
    CHECK(rows1[i].t_final == run.result.t_final);
    CHECK(rows1[i].x_final == run.result.x_final);
    CHECK(rows1[i].x_final == run.rec.x.back());
    double t_edge = NAN;
    for (const auto& it : rows1[i].summary)
      if (it.key == "t_edge") t_edge = it.number;
    CHECK((std::isnan(t_edge) ? std::isnan(run.summary("t_edge")) : t_edge == run.summary("t_edge")));
  }
  CHECK(rows1.back().termination == "table_edge");  // the steepest start reaches the edge within 3 s
}

TEST_CASE("sweep: a thread's reused scenario gives each point what a fresh copy gives, in any order") {
  // The wheel's inertia is derived from its mass, so each point must derive it anew; theta2 = -3 is bad input
  // (beyond the edge) between good points.
  const std::string sweep_text = R"([sweep]
"parameters.wheel_mass" = [1.0, 3.0, 2.0]
"initial.theta2" = [0.0, -3.0]
)";
  const Scenario base = load_scenario_text(kBase + sweep_text, "test.toml", {"simulation.t_end=1"});
  const auto spec = sweep::parse_spec(base, {"simulation.t_end=1"});
  REQUIRE(spec.n_points == 6);
  SolverWorkspace solver;
  sweep::PointWorkspace w;
  w.solver = &solver;
  for (std::size_t i : {5u, 0u, 3u, 1u, 4u, 2u, 0u}) {
    CAPTURE(i);
    const auto reused = sweep::run_point(base, {"simulation.t_end=1"}, spec, i, false, w);
    const auto fresh = sweep::run_point(base, {"simulation.t_end=1"}, spec, i, false);
    CHECK(reused.status == fresh.status);
    CHECK(reused.message == fresh.message);
    CHECK(reused.x_final == fresh.x_final);
    REQUIRE(reused.summary.size() == fresh.summary.size());
    for (std::size_t k = 0; k < fresh.summary.size(); ++k) {
      CAPTURE(fresh.summary[k].key);
      CHECK(reused.summary[k].key == fresh.summary[k].key);
      CHECK((std::isnan(fresh.summary[k].number) ? std::isnan(reused.summary[k].number)
                                                 : reused.summary[k].number == fresh.summary[k].number));
    }
    // The reused copy holds this point's values, its derived inertia and the base's overrides plus its own.
    if (fresh.status == "ok") {
      const double m = spec.axes[0].numbers[spec.indices(i)[0]];
      CHECK(w.scenario->real("parameters.wheel_mass") == m);
      const double r = w.scenario->real("parameters.wheel_radius");
      CHECK(w.scenario->real("parameters.wheel_inertia") == 0.5 * m * r * r);
      CHECK(w.scenario->overrides.size() == base.overrides.size() + 2);
    }
  }
  // The points differ: the mass reaches the dynamics through the derived inertia too.
  const auto a = sweep::run_point(base, {"simulation.t_end=1"}, spec, 0, false, w);
  const auto b = sweep::run_point(base, {"simulation.t_end=1"}, spec, 2, false, w);
  CHECK(a.x_final != b.x_final);
}

TEST_CASE("sweep: results survive the byte encoding used to gather them over MPI") {
  sweep::PointResult a;
  a.status = "ok";
  a.termination = "table_edge";
  a.t_final = 1.8202495314;
  a.n_events = 2;
  a.state_names = {"theta1", "theta2"};
  a.state_units = {"rad", "rad"};
  a.x_final = {1.25, -0.0};
  a.summary = {{"t_edge", 1.82, "", "s", "edge", false}, {"symbols", 0, "+0-", "", "modes", false},
               {"n_stick", 3, "", "", "sticks", true}};
  a.has_trajectory = true;
  a.trajectory.names = {"time", "theta1"};
  a.trajectory.units = {"s", "rad"};
  a.trajectory.columns = {{0.0, 0.5}, {0.01, NAN}};
  sweep::PointResult b;
  b.status = "input_error: x:1:2: bad";
  b.message = std::string("with\0nul", 8);
  std::string buf;
  sweep::encode(7, a, buf);
  sweep::encode(3, b, buf);
  std::vector<std::size_t> idx;
  std::vector<sweep::PointResult> out;
  sweep::decode(buf, idx, out);
  REQUIRE(idx == std::vector<std::size_t>{7, 3});
  REQUIRE(out.size() == 2);
  CHECK(out[0].termination == a.termination);
  CHECK(out[0].t_final == a.t_final);
  CHECK(out[0].n_events == 2);
  CHECK(out[0].x_final == a.x_final);
  CHECK(std::signbit(out[0].x_final[1]));
  CHECK(out[0].state_units == a.state_units);
  REQUIRE(out[0].summary.size() == 3);
  CHECK(out[0].summary[1].text == "+0-");
  CHECK(out[0].summary[2].is_integer);
  CHECK(out[0].trajectory.columns[0] == a.trajectory.columns[0]);
  CHECK(std::isnan(out[0].trajectory.columns[1][1]));
  CHECK(out[1].status == b.status);
  CHECK(out[1].message == b.message);
  CHECK(std::isnan(out[1].t_final));
  CHECK_FALSE(out[1].has_trajectory);
  buf.pop_back();
  CHECK_THROWS(sweep::decode(buf, idx, out));
}

TEST_CASE("sweep: summary = [...] writes the listed items in its order, as the full sweep computes them") {
  // The lists ask for each kind of work: event times alone (no outputs, no friction-demand tracker), the tracker
  // without the outputs, the outputs without the tracker, and nothing at all.
  const std::string axes = "\"initial.theta1\" = [0.01, 0.05]\n\"parameters.wheel_inertia\" = [0.02, 0.03125]\n";
  auto rows_of = [&](const std::string& summary_line) {
    const std::string text = kBase + "[sweep]\n" + summary_line + axes;
    const Scenario base = load_scenario_text(text, "test.toml", {"simulation.t_end=3"});
    const auto spec = sweep::parse_spec(base, {"simulation.t_end=3"});
    sweep::check_valid_point(base, {"simulation.t_end=3"}, spec);
    std::vector<std::size_t> all(spec.n_points);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    std::vector<sweep::PointResult> rows(spec.n_points);
    sweep::run_points(base, {"simulation.t_end=3"}, spec, all, 2, false,
                      [&](std::size_t k, sweep::PointResult&& r) { rows[k] = std::move(r); }, nullptr);
    return std::make_pair(spec, rows);
  };
  const auto [full_spec, full] = rows_of("");
  CHECK_FALSE(full_spec.summary.has_value());
  REQUIRE(full.size() == 4);
  const std::vector<std::vector<std::string>> lists{{"t_lift_off", "t_edge"},
                                                    {"friction_demand_max_loaded", "t_edge", "friction_demand_max"},
                                                    {"normal_force_min", "energy_drift_rel", "energy_initial"},
                                                    {}};
  for (const auto& list : lists) {
    std::string line = "summary = [";
    for (const auto& k : list) line += (line.back() == '[' ? "\"" : ", \"") + k + "\"";
    line += "]\n";
    CAPTURE(line);
    const auto [spec, rows] = rows_of(line);
    REQUIRE(spec.summary == list);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CHECK(rows[i].status == "ok");
      CHECK(rows[i].x_final == full[i].x_final);  // the same steps: the selection changes no answer
      REQUIRE(rows[i].summary.size() == list.size());
      for (std::size_t k = 0; k < list.size(); ++k) {
        CHECK(rows[i].summary[k].key == list[k]);
        const SummaryItem* whole = nullptr;
        for (const auto& it : full[i].summary)
          if (it.key == list[k]) whole = &it;
        REQUIRE(whole != nullptr);
        // Bit for bit (NaN where the full sweep has NaN: a point that does not reach the edge).
        CHECK(std::memcmp(&rows[i].summary[k].number, &whole->number, sizeof(double)) == 0);
      }
    }
    // The table's summary columns are the list's.
    std::vector<std::string> fixed;
    for (const auto& c : sweep::build_table(spec, rows)) fixed.push_back(c.name);
    for (const auto& k : list) CHECK(std::count(fixed.begin(), fixed.end(), k) == 1);
    for (const char* other : {"energy_drift_abs", "t_slip_onset"}) CHECK(std::count(fixed.begin(), fixed.end(), other) == 0);
  }
  // A name the model does not report: refused before any point runs, at its place in the file, with the closest.
  const Scenario bad = load_scenario_text(kBase + "[sweep]\nsummary = [\"t_edge\", \"t_lift_of\"]\n" + axes, "test.toml");
  const auto spec = sweep::parse_spec(bad, {});
  std::string msg;
  try {
    sweep::check_valid_point(bad, {}, spec);
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK_MESSAGE(msg.rfind(at(1, 22), 0) == 0, msg);
  CHECK_MESSAGE(msg.find("'t_lift_of' is not a summary item of model \"tipping_table\" (did you mean 't_lift_off'?)") !=
                    std::string::npos,
                msg);
}

TEST_CASE("sweep: summary_keys names exactly the items a run reports") {
  // The built-in models' scenarios, run briefly: summary_keys is what `summary = [...]` is checked against.
  for (const char* name : {"tipping_table.toml", "tipping_table_dae.toml", "table_contact.toml", "disk_type_b.toml",
                           "disk_physical.toml", "carriage_pendulum.toml", "double_pendulum.toml", "bouncing_ball.toml"}) {
    CAPTURE(name);
    const std::string text = test::scenario_text(name);
    const auto run = test::run_text(text, {"simulation.t_end=0.5"});
    std::vector<std::string> reported;
    for (const auto& it : run.result.summary) reported.push_back(it.key);
    const auto system = build_system(run.scenario);
    // Less the items a run reports only sometimes (the disk's classification_note), which this run did not.
    std::vector<std::string> keys = summary_keys(*system);
    const auto summarizer = system->make_summarizer();
    const std::vector<std::string> sometimes = summarizer ? summarizer->conditional_keys() : std::vector<std::string>{};
    for (const auto& k : sometimes)
      if (std::find(reported.begin(), reported.end(), k) == reported.end()) keys.erase(std::find(keys.begin(), keys.end(), k));
    CHECK(keys == reported);
    if (std::string(name).rfind("disk", 0) == 0) CHECK(sometimes == std::vector<std::string>{"classification_note"});
  }
}

TEST_CASE("sweep: summary lists of user models, with contacts and without, give the full run's items") {
  // Every item but the energy drift's (which alone reads the outputs): the symbols, counts and the audit.
  for (const char* name : {"bouncing_ball.toml", "table_contact.toml", "user_carriage_pendulum.toml"}) {
    CAPTURE(name);
    const auto full = test::run_text(test::scenario_text(name), {"simulation.t_end=0.5"});
    const auto system = build_system(full.scenario);
    std::vector<std::string> list;
    for (const auto& k : summary_keys(*system))
      if (!names_any({k}, kEnergyDriftKeys)) list.push_back(k);
    std::reverse(list.begin(), list.end());  // the list's order, not the model's
    SimulationOptions opt = simulation_options(full.scenario);
    opt.summary = list;
    const RunResult some = simulate(*system, opt, {});
    CHECK(some.x_final == full.result.x_final);
    std::size_t k = 0;
    for (const auto& key : list) {
      const SummaryItem* whole = full.item(key);
      if (!whole) continue;  // an item this run does not report
      REQUIRE(k < some.summary.size());
      CHECK(some.summary[k].key == key);
      CHECK(some.summary[k].text == whole->text);
      CHECK(std::memcmp(&some.summary[k].number, &whole->number, sizeof(double)) == 0);
      ++k;
    }
    CHECK(k == some.summary.size());
    CHECK(k > 0);
  }
}

namespace {

/// x' = v, v' = -x with two outputs (the energy, and x^2) and a summary of two items: `energy_max` reads the energy,
/// `x_last` only the state. Counts the outputs computed: every output (compute_outputs), or, with `declares_columns`,
/// where the summary names the energy's column as the only one it reads, the columns computed one by one.
class CountedOscillator final : public OdeSystem {
 public:
  explicit CountedOscillator(bool declares_columns = false) : declares_columns_(declares_columns) {}
  std::string model_name() const override { return "counted_oscillator"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x0) const override {
    x0[0] = 1;
    x0[1] = 0;
  }
  void rhs(double, const double* x, int, double* f) const override {
    f[0] = x[1];
    f[1] = -x[0];
  }
  void compute_outputs(double, const double* x, int, double* y) const override {
    ++computed;
    y[0] = energy(x);
    y[1] = x[0] * x[0];
  }
  void compute_output_columns(double, const double* x, int, std::span<const std::size_t> columns,
                              double* y) const override {
    for (const std::size_t c : columns) {
      ++columns_computed[c];
      y[c] = c == 0 ? energy(x) : x[0] * x[0];
    }
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<Summary>(declares_columns_);
  }
  mutable long computed = 0;
  mutable long columns_computed[2] = {0, 0};

 private:
  static double energy(const double* x) { return 0.5 * (x[0] * x[0] + x[1] * x[1]); }
  class Summary final : public Summarizer {
   public:
    explicit Summary(bool declares_columns) : declares_columns_(declares_columns) {}
    std::vector<std::size_t> output_columns() const override {
      return declares_columns_ ? std::vector<std::size_t>{0} : std::vector<std::size_t>{};
    }
    void on_point(double, const double* x, const double* y, int) override {
      if (reads_) energy_max_ = std::max(energy_max_, y[0]);
      x_last_ = x[0];
    }
    void select(const std::vector<std::string>& keys) override {
      reads_ = std::find(keys.begin(), keys.end(), "energy_max") != keys.end();
    }
    bool reads_outputs() const override { return reads_; }
    std::vector<SummaryItem> items() const override {
      return {{"energy_max", energy_max_, "", "1", "largest energy", false}, {"x_last", x_last_, "", "1", "x", false}};
    }

   private:
    bool declares_columns_;
    bool reads_ = true;
    double energy_max_ = 0, x_last_ = NAN;
  };
  bool declares_columns_;
  Signals s_{{"x", "1", "position"}, {"v", "1", "velocity"}},
      o_{{"energy", "1", "energy"}, {"x_squared", "1", "x^2"}};
};

}  // namespace

TEST_CASE("simulate: outputs are computed only for a summarizer or an observer that reads them") {
  SimulationOptions opt;
  opt.t_end = 3;
  opt.output_dt = 0.5;
  opt.solver.method = "dopri5";
  const CountedOscillator all_items;
  const RunResult all = simulate(all_items, opt, {});
  CHECK(all_items.computed > 6);  // every step and sample
  REQUIRE(all.summary.size() == 2);
  CHECK(all.summary[0].number == doctest::Approx(0.5).epsilon(1e-6));  // the energy x^2/2 + v^2/2 from (1, 0)

  opt.summary = std::vector<std::string>{"x_last"};
  const CountedOscillator some;
  const RunResult r = simulate(some, opt, {});
  CHECK(some.computed == 0);
  REQUIRE(r.summary.size() == 1);
  CHECK(r.summary[0].key == "x_last");
  CHECK(r.summary[0].number == all.summary[1].number);
  CHECK(r.x_final == all.x_final);

  // An observer still gets its samples' outputs.
  const CountedOscillator watched;
  test::Recorder rec;
  simulate(watched, opt, {&rec});
  CHECK(watched.computed == static_cast<long>(rec.y.size()));
  REQUIRE_FALSE(rec.y.empty());
  CHECK(rec.y.back()[0] == doctest::Approx(0.5).epsilon(1e-6));
}

TEST_CASE("simulate: a summary that names the output columns it reads gets those columns alone, to the same value") {
  SimulationOptions opt;
  opt.t_end = 3;
  opt.output_dt = 0.01;
  opt.solver.method = "dopri5";
  const CountedOscillator full;  // no columns named: every output at every step and sample
  const RunResult a = simulate(full, opt, {});
  const CountedOscillator named(/*declares_columns=*/true);
  const RunResult b = simulate(named, opt, {});
  CHECK(full.computed > 300);  // 300 samples, and the steps
  CHECK(named.computed == 0);
  CHECK(named.columns_computed[0] == full.computed);  // the energy at the same points
  CHECK(named.columns_computed[1] == 0);               // x^2: read by no one
  REQUIRE(a.summary.size() == 2);
  REQUIRE(b.summary.size() == 2);
  CHECK(b.summary[0].number == a.summary[0].number);  // bit for bit
  CHECK(b.summary[1].number == a.summary[1].number);

  // An observer reads every output: the columns named by the summary do not narrow what it is given.
  const CountedOscillator watched(/*declares_columns=*/true);
  test::Recorder rec;
  const RunResult c = simulate(watched, opt, {&rec});
  CHECK(watched.columns_computed[0] == 0);
  CHECK(watched.computed == full.computed);  // every step and sample, as without columns named
  REQUIRE_FALSE(rec.y.empty());
  CHECK(rec.y.back()[1] == rec.x.back()[0] * rec.x.back()[0]);
  CHECK(c.summary[0].number == a.summary[0].number);
}

TEST_CASE("simulate: a summary that reads no sample counts the grid's samples without them, to the same items") {
  // A sweep's summary without the energy items reads no sample between the steps (Summarizer::reads_samples): the
  // loop then only counts the grid's times. A watched run (an observer takes every sample) is the reference: the
  // same steps, items and final state, and as many samples.
  struct Case {
    const char* scenario;
    std::vector<std::string> overrides, summary;
  };
  const std::vector<Case> cases{
      {"tipping_table.toml", {"events.lift_off=record"}, {"t_edge", "t_lift_off"}},
      {"tipping_table.toml", {"events.lift_off=record", "solver.method=dopri5"}, {"t_lift_off", "t_edge"}},
      {"tipping_table.toml", {"simulation.t_end=0.5"}, {"t_edge"}},  // ends on a grid time, no event
      {"disk_type_b.toml", {"solver.method=dop853"}, {"classification", "rolling_radius"}},
      {"disk_type_b.toml", {"solver.method=exact"}, {"rolling_radius", "classification"}},
      {"bouncing_ball.toml", {"simulation.t_end=2"}, {"n_impact", "symbols_floor"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.scenario);
    CAPTURE(c.overrides.back());
    const Scenario sc = load_scenario_text(test::scenario_text(c.scenario), c.scenario, c.overrides);
    const auto sys = build_system(sc);
    SimulationOptions opt = simulation_options(sc);
    opt.summary = c.summary;
    const auto summarizer = sys->make_summarizer();
    REQUIRE(summarizer);
    summarizer->select(c.summary);
    CHECK_FALSE(summarizer->reads_samples());
    const RunResult alone = simulate(*sys, opt, {});
    test::Recorder rec;
    const RunResult watched = simulate(*sys, opt, {&rec});
    CHECK(watched.n_samples == rec.x.size());
    CHECK(rec.x.size() > 20);
    CHECK(alone.n_samples == watched.n_samples);
    CHECK(alone.n_events == watched.n_events);
    CHECK(alone.termination == watched.termination);
    CHECK(alone.t_final == watched.t_final);
    CHECK(alone.x_final == watched.x_final);
    REQUIRE(alone.summary.size() == c.summary.size());
    REQUIRE(watched.summary.size() == c.summary.size());
    for (std::size_t i = 0; i < c.summary.size(); ++i) {
      CAPTURE(c.summary[i]);
      CHECK(alone.summary[i].key == c.summary[i]);
      CHECK(std::memcmp(&alone.summary[i].number, &watched.summary[i].number, sizeof(double)) == 0);
      CHECK(alone.summary[i].text == watched.summary[i].text);
    }
  }
}

TEST_CASE("simulate: the disk's energy items are the same, bit for bit, with the total energy computed alone") {
  // The exact method's grid samples are where its energy balance is checked between events: a sweep without
  // trajectories computes only the total energy there (DiskSummarizer::output_columns); with an observer, every
  // output is computed.
  for (const char* method : {"exact", "dop853"}) {
    CAPTURE(method);
    const Scenario sc = load_scenario_text(
        "model = \"rolling_disk\"\nunits = \"dimensionless\"\n[parameters]\ninertia_ratio = 0.4\n[initial]\n"
        "x = 3.0\ny = 0.0\nz = 1.0\n[simulation]\nt_end = 30.0\noutput_dt = 0.05\n[solver]\nmethod = \"" +
        std::string(method) + "\"\n",
        "disk.toml");
    const auto sys = build_system(sc);
    const SimulationOptions opt = simulation_options(sc);
    const RunResult alone = simulate(*sys, opt, {});
    test::Recorder rec;
    const RunResult watched = simulate(*sys, opt, {&rec});
    REQUIRE(rec.y.size() > 500);
    REQUIRE(alone.summary.size() == watched.summary.size());
    int energy_items = 0;
    for (std::size_t i = 0; i < alone.summary.size(); ++i) {
      CAPTURE(alone.summary[i].key);
      CHECK(alone.summary[i].key == watched.summary[i].key);
      CHECK(alone.summary[i].number == watched.summary[i].number);
      CHECK(alone.summary[i].text == watched.summary[i].text);
      energy_items += alone.summary[i].key.rfind("energy_", 0) == 0;
    }
    CHECK(energy_items == 3);
    CHECK(alone.x_final == watched.x_final);
  }
}

TEST_CASE("sweep: run_points hands a slow sweep's results over as they come, not at the end of the batch") {
  // Four equal points of the disk on CVODE (each some 0.15 s in a release build, longer in a sanitizer tree) on one
  // worker: far fewer than a batch, so the sink waits for the batch's last result, and is woken earlier by the
  // worker that finds a result waiting past run_points' latency (50 ms). The first result must then reach the sink
  // long before the last point ends (it did only at the end when the sink was woken for whole batches).
  const double tau = test::full_or_sanitized(1000.0, 200.0);
  const std::string text = R"(model = "rolling_disk"
units = "dimensionless"
[parameters]
inertia_ratio = 0.5
[initial]
x = 3.0
y = 0.0
z = 1.0
[simulation]
t_end = )" + std::to_string(tau) + R"(
output_dt = 1000.0
[solver]
method = "adams"
rtol = 1e-10
atol = 1e-12
[sweep]
"initial.y" = [0.0, 0.0, 0.0, 0.0]
)";
  const Scenario base = load_scenario_text(text, "slow.toml");
  const auto spec = sweep::parse_spec(base, {});
  REQUIRE(spec.n_points == 4);
  const std::vector<std::size_t> all{0, 1, 2, 3};
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> got;
  std::vector<sweep::PointResult> rows(4);
  const auto start = Clock::now();
  sweep::run_points(base, {}, spec, all, 1, false,
                    [&](std::size_t k, sweep::PointResult&& r) {
                      got.push_back(Clock::now());
                      rows[k] = std::move(r);
                    },
                    nullptr);
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  REQUIRE(got.size() == 4);
  for (const auto& r : rows) {
    CHECK_MESSAGE(r.status == "ok", r.status << ": " << r.message);
    CHECK(r.t_final == tau);
  }
  const double first = std::chrono::duration<double>(got.front() - start).count();
  const double last = std::chrono::duration<double>(got.back() - start).count();
  CAPTURE(total);
  CAPTURE(first);
  // The first of four equal points ends at about a quarter of the sweep; the last result comes at its end.
  CHECK(first < 0.75 * total);
  CHECK(last - first > 0.25 * total);
}
