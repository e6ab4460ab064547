// Chart singularities in every user system: a 3-D body oriented by ZXY angles turns about its body x axis at a
// constant rate w from theta0, so theta = theta0 + w t and psi = phi = 0 exactly (a rotation about a principal
// axis), and the sequence's determinant cos(theta) reaches the chart limit 1e-3 at t* = (acos(1e-3) - theta0) / w.
// The Filippov system (a Coulomb slider beside the body), the contact engine (a ball resting on the ground beside
// it) and the DAE (theta driven by a moving constraint) each stop there with the chart's message, no NaN before.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "rollsim/io/hdf5.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

constexpr double kTheta0 = 0.5, kRate = 2.0;

/// The closed-form stop: cos(theta0 + w t) = 1e-3 (the chart limit, |det| of ZXY's rate map).
double stop_time() { return (std::acos(1e-3) - kTheta0) / kRate; }

/// The free body, its centre fixed at the origin, spun about its body x axis (the smallest moment), and `rest`
/// (the other coordinates, energies, contacts or constraints).
std::string body_model(const std::string& coordinates, const std::string& rest) {
  return R"toml(model = "lagrangian"
[parameters]
g = 9.81
w = 2.0
[coordinates]
psi = "rad"
theta = "rad"
phi = "rad"
)toml" + coordinates + R"toml(
[[bodies]]
name = "brick"
mass = 2
position = ["0", "0", "0"]
orientation = { sequence = "ZXY", angles = ["psi", "theta", "phi"] }
inertia = ["1", "2", "3"]
[simulation]
t_end = 2
output_dt = 0.01
[solver]
rtol = 1e-10
atol = 1e-12
)toml" + rest;
}

/// A slider x with Coulomb friction under a given normal force: sliding until t = 0.5 / (0.1 g) = 0.51 s, then
/// sticking (the Filippov form: one contact, no gap).
std::string filippov_model() {
  return body_model("x = \"m\"\n[initial]\ntheta = 0.5\n[initial_rates]\ntheta = 2.0\nx = 0.5\n[lagrangian]\n"
                    "kinetic = \"1/2*der(x)^2\"\n",
                    "[contacts.floor]\nslip_velocity = \"der(x)\"\nnormal_force = \"g\"\nfriction_coefficient = \"0.1\"\n");
}

/// A ball z dropped from 0.05 m onto the ground (gap z, plastic): it lands at t = sqrt(0.1 / g) = 0.10 s and rests
/// (the contact engine).
std::string contact_engine_model() {
  return body_model("z = \"m\"\n[initial]\ntheta = 0.5\nz = 0.05\n[initial_rates]\ntheta = 2.0\n[lagrangian]\n"
                    "kinetic = \"1/2*der(z)^2\"\npotential = \"g*z\"\n",
                    "[contacts.ground]\ngap = \"z\"\nrestitution = \"0\"\n");
}

/// theta driven by the moving constraint theta = theta0 + w t (the DAE on IDA).
std::string dae_model() {
  return body_model("[initial]\ntheta = 0.5\n[initial_rates]\ntheta = 2.0\n",
                    "[constraints.drive]\nexpression = \"theta - 0.5 - w*t\"\n");
}

/// The run stops at the chart's singular attitude at the closed-form time, with the message, and every sample
/// before it finite.
void check_stops_at_chart(const std::string& text, const std::string& system_kind) {
  CAPTURE(system_kind);
  const test::Run r = test::run_text(text);
  CHECK(r.result.status == "solver_failure");
  CAPTURE(r.result.message);
  CHECK(r.result.message.find("body brick") != std::string::npos);
  CHECK(r.result.message.find("sequence ZXY") != std::string::npos);
  CHECK(r.result.message.find("gimbal lock") != std::string::npos);
  CHECK(r.result.message.find("choose a sequence") != std::string::npos);
  // The event is located on the dense output to round-off; theta itself carries the integration error (rtol 1e-10).
  CHECK(std::abs(r.result.t_final - stop_time()) <= 1e-7);
  REQUIRE(!r.rec.x.empty());
  bool finite = true;
  for (const auto& x : r.rec.x)
    for (const double v : x) finite = finite && std::isfinite(v);
  CHECK(finite);
  CHECK(r.rec.t.back() <= r.result.t_final);
}

/// Through the program: exit 3, the message on the terminal, and a result file whose angles are finite up to the stop.
void check_program_exit(const std::string& text) {
  const test::TempDir dir;
  const std::string path = dir.file("chart.toml", text), out_file = (dir.path / "chart.h5").string();
  std::string out;
  CHECK(test::run_binary("run " + path + " --output " + out_file, out) == 3);
  CHECK(out.find("gimbal lock") != std::string::npos);
  CHECK(out.find("body brick") != std::string::npos);
  h5::Handle f = h5::open_file_readonly(out_file);
  const auto t = h5::read_vector(f.get(), "trajectory/time");
  REQUIRE(!t.empty());
  CHECK(t.back() <= stop_time() + 1e-7);
  for (const char* name : {"psi", "theta", "phi", "der_psi", "der_theta", "der_phi"}) {
    CAPTURE(name);
    const auto v = h5::read_vector(f.get(), std::string("trajectory/") + name);
    CHECK(v.size() == t.size());
    bool finite = true;
    for (const double x : v) finite = finite && std::isfinite(x);
    CHECK(finite);
  }
}

}  // namespace

TEST_CASE("chart witnesses: the Filippov system with a Coulomb contact stops before gimbal lock at the closed-form time") {
  const std::string text = filippov_model();
  const test::Run r = test::run_text(text);
  // The slider stuck before the stop (a mode change of the Filippov engine): the chart's witness is in every mode.
  bool stuck = false;
  for (const auto& e : r.rec.events) stuck = stuck || (e.t < stop_time() && e.t > 0.4);
  CHECK(stuck);
  check_stops_at_chart(text, "filippov");
  check_program_exit(text);
}

TEST_CASE("chart witnesses: the contact engine's user system stops before gimbal lock at the closed-form time") {
  const std::string text = contact_engine_model();
  const test::Run r = test::run_text(text);
  bool landed = false;
  for (const auto& e : r.rec.events) landed = landed || std::abs(e.t - std::sqrt(0.1 / 9.81)) <= 1e-6;
  CHECK(landed);
  check_stops_at_chart(text, "contact engine");
  check_program_exit(text);
}

TEST_CASE("chart witnesses: the constrained (DAE) user system stops before gimbal lock at the closed-form time") {
  const std::string text = dae_model();
  check_stops_at_chart(text, "dae");
  check_program_exit(text);
}

}  // namespace rollsim
