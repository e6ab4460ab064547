// The user model's rolling contacts with Coulomb friction, between the scenario and the cone's engine: the keys'
// errors, each at its key; the kernel rs_cone_contacts of a sphere (coordinates x, y, z, psi, theta, phi, ZXY) at
// random states against hand formulas (gap z, the contact point's velocity v_G + w x (-r e_z) less the turning
// plane's, the spin w.e_z - Omega, their rows and the biases as total time derivatives by central differences; and a
// disk's, its contact point the lowest point of its rim); the
// system a scenario builds (the engine's states and outputs, their values against the same formulas) and a sliding
// sphere's closed form: its slip decelerates at (7/2) mu g along the slip, under the normal force m g; runs: a sphere
// set down sliding sticks at 2 v0/(7 mu g) and rolls on at 5/7 v0; a ball set down at rest on a turning table
// sticks and keeps the circle of rolling without slip.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include <Eigen/Dense>

#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/kinematics/bodies.hpp"
#include "rollsim/kinematics/contact.hpp"
#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

using GiNaC::ex;

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

/// The message of the InputError that loading and building `text` throws ("" if none).
std::string input_error(const std::string& text) {
  try {
    build_system(load_scenario_text(text, "u.toml", {}));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// "u.toml:L:C" of the first occurrence of `needle` in `text`, moved by `shift` columns.
std::string where(const std::string& text, const std::string& needle, int shift = 0) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const auto bol = text.rfind('\n', at);
  const auto col = static_cast<long>(at - (bol == std::string::npos ? 0 : bol + 1)) + 1 + shift;
  return "u.toml:" + std::to_string(line) + ":" + std::to_string(col);
}

/// A uniform sphere of mass m and radius r above the plane z = 0, its centre at (x, y, z + r), orientation
/// R = R_Z(psi) R_X(theta) R_Y(phi); a contact with Coulomb friction.
const std::string kBall = R"toml(model = "lagrangian"
[parameters]
m = 0.5
r = 0.1
g = 9.81
mu = 0.3
[coordinates]
x = "m"
y = "m"
z = "m"
psi = "rad"
theta = "rad"
phi = "rad"
[initial]
z = 0.05
[[bodies]]
name = "ball"
mass = "m"
position = ["x", "y", "z + r"]
orientation = { sequence = "ZXY", angles = ["psi", "theta", "phi"] }
inertia = ["2/5*m*r^2", "2/5*m*r^2", "2/5*m*r^2"]
[contacts.table]
body = "ball"
shape = { sphere = { radius = "r" } }
surface = "plane"
friction_coefficient = "mu"
[simulation]
t_end = 0.1
)toml";

/// The hand formulas of the sphere at (q, q') with radius r on the plane turning at Omega: the angular velocity in
/// the world of the ZXY sequence, w = psi' e_z + theta' R_Z e_x + phi' R_Z R_X e_y; the contact point's velocity
/// relative to the surface u = v_G + w x (p - G) - Omega e_z x p, with p - G = -r e_z, p = (x, y, z); the spin
/// w_z - Omega; the gap p_z. With `disk`, a disk of radius r whose axis is the body's y axis n = R e_y (R from
/// Eigen's rotations): p - G = -r k, k = (e_z - n_z n) / |e_z - n_z n|, the direction to the highest rim point.
struct Ball {
  double r = 0.1, Omega = 0;
  bool disk = false;
  Eigen::Vector3d w(const double* q, const double* qd) const {
    const double psi = q[3], th = q[4];
    return qd[3] * Eigen::Vector3d(0, 0, 1) + qd[4] * Eigen::Vector3d(std::cos(psi), std::sin(psi), 0) +
           qd[5] * Eigen::Vector3d(-std::sin(psi) * std::cos(th), std::cos(psi) * std::cos(th), std::sin(th));
  }
  Eigen::Vector3d offset(const double* q) const {
    if (!disk) return {0, 0, -r};
    const Eigen::Matrix3d R = (Eigen::AngleAxisd(q[3], Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(q[4], Eigen::Vector3d::UnitX()) *
                               Eigen::AngleAxisd(q[5], Eigen::Vector3d::UnitY()))
                                  .toRotationMatrix();
    const Eigen::Vector3d n = R.col(1), up = Eigen::Vector3d::UnitZ() - n(2) * n;
    return -r * up.normalized();
  }
  Eigen::Vector3d point(const double* q) const { return Eigen::Vector3d(q[0], q[1], q[2] + r) + offset(q); }
  Eigen::Vector3d slip(const double* q, const double* qd) const {
    const Eigen::Vector3d vG(qd[0], qd[1], qd[2]);
    return vG + w(q, qd).cross(offset(q)) - Eigen::Vector3d(0, 0, Omega).cross(point(q));
  }
  double spin(const double* q, const double* qd) const { return w(q, qd)(2) - Omega; }
  /// The value (gap, u_x, u_y, spin) `which` (0 to 3) at (q, q').
  double value(int which, const double* q, const double* qd) const {
    if (which == 0) return point(q)(2);
    if (which == 3) return spin(q, qd);
    return slip(q, qd)(which - 1);
  }
};

/// A random state of the sphere: angles away from the chart's singular theta = +-pi/2, rates of order 1.
void random_state(std::mt19937& rng, double* q, double* qd, double* a) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 6; ++i) {
    q[i] = 0.6 * u(rng);
    qd[i] = 2 * u(rng);
    a[i] = 2 * u(rng);
  }
  q[2] = 0.05 + 0.04 * u(rng);
}

}  // namespace

TEST_CASE("cone wiring: the keys of a rolling contact with Coulomb friction, each error at its key") {
  CHECK(input_error(kBall).empty());
  const std::string spin_key = "friction_coefficient = \"mu\"\nspin_friction_radius = \"0.01\"";
  CHECK(input_error(replaced(kBall, "friction_coefficient = \"mu\"", spin_key)).empty());
  CHECK(input_error(replaced(kBall, "friction_coefficient = \"mu\"",
                             "friction_coefficient = \"mu\"\nstatic_friction_coefficient = \"0.4\"\nrestitution = \"0.5\""))
            .empty());
  struct Case {
    std::string from, to, needle, message;
    int shift = 0;
  };
  const std::string fc = "friction_coefficient = \"mu\"";
  const std::vector<Case> cases{
      // Neither friction law: at the contact's body.
      {fc + "\n", "", "body = ", "needs its friction law: friction = \"no_slip\"", 7},
      // Both.
      {fc, "friction = \"no_slip\"\n" + fc, "friction_coefficient = ", "has both friction = \"no_slip\"", 23},
      {"mu = 0.3", "mu = -0.2", "friction_coefficient = ", "allowed range [0, inf)", 23},
      {fc, fc + "\nstatic_friction_coefficient = \"0.1\"", "static_friction_coefficient = ", "allowed range [0.3, inf)", 30},
      {fc, fc + "\nrestitution = \"1.5\"", "restitution = ", "allowed range [0, 1]", 14},
      {fc, fc + "\nrestitution = \"-0.1\"", "restitution = ", "allowed range [0, 1]", 14},
      {fc, fc + "\nspin_friction_radius = \"0\"", "spin_friction_radius = ", "allowed range (0, inf)", 23},
      {fc, fc + "\nspin_friction_radius = \"-r\"", "spin_friction_radius = ", "allowed range (0, inf)", 23},
      // A key of Coulomb friction on a contact that rolls without slipping.
      {fc, "friction = \"no_slip\"\nrestitution = \"0.5\"", "restitution = ", "belongs to a rolling contact with Coulomb friction", 14},
      {fc, "friction = \"no_slip\"\nstatic_friction_coefficient = \"0.5\"", "static_friction_coefficient = ",
       "belongs to a rolling contact with Coulomb friction", 30},
      {fc, "friction = \"no_slip\"\nspin_friction_radius = \"0.01\"", "spin_friction_radius = ",
       "belongs to a rolling contact with Coulomb friction", 23},
      // Not a constant.
      {fc, "friction_coefficient = \"mu + z\"", "friction_coefficient = ", "must be a constant", 23},
      {fc, fc + "\nspin_friction_radius = \"0.01*(1 + t)\"", "spin_friction_radius = ", "must be a constant", 23},
      // Combinations not supported yet: a velocity constraint, a holonomic one, a planar contact.
      {"[simulation]", "[constraints.c]\nvelocity = \"der(x)\"\n[simulation]", "friction_coefficient = ", "not supported yet", 23},
      {"[simulation]", "[constraints.c]\nexpression = \"x\"\n[simulation]", "friction_coefficient = ", "not supported yet", 23},
      {"[simulation]", "[contacts.wall]\ngap = \"1 - x\"\n[simulation]", "friction_coefficient = ", "not supported yet", 23},
      // The coordinates keep the ball on the plane: it could not lift off.
      {"position = [\"x\", \"y\", \"z + r\"]", "position = [\"x\", \"y\", \"r\"]", "body = ", "may lift off", 7},
  };
  for (const auto& c : cases) {
    const std::string text = replaced(kBall, c.from, c.to);
    const std::string msg = input_error(text);
    const std::string at = where(text, c.needle, c.shift);
    INFO(c.to);
    INFO(msg);
    CHECK(msg.find(c.message) != std::string::npos);
    CHECK(msg.rfind(at, 0) == 0);
  }
  // The resolved scenario (every key with its value, an absent optional one empty or left out) loads and builds
  // again with the contact's keys as they are written there: the absent `friction` left out, the absent
  // static_friction_coefficient and restitution as "". (The other empty optional keys, of the body's orientation and
  // the contact's shape, are taken out: those read an empty text back as an empty expression, not as absent.)
  {
    const Scenario sc = load_scenario_text(replaced(kBall, "friction_coefficient = \"mu\"", spin_key), "u.toml", {});
    std::string resolved;
    std::istringstream lines(sc.resolved_text());
    for (std::string line; std::getline(lines, line);)
      if (line.find(" = \"\"") == std::string::npos || line.rfind("contacts.table.static_friction_coefficient", 0) == 0 ||
          line.rfind("contacts.table.restitution", 0) == 0)
        resolved += line + "\n";
    INFO(resolved);
    CHECK(resolved.find("contacts.table.friction =") == std::string::npos);
    CHECK(resolved.find("contacts.table.static_friction_coefficient = \"\"") != std::string::npos);
    CHECK(resolved.find("contacts.table.spin_friction_radius = \"0.01\"") != std::string::npos);
    INFO(input_error(resolved));
    CHECK(input_error(resolved).empty());
  }
  // Another contact rolling without slip in the same model.
  {
    const std::string text = replaced(kBall, "[simulation]", R"toml([[bodies]]
name = "wheel"
mass = "m"
position = ["x + 1", "y", "r"]
orientation = { sequence = "Z", angles = ["psi"] }
inertia = ["1", "1", "1"]
[contacts.road]
body = "wheel"
shape = { sphere = { radius = "r" } }
friction = "no_slip"
[simulation])toml");
    const std::string msg = input_error(text);
    INFO(msg);
    CHECK(msg.find("not supported yet") != std::string::npos);
    CHECK(msg.find("road") != std::string::npos);
  }
}

TEST_CASE("cone wiring: the kernel rs_cone_contacts of a sphere against the hand formulas at random states") {
  symbolic::LagrangeModel m;
  m.coordinates = {"x", "y", "z", "psi", "theta", "phi"};
  m.parameters = {"r", "Omega", "mu", "mu_s", "e", "R"};
  m.make_symbols(0);
  const std::size_t n = m.n();
  const ex r = m.p[0];
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  const kinematics::Frame f =
      kinematics::Frame::from_sequence("ball", kinematics::Frame::world(), "ZXY", {m.q[3], m.q[4], m.q[5]}, s);
  const kinematics::RigidBody ball{"ball", 1, kinematics::inertia_tensor({1, 1, 1}), {m.q[0], m.q[1], m.q[2] + r}, f};
  // Three contacts: the sphere on the plane at rest with the coefficients given; on the plane turning at Omega with
  // mu alone (mu_s = mu, e = 0, no spin friction); a disk (axis the body's y axis) on the plane at rest, mu alone.
  for (int contact = 0; contact < 3; ++contact) {
    const bool turning = contact != 0;
    const kinematics::RollingContact rc{"table", &ball,
                                        contact == 2 ? kinematics::RollingContact::Shape::Disk : kinematics::RollingContact::Shape::Sphere,
                                        r, {0, 1, 0}, contact == 1 ? m.p[1] : ex(0), "k"};
    symbolic::LagrangeModel::ConeContact c;
    c.name = rc.name;
    c.gap = rc.gap();
    const kinematics::Vec3 u = rc.slip(s);
    c.slip[0] = u[0];
    c.slip[1] = u[1];
    c.spin = rc.spin();
    c.friction_coefficient = m.p[2];
    c.static_friction_coefficient = turning ? m.p[2] : m.p[3];
    c.restitution = turning ? ex(0) : m.p[4];
    c.spin_friction = !turning;
    c.spin_radius = turning ? ex(0) : m.p[5];
    m.cone_contacts.push_back(c);
  }
  m.kinetic = 0;
  for (const auto& v : m.qd) m.kinetic += v * v / 2;
  m.potential = 0;
  m.forces.assign(n, 0);
  const symbolic::Derivation dv = symbolic::derive(m);
  test::TempDir dir;
  const std::string cache = (dir.path / "cache").string();
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  const auto lib = symbolic::CompiledKernels::load(symbolic::generate_source(dv.kernels, m.inputs()), "cone wiring test\n");
  unsetenv("XDG_CACHE_HOME");
  REQUIRE(lib);
  const auto kernel = lib->get(symbolic::KernelNames::cone_contacts);
  const symbolic::InputLayout lay(m);
  const std::size_t stride = symbolic::KernelNames::cone_contact_stride(n);
  CHECK(stride == 4 * n + 12);
  const double p[6] = {0.1, 1.7, 0.3, 0.45, 0.6, 0.02};
  std::mt19937 rng(20261127);
  for (int sample = 0; sample < 6; ++sample) {
    double q[6], qd[6], a[6];
    random_state(rng, q, qd, a);
    const double t = 0.4;
    std::vector<double> in(lay.size, 0.0), out(3 * stride, 0.0);
    in[lay.t] = t;
    for (std::size_t i = 0; i < n; ++i) {
      in[lay.q + i] = q[i];
      in[lay.qd + i] = qd[i];
      in[lay.a + i] = a[i];
    }
    for (std::size_t i = 0; i < 6; ++i) in[lay.p + i] = p[i];
    kernel(in.data(), out.data());
    for (int contact = 0; contact < 3; ++contact) {
      const bool turning = contact != 0;
      const Ball hand{p[0], contact == 1 ? p[1] : 0.0, contact == 2};
      const double* o = out.data() + static_cast<std::size_t>(contact) * stride;
      // The blocks: gap (value, dg/dq, bias), then u1, u2, w_n (value, d/dq', bias).
      const std::size_t at[4] = {0, n + 2, 2 * n + 4, 3 * n + 6};
      for (int which = 0; which < 4; ++which) {
        INFO("contact " << contact << ", quantity " << which);
        const double* b = o + at[which];
        CHECK(b[0] == doctest::Approx(hand.value(which, q, qd)).epsilon(1e-12));
        // The row: d/dq for the gap (a function of q), d/dq' for the others (linear in q'), by central differences.
        double row[6];
        const double h = 1e-6;
        for (std::size_t j = 0; j < n; ++j) {
          double qp[6], qm[6], vp[6], vm[6];
          std::copy(q, q + 6, qp);
          std::copy(q, q + 6, qm);
          std::copy(qd, qd + 6, vp);
          std::copy(qd, qd + 6, vm);
          (which == 0 ? qp : vp)[j] += h;
          (which == 0 ? qm : vm)[j] -= h;
          row[j] = (hand.value(which, qp, vp) - hand.value(which, qm, vm)) / (2 * h);
          CHECK(b[1 + j] == doctest::Approx(row[j]).epsilon(1e-8));
        }
        // The bias: the total time derivative along (q', a) without the row's a-terms; for the gap, the second
        // derivative g'' less dg/dq.a. The surface's rate Omega is constant, so time enters through q alone.
        const double k = 1e-4;
        auto along = [&](double step, int order) {
          double qs[6], vs[6];
          for (int i = 0; i < 6; ++i) {
            qs[i] = q[i] + step * qd[i] + (order == 2 ? 0.5 * step * step * a[i] : 0.0);
            vs[i] = qd[i] + step * a[i];
          }
          return hand.value(which, qs, vs);
        };
        double bias = 0;
        if (which == 0) {
          bias = (along(k, 2) - 2 * along(0, 2) + along(-k, 2)) / (k * k);
        } else {
          bias = (along(k, 1) - along(-k, 1)) / (2 * k);
        }
        for (std::size_t j = 0; j < n; ++j) bias -= row[j] * a[j];
        CHECK(b[1 + n] == doctest::Approx(bias).epsilon(1e-6).scale(1.0));
      }
      const double* coefficients = o + 4 * n + 8;
      CHECK(coefficients[0] == p[2]);
      CHECK(coefficients[1] == (turning ? p[2] : p[3]));
      CHECK(coefficients[2] == (turning ? 0.0 : p[4]));
      CHECK(coefficients[3] == (turning ? 0.0 : p[5]));
    }
  }
}

TEST_CASE("cone wiring: a scenario's contact builds the engine's system, its values, and a sliding sphere's closed form") {
  for (int turning = 0; turning < 2; ++turning) {
    const std::string text = turning ? replaced(replaced(kBall, "surface = \"plane\"", "surface = { plane = { rotation_rate = \"Omega\" } }"),
                                                "mu = 0.3", "mu = 0.3\nOmega = 1.3")
                                     : kBall;
    const Scenario sc = load_scenario_text(text, "u.toml", {});
    const auto sys = build_system(sc);
    auto* ode = facet<OdeSystem>(*sys);
    REQUIRE(ode);
    auto* ws = facet<WitnessSystem>(*sys);
    REQUIRE(ws);
    const Signals& states = sys->states();
    const Signals& outputs = sys->outputs();
    auto state = [&](const std::string& name) { return signal_index(states, name, "test"); };
    auto output = [&](const std::string& name) { return signal_index(outputs, name, "test"); };
    // q, q', then the engine's states; the engine's outputs.
    CHECK(states[0].name == "x");
    CHECK(states[6].name == "der_x");
    for (const char* name : {"dissipated_friction", "dissipated_impact", "slip_reference_x_table", "slip_reference_y_table"})
      CHECK(std::any_of(states.begin(), states.end(), [&](const Signal& s) { return s.name == name; }));
    for (const char* name : {"gap_table", "gap_rate_table", "normal_force_table", "slip_x_table", "slip_y_table", "spin_table",
                             "kinetic_energy", "energy_balance"})
      CHECK(std::any_of(outputs.begin(), outputs.end(), [&](const Signal& s) { return s.name == name; }));
    CHECK(sys->has_modes());
    std::vector<double> x0(sys->size());
    sys->initial_state(x0.data());
    CHECK(x0[state("z")] == 0.05);
    CHECK(sys->initial_mode(x0.data()) == 0);  // above the plane: open

    // The outputs at random states against the hand formulas (the contact open, mode 0).
    const Ball hand{0.1, turning ? 1.3 : 0.0};
    std::mt19937 rng(7 + static_cast<unsigned>(turning));
    std::vector<double> y(outputs.size());
    for (int sample = 0; sample < 4; ++sample) {
      std::vector<double> x = x0;
      double a[6];
      random_state(rng, x.data(), x.data() + 6, a);
      sys->compute_outputs(0.0, x.data(), 0, y.data());
      const Eigen::Vector3d u = hand.slip(x.data(), x.data() + 6);
      CHECK(y[output("gap_table")] == doctest::Approx(x[2]).epsilon(1e-12));
      CHECK(y[output("gap_rate_table")] == doctest::Approx(x[8]).epsilon(1e-12));
      CHECK(y[output("slip_x_table")] == doctest::Approx(u(0)).epsilon(1e-12));
      CHECK(y[output("slip_y_table")] == doctest::Approx(u(1)).epsilon(1e-12));
      CHECK(y[output("spin_table")] == doctest::Approx(hand.spin(x.data(), x.data() + 6)).epsilon(1e-12));
    }

    // Sliding on the plane at rest: F = -mu m g u/|u| at the contact, so a_G = F/m and, the torque (-r e_z) x F
    // about G on I = 2/5 m r^2, the slip's rate u' = F/m + r^2/I F = (7/2) F/m: -(7/2) mu g along the slip, whatever
    // the spin; the normal force m g (the gap's bias is 0 for a sphere). The rate by central differences of the slip
    // along the state's rate in the sliding mode (the plane at rest only: a turning plane adds -Omega e_z x v).
    if (turning) continue;
    std::vector<double> x = x0;
    double a[6];
    random_state(rng, x.data(), x.data() + 6, a);
    x[2] = 0;
    x[8] = 0;
    const Eigen::Vector3d u = hand.slip(x.data(), x.data() + 6);
    const Eigen::Vector2d d = u.head<2>().normalized();
    x[state("slip_reference_x_table")] = d(0);
    x[state("slip_reference_y_table")] = d(1);
    const int slide = 2;
    std::vector<double> xdot(x.size()), xp(x.size()), xm(x.size()), yp(outputs.size()), ym(outputs.size());
    ode->rhs(0.0, x.data(), slide, xdot.data());
    sys->compute_outputs(0.0, x.data(), slide, y.data());
    const double mass = 0.5, g = 9.81, mu = 0.3;
    CHECK(y[output("normal_force_table")] == doctest::Approx(mass * g).epsilon(1e-9));
    const double h = 1e-6;
    for (std::size_t i = 0; i < x.size(); ++i) {
      xp[i] = x[i] + h * xdot[i];
      xm[i] = x[i] - h * xdot[i];
    }
    sys->compute_outputs(h, xp.data(), slide, yp.data());
    sys->compute_outputs(-h, xm.data(), slide, ym.data());
    const Eigen::Vector2d rate((yp[output("slip_x_table")] - ym[output("slip_x_table")]) / (2 * h),
                               (yp[output("slip_y_table")] - ym[output("slip_y_table")]) / (2 * h));
    const Eigen::Vector2d expected = -3.5 * mu * g * d;
    INFO(rate.transpose() << " vs " << expected.transpose());
    CHECK((rate - expected).norm() <= 1e-6 * expected.norm());
    // The spin keeps its value (no spin friction): no torque about the normal.
    CHECK(std::abs((yp[output("spin_table")] - ym[output("spin_table")]) / (2 * h)) <= 1e-6);
  }
}

TEST_CASE("cone wiring: a sphere set down sliding without spin sticks at 2 v0 / (7 mu g) and rolls on at 5/7 v0") {
  // On the plane at rest, the contact closed from the start (z = 0, z' = 0) and sliding: the slip u = v_G + w x
  // (-r e_z) decelerates at (7/2) mu g, so it reaches zero at t* = 2 v0 / (7 mu g); then the sphere rolls without
  // slipping, v_G = v0 - mu g t* = 5/7 v0 (the angular momentum about the contact point is conserved).
  const double v0 = 1.0, mu = 0.3, g = 9.81, r = 0.1;
  const std::string text = replaced(replaced(replaced(kBall, "z = 0.05", "z = 0"), "[simulation]\nt_end = 0.1",
                                             "[initial_rates]\nx = 1.0\n[simulation]\nt_end = 0.2\noutput_dt = 0.01"),
                                    "[simulation]", "[solver]\nrtol = 1e-10\natol = 1e-12\n[simulation]");
  const test::Run run = test::run_text(text);
  REQUIRE(run.result.status == "ok");
  const double t_stick = 2 * v0 / (7 * mu * g);
  int sticks = 0;
  for (const auto& e : run.rec.events) {
    INFO(e.kind << " at " << e.t);
    if (e.kind == "stick_table") {
      ++sticks;
      CHECK(e.t == doctest::Approx(t_stick).epsilon(1e-7));
    }
  }
  CHECK(sticks == 1);
  const auto sys = build_system(run.scenario);
  const std::size_t vx = signal_index(sys->states(), "der_x", "test"), wy = signal_index(sys->states(), "der_phi", "test");
  const std::size_t slip = signal_index(sys->outputs(), "slip_speed_table", "test");
  const std::size_t normal = signal_index(sys->outputs(), "normal_force_table", "test");
  REQUIRE(!run.rec.x.empty());
  for (std::size_t k = 0; k < run.rec.t.size(); ++k) {
    const double t = run.rec.t[k];
    INFO("t = " << t);
    CHECK(run.rec.y[k][normal] == doctest::Approx(0.5 * g).epsilon(1e-6));
    if (t < t_stick) {
      CHECK(run.rec.x[k][vx] == doctest::Approx(v0 - mu * g * t).epsilon(1e-7));
      CHECK(run.rec.y[k][slip] == doctest::Approx(v0 - 3.5 * mu * g * t).epsilon(1e-7));
    } else if (t > t_stick + 1e-6) {
      CHECK(run.rec.x[k][vx] == doctest::Approx(5.0 / 7.0 * v0).epsilon(1e-7));
      // Rolling: x' = r phi' (the angles stay 0 about z and x; phi turns about the body's y axis, here e_y).
      CHECK(run.rec.x[k][wy] * r == doctest::Approx(5.0 / 7.0 * v0).epsilon(1e-7));
      CHECK(std::abs(run.rec.y[k][slip]) <= 1e-7);
    }
  }
}

TEST_CASE("cone wiring: a ball set down at rest on a turning table sticks and circles as it would rolling without slip") {
  // scenarios/ball_on_turntable.toml with Coulomb friction instead of ideal rolling: set down at rest relative to the
  // table, the ball needs a friction force of m (2/7) Omega^2 3.5 d = m Omega^2 d (its centre circles at 2 Omega/7 on
  // radius 3.5 d about (-2.5 d, 0)), far below mu m g: it sticks throughout and keeps that circle (the table's
  // surface does work on it, which the balance counts: energy_balance constant).
  const double d = 0.02, Omega = 2.0;
  const std::string text =
      replaced(test::read_file(rollsim::test::source_dir() + "/scenarios/ball_on_turntable.toml"), "friction = \"no_slip\"",
               "friction_coefficient = \"0.4\"");
  const test::Run run = test::run_text(text, {"simulation.output_dt=0.05"});
  REQUIRE(run.result.status == "ok");
  CHECK(run.rec.events.empty());
  const auto sys = build_system(run.scenario);
  CHECK(std::any_of(sys->states().begin(), sys->states().end(), [](const Signal& s) { return s.name == "work_surfaces"; }));
  const std::size_t balance = signal_index(sys->outputs(), "energy_balance", "test");
  double worst = 0, worst_balance = 0;
  for (std::size_t k = 0; k < run.rec.t.size(); ++k) {
    CHECK(run.rec.mode[k] == 1);  // stick
    const double x = run.rec.x[k][0], y = run.rec.x[k][1];
    worst = std::max(worst, std::abs(std::hypot(x + 2.5 * d, y) - 3.5 * d));
    worst_balance = std::max(worst_balance, std::abs(run.rec.y[k][balance] - run.rec.y[0][balance]));
  }
  INFO("largest distance from the circle " << worst << " m, balance drift " << worst_balance << " J");
  CHECK(worst <= 1e-7 * d);  // the integration error over 11 s at the default rtol 1e-10
  CHECK(worst_balance <= 1e-9);
  // One circle: back at the start at t = 7 pi / Omega.
  CHECK(run.rec.t.back() == doctest::Approx(7 * M_PI / Omega));
  CHECK(std::abs(run.rec.x.back()[0] - d) <= 1e-7 * d);
  CHECK(std::abs(run.rec.x.back()[1]) <= 1e-7 * d);
}

}  // namespace rollsim
