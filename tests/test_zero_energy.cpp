// Runs whose stored energy starts at zero (docs/audit.md, "The energy scale"): a spring-mass driven from rest, a
// pendulum released at the height of its pivot (IFToMM A01, as a smooth model and as a DAE), a belt oscillator
// (Filippov user model) and a block pushed from rest on a floor (contact engine with a gap). Each runs through
// its self-audit, with its physics checked against closed forms, and reports a relative drift against its
// energy scale. The audit still fails a model that breaks its ledger from such a start.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "support.hpp"

namespace rollsim {

namespace {

constexpr double kPi = 3.14159265358979323846;

/// The index of a state or output by name: states first, outputs after them.
struct EnergyColumns {
  std::vector<std::string> states, outputs;
  explicit EnergyColumns(const Scenario& sc) {
    auto sys = build_system(sc);
    for (const auto& s : sys->states()) states.push_back(s.name);
    for (const auto& s : sys->outputs()) outputs.push_back(s.name);
  }
  /// The value of `name` in a state vector x and an output vector y.
  double of(const std::vector<double>& x, const std::vector<double>& y, const std::string& name) const {
    for (std::size_t i = 0; i < states.size(); ++i)
      if (states[i] == name) return x[i];
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i] == name) return y[i];
    FAIL("no signal " << name);
    return NAN;
  }
  double at(const test::Run& r, std::size_t k, const std::string& name) const { return of(r.rec.x[k], r.rec.y[k], name); }
  /// A state of an event record (events carry the state only).
  double state(const std::vector<double>& x, const std::string& name) const {
    for (std::size_t i = 0; i < states.size(); ++i)
      if (states[i] == name) return x[i];
    FAIL("no state " << name);
    return NAN;
  }
};

/// The run finished, its audit (with the energy balance) passed, and its relative drift (a summary item of every
/// form but the DAE) is the drift over its energy scale: below drift_factor rtol, not the 1.0 that a scale of
/// max |h| = 0 gave.
void check_audited(const test::Run& r, double drift_factor = 100, bool has_drift_rel = true, double rtol = 1e-10) {
  CAPTURE(r.result.message);
  REQUIRE(r.result.status == "ok");
  const auto* audit = r.item("audit");
  REQUIRE(audit);
  CHECK(audit->text.rfind("passed", 0) == 0);
  CHECK(audit->text.find("energy balance") != std::string::npos);
  CHECK(r.summary("audit_balance_use") < 1);
  CHECK((r.item("energy_drift_rel") != nullptr) == has_drift_rel);
  if (r.item("energy_drift_rel")) {
    INFO("energy_drift_abs " << r.summary("energy_drift_abs") << ", energy_drift_rel " << r.summary("energy_drift_rel"));
    CHECK(r.summary("energy_drift_rel") < drift_factor * rtol);
  }
}

/// The first event of a kind (nullptr if none).
const EventRecord* first_event(const test::Run& r, const std::string& kind) {
  for (const auto& e : r.rec.events)
    if (e.kind == kind) return &e;
  return nullptr;
}

/// The root of f in [a, b] (f(a), f(b) of opposite signs), by bisection to round-off.
double bisect(const std::function<double(double)>& f, double a, double b) {
  double fa = f(a);
  for (int i = 0; i < 200 && b - a > 1e-15 * std::max(1.0, std::abs(b)); ++i) {
    const double m = 0.5 * (a + b), fm = f(m);
    if ((fm > 0) == (fa > 0)) {
      a = m;
      fa = fm;
    } else {
      b = m;
    }
  }
  return 0.5 * (a + b);
}

}  // namespace

// ---- a smooth user model: the forced spring-mass from rest ------------------------------------------------

TEST_CASE("zero energy: a spring-mass driven by F0 sin(w t) from rest at x = 0 follows the closed form, audited") {
  // m x'' + k x = F0 sin(w t), x(0) = x'(0) = 0: x = F0/(m (w0^2 - w^2)) (sin(w t) - (w/w0) sin(w0 t)), w0^2 = k/m.
  // At t = 0, T = V = W_Q = 0 and the force is 0: every energy is zero.
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 2.0
k = 8.0
F0 = 3.0
w = 1.5
[coordinates]
x = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2"
potential = "1/2*k*x^2"
forces = { x = "F0*sin(w*t)" }
[simulation]
t_end = 10
output_dt = 0.01
)toml";
  const double m = 2, k = 8, F0 = 3, w = 1.5, w0 = std::sqrt(k / m);
  auto x_exact = [&](double t) { return F0 / (m * (w0 * w0 - w * w)) * (std::sin(w * t) - w / w0 * std::sin(w0 * t)); };
  for (const std::string method : {"adams", "bdf", "erk", "dopri5", "dop853"}) {
    CAPTURE(method);
    const test::Run r = test::run_text(text, {"solver.method=" + method});
    check_audited(r, method == "bdf" ? 1000 : 100);  // BDF's energy drifts ~100 rtol over these 10 s
    const EnergyColumns c(r.scenario);
    double worst = 0, work_max = 0;
    for (std::size_t i = 0; i < r.rec.t.size(); ++i) {
      worst = std::max(worst, std::abs(c.at(r, i, "x") - x_exact(r.rec.t[i])));
      work_max = std::max(work_max, std::abs(c.at(r, i, "work_forces")));
    }
    INFO("largest |x - closed form| = " << worst << " m");
    CHECK(worst < 1e-7);
    // The work went into T + V: h = W_Q at the end, to the integration error of the energy scale.
    const std::size_t last = r.rec.t.size() - 1;
    CHECK(std::abs(c.at(r, last, "energy") - c.at(r, last, "work_forces")) < 1e-7 * work_max);
    CHECK(work_max > 0.1);  // the force did work: the run is not trivially at rest
  }
}

// ---- a smooth user model and a DAE: the pendulum released at the pivot's height (IFToMM A01) -----------------

namespace {

/// The quarter period of a pendulum released at 90 degrees: sqrt(l/g) K(1/sqrt 2), K the complete elliptic
/// integral of the first kind (K(1/sqrt 2) = Gamma(1/4)^2 / (4 sqrt(pi))).
double quarter_period(double l, double g) { return std::sqrt(l / g) * 1.8540746773013719; }

}  // namespace

TEST_CASE("zero energy: a pendulum released horizontally, V from the pivot, swings through the bottom at sqrt(2 g l)") {
  // phi from the horizontal: V = m g l sin(phi) = 0 and T = 0 at the start, and T + V = 0 throughout.
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
l = 1.0
g = 9.81
[coordinates]
phi = "rad"
[lagrangian]
kinetic = "1/2*m*l^2*der(phi)^2"
potential = "m*g*l*sin(phi)"
[events.bottom]
when = "phi + pi/2"
direction = "falling"
[events.turn]
when = "der(phi)"
direction = "rising"
[simulation]
t_end = 2.5
output_dt = 0.01
)toml";
  const double m = 1, l = 1, g = 9.81;
  const test::Run r = test::run_text(text);
  check_audited(r);
  const EnergyColumns c(r.scenario);
  const EventRecord* bottom = first_event(r, "bottom");
  REQUIRE(bottom);
  CHECK(bottom->t == doctest::Approx(quarter_period(l, g)).epsilon(1e-8));
  CHECK(-l * c.state(bottom->x, "der_phi") == doctest::Approx(std::sqrt(2 * g * l)).epsilon(1e-8));
  double worst = 0;
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) worst = std::max(worst, std::abs(c.at(r, i, "energy")));
  INFO("largest |T + V| = " << worst << " J");
  CHECK(worst < 100 * 1e-10 * m * g * l);
  // It comes to rest at the other side, phi = -pi, at half a period.
  const EventRecord* turn = first_event(r, "turn");
  REQUIRE(turn);
  CHECK(turn->t == doctest::Approx(2 * quarter_period(l, g)).epsilon(1e-8));
  CHECK(c.state(turn->x, "phi") == doctest::Approx(-kPi).epsilon(1e-8));
}

TEST_CASE("zero energy: the A01 pendulum in Cartesian coordinates (DAE) from the pivot's height") {
  // A point mass on a rod of length l held by x^2 + y^2 = l^2, released at (l, 0) at rest: V = m g y = 0, T = 0.
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
l = 1.0
g = 9.81
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "1/2*m*(der(x)^2 + der(y)^2)"
potential = "m*g*y"
[constraints.rod]
expression = "x^2 + y^2 - l^2"
[events.bottom]
when = "x"
direction = "falling"
[initial]
x = 1.0
y = 0.0
[simulation]
t_end = 1.5
output_dt = 0.01
)toml";
  const double m = 1, l = 1, g = 9.81;
  const test::Run r = test::run_text(text);
  // The DAE's ledger is h - W_Q + P - W_C (its works are states); its summary has no relative drift.
  check_audited(r, 100, /*has_drift_rel=*/false);
  const EnergyColumns c(r.scenario);
  const EventRecord* bottom = first_event(r, "bottom");
  REQUIRE(bottom);
  CHECK(bottom->t == doctest::Approx(quarter_period(l, g)).epsilon(1e-8));
  const double speed = std::hypot(c.state(bottom->x, "der_x"), c.state(bottom->x, "der_y"));
  CHECK(speed == doctest::Approx(std::sqrt(2 * g * l)).epsilon(1e-8));
  double worst = 0;
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) worst = std::max(worst, std::abs(c.at(r, i, "energy")));
  INFO("largest |T + V| = " << worst << " J");
  CHECK(worst < 100 * 1e-10 * m * g * l);
}

// ---- a Filippov user model: the belt oscillator --------------------------------------------------------------

namespace {

/// A mass on a spring over a belt moving at vb, with Coulomb friction mu m g on the slip w = x' - vb.
const char* kBelt = R"toml(model = "lagrangian"
[parameters]
m = 1.0
k = 4.0
mu = 0.3
g = 10.0
vb = 0.5
[coordinates]
x = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2"
potential = "1/2*k*x^2"
[contacts.belt]
slip_velocity = "der(x) - vb"
normal_force = "m*g"
friction_coefficient = "mu"
[simulation]
t_end = 4
output_dt = 0.01
)toml";

}  // namespace

TEST_CASE("zero energy: a belt oscillator stuck to the belt at x = 0 slips where k x = mu N, then follows the closed form") {
  // Stuck, x = vb t until the spring force k x reaches mu N: t_s = mu N/(k vb) = 1.5 s at x_e = mu N/k = 0.75 m.
  // Then the mass slips back (w < 0, friction +mu N): x = x_e + (vb/w0) sin(w0 (t - t_s)), w0 = sqrt(k/m) = 2,
  // until w returns to 0 at t_s + 2 pi/w0 (after t_end). The spring force and V are zero at the start.
  const double m = 1, k = 4, mu = 0.3, g = 10, vb = 0.5, N = m * g, xe = mu * N / k, w0 = std::sqrt(k / m);
  const double ts = mu * N / (k * vb);
  const test::Run r = test::run_text(kBelt, {"initial_rates.x=0.5"});
  check_audited(r);
  CHECK(r.item("symbols")->text == "0-");
  const EventRecord* slip = first_event(r, "slip");
  REQUIRE(slip);
  CHECK(slip->t == doctest::Approx(ts).epsilon(1e-9));
  const EnergyColumns c(r.scenario);
  CHECK(c.state(slip->x, "x") == doctest::Approx(xe).epsilon(1e-9));
  double worst = 0;
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) {
    const double t = r.rec.t[i];
    const double exact = t <= ts ? vb * t : xe + vb / w0 * std::sin(w0 * (t - ts));
    worst = std::max(worst, std::abs(c.at(r, i, "x") - exact));
  }
  INFO("largest |x - closed form| = " << worst << " m");
  CHECK(worst < 1e-8);
}

TEST_CASE("zero energy: a belt oscillator at rest at x = 0 (T = V = D = 0) is dragged, sticks and slips as the closed form says") {
  // At rest on the moving belt: w = -vb < 0, so friction +mu N drags the mass: x = x_e (1 - cos(w0 t)) until its
  // speed x_e w0 sin(w0 t) reaches vb, where it sticks (t_1 = asin(vb/(x_e w0))/w0); stuck, it moves with the belt
  // until k x = mu N again, x = x_e, at t_2 = t_1 + (x_e - x(t_1))/vb, and slips back. The same contact with a
  // static friction coefficient (equal to mu) runs on the contact engine, a moving surface whose work is a state.
  const double m = 1, k = 4, mu = 0.3, g = 10, vb = 0.5, N = m * g, xe = mu * N / k, w0 = std::sqrt(k / m);
  const double t1 = std::asin(vb / (xe * w0)) / w0, x1 = xe * (1 - std::cos(w0 * t1)), t2 = t1 + (xe - x1) / vb;
  for (const bool engine : {false, true}) {
    CAPTURE(engine);
    const test::Run r =
        engine ? test::run_text(kBelt, {"contacts.belt.static_friction_coefficient=0.3"}) : test::run_text(kBelt);
    check_audited(r);
    const auto* symbols = r.item(engine ? "symbols_belt" : "symbols");
    REQUIRE(symbols);
    CHECK(symbols->text.rfind("-0-", 0) == 0);
    const EventRecord* stick = first_event(r, "stick");
    const EventRecord* slip = first_event(r, "slip");
    REQUIRE(stick);
    REQUIRE(slip);
    CHECK(stick->t == doctest::Approx(t1).epsilon(1e-9));
    CHECK(slip->t == doctest::Approx(t2).epsilon(1e-9));
    const EnergyColumns c(r.scenario);
    CHECK(c.state(stick->x, "x") == doctest::Approx(x1).epsilon(1e-9));
    CHECK(c.state(slip->x, "x") == doctest::Approx(xe).epsilon(1e-9));
  }
}

// ---- the contact engine: a block pushed from rest on a floor (a gap) -----------------------------------------

TEST_CASE("zero energy: a block at rest on a floor (contact engine, a gap) slips where F0 sin(w t) = mu m g") {
  // The block rests on the floor at y = 0 (V = m g y = 0, T = 0), pushed along x by F0 sin(w t) from 0. It sticks
  // until F0 sin(w t) = mu m g, t_s = asin(mu m g/F0)/w, then slides: v = F0/(m w) (cos(w t_s) - cos(w t)) -
  // mu g (t - t_s) until v returns to zero, with the normal force m g throughout.
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
mu = 0.5
F0 = 10.0
w = 2.0
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "1/2*m*(der(x)^2 + der(y)^2)"
potential = "m*g*y"
forces = { x = "F0*sin(w*t)" }
[contacts.floor]
gap = "y"
slip_velocity = "der(x)"
friction_coefficient = "mu"
[simulation]
t_end = 2
output_dt = 0.01
)toml";
  const double m = 1, g = 9.81, mu = 0.5, F0 = 10, w = 2;
  const double ts = std::asin(mu * m * g / F0) / w;
  auto v_exact = [&](double t) { return F0 / (m * w) * (std::cos(w * ts) - std::cos(w * t)) - mu * g * (t - ts); };
  auto x_exact = [&](double t) {
    return F0 / (m * w) * (std::cos(w * ts) * (t - ts) - (std::sin(w * t) - std::sin(w * ts)) / w) -
           0.5 * mu * g * (t - ts) * (t - ts);
  };
  // The slide ends where v returns to zero (after the force's maximum at t = pi/(2 w)).
  const double te = bisect(v_exact, kPi / (2 * w), kPi / w + 1);
  const test::Run r = test::run_text(text);
  check_audited(r);
  const EnergyColumns c(r.scenario);
  const EventRecord* slip = first_event(r, "slip");
  REQUIRE(slip);
  CHECK(slip->t == doctest::Approx(ts).epsilon(1e-9));
  // The end of the forward slide: the next event of the contact (a stick, or a reversal into sliding back).
  const EventRecord* end = nullptr;
  for (const auto& e : r.rec.events)
    if (e.t > slip->t + 1e-9) {
      end = &e;
      break;
    }
  REQUIRE(end);
  CHECK(end->t == doctest::Approx(te).epsilon(1e-8));
  double worst = 0, worst_y = 0, worst_n = 0;
  for (std::size_t i = 0; i < r.rec.t.size(); ++i) {
    const double t = r.rec.t[i];
    const double exact = t <= ts ? 0.0 : t <= te ? x_exact(t) : NAN;
    if (!std::isnan(exact)) worst = std::max(worst, std::abs(c.at(r, i, "x") - exact));
    worst_y = std::max(worst_y, std::abs(c.at(r, i, "y")));
    worst_n = std::max(worst_n, std::abs(c.at(r, i, "normal_force_floor") - m * g));
  }
  INFO("largest |x - closed form| = " << worst << " m, |y| = " << worst_y << " m, |N - m g| = " << worst_n << " N");
  CHECK(worst < 1e-8);
  CHECK(worst_y < 1e-9);
  CHECK(worst_n < 1e-6);
}

// ---- the audit still fails a broken ledger from a zero start -------------------------------------------------

namespace {

/// x'' + x = sin t from rest with the work W' = sin(t) x' + leak: E = (x^2 + x'^2)/2 - W, zero at the start. With
/// leak = 0 the ledger balances; a leak creates energy. `dissipating`: a ledger whose D (no state of its own)
/// falls from zero while E + D balances.
class ForcedFromRest final : public OdeSystem {
 public:
  double leak = 0;
  bool dissipating = false;
  std::string model_name() const override { return "forced_from_rest"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x0) const override { x0[0] = x0[1] = x0[2] = 0; }
  void rhs(double t, const double* x, int, double* f) const override {
    f[0] = x[1];
    f[1] = -x[0] + std::sin(t);
    f[2] = std::sin(t) * x[1] + leak;
  }
  bool energy_ledger(double, const double* x, int, EnergyLedger& e) const override {
    const double T = 0.5 * x[1] * x[1], V = 0.5 * x[0] * x[0];
    e.energy = T + V - x[2];
    e.dissipated = 0;
    e.scale = T + V + std::abs(x[2]);
    if (dissipating) {  // D = -1e-3 W: it falls as the force does work
      e.dissipated = -1e-3 * x[2];
      e.energy -= e.dissipated;
    }
    return true;
  }
  void compute_outputs(double, const double*, int, double*) const override {}

 private:
  Signals s_{{"x", "1", ""}, {"v", "1", ""}, {"work", "1", ""}}, o_;
};

SimulationOptions options(double t_end) {
  SimulationOptions opt;
  opt.t_end = t_end;
  opt.output_dt = 0.1;
  return opt;
}

double message_time(const std::string& msg) {
  const auto p = msg.find("t = ");
  return p == std::string::npos ? NAN : std::strtod(msg.c_str() + p + 4, nullptr);
}

}  // namespace

TEST_CASE("zero energy: the audit passes a balanced ledger from a zero start and fails a leaking one") {
  ForcedFromRest sys;
  SUBCASE("balanced: passes, with the energy balance audited") {
    const RunResult r = simulate(sys, options(10), {});
    CAPTURE(r.message);
    CHECK(r.status == "ok");
    double use = NAN;
    for (const auto& i : r.summary)
      if (i.key == "audit_balance_use") use = i.number;
    CHECK(use < 1);
  }
  SUBCASE("a leak of 1e-6 per unit time from the start fails at once, against an atol-sized floor") {
    // In the first steps the energies reached are of the order of the leak itself, so the tolerance is the floor:
    // the work's absolute tolerance (|dE/dW| atol = 1e-12; x and v are near zero), 10 per step.
    sys.leak = 1e-6;
    const RunResult r = simulate(sys, options(10), {});
    CAPTURE(r.message);
    CHECK(r.status == "audit_failure");
    CHECK(r.message.find("energy balance E + D = const") != std::string::npos);
    CHECK(message_time(r.message) < 0.01);
    const auto p = r.message.find("absolute floor ");
    REQUIRE(p != std::string::npos);
    const double floor = std::strtod(r.message.c_str() + p + 15, nullptr);
    CHECK(floor >= 1e-12);
    CHECK(floor < 1.01e-12);
  }
  SUBCASE("a dissipated energy that falls from zero fails the dissipation rule") {
    sys.dissipating = true;
    const RunResult r = simulate(sys, options(10), {});
    CAPTURE(r.message);
    CHECK(r.status == "audit_failure");
    CHECK(r.message.find("the dissipated energy decreased") != std::string::npos);
    CHECK(message_time(r.message) < 0.1);
  }
}

}  // namespace rollsim
