// User models (model = "lagrangian") against the built-in models they restate, closed forms, conservation and
// symmetry; and bad input inside expressions.
#include <doctest/doctest.h>

#include <Eigen/Eigenvalues>

#include "rollsim/analysis/linear.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

std::string scenario(const std::string& name) { return test::read_file(rollsim::test::source_dir() + "/scenarios/" + name); }

/// The index of a signal by name among a system's states (first) and outputs (after them), or -1.
struct Columns {
  std::vector<std::string> states, outputs;
  explicit Columns(const Scenario& sc) {
    auto sys = build_system(sc);
    for (const auto& s : sys->states()) states.push_back(s.name);
    for (const auto& s : sys->outputs()) outputs.push_back(s.name);
  }
  /// The value of `name` (a state or an output) at sample k of a run.
  double at(const test::Run& r, std::size_t k, const std::string& name) const {
    for (std::size_t i = 0; i < states.size(); ++i)
      if (states[i] == name) return r.rec.x[k][i];
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i] == name) return r.rec.y[k][i];
    FAIL("no signal " << name);
    return NAN;
  }
};

/// max over the samples at common times (to 1e-8 s: samples include the events) of |a(name_a) - b(name_b)|.
/// Samples at an event only one of the runs has (e.g. a recorded event the other model lacks) are skipped;
/// all but a few samples must match.
double max_difference(const test::Run& a, const Columns& ca, const std::string& na, const test::Run& b,
                      const Columns& cb, const std::string& nb) {
  double worst = 0;
  std::size_t i = 0, j = 0, matched = 0;
  while (i < a.rec.t.size() && j < b.rec.t.size()) {
    const double ta = a.rec.t[i], tb = b.rec.t[j];
    if (std::abs(ta - tb) <= 1e-8) {
      worst = std::max(worst, std::abs(ca.at(a, i, na) - cb.at(b, j, nb)));
      ++matched, ++i, ++j;
    } else if (ta < tb) {
      ++i;
    } else {
      ++j;
    }
  }
  REQUIRE(matched + 5 >= std::max(a.rec.t.size(), b.rec.t.size()));
  return worst;
}

}  // namespace

TEST_CASE("user model: the tipping table written as T and V equals the built-in model (states 1e-9, events 1e-8)") {
  const std::vector<std::string> common{"simulation.output_dt=0.01"};
  // To lift-off (the default run), and to the edge with lift-off only recorded.
  for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"events.lift_off.action=record"}}) {
    auto sets = common;
    for (const auto& e : extra) sets.push_back(e);
    std::vector<std::string> builtin_sets = common;
    if (!extra.empty()) builtin_sets.push_back("events.lift_off=record");
    const test::Run u = test::run_text(scenario("user_tipping_table.toml"), sets);
    const test::Run b = test::run_text(scenario("tipping_table.toml"), builtin_sets);
    REQUIRE(u.result.completed());
    REQUIRE(b.result.completed());
    CHECK(u.result.termination == b.result.termination);
    CHECK(std::abs(u.result.t_final - b.result.t_final) <= 1e-8);
    const Columns cu(u.scenario), cb(b.scenario);
    for (const auto& s : {"theta1", "theta2"}) CHECK(max_difference(u, cu, s, b, cb, s) <= 1e-9);
    CHECK(max_difference(u, cu, "der_theta1", b, cb, "omega1") <= 1e-9);
    CHECK(max_difference(u, cu, "der_theta2", b, cb, "omega2") <= 1e-9);
    CHECK(max_difference(u, cu, "normal_force", b, cb, "normal_force") <= 1e-8);
    CHECK(max_difference(u, cu, "contact_position", b, cb, "contact_position") <= 1e-9);
    REQUIRE(u.rec.events.size() == b.rec.events.size());
    for (std::size_t k = 0; k < u.rec.events.size(); ++k) {
      CHECK(u.rec.events[k].kind == b.rec.events[k].kind);
      CHECK(std::abs(u.rec.events[k].t - b.rec.events[k].t) <= 1e-8);
    }
  }
}

TEST_CASE("user model: linearising the user table gives the IFToMM benchmark eigenvalues (1.8)-(1.9) to 1e-12") {
  const Scenario sc = load_scenario_text(scenario("user_tipping_table.toml"), "user.toml", {"initial.theta1=0"});
  auto sys = build_system(sc);
  std::vector<double> x0(sys->size()), J(sys->size() * sys->size());
  sys->initial_state(x0.data());
  REQUIRE(facet<OdeSystem>(*sys)->jacobian(0.0, x0.data(), 0, J.data()));
  const Eigen::Map<Eigen::MatrixXd> A(J.data(), 4, 4);
  const auto eig = linear::eigen_analysis(A);
  std::vector<std::complex<double>> roots(eig.values.data(), eig.values.data() + eig.values.size());
  CHECK(linear::iftomm_error(roots, linear::iftomm_benchmark_eigenvalues()) <= 1e-12);
  std::string out;
  REQUIRE(test::run_binary("linearize " + rollsim::test::source_dir() + "/scenarios/user_tipping_table.toml --set initial.theta1=0 -o /dev/null", out) == 0);
  CHECK(out.find("6.7913418692e+00") != std::string::npos);
}

TEST_CASE("user model: the carriage with pendulum equals the built-in minimal model without damping") {
  // Two codes with the same equations differ by their integration errors only: at rtol 1e-10 over 5 s the
  // coordinates agree to 1e-9, and the difference shrinks with the tolerance (rtol 1e-12: every state to 1e-10).
  for (const auto& [rtol, bound_q, bound_rate] : {std::tuple{"1e-10", 1e-9, 1e-8}, std::tuple{"1e-12", 1e-10, 1e-10}}) {
    const std::vector<std::string> sets{"simulation.t_end=5", "solver.method=adams", std::string("solver.rtol=") + rtol,
                                        "solver.atol=1e-14"};
    auto user_sets = sets;
    user_sets.push_back("parameters.c=0");
    auto builtin_sets = sets;
    builtin_sets.push_back("formulation=ode");
    const test::Run u = test::run_text(scenario("user_carriage_pendulum.toml"), user_sets);
    const test::Run b = test::run_text(scenario("carriage_pendulum.toml"), builtin_sets);
    REQUIRE(u.result.completed());
    REQUIRE(b.result.completed());
    const Columns cu(u.scenario), cb(b.scenario);
    const std::string rtol_text = rtol;  // a copy: INFO's lambda cannot take a structured binding (clang 14)
    INFO("rtol " << rtol_text);
    CHECK(max_difference(u, cu, "x", b, cb, "x") <= bound_q);
    CHECK(max_difference(u, cu, "phi", b, cb, "phi") <= bound_q);
    CHECK(max_difference(u, cu, "der_x", b, cb, "x_dot") <= bound_rate);
    CHECK(max_difference(u, cu, "der_phi", b, cb, "phi_dot") <= bound_rate);
  }
}

TEST_CASE("user model: the rolling disk with a Coulomb contact equals the built-in disk (symbols, events 1e-8)") {
  // At rtol 1e-12: the differences between the two codes are their integration errors (at rtol 1e-10 the
  // velocities differ by up to 3e-8 after 100 events).
  const std::vector<std::string> sets{"simulation.t_end=6", "simulation.output_dt=0.01", "solver.rtol=1e-12",
                                      "solver.atol=1e-14"};
  const test::Run u = test::run_text(scenario("user_rolling_disk.toml"), sets);
  const test::Run b = test::run_text(scenario("disk_physical.toml"), sets);
  REQUIRE(u.result.completed());
  REQUIRE(b.result.completed());
  auto text = [](const test::Run& r, const std::string& k) {
    const auto* i = r.item(k);
    return i ? i->text : std::string("(missing)");
  };
  CHECK(text(u, "symbols") == text(b, "symbols"));
  CHECK(text(u, "symbols").size() > 20);
  REQUIRE(u.rec.events.size() == b.rec.events.size());
  for (std::size_t k = 0; k < u.rec.events.size(); ++k) {
    CHECK(u.rec.events[k].kind == b.rec.events[k].kind);
    CHECK(std::abs(u.rec.events[k].t - b.rec.events[k].t) <= 1e-8);
  }
  const Columns cu(u.scenario), cb(b.scenario);
  CHECK(max_difference(u, cu, "u", b, cb, "u") <= 1e-9);
  CHECK(max_difference(u, cu, "der_u", b, cb, "v") <= 1e-9);
  CHECK(max_difference(u, cu, "slip_velocity", b, cb, "w") <= 1e-8);
  // The energy taken by friction is the built-in's dissipated energy (J in both).
  CHECK(max_difference(u, cu, "dissipated_friction", b, cb, "dissipated_energy") <= 1e-8);
}

namespace {

const char* kDoublePendulum = R"toml(model = "lagrangian"
[parameters]
m1 = 1.0
m2 = 0.7
l1 = 1.0
l2 = 0.8
g = 9.81
[coordinates]
a = "rad"
b = "rad"
[lagrangian]
kinetic = "1/2*(m1+m2)*l1^2*der(a)^2 + m2*l1*l2*cos(a-b)*der(a)*der(b) + 1/2*m2*l2^2*der(b)^2"
potential = "-(m1+m2)*g*l1*cos(a) - m2*g*l2*cos(b)"
[initial]
a = 1.2
b = -0.4
[simulation]
t_end = 100
output_dt = 0.05
[solver]
rtol = 1e-10
atol = 1e-12
)toml";

}  // namespace

TEST_CASE("user model: a chaotic double pendulum conserves its energy to 100 rtol over 100 s") {
  const test::Run r = test::run_text(kDoublePendulum);
  REQUIRE(r.result.completed());
  const Columns c(r.scenario);
  const double e0 = c.at(r, 0, "energy");
  double worst = 0, scale = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    worst = std::max(worst, std::abs(c.at(r, k, "energy") - e0));
    scale = std::max({scale, std::abs(c.at(r, k, "kinetic_energy")), std::abs(c.at(r, k, "potential_energy"))});
  }
  INFO("energy drift " << worst << " J, scale " << scale << " J");
  CHECK(worst <= 100 * 1e-10 * scale);
  // The pendulum is chaotic at this energy: it moved far (the test is not trivially at rest).
  CHECK(r.rec.x.back()[0] != doctest::Approx(1.2).epsilon(0.01));
}

TEST_CASE("user model: mirror-symmetric starts of a symmetric model give mirrored trajectories") {
  // q -> -q leaves T and V of the double pendulum unchanged, so the start (-a, -b) runs as the mirror of (a, b).
  const test::Run p = test::run_text(kDoublePendulum, {"simulation.t_end=20"});
  const test::Run m = test::run_text(kDoublePendulum, {"simulation.t_end=20", "initial.a=-1.2", "initial.b=0.4"});
  REQUIRE(p.rec.t.size() == m.rec.t.size());
  double worst = 0;
  for (std::size_t k = 0; k < p.rec.t.size(); ++k)
    for (std::size_t i = 0; i < 4; ++i) worst = std::max(worst, std::abs(p.rec.x[k][i] + m.rec.x[k][i]));
  INFO("largest |x + mirror(x)| = " << worst);
  CHECK(worst <= 1e-12);
}

TEST_CASE("user model: a pendulum held by a constraint gives the closed-form rod tension at the start") {
  // A point mass on a rod of length l, in Cartesian coordinates, released at rest at angle a from the vertical:
  // at rest the tension is m g cos(a); the multiplier lambda of C = x^2 + y^2 - l^2 gives the force G^T lambda =
  // 2 lambda (x, y), so the tension is -2 lambda l.
  const test::Run r = test::run_text(scenario("user_pendulum_constrained.toml"), {"simulation.t_end=1"});
  REQUIRE(r.result.completed());
  const Columns c(r.scenario);
  const double lambda0 = c.at(r, 0, "lambda_rod");
  const double cos_a = 0.8;  // x = 0.6, y = -0.8, l = 1
  CHECK(-2 * lambda0 * 1.0 == doctest::Approx(1.0 * 9.81 * cos_a).epsilon(1e-9));
  double worst = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) worst = std::max(worst, std::abs(c.at(r, k, "constraint_rod")));
  CHECK(worst <= 1e-8);
}

namespace {

/// Load `text` and expect an InputError whose message contains every one of `parts`.
void expect_input_error(const std::string& text, const std::vector<std::string>& parts) {
  try {
    const Scenario sc = load_scenario_text(text, "bad.toml", {});
    build_system(sc);
    FAIL("no error for:\n" << text);
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const auto& p : parts) CHECK_MESSAGE(what.find(p) != std::string::npos, what << "\n  lacks: " << p);
  }
}

std::string with_kinetic(const std::string& kinetic, const std::string& potential = "1/2*k*x^2",
                         const std::string& more = "") {
  return "model = \"lagrangian\"\n[parameters]\nm = 1.0\nk = 4.0\n[coordinates]\nx = \"m\"\n[lagrangian]\nkinetic = \"" +
         kinetic + "\"\npotential = \"" + potential + "\"\n" + more;
}

}  // namespace

TEST_CASE("user model: bad input inside expressions names file:line:column, the key and the position") {
  // Syntax error: the column is that of the offending character inside the string on line 8.
  expect_input_error(with_kinetic("1/2*m*der(x)^^2"), {"bad.toml:8:25", "lagrangian.kinetic", "character 14"});
  // Unknown name with a suggestion.
  expect_input_error(with_kinetic("1/2*mm*der(x)^2"), {"bad.toml:8:16", "unknown name 'mm'", "did you mean 'm'"});
  // der() in the potential.
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "k*der(x)^2"), {"bad.toml:9:16", "der() is not allowed here"});
  // A mass matrix singular at the start.
  expect_input_error(with_kinetic("0*der(x)^2"), {"bad.toml:8", "mass matrix", "singular"});
  // A coordinate that is also a parameter.
  expect_input_error("model = \"lagrangian\"\n[parameters]\nx = 1.0\n[coordinates]\nx = \"m\"\n[lagrangian]\nkinetic = \"der(x)^2\"\n",
                     {"bad.toml:5:5", "both a coordinate and a parameter"});
  // A slip velocity that is not linear in the rates.
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "1/2*k*x^2",
                                  "[contacts.c]\nslip_velocity = \"der(x)^2\"\nnormal_force = \"m\"\nfriction_coefficient = \"0.3\"\n"),
                     {"bad.toml:11", "contacts.c.slip_velocity", "linear in the rates"});
  // ... nor one linear only piecewise (its second derivative by der(x) vanishes wherever it is defined).
  for (const char* w : {"der(x)*step(der(x))", "abs(der(x))"})
    expect_input_error(with_kinetic("1/2*m*der(x)^2", "1/2*k*x^2",
                                    std::string("[contacts.c]\nslip_velocity = \"") + w +
                                        "\"\nnormal_force = \"m\"\nfriction_coefficient = \"0.3\"\n"),
                       {"bad.toml:11", "contacts.c.slip_velocity", "linear in the rates"});
  // A constraint violated at the start names the residual.
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "0", "[constraints.wall]\nexpression = \"x - 1\"\n"),
                     {"bad.toml:11", "constraint wall is violated", "residual -1"});
  // An unknown function and a bad count of arguments.
  expect_input_error(with_kinetic("1/2*m*dr(x)^2"), {"unknown function 'dr'", "did you mean 'der'"});
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "atan2(x)"), {"atan2() takes 2 arguments, not 1"});
  // A body's key inside an array of tables keeps its position.
  expect_input_error("model = \"lagrangian\"\n[parameters]\nm = 1.0\ng = 9.81\n[coordinates]\nx = \"m\"\n[[bodies]]\nmass = \"m\"\ny = \"der(x)\"\n",
                     {"bad.toml:9:6", "bodies.0.y", "der() is not allowed here"});
  // Unbalanced parentheses.
  expect_input_error(with_kinetic("1/2*m*(der(x)^2"), {"missing ')'"});
  // Exact powers are computed digit by digit: exponents are bounded and free of rates, and numbers stay
  // inside double precision, so that no input keeps the derivation busy for hours.
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "x^2 + 3^99999999"),
                     {"bad.toml:9:22", "the exponent '99999999' is out of range", "[-64, 64]", "character 9"});
  expect_input_error(with_kinetic("1/2*m*der(x)^2 + (der(x)+3)^(1e308)"),
                     {"the exponent '(1e308)' is out of range"});
  expect_input_error(with_kinetic("1/2*m*der(x)^2 * 2^(der(x)/100)"), {"may not depend on a rate", "der(x)"});
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "(2^60)^60*x"), {"out of double precision range"});
  expect_input_error(with_kinetic("1/2*m*der(x)^2", "1e300*1e300*x"), {"out of double precision range"});
}

TEST_CASE("user model: exponents at the bounds and numbers near the end of double precision are read") {
  const auto load = [](const std::string& text) { return build_system(load_scenario_text(text, "ok.toml", {})); };
  // Started at x = 1: at the default x = 0 the term x^(-64) makes the force infinite, refused at the start.
  const std::string bounds = with_kinetic("1/2*m*der(x)^2", "k*x^64 + k*x^(-64)*1e-300 + 1e300*x^2");
  CHECK(load(bounds + "[initial]\nx = 1.0\n") != nullptr);
  CHECK_THROWS_WITH_AS(load(bounds), doctest::Contains("the equation of motion of coordinate x is not finite"), InputError);
  CHECK(load(with_kinetic("1/2*m*der(x)^2", "k*x^2*2^(1/3)*(1.5)^(-64)")) != nullptr);
}

TEST_CASE("user model: a missing compiler is an input error that says what to install, and writes no file") {
  test::TempDir dir;
  const std::string file = dir.file("m.toml", with_kinetic("1/2*m*der(x)^2") + "[simulation]\nt_end = 0.1\n");
  std::string out;
  const std::string env = "env XDG_CACHE_HOME=" + (dir.path / "cache").string() + " ROLLSIM_CXX=/nonexistent/c++ ";
  const std::string cmd = env + rollsim::test::binary() + " run " + file + " -o " + (dir.path / "m.h5").string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(out.find("install g++") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path / "m.h5"));
  // Nothing is left in the cache folder by a compiler that could not start.
  std::size_t left = 0;
  if (std::filesystem::exists(dir.path / "cache" / "rollsim"))
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path / "cache" / "rollsim")) ++left;
  CHECK(left == 0);
  // A compiler that fails (here `false`, which exits 1): the command and its exit code, exit 2, no file.
  out.clear();
  const std::string failing = "env XDG_CACHE_HOME=" + (dir.path / "cache").string() + " ROLLSIM_CXX=false " +
                              rollsim::test::binary() + " run " + file + " -o " + (dir.path / "m.h5").string() + " 2>&1";
  p = popen(failing.c_str(), "r");
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  CHECK(WEXITSTATUS(pclose(p)) == 2);
  CHECK(out.find("compiling the model failed") != std::string::npos);
  CHECK(out.find("exit 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path / "m.h5"));
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("user model: a sweep over a parameter and an initial value runs every point, each with its own values") {
  // The period of small oscillations of the undamped carriage with pendulum does not matter here; what does: each
  // point runs with its own spring constant and start (different energies), all points succeed, and the
  // derivation is shared (the same compiled model) while the values differ.
  test::TempDir dir;
  const std::string text = scenario("user_carriage_pendulum.toml") +
                           "\n[sweep]\nmode = \"grid\"\n\"parameters.k\" = [5.0, 10.0, 20.0]\n\"initial.phi\" = [0.1, 0.3]\n";
  const std::string file = dir.file("sweep.toml", text);
  const std::string out = (dir.path / "sweep.h5").string();
  std::string log;
  REQUIRE(test::run_binary("sweep " + file + " -o " + out + " --threads 2 -q --set simulation.t_end=1", log) == 0);
  // The energy of each point is that of its start: V = 1/2 k x^2 - m g l cos(phi) with x = 0, T = 0.
  const std::string py = "/usr/bin/python3 -c \"import h5py,numpy as n;f=h5py.File('" + out +
                         "');p=f['sweep'];e=p['energy_initial'][:];phi=p['initial.phi'][:];"
                         "print(int(f.attrs['n_ok']),float(n.max(abs(e-(-0.5*9.81*n.cos(phi))))))\"";
  FILE* p = popen(py.c_str(), "r");
  char buf[256] = {};
  REQUIRE(std::fgets(buf, sizeof buf, p));
  pclose(p);
  int n_ok = 0;
  double err = 1;
  REQUIRE(std::sscanf(buf, "%d %lf", &n_ok, &err) == 2);
  CHECK(n_ok == 6);
  CHECK(err <= 1e-12);
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("user model: a block on a spring with Coulomb friction decays as the closed form says, and sticks") {
  // m x'' + k x = -mu m g sgn(x'): each half period pi/omega is a half oscillation about the shifted equilibrium
  // -+d (d = mu m g / k), so the turning points are x_n = (-1)^n (A0 - 2 n d) at t_n = n pi/omega, until the
  // first |x_n| <= d, where the block sticks for good. With m = 1, k = 4 (omega = 2), mu g = 1 (d = 0.25),
  // A0 = 1.9: x = -1.4, 0.9, -0.4, then -0.1 at t = 2 pi, sticking. Energy taken by friction: 1/2 k (A0^2 - 0.1^2).
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
k = 4.0
mu = 0.1
g = 10.0
[coordinates]
x = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2"
potential = "1/2*k*x^2"
[contacts.floor]
slip_velocity = "der(x)"
normal_force = "m*g"
friction_coefficient = "mu"
[initial]
x = 1.9
[simulation]
t_end = 10
output_dt = 0.01
)toml";
  const test::Run r = test::run_text(text);
  REQUIRE(r.result.completed());
  const auto* sym = r.item("symbols");
  REQUIRE(sym);
  CHECK(sym->text == "-+-+0");
  REQUIRE(r.rec.events.size() == 4);
  const double pi = std::acos(-1.0);
  const double expected_x[] = {-1.4, 0.9, -0.4, -0.1};
  for (std::size_t n = 0; n < 4; ++n) {
    CHECK(r.rec.events[n].t == doctest::Approx((n + 1) * pi / 2).epsilon(1e-9));
    CHECK(r.rec.events[n].x[0] == doctest::Approx(expected_x[n]).epsilon(1e-8));
  }
  CHECK(r.rec.events[3].kind == "stick");
  const Columns c(r.scenario);
  const std::size_t last = r.rec.t.size() - 1;
  CHECK(c.at(r, last, "x") == doctest::Approx(-0.1).epsilon(1e-8));
  CHECK(c.at(r, last, "dissipated_friction") == doctest::Approx(0.5 * 4 * (1.9 * 1.9 - 0.01)).epsilon(1e-8));
}

}  // namespace rollsim

#include "rollsim/analysis/linearizable.hpp"

namespace rollsim {

TEST_CASE("user model: a linearisation's inputs are generalized forces, B = [0, M^-1] in closed form") {
  // The carriage at phi = 0: M = [[m + mc, m l], [m l, m l^2]] = [[1.5, 0.5], [0.5, 0.5]], M^-1 = [[1, -1], [-1, 3]].
  const Scenario sc = load_scenario_text(scenario("user_carriage_pendulum.toml"), "c.toml", {"initial.phi=0"});
  auto sys = build_system(sc);
  const auto* lin = dynamic_cast<const Linearizable*>(sys.get());
  REQUIRE(lin);
  REQUIRE(lin->inputs().size() == 2);
  CHECK(lin->inputs()[0].name == "force_x");
  const std::size_t N = sys->size(), m = 2;
  using AD = Linearizable::AD;
  std::vector<double> x0(N);
  sys->initial_state(x0.data());
  std::vector<AD> x(N), u(m), xdot(N);
  for (std::size_t i = 0; i < N; ++i) x[i] = AD(x0[i], Eigen::VectorXd::Unit(static_cast<Eigen::Index>(N + m), static_cast<Eigen::Index>(i)));
  for (std::size_t j = 0; j < m; ++j)
    u[j] = AD(0.0, Eigen::VectorXd::Unit(static_cast<Eigen::Index>(N + m), static_cast<Eigen::Index>(N + j)));
  lin->rhs_ad(x.data(), u.data(), xdot.data());
  const double Minv[2][2] = {{1, -1}, {-1, 3}};
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j) {
      CHECK(xdot[i].derivatives()(static_cast<Eigen::Index>(N + j)) == 0.0);
      CHECK(xdot[2 + i].derivatives()(static_cast<Eigen::Index>(N + j)) == doctest::Approx(Minv[i][j]).epsilon(1e-14));
    }
}


TEST_CASE("user model: M q'' = f is solved for mass matrices of 1 to 7 coordinates (fixed-size and dynamic LU) as the closed form says") {
  // n masses with a shared kinetic term: T = 1/2 sum m_i q_i'^2 + 1/2 c (sum q_i')^2, V = 1/2 sum k_i q_i^2. M = D + c 1 1^T
  // is full; Sherman-Morrison gives M^-1 = D^-1 - c D^-1 1 1^T D^-1 / (1 + c sum 1/m_j), so q'' = M^-1 (-K q) and its
  // Jacobian -M^-1 K in closed form. Sizes 1, 3 and 6 take the fixed-size decomposition, 7 the dynamic one.
  for (const int n : {1, 3, 6, 7}) {
    CAPTURE(n);
    const double c = 0.7;
    std::vector<double> m(n), k(n), q(n);
    std::string params = "c = 0.7\n", coords, kinetic = "1/2*c*(", potential, initial;
    for (int i = 0; i < n; ++i) {
      m[i] = 1.0 + 0.25 * i;
      k[i] = 2.0 + i;
      const std::string id = std::to_string(i), q_text = std::to_string((i % 2 ? -0.1 : 0.1) * (i + 1));
      q[i] = std::stod(q_text);  // the start as the scenario gives it
      params += "m" + id + " = " + std::to_string(m[i]) + "\nk" + id + " = " + std::to_string(k[i]) + "\n";
      coords += "q" + id + " = \"m\"\n";
      kinetic += (i ? " + der(q" : "der(q") + id + ")";
      potential += (i ? " + 1/2*k" : "1/2*k") + id + "*q" + id + "^2";
      initial += "q" + id + " = " + q_text + "\n";
    }
    kinetic += ")^2";
    for (int i = 0; i < n; ++i) kinetic += " + 1/2*m" + std::to_string(i) + "*der(q" + std::to_string(i) + ")^2";
    const std::string text = "model = \"lagrangian\"\n[parameters]\n" + params + "[coordinates]\n" + coords +
                             "[lagrangian]\nkinetic = \"" + kinetic + "\"\npotential = \"" + potential +
                             "\"\n[initial]\n" + initial + "[simulation]\nt_end = 1\n";
    const Scenario sc = load_scenario_text(text, "chain.toml", {});
    auto sys = build_system(sc);
    const auto* ode = facet<OdeSystem>(*sys);
    REQUIRE(ode);
    const std::size_t N = sys->size();
    REQUIRE(N == static_cast<std::size_t>(2 * n));
    std::vector<double> x(N), xdot(N), J(N * N);
    sys->initial_state(x.data());
    for (int i = 0; i < n; ++i) REQUIRE(x[i] == q[i]);
    ode->rhs(0.0, x.data(), 0, xdot.data());
    REQUIRE(ode->jacobian(0.0, x.data(), 0, J.data()));
    double inv_sum = 0, fm_sum = 0;
    for (int j = 0; j < n; ++j) {
      inv_sum += 1 / m[j];
      fm_sum += -k[j] * q[j] / m[j];
    }
    const double den = 1 + c * inv_sum;
    auto minv = [&](int i, int j) { return (i == j ? 1 / m[i] : 0.0) - c / (m[i] * m[j] * den); };
    for (int i = 0; i < n; ++i) {
      const double a = -k[i] * q[i] / m[i] - c * fm_sum / (m[i] * den);
      CHECK(xdot[n + i] == doctest::Approx(a).epsilon(1e-13));
      for (int j = 0; j < n; ++j) {
        CHECK(J[n + i + N * j] == doctest::Approx(-minv(i, j) * k[j]).epsilon(1e-13).scale(1e-13));
        CHECK(J[n + i + N * (n + j)] == 0.0);  // no forces of the speeds
      }
    }
  }
}

}  // namespace rollsim

namespace rollsim {

TEST_CASE("user model: the carriage pendulum driven by F(t) = F0 sin(Omega t) follows the linear forced response") {
  // Exercise 4:14 with its force (scenarios/user_carriage_pendulum_forced.toml), at a force so small that the motion
  // is linear to 1e-7: M q'' + K q = (F0 sin(Omega t), 0) from rest, M = [[m + mc, m l], [m l, m l^2]],
  // K = diag(k, m g l). In modal coordinates eta_i'' + w_i^2 eta_i = (f_i / M_i) sin(Omega t), so from rest
  //   eta_i = f_i / M_i / (w_i^2 - Omega^2) (sin(Omega t) - Omega / w_i sin(w_i t)),
  // with w_i^2 the roots of mc l mu^2 - (k l + (m + mc) g) mu + k g = 0, the mode shapes phi_i = (w_i^2 m l,
  // k - w_i^2 (m + mc)) from the first row of (K - w_i^2 M) phi = 0, M_i = phi_i' M phi_i and f_i = F0 phi_i(x).
  const double m = 0.5, mc = 1.0, l = 1.0, k = 10.0, g = 9.81, F0 = 1e-3, Om = 3.0;
  const test::Run r = test::run_text(scenario("user_carriage_pendulum_forced.toml"),
                                     {"parameters.F0=1e-3", "simulation.t_end=5", "simulation.output_dt=0.05"});
  REQUIRE(r.result.completed());
  const Columns col(r.scenario);
  const double b = k * l + (m + mc) * g, disc = std::sqrt(b * b - 4 * mc * l * k * g);
  double worst_x = 0, worst_phi = 0, size_x = 0, size_phi = 0;
  for (std::size_t s = 0; s < r.rec.t.size(); ++s) {
    const double t = r.rec.t[s];
    double x = 0, phi = 0;
    for (const double mu : {(b - disc) / (2 * mc * l), (b + disc) / (2 * mc * l)}) {
      const double w = std::sqrt(mu), px = mu * m * l, pp = k - mu * (m + mc);
      const double Mi = px * px * (m + mc) + 2 * px * pp * m * l + pp * pp * m * l * l;
      const double eta = F0 * px / Mi / (mu - Om * Om) * (std::sin(Om * t) - Om / w * std::sin(w * t));
      x += px * eta;
      phi += pp * eta;
    }
    worst_x = std::max(worst_x, std::abs(col.at(r, s, "x") - x));
    worst_phi = std::max(worst_phi, std::abs(col.at(r, s, "phi") - phi));
    size_x = std::max(size_x, std::abs(x));
    size_phi = std::max(size_phi, std::abs(phi));
    CHECK(col.at(r, s, "force") == doctest::Approx(F0 * std::sin(Om * t)).epsilon(1e-12).scale(F0));
  }
  MESSAGE("forced carriage pendulum: max |x - x_linear| = " << worst_x << " m of " << size_x << ", phi " << worst_phi
                                                           << " rad of " << size_phi);
  CHECK(size_x > 1e-4);
  CHECK(worst_x < 1e-6 * size_x);
  CHECK(worst_phi < 1e-6 * size_phi);
}

}  // namespace rollsim
