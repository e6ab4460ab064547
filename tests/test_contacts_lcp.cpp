// The contact engine's LCP path (nonsmooth.mode_selection): Lemke's method on small problems with known answers,
// the planar contact problem against Coulomb's law in closed form, the engine's runs with the LCP against the
// same runs enumerated in full, and ten blocks that land and stop at once (4^10 combinations, beyond the full
// enumeration) against their closed form.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "rollsim/hybrid/lcp.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

std::string scenario_file(const std::string& name) { return test::read_file(rollsim::test::source_dir() + "/scenarios/" + name); }

double extra_of(const EventRecord& e, const std::string& key) {
  const auto it = e.extra.find(key);
  return it == e.extra.end() ? NAN : it->second;
}

}  // namespace

TEST_CASE("lcp: Lemke's method solves small LCPs with known answers and reports one that has none") {
  Eigen::VectorXd z, w;
  {  // Both active: 2 z1 + z2 = 5, z1 + 2 z2 = 6.
    Eigen::MatrixXd A(2, 2);
    A << 2, 1, 1, 2;
    REQUIRE(solve_lcp(A, Eigen::Vector2d(-5, -6), z, w));
    CHECK(z(0) == doctest::Approx(4.0 / 3).epsilon(1e-14));
    CHECK(z(1) == doctest::Approx(7.0 / 3).epsilon(1e-14));
    CHECK(w.cwiseAbs().maxCoeff() <= 1e-14);
  }
  {  // A = I: z = max(0, -q), w = max(0, q).
    const Eigen::Vector3d q(-1, 2, -3);
    REQUIRE(solve_lcp(Eigen::Matrix3d::Identity(), q, z, w));
    CHECK(z(0) == doctest::Approx(1));
    CHECK(z(1) == 0);
    CHECK(z(2) == doctest::Approx(3));
    CHECK(w(1) == doctest::Approx(2));
  }
  {  // w = -z - 1 >= 0 has no z >= 0.
    Eigen::MatrixXd A(1, 1);
    A << -1;
    Eigen::VectorXd q(1);
    q << -1;
    CHECK_FALSE(solve_lcp(A, q, z, w));
  }
}

TEST_CASE("lcp: the planar contact problem of a pushed block follows Coulomb's law") {
  // A unit mass on the floor pushed by F with gravity g: without contact forces y_N = -g (falling into the floor)
  // and y_T = F. Then lambda_N = g, and lambda_T = -F while |F| <= mu g (sticking, y_T = 0), else -mu g sgn F
  // with y_T = F - mu g sgn F (sliding).
  const double g = 9.81, mu = 0.3;
  for (const double F : {0.0, 1.0, -2.5, 2.9, 5.0, -7.0}) {
    INFO("F = " << F);
    PlanarContactProblem p;
    p.G = Eigen::Matrix2d::Identity();
    p.d = Eigen::Vector2d(-g, F);
    p.n_normal = 1;
    p.normal_of = {0};
    p.mu = {mu};
    p.bound = {0};
    PlanarContactSolution s;
    REQUIRE(solve_planar_contacts(p, s));
    CHECK(s.lambda(0) == doctest::Approx(g).epsilon(1e-13));
    CHECK(std::abs(s.y(0)) <= 1e-13);
    const bool sticks = std::abs(F) <= mu * g;
    const double lt = sticks ? -F : -mu * g * (F > 0 ? 1 : -1);
    CHECK(s.lambda(1) == doctest::Approx(lt).epsilon(1e-13));
    CHECK(s.y(1) == doctest::Approx(sticks ? 0.0 : F + lt).epsilon(1e-13).scale(1));
    CHECK(s.edge_plus(0) == doctest::Approx(mu * s.lambda(0) + s.lambda(1)).scale(1));
    CHECK(s.edge_minus(0) == doctest::Approx(mu * s.lambda(0) - s.lambda(1)).scale(1));
  }
  {  // A given normal force (a bilateral contact): the bound is mu N whatever lambda_N is.
    PlanarContactProblem p;
    p.G = Eigen::MatrixXd::Identity(1, 1);
    p.d = Eigen::VectorXd::Constant(1, 4.0);
    p.normal_of = {-1};
    p.mu = {0.5};
    p.bound = {6.0};
    PlanarContactSolution s;
    REQUIRE(solve_planar_contacts(p, s));
    CHECK(s.lambda(0) == doctest::Approx(-3.0));  // mu N = 3 < 4: slides, y_T = 1
    CHECK(s.y(0) == doctest::Approx(1.0));
  }
}

TEST_CASE("lcp: runs with every mode chosen through the LCP equal the same runs enumerated in full") {
  // The LCP only narrows the combinations the enumeration then checks, so where the enumeration finds one mode
  // the two paths take the same one, and the runs are the same to the last bit.
  struct Case {
    std::string name, text;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {"bouncing ball", scenario_file("bouncing_ball.toml"), {"simulation.t_end=3"}},
      {"rimless wheel", scenario_file("rimless_wheel.toml"), {"simulation.t_end=3"}},
      // Size: the tables run to 1 s in the release suite, to 0.3 s (11 events each) in a sanitizer tree.
      {"wheel on the table (user model)", scenario_file("table_contact.toml"),
       {test::sanitized ? "simulation.t_end=0.3" : "simulation.t_end=1"}},
      {"wheel on the table", scenario_file("tipping_table_contact.toml"),
       {test::sanitized ? "simulation.t_end=0.3" : "simulation.t_end=1"}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto sets = c.sets;
    sets.push_back("nonsmooth.mode_selection=enumerate");
    const test::Run full = test::run_text(c.text, sets);
    sets.back() = "nonsmooth.mode_selection=lcp";
    const test::Run lcp = test::run_text(c.text, sets);
    REQUIRE_MESSAGE(full.result.completed(), full.result.message);
    REQUIRE_MESSAGE(lcp.result.completed(), lcp.result.message);
    REQUIRE(full.rec.events.size() == lcp.rec.events.size());
    CHECK(full.rec.events.size() > 2);
    bool used = false;
    for (std::size_t i = 0; i < full.rec.events.size(); ++i) {
      const auto &a = full.rec.events[i], &b = lcp.rec.events[i];
      INFO("event " << i << " " << a.kind << " at t = " << a.t);
      CHECK(a.kind == b.kind);
      CHECK(a.t == b.t);
      CHECK(a.mode_after == b.mode_after);
      CHECK(std::isnan(extra_of(a, "lcp_candidates")));
      CHECK(std::isnan(extra_of(a, "lcp_impulse_candidates")));
      used = used || !std::isnan(extra_of(b, "lcp_candidates")) || !std::isnan(extra_of(b, "lcp_impulse_candidates"));
    }
    CHECK(used);
    REQUIRE(full.rec.x.size() == lcp.rec.x.size());
    CHECK(full.rec.x.back() == lcp.rec.x.back());
  }
}

namespace {

/// scenarios/large/sliding_blocks.toml (its header derives the closed form), its values read from the scenario.
struct BlockRow {
  static constexpr int kBlocks = 10;
  Scenario sc;
  double g, mu, h, v0;
  explicit BlockRow(Scenario scenario) : sc(std::move(scenario)) {
    g = sc.real("parameters.g");
    mu = sc.real("parameters.mu");
    h = test::start_number(sc, "initial.y0");
    v0 = test::start_number(sc, "initial_rates.x0");
  }
  std::string i(int k) const { return std::to_string(k); }
  double mass(int k) const { return sc.real("parameters.m" + i(k)); }
  double x0(int k) const { return test::start_number(sc, "initial.x" + i(k)); }
  double t_land() const { return std::sqrt(2 * h / g); }
  double v_land() const { return g * t_land(); }
  double v1() const { return v0 - mu * v_land(); }
  double t_stop() const { return t_land() + v1() / (mu * g); }
  double x_stop(int k) const { return x0(k) + v0 * t_land() + v1() * v1() / (2 * mu * g); }
};

}  // namespace

TEST_CASE("lcp: ten blocks land and stop at once, through the LCP, as in closed form, enumerating is refused") {
  const std::string text = scenario_file("large/sliding_blocks.toml");
  const test::Run r = test::run_text(text);
  const BlockRow b(r.scenario);
  // The closed form's premises: every block starts alike, the springs at rest length, the landing impulse slides.
  REQUIRE(b.v1() > 0);
  REQUIRE(b.sc.has("parameters.m" + b.i(BlockRow::kBlocks - 1)));
  REQUIRE_FALSE(b.sc.has("parameters.m" + b.i(BlockRow::kBlocks)));
  for (int k = 0; k < BlockRow::kBlocks; ++k) {
    REQUIRE(test::start_number(b.sc, "initial.y" + b.i(k)) == b.h);
    REQUIRE(test::start_number(b.sc, "initial_rates.x" + b.i(k)) == b.v0);
    if (k) REQUIRE(b.x0(k) - b.x0(k - 1) == doctest::Approx(b.sc.real("parameters.s")).epsilon(1e-15));
  }
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  auto sys = build_system(r.scenario);
  auto state = [&](const std::vector<double>& x, const std::string& name) -> double {
    for (std::size_t i = 0; i < sys->states().size(); ++i)
      if (sys->states()[i].name == name) return x[i];
    FAIL("no state " << name);
    return NAN;
  };
  // The landing: one plastic impact of all ten at once, its impulses chosen through the LCP (4^10 combinations).
  REQUIRE(r.rec.events.size() == 2);
  const EventRecord& land = r.rec.events[0];
  CHECK(land.kind == "impact");
  CHECK(land.t == doctest::Approx(b.t_land()).epsilon(1e-9));
  CHECK(extra_of(land, "lcp_impulse_candidates") >= 1);
  for (int k = 0; k < BlockRow::kBlocks; ++k) {
    const std::string i = std::to_string(k);
    INFO("block " << k);
    CHECK(extra_of(land, "impulse_normal_floor" + i) == doctest::Approx(b.mass(k) * b.v_land()).epsilon(1e-8));
    CHECK(extra_of(land, "impulse_tangential_floor" + i) ==
          doctest::Approx(-b.mu * b.mass(k) * b.v_land()).epsilon(1e-8));
    CHECK(state(land.x, "der_x" + i) == doctest::Approx(b.v1()).epsilon(1e-8));
    CHECK(std::abs(state(land.x, "der_y" + i)) <= 1e-12);
  }
  // The stop: all ten stick at once, the modes chosen through the LCP (3 x 4^9 combinations).
  const EventRecord& stop = r.rec.events[1];
  CHECK(stop.kind == "stick");
  CHECK(stop.t == doctest::Approx(b.t_stop()).epsilon(1e-9));
  CHECK(extra_of(stop, "lcp_candidates") == 1);
  CHECK(r.result.t_final == doctest::Approx(1.0));
  for (int k = 0; k < BlockRow::kBlocks; ++k) {
    const std::string i = std::to_string(k);
    INFO("block " << k);
    CHECK(state(r.rec.x.back(), "x" + i) == doctest::Approx(b.x_stop(k)).epsilon(1e-8));
    CHECK(std::abs(state(r.rec.x.back(), "der_x" + i)) <= 1e-10);
    CHECK(std::abs(state(r.rec.x.back(), "y" + i)) <= 1e-10);
  }
  // Energy: the impact takes the normal and tangential kinetic energy it removes, friction the rest.
  double impact = 0, friction = 0;
  for (int k = 0; k < BlockRow::kBlocks; ++k) {
    impact += 0.5 * b.mass(k) * (b.v_land() * b.v_land() + b.v0 * b.v0 - b.v1() * b.v1());
    friction += 0.5 * b.mass(k) * b.v1() * b.v1();
  }
  CHECK(state(r.rec.x.back(), "dissipated_impact") == doctest::Approx(impact).epsilon(1e-8));
  CHECK(state(r.rec.x.back(), "dissipated_friction") == doctest::Approx(friction).epsilon(1e-8));

  // Enumerating every combination is refused, with what to change.
  const test::Run enumerated = test::run_text(text, {"nonsmooth.mode_selection=enumerate"});
  const RunResult& result = enumerated.result;
  CHECK_FALSE(result.completed());
  CHECK_MESSAGE(result.message.find("10 contacts are undecided at once") != std::string::npos, result.message);
  CHECK_MESSAGE(result.message.find("nonsmooth.mode_selection") != std::string::npos, result.message);
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("lcp: the Painleve rod without a consistent mode is refused through the LCP too, exit 3") {
  // scenarios/painleve_rod.toml (mu = 1.5 > 4/3 at tan theta = 2, at rest): no contact force stops the sliding end
  // from entering the floor, so the LCP has no solution.
  test::TempDir dir;
  std::string out;
  const int code = test::run_binary("run " + rollsim::test::source_dir() + "/scenarios/painleve_rod.toml -o " +
                                        (dir.path / "rod.h5").string() + " --set nonsmooth.mode_selection=lcp",
                                    out);
  CHECK(code == 3);
  CHECK_MESSAGE(out.find("the LCP solver (Lemke) found no solution") != std::string::npos, out);
  CHECK_MESSAGE(out.find("lower_end") != std::string::npos, out);
}

TEST_CASE("lcp: the LCP solver's library (and its BLAS) is loaded by the first LCP, not by every run") {
  // Siconos Numerics brings OpenBLAS, whose threads spin a second core for a while after it loads; a run that
  // solves no LCP does not load it (CMakeLists.txt).
  test::TempDir dir;
  const std::string kListLoads = "env LD_DEBUG=files";  // the dynamic loader lists each file it loads
  const std::string ball = "run " + rollsim::test::source_dir() + "/scenarios/bouncing_ball.toml --set simulation.t_end=1 -o ";
  std::string out;
  CHECK(test::run_binary(ball + (dir.path / "enumerated.h5").string(), out, kListLoads) == 0);
  CHECK_MESSAGE(out.find("file=libsiconos_numerics") == std::string::npos, out);
  CHECK_MESSAGE(out.find("file=libopenblas") == std::string::npos, out);
  // The same run choosing the impact's impulses through the LCP loads it, and the run succeeds.
  CHECK(test::run_binary(ball + (dir.path / "lcp.h5").string() + " --set nonsmooth.mode_selection=lcp", out, kListLoads) == 0);
  CHECK_MESSAGE(out.find("file=libsiconos_numerics") != std::string::npos, out);
}

}  // namespace rollsim
