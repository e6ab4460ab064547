// User models with 3-D bodies on the smooth runtime: a torque-free asymmetric body (energy and the angular momentum
// in the world conserved), a heavy symmetric top in steady precession (Goldstein's closed form), a rotation
// sequence reaching gimbal lock (a solver error naming the body, the sequence and the time); and bad input of the
// 3-D keys, each with its location.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>

#include <Eigen/Geometry>

#include "support.hpp"

namespace rollsim {

namespace {

std::string replaced_3d(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

/// The index of a state by name.
std::size_t state(const test::Run& r, const std::string& name) {
  for (std::size_t i = 0; i < r.state_names.size(); ++i)
    if (r.state_names[i] == name) return i;
  FAIL("no state " << name);
  return 0;
}

/// R = R_Z(psi) R_X(theta) R_Y(phi), written here with Eigen (independently of the kinematics layer).
Eigen::Matrix3d zxy(double psi, double theta, double phi) {
  return (Eigen::AngleAxisd(psi, Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(theta, Eigen::Vector3d::UnitX()) *
          Eigen::AngleAxisd(phi, Eigen::Vector3d::UnitY()))
      .toRotationMatrix();
}

/// A free asymmetric rigid body (no gravity), its centre fixed, orientation ZXY; it spins mainly about its body y
/// axis (the largest moment, a stable rotation), so that its attitude stays far from the sequence's singular one.
const std::string kFreeBody = R"toml(model = "lagrangian"
[parameters]
g = 0
[coordinates]
psi = "rad"
theta = "rad"
phi = "rad"
[initial_rates]
theta = 0.3
phi = 2.0
psi = 0.4
[[bodies]]
name = "brick"
mass = 2
position = ["0", "0", "0"]
orientation = { sequence = "ZXY", angles = ["psi", "theta", "phi"] }
inertia = ["1", "3", "2"]
[simulation]
t_end = 10
output_dt = 0.05
[solver]
rtol = 1e-10
atol = 1e-12
)toml";

/// A heavy symmetric top on a fixed point: its centre at l along its body z axis from the pivot (a point at the
/// origin), orientation ZXZ (precession psi, nutation theta, spin phi); A and C its central moments.
const std::string kTop = R"toml(model = "lagrangian"
[parameters]
g = 9.81
m = 0.5
l = 0.04
A = 2e-4
C = 3e-4
[coordinates]
psi = "rad"
theta = "rad"
phi = "rad"
[initial]
theta = 0.5
[[points]]
name = "pivot"
position = ["0", "0", "0"]
[[bodies]]
name = "top"
mass = "m"
position = { from = "pivot", offset = ["0", "0", "l"], axes = "top" }
orientation = { sequence = "ZXZ", angles = ["psi", "theta", "phi"] }
inertia = ["A", "A", "C"]
[simulation]
t_end = 5
output_dt = 0.05
[solver]
rtol = 1e-11
atol = 1e-12
)toml";

/// The message of the InputError that loading and building `text` throws ("" if none).
std::string input_error_3d(const std::string& text) {
  try {
    build_system(load_scenario_text(text, "u.toml", {}));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// "u.toml:L:C" of the first occurrence of `needle` in `text`, moved by `shift` columns.
std::string where_3d(const std::string& text, const std::string& needle, int shift = 0) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const auto bol = text.rfind('\n', at);
  const auto col = static_cast<long>(at - (bol == std::string::npos ? 0 : bol + 1)) + 1 + shift;
  return "u.toml:" + std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

TEST_CASE("user model 3-D: a torque-free asymmetric body conserves its energy and its angular momentum in the world") {
  const test::Run r = test::run_text(kFreeBody);
  REQUIRE(r.result.completed());
  const double rtol = 1e-10;
  CHECK(r.result.summary.size() > 0);
  CHECK(r.summary("energy_drift_rel") <= 100 * rtol);
  // L_world = R I w_b, with w_b from R^T R' (R' by central differences of R along the rates): independent of the
  // kinematics layer's formulas.
  const std::size_t ipsi = state(r, "psi"), ith = state(r, "theta"), iph = state(r, "phi"), n = 3;
  const Eigen::Matrix3d I = Eigen::Vector3d(1, 3, 2).asDiagonal();
  Eigen::Vector3d L0;
  double worst = 0, energy_worst = 0, T0 = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const auto& x = r.rec.x[k];
    const double h = 1e-6;
    auto R = [&](double s) { return zxy(x[ipsi] + s * x[n + ipsi], x[ith] + s * x[n + ith], x[iph] + s * x[n + iph]); };
    const Eigen::Matrix3d Rd = (R(h) - R(-h)) / (2 * h), S = R(0).transpose() * Rd;
    const Eigen::Vector3d wb(S(2, 1), S(0, 2), S(1, 0));
    const Eigen::Vector3d L = R(0) * I * wb;
    const double T = 0.5 * wb.dot(I * wb);
    if (k == 0) {
      L0 = L;
      T0 = T;
    }
    worst = std::max(worst, (L - L0).norm() / L0.norm());
    energy_worst = std::max(energy_worst, std::abs(T - T0) / T0);
  }
  // The finite differences carry ~1e-10 of their own.
  CHECK(worst <= 1e-8);
  CHECK(energy_worst <= 1e-8);
  CHECK(L0.norm() > 5);  // it spins: |L| ~ 3 * 2
}

TEST_CASE("user model 3-D: a heavy symmetric top in steady precession keeps its tilt and precession rate") {
  // Goldstein (Classical Mechanics, 3rd ed., section 5.7): steady precession at tilt theta with spin w3 = phi' + psi'
  // cos(theta) and precession rate psi' = Omega obeys m g l = Omega (C w3 - A' Omega cos(theta)), A' = A + m l^2
  // the moment about the pivot; the slow root Omega of A' cos(theta) Omega^2 - C w3 Omega + m g l = 0.
  const double g = 9.81, m = 0.5, l = 0.04, A = 2e-4 + m * l * l, C = 3e-4, theta = 0.5, w3 = 150.0;
  const double a = A * std::cos(theta), disc = C * C * w3 * w3 - 4 * a * m * g * l;
  REQUIRE(disc > 0);
  const double Omega = (C * w3 - std::sqrt(disc)) / (2 * a), phid = w3 - Omega * std::cos(theta);
  const test::Run r = test::run_text(kTop, {"initial_rates.psi=" + std::to_string(Omega), "initial_rates.phi=" + std::to_string(phid)});
  REQUIRE(r.result.completed());
  const std::size_t ith = state(r, "theta"), ipsi = state(r, "psi"), n = 3;
  double theta_err = 0, rate_err = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    theta_err = std::max(theta_err, std::abs(r.rec.x[k][ith] - theta));
    rate_err = std::max(rate_err, std::abs(r.rec.x[k][n + ipsi] - Omega));
  }
  CAPTURE(Omega);
  // to_string's 6 decimals of the rates start the top 5e-7 off the steady motion: a nutation of that order.
  CHECK(theta_err <= 1e-6);
  CHECK(rate_err <= 1e-5 * Omega + 1e-6);
  CHECK(r.rec.x.back()[ipsi] == doctest::Approx(Omega * r.rec.t.back()).epsilon(1e-5));
  CHECK(r.summary("energy_drift_rel") <= 100 * 1e-11);
}

TEST_CASE("user model 3-D: a rotation sequence reaching gimbal lock stops the run with the body, sequence and time") {
  // Rotating steadily about its body x axis (the smallest moment: a stable rotation) from the identity, the ZXY
  // angle theta grows at 1 rad/s and reaches the sequence's singular attitude theta = pi/2 at t = pi/2; the run
  // stops where |cos(theta)| = 1e-3, at t = acos(1e-3) = 1.569796.
  const std::string text = replaced_3d(replaced_3d(replaced_3d(kFreeBody, "theta = 0.3", "theta = 1.0"), "phi = 2.0", "phi = 0"),
                                    "psi = 0.4", "psi = 0");
  const test::Run r = test::run_text(replaced_3d(text, "inertia = [\"1\", \"3\", \"2\"]", "inertia = [\"1\", \"2\", \"3\"]"));
  CHECK(r.result.status == "solver_failure");
  CAPTURE(r.result.message);
  CHECK(r.result.message.find("body brick") != std::string::npos);
  CHECK(r.result.message.find("sequence ZXY") != std::string::npos);
  CHECK(r.result.t_final == doctest::Approx(std::acos(1e-3)).epsilon(1e-6));
  CHECK(r.result.message.find("t = 1.5697") != std::string::npos);
  // The same through the program: exit 3 and the message.
  std::string out;
  const test::TempDir dir;
  const std::string path = dir.file("gimbal.toml", replaced_3d(text, "inertia = [\"1\", \"3\", \"2\"]", "inertia = [\"1\", \"2\", \"3\"]"));
  CHECK(test::run_binary("run " + path + " --output " + (dir.path / "gimbal.h5").string(), out) == 3);
  CHECK(out.find("gimbal lock") != std::string::npos);
}

TEST_CASE("user model 3-D: bad input of bodies, points, orientations and rolling contacts, with its location") {
  const std::string top = kTop;
  struct Case {
    std::string from, to, needle, message;
    int shift = 0;
  };
  const std::vector<Case> cases{
      {"inertia = [\"A\", \"A\", \"C\"]", "inertia = [\"A\", \"C\"]", "inertia = [", "allowed: 3 (principal moments", 10},
      {"sequence = \"ZXZ\"", "sequence = \"ZQZ\"", "sequence = ", "the letter 'Q' is not X, Y or Z", 0},
      {"from = \"pivot\"", "from = \"pivet\"", "from = ", "names no 3-D body or point; allowed: \"top\", \"pivot\"", 0},
      {"axes = \"top\"", "axes = \"pivot\"", "axes = ", "names no 3-D body; allowed: \"top\"", 0},
      {"offset = [\"0\", \"0\", \"l\"]", "offset = [\"0\", \"0\", \"der(l)\"]", "der(l)", "der() is not allowed here", 0},
      {"offset = [\"0\", \"0\", \"l\"]", "offset = [\"0\", \"0\", \"l +\"]", "l +\"", "", 3},
  };
  for (const auto& c : cases) {
    const std::string text = replaced_3d(top, c.from, c.to);
    const std::string msg = input_error_3d(text);
    CAPTURE(c.to);
    CAPTURE(msg);
    CHECK(msg.find(c.message) != std::string::npos);
  }
  // Exact locations: the list item inside position.offset, the sequence's value.
  {
    const std::string text = replaced_3d(top, "offset = [\"0\", \"0\", \"l\"]", "offset = [\"0\", \"0\", \"l + q\"]");
    const std::string msg = input_error_3d(text);
    CAPTURE(msg);
    CHECK(msg.rfind(where_3d(text, "l + q", 4), 0) == 0);
    CHECK(msg.find("offset[2]") != std::string::npos);
  }
  {
    const std::string text = replaced_3d(top, "inertia = [\"A\", \"A\", \"C\"]", "inertia = [\"A\", \"C\"]");
    CHECK(input_error_3d(text).rfind(where_3d(text, "[\"A\", \"C\"]"), 0) == 0);
  }
  // A cycle of parents; a matrix not orthonormal at the start; a body with an orientation but no position.
  const std::string two = replaced_3d(top, "[simulation]", R"toml([[bodies]]
name = "cap"
mass = 1
position = { from = "top", offset = ["0", "0", "0.01"] }
orientation = { parent = "top", sequence = "Z", angles = ["0"] }
inertia = ["1e-5", "1e-5", "1e-5"]
[simulation])toml");
  CHECK(input_error_3d(two).empty());
  {
    const std::string cyc = replaced_3d(replaced_3d(two, "orientation = { sequence = \"ZXZ\"", "orientation = { parent = \"cap\", sequence = \"ZXZ\""),
                                     "", "");
    const std::string msg = input_error_3d(cyc);
    CAPTURE(msg);
    CHECK(msg.find("a cycle of parents: ") != std::string::npos);
    CHECK(msg.find("top -> cap -> top") != std::string::npos);
  }
  {
    const std::string mat = replaced_3d(two, "orientation = { parent = \"top\", sequence = \"Z\", angles = [\"0\"] }",
                                     "orientation = { parent = \"top\", matrix = [[\"1\", \"0\", \"0\"], [\"0\", \"1\", \"0.1\"], [\"0\", \"0\", \"1\"]] }");
    const std::string msg = input_error_3d(mat);
    CAPTURE(msg);
    CHECK(msg.rfind(where_3d(mat, "matrix = ", 9), 0) == 0);
    CHECK(msg.find("is not a rotation at the start") != std::string::npos);
    const std::string ok = replaced_3d(mat, "[\"0\", \"1\", \"0.1\"]", "[\"0\", \"1\", \"0\"]");
    CHECK(input_error_3d(ok).empty());
    const std::string short_rows = replaced_3d(mat, "[\"0\", \"1\", \"0.1\"]", "[\"0\", \"1\"]");
    CHECK(input_error_3d(short_rows).find("allowed: 3 rows of 3 expressions") != std::string::npos);
  }
  {
    const std::string msg = input_error_3d(replaced_3d(top, "g = 9.81\n", ""));
    CHECK(msg.find("3-D bodies need the gravitational acceleration as parameters.g") != std::string::npos);
  }
  {
    const std::string start = replaced_3d(top, "theta = 0.5", "theta = 0");
    const std::string msg = input_error_3d(start);
    CAPTURE(msg);
    CHECK(msg.find("starts at the singular attitude of its sequence ZXZ") != std::string::npos);
  }
}

}  // namespace rollsim
