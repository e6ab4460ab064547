// The linearisation about a steady motion (linear.ignorable, linear.steady, and the elimination of position
// constraints carried as rows) against closed forms: a spherical pendulum in conical motion written as a user
// model, and small systems whose constraint and eigenvalues are known by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/io/hdf5.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

// ---- the spherical pendulum in steady conical motion ----------------------------------------------------------
//
// A point mass m on a massless rod of length l, th its polar angle from the downward vertical, ph the azimuth:
// T = 1/2 m l^2 (th'^2 + sin^2 th ph'^2), V = -m g l cos th. ph is ignorable: p = m l^2 sin^2 th ph' is conserved.
// Conical motion at th0: th'' = sin th cos th ph'^2 - (g/l) sin th = 0, so ph'^2 = Om^2 = g / (l cos th0).
//
// With ph' free (p conserved), th moves in the effective potential of the reduced problem (Landau and Lifshitz,
// Mechanics, 3rd ed., §14, problem 1, the spherical pendulum): th'' = F(th) = (p/(m l^2))^2 cos th / sin^3 th -
// (g/l) sin th, and dF/dth at th0 with (p/(m l^2))^2 = Om^2 sin^4 th0 is -Om^2 (sin^2 th0 + 3 cos^2 th0) - (g/l)
// cos th0, so the small-oscillation frequency about the cone is
//     w^2 = (g / (l cos th0)) (1 + 3 cos^2 th0).
// The linearisation over (th, der_th, der_ph) has that pair and a zero root (a neighbouring cone: dp != 0).
//
// With ph' held at Om (a drive; linear.steady = ["der_ph"]): th'' = sin th cos th Om^2 - (g/l) sin th, whose
// derivative at th0 is Om^2 cos 2 th0 - (g/l) cos th0 = -(g/l) sin^2 th0 / cos th0: w^2 = (g/l) sin^2 th0 / cos th0.
// Both derived here by hand; the first is the textbook result.

constexpr double kG = 9.81, kL = 0.7;

std::string pendulum(double th0, double rate, const std::string& linear_keys) {
  char b[1200];
  std::snprintf(b, sizeof b, R"toml(model = "lagrangian"
title = "Spherical pendulum"
[parameters]
m = 1.3
l = %.17g
g = %.17g
[coordinates]
th = "rad"
ph = "rad"
[lagrangian]
kinetic = "1/2*m*l^2*(der(th)^2 + sin(th)^2*der(ph)^2)"
potential = "-m*g*l*cos(th)"
[initial]
th = %.17g
[initial_rates]
ph = %.17g
[linear]
%s
)toml",
                kL, kG, th0, rate, linear_keys.c_str());
  return b;
}

double cone_rate(double th0) { return std::sqrt(kG / (kL * std::cos(th0))); }

LinearResult linearize_text(const std::string& text, const std::vector<std::string>& sets = {}) {
  const Scenario sc = load_scenario_text(text, "pendulum.toml", sets);
  auto sys = build_system(sc);
  return linearize_system(*sys, linear_options(sc), sc);
}

/// The message of the InputError `f` throws ("" when none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// ---- a small model with a position constraint carried as a velocity row ----------------------------------------
//
// States (a, b, c, s, w): a' = w, b' = w, c' = a + s, s' = 0, w' = -k a + beta s. The difference a - b never
// changes (g = a - b is a position constraint the motion keeps, G = [1, -1, 0, 0, 0]); nothing depends on c
// (ignorable); s is held steady. At s = 1, a = b = beta / k, w = 0 the kept rates vanish while c moves.
// Eliminating a = b leaves (b, w) with b'' = -k b: eigenvalues +-i sqrt(k). Without the elimination the drift of
// a - b would be a zero root.
class ConstrainedToy final : public OdeSystem, public Linearizable {
 public:
  ConstrainedToy(double k, double beta, bool wrong_constraint = false) : k_(k), beta_(beta), wrong_(wrong_constraint) {}
  std::string model_name() const override { return "toy"; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void initial_state(double* x) const override {
    const double a = beta_ / k_;
    const double v[5] = {a, a, 0.3, 1.0, 0.0};
    std::copy(v, v + 5, x);
  }
  void rhs(double, const double* x, int, double* xd) const override { f(x, xd); }
  void compute_outputs(double, const double*, int, double*) const override {}
  const Signals& inputs() const override { return inputs_; }
  std::vector<double> input_values() const override { return {}; }
  void rhs_ad(const AD* x, const AD*, AD* xd) const override { f(x, xd); }
  void signals_ad(const AD* x, const AD*, AD* y) const override { std::copy(x, x + 5, y); }
  int degrees_of_freedom() const override { return 2; }
  std::vector<std::string> default_linear_outputs() const override { return {"b"}; }
  Eigen::MatrixXd state_constraint_jacobian(const double*) const override {
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(1, 5);
    G(0, 0) = 1;
    if (!wrong_) G(0, 1) = -1;  // g = a - b; the wrong one, g = a, is not kept (a' = w)
    return G;
  }

 private:
  template <class S>
  void f(const S* x, S* xd) const {
    xd[0] = x[4];
    xd[1] = x[4];
    xd[2] = x[0] + x[3];
    xd[3] = x[3] * 0.0;
    xd[4] = -k_ * x[0] + beta_ * x[3];
  }
  double k_, beta_;
  bool wrong_;
  Signals states_{{"a", "m", ""}, {"b", "m", ""}, {"c", "m", ""}, {"s", "1", ""}, {"w", "m/s", ""}}, outputs_, inputs_;
};

}  // namespace

TEST_CASE("linear steady: the spherical pendulum's conical motion, der_ph kept: w^2 = g (1 + 3 cos^2 th0) / (l cos th0)") {
  for (const double th0 : {0.3, 0.6, 1.2}) {
    CAPTURE(th0);
    const LinearResult r = linearize_text(pendulum(th0, cone_rate(th0), "ignorable = [\"ph\"]"));
    REQUIRE(r.state_names == std::vector<std::string>{"th", "der_th", "der_ph"});
    CHECK(r.states.reduced());
    CHECK(r.states.treatment[1] == StateTreatment::Ignorable);
    // The kept rates vanish to round-off (the cone's rate from its closed form), ph itself turns at Om.
    CHECK(r.equilibrium_residual < 1e-14);
    CHECK(r.states.rate(1) == doctest::Approx(cone_rate(th0)).epsilon(1e-15));
    const double c = std::cos(th0), w2 = kG / (kL * c) * (1 + 3 * c * c);
    REQUIRE(r.eig.values.size() == 3);
    // Order: the oscillatory pair first (+i first), then the zero root.
    CHECK(std::abs(r.eig.values(0) - std::complex<double>(0, std::sqrt(w2))) <= 1e-12 * std::sqrt(w2));
    CHECK(std::abs(r.eig.values(1) - std::complex<double>(0, -std::sqrt(w2))) <= 1e-12 * std::sqrt(w2));
    CHECK(std::abs(r.eig.values(2)) <= 1e-12 * std::sqrt(w2));
  }
}

TEST_CASE("linear steady: the conical motion with der_ph held steady (a drive): w^2 = (g/l) sin^2 th0 / cos th0") {
  for (const double th0 : {0.3, 0.6, 1.2}) {
    CAPTURE(th0);
    const LinearResult r =
        linearize_text(pendulum(th0, cone_rate(th0), "ignorable = [\"ph\"]\nsteady = [\"der_ph\"]"));
    REQUIRE(r.state_names == std::vector<std::string>{"th", "der_th"});
    CHECK(r.states.treatment[3] == StateTreatment::Steady);
    const double s = std::sin(th0), w2 = kG / kL * s * s / std::cos(th0);
    REQUIRE(r.eig.values.size() == 2);
    CHECK(std::abs(r.eig.values(0) - std::complex<double>(0, std::sqrt(w2))) <= 1e-12 * std::sqrt(w2));
    CHECK(r.modal.counts.undamped == 1);
    // The default output (the first coordinate, th) is kept; the inputs are the generalized forces.
    CHECK(r.output_names == std::vector<std::string>{"th"});
    CHECK(r.ss.B.rows() == 2);
    CHECK(r.ss.B.cols() == 2);
  }
}

TEST_CASE("linear steady: an ignorable state whose column is not zero is an input error naming it") {
  // th is not ignorable: der_th's rate depends on it.
  const double th0 = 0.6;
  const std::string msg =
      input_error([&] { linearize_text(pendulum(th0, cone_rate(th0), "ignorable = [\"ph\", \"th\"]")); });
  CHECK(msg.find("pendulum.toml:18:") != std::string::npos);  // the line of ignorable
  CHECK(msg.find("\"th\" is not ignorable") != std::string::npos);
  CHECK(msg.find("d(der_th)'/d(th) = ") != std::string::npos);
  // A name that is no state, and a state in both lists.
  CHECK(input_error([&] { linearize_text(pendulum(th0, 1.0, "ignorable = [\"psi\"]")); })
            .find("\"psi\" is not a state of the model; allowed: th, ph, der_th, der_ph") != std::string::npos);
  CHECK(input_error([&] { linearize_text(pendulum(th0, 1.0, "ignorable = [\"ph\"]\nsteady = [\"ph\"]")); })
            .find("also in linear.ignorable") != std::string::npos);
  CHECK(input_error([&] {
          linearize_text(pendulum(th0, 1.0, "ignorable = [\"ph\", \"th\"]\nsteady = [\"der_th\", \"der_ph\"]"));
        }).find("no state is left") != std::string::npos);
  // An output that depends on the ignorable coordinate.
  CHECK(input_error([&] {
          linearize_text(pendulum(th0, cone_rate(th0), "ignorable = [\"ph\"]\noutputs = [\"ph\"]"));
        }).find("depends on the ignorable state \"ph\"") != std::string::npos);
}

TEST_CASE("linear steady: a start off the steady motion is an input error naming the state, and its tolerance") {
  const double th0 = 0.6, rate = 1.1 * cone_rate(th0);
  // th'' = sin cos (1.21 - 1) Om^2 = 0.21 sin cos g / (l cos) = 0.21 (g/l) sin th0.
  const double expected = 0.21 * kG / kL * std::sin(th0);
  const std::string msg = input_error([&] { linearize_text(pendulum(th0, rate, "ignorable = [\"ph\"]")); });
  CHECK(msg.find("not a steady motion: d(der_th)/dt = ") != std::string::npos);
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", expected);
  CHECK(msg.find(b) != std::string::npos);
  CHECK(msg.find("beyond linear.equilibrium_tolerance = 1e-09 x (1 + ") != std::string::npos);
  // The same start linearised anyway: allowed, and the residual is reported.
  const Scenario sc = load_scenario_text(pendulum(th0, rate, "ignorable = [\"ph\"]"), "pendulum.toml");
  auto sys = build_system(sc);
  LinearOptions opt = linear_options(sc);
  opt.allow_non_equilibrium = true;
  const LinearResult r = linearize_system(*sys, opt, sc);
  CHECK(r.residual_state == "der_th");
  CHECK(r.residual_rate == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("linear steady: a position constraint's drift is eliminated, not reported as a root (a model by hand)") {
  const double k = 4, beta = 2;
  const ConstrainedToy toy(k, beta);
  Scenario sc;
  sc.path = "toy.toml";
  LinearOptions opt;
  // Without the keys: every state but the eliminated one is kept; c moves (c' = 1.5), so the start is no
  // equilibrium: an error naming c.
  CHECK(input_error([&] { linearize_system(toy, opt, sc); }).find("d(c)/dt = 1.5") != std::string::npos);
  opt.ignorable = {"c"};
  opt.steady = {"s"};
  const LinearResult r = linearize_system(toy, opt, sc);
  // Column pivoting takes the first of the equal columns a and b as the dependent state.
  CHECK(r.state_names == std::vector<std::string>{"b", "w"});
  REQUIRE(r.states.eliminated.size() == 1);
  CHECK(r.states.names[static_cast<std::size_t>(r.states.eliminated[0])] == "a");
  CHECK(r.states.elimination(0, 0) == doctest::Approx(1.0).epsilon(1e-15));  // da = db
  CHECK(r.states.elimination(0, 1) == doctest::Approx(0.0));
  CHECK(r.states.constraint_rank == 1);
  CHECK(r.states.invariance_residual == 0.0);
  CHECK(r.states.method.find("eliminated") != std::string::npos);
  REQUIRE(r.eig.values.size() == 2);
  CHECK(std::abs(r.eig.values(0) - std::complex<double>(0, std::sqrt(k))) <= 1e-14);
  CHECK(std::abs(r.eig.values(1) - std::complex<double>(0, -std::sqrt(k))) <= 1e-14);
  CHECK(r.modal.counts.rigid_body == 0);
  CHECK(r.output_names == std::vector<std::string>{"b"});
  // The growth check cannot follow a reduced linearisation.
  CHECK(input_error([&] { require_full_state(r, sc, "rollsim check growth"); }).find("is reduced") !=
        std::string::npos);
}

TEST_CASE("linear steady: a constraint the linearisation does not keep is an input error") {
  const ConstrainedToy toy(4, 2, /*wrong_constraint=*/true);
  Scenario sc;
  sc.path = "toy.toml";
  LinearOptions opt;
  opt.ignorable = {"c"};
  opt.steady = {"s"};
  const std::string msg = input_error([&] { linearize_system(toy, opt, sc); });
  CHECK(msg.find("does not keep the model's position constraints") != std::string::npos);
}

TEST_CASE("linear steady: rollsim linearize prints and writes which states were kept, dropped and held") {
  test::TempDir dir;
  const double th0 = 0.6;
  const std::string scen =
      dir.file("p.toml", pendulum(th0, cone_rate(th0), "ignorable = [\"ph\"]\nsteady = [\"der_ph\"]"));
  const std::string out = (dir.path / "p.h5").string();
  // --set works as for an equilibrium: a new g with the cone's rate for it.
  const double g2 = 3.7, om2 = std::sqrt(g2 / (kL * std::cos(th0)));
  char sets[200];
  std::snprintf(sets, sizeof sets, " --set parameters.g=%.17g --set initial_rates.ph=%.17g", g2, om2);
  std::string text;
  REQUIRE(test::run_binary("linearize " + scen + sets + " -o " + out, text) == 0);
  CHECK(text.find("2 of 4 states kept; dropped as ignorable (their columns of A zero): ph; held steady (rows and "
                  "columns dropped): der_ph") != std::string::npos);
  CHECK(text.find("State space: x = [th, der_th]") != std::string::npos);
  h5::Handle f = h5::open_file_readonly(out);
  h5::Handle g = h5::open_group(f.get(), "linear");
  CHECK(h5::read_attr_string(g.get(), "state_reduction").find("2 of 4 states kept") != std::string::npos);
  const auto x0 = h5::read_vector(g.get(), "model_x0");
  REQUIRE(x0.size() == 4);
  CHECK(x0[3] == om2);
  const auto re = h5::read_vector(g.get(), "eigenvalues_imag");
  const double s = std::sin(th0);
  REQUIRE(re.size() == 2);
  CHECK(re[0] == doctest::Approx(std::sqrt(g2 / kL * s * s / std::cos(th0))).epsilon(1e-12));
  // The growth check refuses a reduced linearisation (exit 2).
  CHECK(test::run_binary("check growth " + scen + sets, text) == 2);
  CHECK(text.find("is reduced") != std::string::npos);
}

// ---- the rolling coin upright, with its height eliminated by the contact's gap ---------------------------------
//
// A uniform disk (mass m, radius a; A = m a^2/4 about a diameter, C = m a^2/2 about its axis) written by hand in
// contact-point coordinates: the lean theta, the heading psi, the spin phi, the contact point (x, y) and the
// centre's height z; the centre is (x + a sin(theta) sin(psi), y - a sin(theta) cos(psi), z), and in the frame that
// leans but does not spin the angular velocity is (theta', phi' + psi' sin theta, psi' cos theta). Rolling without
// slip moves the contact point along the heading at a phi' (two rows), and the gap z = a cos(theta) is a holonomic
// constraint the model carries as a row: the linearisation eliminates z by it. Upright rolling at v = a phi'
// (theta = 0, psi' = 0) linearises to
//   (A + m a^2) theta'' = m g a theta - (C + m a^2) (v/a) psi',   A psi'' = C (v/a) theta'
// (Neimark and Fufaev, Dynamics of Nonholonomic Systems, 1972, the rolling disk), so lambda^2 (A + m a^2) =
// m g a - C (C + m a^2) v^2 / (A a^2): for the uniform disk w^2 = -lambda^2 = (4/5) (3 v^2/a^2 - g/a), stable for
// v > sqrt(g a / 3) and one real root growing at sqrt(-w^2) below it.
std::string upright_coin(double spin) {
  char b[1600];
  std::snprintf(b, sizeof b, R"toml(model = "lagrangian"
title = "Coin in contact-point coordinates"
[parameters]
m = 0.1
a = 0.05
g = 9.81
[coordinates]
theta = "rad"
psi = "rad"
phi = "rad"
x = "m"
y = "m"
z = "m"
[lagrangian]
kinetic = "m/2*((der(x) + a*cos(theta)*sin(psi)*der(theta) + a*sin(theta)*cos(psi)*der(psi))^2 + (der(y) - a*cos(theta)*cos(psi)*der(theta) + a*sin(theta)*sin(psi)*der(psi))^2 + der(z)^2) + m*a^2/8*(der(theta)^2 + (der(psi)*cos(theta))^2) + m*a^2/4*(der(phi) + sin(theta)*der(psi))^2"
potential = "m*g*z"
[constraints.contact_x]
velocity = "der(x) - a*der(phi)*cos(psi)"
[constraints.contact_y]
velocity = "der(y) - a*der(phi)*sin(psi)"
[constraints.gap]
expression = "z - a*cos(theta)"
[initial]
z = 0.05
[initial_rates]
phi = %.17g
[linear]
ignorable = ["psi", "phi", "x", "y"]
)toml",
                spin);
  return b;
}

TEST_CASE("linear steady: the coin rolling upright is stable above v = sqrt(g a / 3), z eliminated by the gap") {
  const double a = 0.05, g = 9.81, v_c = std::sqrt(g * a / 3);
  for (const double v : {0.5 * v_c, 0.9 * v_c, 1.1 * v_c, 3.0 * v_c}) {
    CAPTURE(v / v_c);
    const LinearResult r = linearize_text(upright_coin(v / a));
    // theta, der_theta, der_psi, der_phi kept; z eliminated: no root for the gap's drift.
    REQUIRE(r.state_names == std::vector<std::string>{"theta", "der_theta", "der_psi", "der_phi"});
    REQUIRE(r.states.eliminated.size() == 1);
    CHECK(r.states.names[static_cast<std::size_t>(r.states.eliminated[0])] == "z");
    CHECK(r.states.elimination(0, 0) == doctest::Approx(0.0));  // dz = -a sin(theta) dtheta = 0 upright
    CHECK(r.states.invariance_residual <= 1e-14);
    const double w2 = 0.8 * (3 * v * v / (a * a) - g / a);
    REQUIRE(r.eig.values.size() == 4);
    double growth = -1;
    int zeros = 0;
    for (Eigen::Index k = 0; k < 4; ++k) {
      growth = std::max(growth, r.eig.values(k).real());
      zeros += std::abs(r.eig.values(k)) <= 1e-9;
    }
    CHECK(zeros == 2);  // der_phi (the speed) and psi' with theta: neighbouring steady motions
    // The constraints' work, the energy ledger's state, dropped as ignorable without being listed; listing it
    // changes nothing.
    const auto w = std::find(r.states.names.begin(), r.states.names.end(), "work_constraints");
    REQUIRE(w != r.states.names.end());
    CHECK(r.states.treatment[static_cast<std::size_t>(w - r.states.names.begin())] == StateTreatment::Ignorable);
    CHECK(r.states.method.find("the energy ledger's work_constraints without being listed") != std::string::npos);
    const LinearResult listed = linearize_text(upright_coin(v / a), {"linear.ignorable=[\"psi\", \"phi\", \"x\", \"y\", \"work_constraints\"]"});
    CHECK(listed.state_names == r.state_names);
    CHECK((listed.ss.A - r.ss.A).cwiseAbs().maxCoeff() == 0.0);
    CHECK(listed.states.method.find("without being listed") == std::string::npos);
    if (v < v_c) {
      CHECK(growth == doctest::Approx(std::sqrt(-w2)).epsilon(1e-12));
      CHECK(r.modal.counts.unstable == 1);
    } else {
      CHECK(std::abs(growth) <= 1e-12 * std::sqrt(w2));
      CHECK(r.eig.values(0).imag() == doctest::Approx(std::sqrt(w2)).epsilon(1e-12));
      CHECK(r.modal.counts.unstable == 0);
    }
  }
}

}  // namespace rollsim
