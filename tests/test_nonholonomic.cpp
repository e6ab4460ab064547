// User models with velocity (nonholonomic) constraints, integrated in independent speeds: the Chaplygin sleigh
// against its closed form (Neimark and Fufaev 1972), its exact Jacobian against the closed form and central
// differences, the rolling coin in steady circular motion (Le Saux, Leine and Glocker 2005) with its normal force
// as a multiplier, the integrability test, and bad input.
#include <doctest/doctest.h>

#include <cmath>

#include "rollsim/analysis/linearizable.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

std::string sleigh_text() { return test::scenario_text("chaplygin_sleigh.toml"); }

/// A signal's value at sample k (states first, then outputs), by name.
double value(const test::Run& r, std::size_t k, const std::string& name) { return r.value(k, name); }

std::size_t column(const HybridSystem& sys, const std::string& name) {
  for (std::size_t i = 0; i < sys.states().size(); ++i)
    if (sys.states()[i].name == name) return i;
  for (std::size_t i = 0; i < sys.outputs().size(); ++i)
    if (sys.outputs()[i].name == name) return sys.states().size() + i;
  FAIL("no signal " << name);
  return 0;
}

double gd(double x) { return 2 * std::atan(std::tanh(x / 2)); }

/// The largest |J - central difference of the right-hand side with step h| over the entries of J (N x N,
/// column-major), and the largest |J| in `scale`.
double central_difference_error(const OdeSystem& ode, const std::vector<double>& x, const std::vector<double>& J, double h,
                                double& scale) {
  const std::size_t N = x.size();
  std::vector<double> fp(N), fm(N);
  double worst = 0;
  scale = 0;
  for (std::size_t j = 0; j < N; ++j) {
    std::vector<double> xp = x, xm = x;
    xp[j] += h;
    xm[j] -= h;
    ode.rhs(0.0, xp.data(), 0, fp.data());
    ode.rhs(0.0, xm.data(), 0, fm.data());
    for (std::size_t i = 0; i < N; ++i) {
      worst = std::max(worst, std::abs(J[i + N * j] - (fp[i] - fm[i]) / (2 * h)));
      scale = std::max(scale, std::abs(J[i + N * j]));
    }
  }
  return worst;
}

/// The rolling coin with a hand-written kinetic energy: a uniform disk (A = m a^2/4 about a diameter, C = m a^2/2
/// about its axis), coordinates x, y, z of its centre, heading psi, lean theta from the vertical, spin phi
/// (R = R_Z(psi) R_X(theta) R_Y(phi), the axis along the body's y). In the frame that leans but does not spin,
/// w = (theta', phi' + psi' sin theta, psi' cos theta), so T = 1/2 m v^2 + 1/2 (A (theta'^2 + psi'^2 cos^2 theta)
/// + C (phi' + psi' sin theta)^2). The contact point is c - a e3' with e3' = R_Z(psi) (0, -sin theta, cos theta);
/// its velocity's x and y components are the no-slip rows; the gap z - a cos(theta) is a holonomic constraint whose
/// multiplier is the normal force.
std::string coin_text() {
  return R"toml(model = "lagrangian"
[parameters]
m = 1.0
a = 0.1
g = 9.81
A = 0.0025
C = 0.005
[coordinates]
x = "m"
y = "m"
z = "m"
psi = "rad"
theta = "rad"
phi = "rad"
[lagrangian]
kinetic = "m/2*(der(x)^2 + der(y)^2 + der(z)^2) + A/2*(der(theta)^2 + der(psi)^2*cos(theta)^2) + C/2*(der(phi) + der(psi)*sin(theta))^2"
potential = "m*g*z"
[constraints.slip_x]
velocity = "der(x) - a*(der(phi) + der(psi)*sin(theta))*cos(psi) - a*der(theta)*sin(psi)*cos(theta)"
[constraints.slip_y]
velocity = "der(y) - a*(der(phi) + der(psi)*sin(theta))*sin(psi) + a*der(theta)*cos(psi)*cos(theta)"
[constraints.gap]
expression = "z - a*cos(theta)"
[simulation]
t_end = 10.0
output_dt = 0.05
[solver]
rtol = 1e-12
atol = 1e-14
)toml";
}

/// The coin's steady circular motion at lean th and turning rate W: the spin rate w3 = phi' + psi' sin th from
/// A W^2 sin th cos th - (C + m a^2) W w3 cos th = m g a sin th (Le Saux, Leine and Glocker 2005, J. Nonlinear
/// Sci. 15:27, the steady rolling motion).
std::vector<std::string> steady_coin(double th, double W) {
  const double m = 1, a = 0.1, g = 9.81, A = 0.0025, C = 0.005;
  const double w3 = (A * W * W * std::sin(th) * std::cos(th) - m * g * a * std::sin(th)) / ((C + m * a * a) * W * std::cos(th));
  auto num = [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  };
  return {"initial.theta=" + num(th), "initial.z=" + num(a * std::cos(th)), "initial_rates.psi=" + num(W),
          "initial_rates.phi=" + num(w3 - W * std::sin(th))};
}

/// A solid ball (mass m = 2, radius r = 0.1) at rest on the plane z = 0 by a rolling contact with a normal row (z is a
/// coordinate), Euler angles ZXY; `force_z` the generalized force on z, `extra` appended keys.
std::string ball_text(const std::string& force_z, const std::string& extra = "") {
  std::string text = R"toml(model = "lagrangian"
[parameters]
m = 2.0
r = 0.1
g = 9.81
F = 4.0
[coordinates]
x = "m"
y = "m"
z = "m"
psi = "rad"
theta = "rad"
phi = "rad"
[[bodies]]
name = "ball"
mass = "m"
position = ["x", "y", "z"]
orientation = { sequence = "ZXY", angles = ["psi", "theta", "phi"] }
inertia = ["2/5*m*r^2", "2/5*m*r^2", "2/5*m*r^2"]
[contacts.floor]
body = "ball"
shape = { sphere = { radius = "r" } }
surface = "plane"
friction = "no_slip"
[lagrangian.forces]
z = "%FORCE%"
[initial]
z = 0.1
[simulation]
t_end = 10.0
output_dt = 0.5
)toml";
  text.replace(text.find("%FORCE%"), 7, force_z);
  return text + extra;
}

}  // namespace

TEST_CASE("nonholonomic: the Chaplygin sleigh follows its closed form (1e-8) and conserves energy") {
  const test::Run r = test::run_text(sleigh_text());
  REQUIRE(r.result.completed());
  const double m = 1.0, I = 0.05, a = 0.2, v0 = 0.5, w0 = 1.0, J = I + m * a * a;
  const double V = std::sqrt(v0 * v0 + J * w0 * w0 / m), lambda = m * a * V / J, c = std::atanh(v0 / V);
  double worst_v = 0, worst_w = 0, worst_theta = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const double t = r.rec.t[k], th = value(r, k, "theta");
    const double v = value(r, k, "der_x") * std::cos(th) + value(r, k, "der_y") * std::sin(th);
    worst_v = std::max(worst_v, std::abs(v - V * std::tanh(lambda * t + c)));
    worst_w = std::max(worst_w, std::abs(value(r, k, "der_theta") - w0 * std::cosh(c) / std::cosh(lambda * t + c)));
    worst_theta = std::max(worst_theta, std::abs(th - std::sqrt(J / m) / a * (gd(lambda * t + c) - gd(c))));
  }
  CAPTURE(worst_v);
  CAPTURE(worst_w);
  CAPTURE(worst_theta);
  CHECK(worst_v <= 1e-8);
  CHECK(worst_w <= 1e-8);
  CHECK(worst_theta <= 1e-8);
  // m v^2 + J w^2 conserved: the energy ledger's drift, relative to the energy, within 100 rtol.
  const double E0 = 0.5 * (m * v0 * v0 + J * w0 * w0);
  CHECK(std::abs(r.summary("energy_initial") - E0) <= 1e-12);
  CHECK(r.summary("energy_drift_abs") <= 100 * 1e-10 * E0);
  CHECK(r.summary("energy_drift_rel") <= 100 * 1e-10);
  // The dependent speed and the integrability, in the summary.
  REQUIRE(r.item("dependent_speeds"));
  CHECK(r.item("dependent_speeds")->text == "der_y");
  REQUIRE(r.item("constraint_integrability"));
  CHECK(r.item("constraint_integrability")->text == "nonholonomic");
  CHECK(r.item("constraint_integrability")->label == "constraint rows no_side_slip, by the Frobenius test at random points:");
}

TEST_CASE("nonholonomic: the sleigh's exact Jacobian equals its closed form and central differences") {
  const Scenario sc = load_scenario_text(sleigh_text(), "sleigh.toml", {});
  const auto sys = build_system(sc);
  const auto* ode = facet<OdeSystem>(*sys);
  REQUIRE(ode);
  // States: x, y, theta, der_x, der_theta (der_y dependent), work_constraints.
  REQUIRE(sys->size() == 6);
  CHECK(sys->states()[3].name == "der_x");
  CHECK(sys->states()[4].name == "der_theta");
  const double m = 1.0, I = 0.05, a = 0.2, J = I + m * a * a, k = m * a / J;
  const double th = 0.3, xd = 0.7, w = 0.4;
  const std::vector<double> x{0.2, -0.1, th, xd, w, 0.0};
  const std::size_t N = x.size();
  std::vector<double> Jac(N * N);
  REQUIRE(ode->jacobian(0.0, x.data(), 0, Jac.data()));
  auto Jat = [&](std::size_t i, std::size_t j) { return Jac[i + N * j]; };
  // y' = x' tan(theta); x'' = a w^2 cos(theta) - x' w tan(theta); theta'' = -(m a/J) x' w / cos(theta).
  const double c = std::cos(th), s = std::sin(th), t = s / c;
  std::vector<std::vector<double>> closed(N, std::vector<double>(N, 0.0));
  closed[0][3] = 1;
  closed[1][2] = xd / (c * c);
  closed[1][3] = t;
  closed[2][4] = 1;
  closed[3][2] = -a * w * w * s - xd * w / (c * c);
  closed[3][3] = -t * w;
  closed[3][4] = 2 * a * w * c - xd * t;
  closed[4][2] = -k * xd * w * s / (c * c);
  closed[4][3] = -k * w / c;
  closed[4][4] = -k * xd / c;
  double worst_closed = 0, scale = 0;
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t i = 0; i < N; ++i) worst_closed = std::max(worst_closed, std::abs(Jat(i, j) - closed[i][j]));
  const double worst_fd = central_difference_error(*ode, x, Jac, 1e-5, scale);
  CHECK(worst_closed <= 1e-12);
  CHECK(worst_fd <= 1e-7);
  // The linearisation's rhs_ad carries the same Jacobian.
  const auto* lin = dynamic_cast<const Linearizable*>(sys.get());
  REQUIRE(lin);
  std::vector<Linearizable::AD> xa(N), ua(3), fa(N);
  for (std::size_t i = 0; i < N; ++i) xa[i] = Linearizable::AD(x[i], Eigen::VectorXd::Unit(static_cast<Eigen::Index>(N), static_cast<Eigen::Index>(i)));
  for (auto& u : ua) u = Linearizable::AD(0.0, Eigen::VectorXd::Zero(static_cast<Eigen::Index>(N)));
  lin->rhs_ad(xa.data(), ua.data(), fa.data());
  double worst_ad = 0;
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j) worst_ad = std::max(worst_ad, std::abs(fa[i].derivatives()(static_cast<Eigen::Index>(j)) - Jat(i, j)));
  CHECK(worst_ad == 0.0);
  // The signals: the states themselves, and the dependent rate der_y = der_x tan(theta) among the outputs.
  std::vector<Linearizable::AD> ya(N + sys->outputs().size());
  lin->signals_ad(xa.data(), ua.data(), ya.data());
  const auto& dy = ya[column(*sys, "der_y")];
  CHECK(std::abs(dy.value() - xd * t) <= 1e-15);
  CHECK(std::abs(dy.derivatives()(2) - xd / (c * c)) <= 1e-6);
  CHECK(std::abs(dy.derivatives()(3) - t) <= 1e-6);
}

TEST_CASE("nonholonomic: dependent speeds about to become singular are chosen again where the closed form says") {
  // From v0 = 0.1, w0 = 2 the sleigh turns through theta = pi/2, where der_y = der_x tan(theta) no longer follows
  // from the constraint (A_D = cos(theta)). The dependent speed becomes der_x where |cos(theta)| falls to a tenth of
  // its start value 1, at theta = acos(0.1): the closed form gives that time, and the run goes on to t_end.
  const test::Run r = test::run_text(sleigh_text(), {"initial_rates.x=0.1", "initial_rates.theta=2.0"});
  CHECK(r.result.termination == "t_end");
  CAPTURE(r.result.message);
  const double m = 1.0, I = 0.05, a = 0.2, v0 = 0.1, w0 = 2.0, J = I + m * a * a;
  const double V = std::sqrt(v0 * v0 + J * w0 * w0 / m), lambda = m * a * V / J, c = std::atanh(v0 / V);
  // gd(lambda t + c) = gd(c) + acos(0.1) a / sqrt(J/m).
  const double target = gd(c) + std::acos(0.1) * a / std::sqrt(J / m);
  const double t_change = (std::atanh(std::sin(target)) - c) / lambda;  // gd^-1(y) = artanh(sin y)
  REQUIRE(r.rec.events.size() == 1);
  CHECK(r.rec.events[0].kind == "dependent_speeds_changed");
  CHECK(std::abs(r.rec.events[0].t - t_change) <= 1e-6);
  CHECK(r.item("dependent_speeds")->text == "der_x");
  CHECK(r.summary("dependent_speed_changes") == 1);
  // The heading ends at (sqrt(J/m)/a)(pi/2 - gd(c)) > pi/2 (closed form).
  const double theta_end = std::sqrt(J / m) / a * (gd(lambda * 10.0 + c) - gd(c));
  CHECK(theta_end > M_PI / 2);
  CHECK(std::abs(value(r, r.rec.t.size() - 1, "theta") - theta_end) <= 1e-8);
}

TEST_CASE("nonholonomic: the rolling coin in steady circular motion keeps its lean (1e-10), its normal force is m g") {
  const double th = 0.3, W = 4.0;
  const test::Run r = test::run_text(coin_text(), steady_coin(th, W));
  REQUIRE(r.result.completed());
  double worst_theta = 0, worst_normal = 0, worst_gap = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    worst_theta = std::max(worst_theta, std::abs(value(r, k, "theta") - th));
    worst_normal = std::max(worst_normal, std::abs(value(r, k, "lambda_gap") - 1.0 * 9.81));
    worst_gap = std::max(worst_gap, std::abs(value(r, k, "constraint_gap")));
  }
  CAPTURE(worst_theta);
  CAPTURE(worst_normal);
  CAPTURE(worst_gap);
  CHECK(worst_theta <= 1e-10);
  CHECK(worst_normal <= 1e-8 * 9.81);
  CHECK(worst_gap <= r.summary("position_residual_limit"));
  CHECK(r.summary("energy_drift_abs") <= 1e-9);
  // The coin's no-slip rows are nonholonomic; x, y and z are the dependent speeds (their rates are not given).
  CHECK(r.item("constraint_integrability")->text == "nonholonomic");
  CHECK(r.item("constraint_integrability")->label == "constraint rows slip_x and slip_y, by the Frobenius test at random points:");
  CHECK(r.item("dependent_speeds")->text == "der_x, der_y, der_z");
}

TEST_CASE("nonholonomic: the sleigh linearized about straight motion has the turning rate's root -m a v0 / J") {
  // About der_theta = 0 at speed v0: w' = -(m a / J) v0 w, so the roots are 0 (theta), 0 (der_x) and -m a v0 / J.
  test::TempDir dir;
  std::string out;
  REQUIRE(test::run_binary("linearize " + rollsim::test::source_dir() + "/scenarios/chaplygin_sleigh.toml --set initial_rates.theta=0 "
                           "--set 'linear.ignorable=[\"x\", \"y\", \"work_constraints\"]' -o " +
                               (dir.path / "lin.h5").string(),
                           out) == 0);
  CAPTURE(out);
  const double m = 1.0, I = 0.05, a = 0.2, v0 = 0.5, J = I + m * a * a;
  char root[40];
  std::snprintf(root, sizeof root, "%.10e", -m * a * v0 / J);
  CHECK(out.find(root) != std::string::npos);
  CHECK(out.find("3 of 6 states kept") != std::string::npos);
}

TEST_CASE("nonholonomic: the coin's exact Jacobian agrees with central differences (1e-7)") {
  const Scenario sc = load_scenario_text(coin_text(), "coin.toml", steady_coin(0.3, 4.0));
  const auto sys = build_system(sc);
  const auto* ode = facet<OdeSystem>(*sys);
  REQUIRE(ode);
  const std::size_t N = sys->size();
  std::vector<double> x(N);
  sys->initial_state(x.data());
  // Away from the steady motion: a lean rate and a tilt, so that every term of the Jacobian counts.
  x[column(*sys, "theta")] += 0.2;
  x[column(*sys, "der_theta")] = 0.7;
  x[column(*sys, "psi")] = 0.4;
  std::vector<double> Jac(N * N);
  REQUIRE(ode->jacobian(0.0, x.data(), 0, Jac.data()));
  double scale = 0;
  const double worst = central_difference_error(*ode, x, Jac, 1e-6, scale);
  CAPTURE(scale);
  CHECK(worst <= 1e-7 * std::max(1.0, scale));
}

TEST_CASE("nonholonomic: a ball lifted by a growing force lifts off where its normal force m g - F t reaches 0") {
  // A solid ball at rest on the plane (a rolling contact with a normal row: z is a coordinate), pulled up by the
  // generalized force F t on z: the normal force is m g - F t (statics), and the terminal event lift_off_floor stops
  // the run at t = m g / F.
  const std::string text = ball_text("F*t");
  const test::Run r = test::run_text(text);
  REQUIRE(r.result.completed());
  CHECK(r.result.termination != "t_end");
  REQUIRE(!r.rec.events.empty());
  CHECK(r.rec.events.back().kind == "lift_off_floor");
  CHECK(std::abs(r.result.t_final - 2.0 * 9.81 / 4.0) <= 1e-9);
  double worst = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k)
    worst = std::max(worst, std::abs(value(r, k, "normal_force_floor") - (2.0 * 9.81 - 4.0 * r.rec.t[k])));
  CHECK(worst <= 1e-9);
}

TEST_CASE("nonholonomic: a rolling ball whose Euler angles reach gimbal lock stops with the body, sequence and time") {
  // The ball of the lift-off case, rolling with theta' = 1 (no force): theta = t, and the ZXY chart's determinant
  // cos(theta) reaches the runtime's limit 1e-3 at t = acos(1e-3).
  // (3 s: the witness |cos(theta)| - 1e-3 dips below zero for 2 ms only, and a uniform rotation lets the solver take
  // steps of seconds over t_end = 10 that can pass over that dip.)
  const test::Run r = test::run_text(ball_text("0", "[initial_rates]\ntheta = 1.0\n"), {"simulation.t_end=3"});
  CHECK(r.result.status == "solver_failure");
  CAPTURE(r.result.message);
  CHECK(r.result.message.find("ball") != std::string::npos);
  CHECK(r.result.message.find("ZXY") != std::string::npos);
  CHECK(r.result.t_final == doctest::Approx(std::acos(1e-3)).epsilon(1e-6));
}

TEST_CASE("nonholonomic: a moving constraint's force and work (W_C) in closed form, the ledger h - W_C holds") {
  // A particle whose x rate is imposed, x' = U cos(W t) (a row with b = -U cos(W t), rheonomic): the constraint
  // force is lambda = m x'' = -m U W sin(W t), and its work W_C = 1/2 m U^2 (cos^2(W t) - 1).
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.5
U = 0.8
W = 3.0
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "m/2*(der(x)^2 + der(y)^2)"
[constraints.drive]
velocity = "der(x) - U*cos(W*t)"
[initial_rates]
y = 0.3
[simulation]
t_end = 4.0
output_dt = 0.1
[solver]
rtol = 1e-10
atol = 1e-12
)toml";
  const test::Run r = test::run_text(text);
  REQUIRE(r.result.completed());
  const double m = 1.5, U = 0.8, W = 3.0;
  double worst_lambda = 0, worst_work = 0, worst_x = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const double t = r.rec.t[k];
    worst_lambda = std::max(worst_lambda, std::abs(value(r, k, "lambda_drive") + m * U * W * std::sin(W * t)));
    worst_work = std::max(worst_work, std::abs(value(r, k, "work_constraints") -
                                               0.5 * m * U * U * (std::cos(W * t) * std::cos(W * t) - 1)));
    worst_x = std::max(worst_x, std::abs(value(r, k, "x") - U / W * std::sin(W * t)));
  }
  CHECK(worst_lambda <= 1e-9);
  CHECK(worst_work <= 1e-8);
  CHECK(worst_x <= 1e-8);
  CHECK(r.summary("energy_drift_rel") <= 100 * 1e-10);
  CHECK(r.item("constraint_integrability")->text == "not checked");
}

TEST_CASE("nonholonomic: a row that is the rate of a position is reported integrable (holonomic in disguise)") {
  // A wheel of radius r rolling on a line: x' = r phi', which is (x - r phi)' = 0.
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 2.0
r = 0.3
J = 0.09
[coordinates]
x = "m"
phi = "rad"
[lagrangian]
kinetic = "m/2*der(x)^2 + J/2*der(phi)^2"
[constraints.rolling]
velocity = "der(x) - r*der(phi)"
[initial_rates]
phi = 2.0
[simulation]
t_end = 1.0
)toml";
  const test::Run r = test::run_text(text);
  REQUIRE(r.result.completed());
  REQUIRE(r.item("constraint_integrability"));
  CHECK(r.item("constraint_integrability")->text == "integrable");
  CHECK(r.item("constraint_integrability")->label ==
        "constraint rows rolling (holonomic in disguise: a position-level constraint would do), by the Frobenius test:");
  // der_x follows from the row: 0.6 m/s, constant.
  CHECK(r.item("dependent_speeds")->text == "der_x");
  CHECK(std::abs(value(r, r.rec.t.size() - 1, "der_x") - 0.6) <= 1e-12);
  CHECK(std::abs(value(r, r.rec.t.size() - 1, "x") - 0.6) <= 1e-9);
}

TEST_CASE("nonholonomic: bad input (a dependent rate that disagrees: exit 2 naming the residual, rows not linear "
          "in the rates or linear only piecewise)") {
  test::TempDir dir;
  std::string text = sleigh_text();
  text.replace(text.find("theta = 1.0"), 11, "theta = 1.0\ny = 0.5");
  const std::string path = dir.file("sleigh.toml", text);
  std::string out;
  CHECK(test::run_binary("run " + path + " -o " + (dir.path / "out.h5").string(), out) == 2);
  CAPTURE(out);
  CHECK(out.find("constraint no_side_slip") != std::string::npos);
  CHECK(out.find("residual A der(q) + b is 0.5") != std::string::npos);
  CHECK(out.find("sleigh.toml:") != std::string::npos);
  // Rows that are not linear in the rates, at the row's key: a square, and rows linear only piecewise, whose second
  // derivatives by the rates vanish wherever they are defined (a rate inside step or abs).
  const std::size_t at = sleigh_text().find("-der(x)*sin(theta)");
  REQUIRE(at != std::string::npos);
  for (const char* row : {"-der(x)^2*sin(theta)", "-der(x)*sin(theta)*step(der(x))", "-abs(der(x))*sin(theta)",
                          "-der(x)*sin(theta)*step(der(y) - 1)", "-der(x)*sin(theta)*abs(der(theta))"}) {
    CAPTURE(row);
    std::string bad = sleigh_text();
    bad.replace(at, 18, row);
    try {
      build_system(load_scenario_text(bad, "u.toml", {}));
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("must be linear in the rates der(q)") != std::string::npos);
      CHECK(std::string(e.what()).find("constraints.no_side_slip.velocity") != std::string::npos);
    }
  }
  // The same row written otherwise is accepted: times a factor of q that cancels, and with a rate in a quotient
  // that cancels.
  for (const char* row : {"-der(x)*sin(theta)*(1 + theta^2)/(1 + theta^2)",
                          "-(der(x)^2 - der(theta)^2)/(der(x) - der(theta))*sin(theta) + der(theta)*sin(theta)",
                          "-der(x)*sin(theta)*step(theta + 10)"}) {
    CAPTURE(row);
    std::string good = sleigh_text();
    good.replace(at, 18, row);
    CHECK_NOTHROW(build_system(load_scenario_text(good, "u.toml", {})));
  }
  // The row with a rate that cancels in a quotient is taken as its form A der(q) + b (the quotient would divide 0 by
  // 0 at rest): its run is the sleigh's.
  std::string quotient = sleigh_text();
  quotient.replace(at, 18, "-(der(x)^2 - der(theta)^2)/(der(x) - der(theta))*sin(theta) + der(theta)*sin(theta)");
  const std::vector<std::string> shorter = {"simulation.t_end=1"};
  const test::Run a = test::run_text(sleigh_text(), shorter), b = test::run_text(quotient, shorter);
  REQUIRE(a.rec.x.size() == b.rec.x.size());
  for (const char* name : {"x", "y", "theta", "der_x", "der_theta"})
    CHECK(b.value(b.rec.x.size() - 1, name) == doctest::Approx(a.value(a.rec.x.size() - 1, name)).epsilon(1e-12));
}

}  // namespace rollsim
