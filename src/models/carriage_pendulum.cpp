#include "rollsim/models/carriage_pendulum.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "rollsim/analysis/compare.hpp"
#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/models/constrained_mechanics.hpp"

namespace rollsim::carriage_pendulum {

namespace {

static_assert(mechanics::state_size<BodyModel>() == kStates);

enum State { kX, kBx, kBy, kV, kBvx, kBvy, kLam };

/// What the outputs share at one state; each form fills it from its own coordinates (a field a form leaves
/// unset stays NaN, and the test comparing the forms by name fails).
template <class S>
struct OutputContext {
  S minimal[kMinimalStates] = {S(NAN), S(NAN), S(NAN), S(NAN)};  ///< [x, phi, x', phi'] (the body form's outputs)
  S tension = S(NAN), kinetic = S(NAN), potential = S(NAN), input_work = S(NAN);
  S constraint = S(NAN);  ///< the body form's rod-length residual
};
using Outputs = OutputList<OutputContext, double, Linearizable::AD>;

const Signals& state_signals() {
  static const Signals s{
      {"carriage_x", "m", "carriage position from the unstretched spring"},
      {"bob_x", "m", "ball position, horizontal"},
      {"bob_y", "m", "ball position, vertical (up)"},
      Signal{"carriage_v", "m/s", "carriage velocity"}.as(Role::Rate),
      Signal{"bob_vx", "m/s", "ball velocity, horizontal"}.as(Role::Rate),
      Signal{"bob_vy", "m/s", "ball velocity, vertical"}.as(Role::Rate),
      {"lambda_rod", "N", "multiplier of the rod-length constraint (= -rod_tension)"},
  };
  return s;
}

/// The minimal coordinates: the ODE's states, and the DAE's first outputs (named as the [initial] keys).
const Signals& minimal_signals() {
  static const Signals s{
      {"x", "m", "carriage position (minimal coordinate)"},
      {"phi", "rad", "rod angle from the downward vertical (minimal coordinate)"},
      Signal{"x_dot", "m/s", "carriage velocity"}.as(Role::Rate),
      Signal{"phi_dot", "rad/s", "rod angular velocity"}.as(Role::Rate),
  };
  return s;
}

/// The outputs of both forms: the minimal form's outputs.
const Outputs& shared_outputs() {
  using O = Outputs;
  static const O list{{
      O::output("rod_tension", "N", "tension in the rod (positive pulls the ball towards the carriage)",
                [](const auto& c) { return c.tension; }),
      O::output("kinetic_energy", "J", "kinetic energy", [](const auto& c) { return c.kinetic; })
          .as(Role::KineticEnergy),
      O::output("potential_energy", "J",
                "spring and gravity potential energy (gravity zero at the carriage's height)",
                [](const auto& c) { return c.potential; })
          .as(Role::PotentialEnergy),
      O::output("total_energy", "J", "kinetic + potential", [](const auto& c) { return c.kinetic + c.potential; })
          .as(Role::TotalEnergy),
      O::output("input_work", "J", "work done by the force F since the start, F (x - x(0))",
                [](const auto& c) { return c.input_work; })
          .as(Role::InputWork),
  }};
  return list;
}

/// The body form's outputs: the minimal coordinates (named as the [initial] keys), every shared output, the drift.
const Outputs& body_outputs() {
  using O = Outputs;
  static const O list = [] {
    const Signals& m = minimal_signals();
    std::vector<O::Output> head{
        O::output(m[0].name, m[0].unit, m[0].description, [](const auto& c) { return c.minimal[0]; }),
        O::output(m[1].name, m[1].unit, m[1].description, [](const auto& c) { return c.minimal[1]; }),
        O::output(m[2].name, m[2].unit, m[2].description, [](const auto& c) { return c.minimal[2]; }),
        O::output(m[3].name, m[3].unit, m[3].description, [](const auto& c) { return c.minimal[3]; }),
    };
    return O(std::move(head))
        .extended(shared_outputs())
        .extended({O::output("constraint_length", "m",
                             "rod-length constraint residual C = (|d|^2 - l^2) / (2 l) (drift)",
                             [](const auto& c) { return c.constraint; })});
  }();
  return list;
}

/// Energy drift, smallest rod tension, the constraint drift (body form) and the slack time; the columns by name.
class CarriageSummarizer final : public Summarizer {
 public:
  explicit CarriageSummarizer(const Outputs& outputs)
      : total_(outputs.index("total_energy")),
        work_(outputs.index("input_work")),
        tension_(outputs.index("rod_tension")) {
    const Signals& s = outputs.signals();
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i].name == "constraint_length") constraint_ = static_cast<int>(i);
  }
  void on_point(double, const double*, const double* y, int) override {
    const double e = y[total_] - y[work_];
    if (!have_) {
      e0_ = e;
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(e - e0_));
    tmin_ = std::min(tmin_, y[tension_]);
    if (constraint_ >= 0) cmax_ = std::max(cmax_, std::abs(y[constraint_]));
  }
  void on_event(double t, const std::string& kind, int, int, const double*) override {
    if (kind == "rod_slack" && std::isnan(t_slack_)) t_slack_ = t;
  }
  std::vector<SummaryItem> items() const override {
    std::vector<SummaryItem> v{
        {"energy_initial", e0_, "", "J", "initial energy (T + V)", false},
        {"energy_drift_abs", drift_, "", "J", "largest energy drift (input work counted)", false},
        {"rod_tension_min", tmin_, "", "N", "smallest rod tension", false},
    };
    if (constraint_ >= 0)
      v.push_back({"constraint_length_max", cmax_, "", "m", "largest rod-length constraint residual", false});
    v.push_back({"t_rod_slack", t_slack_, "", "s", "time the rod tension first falls through zero", false});
    return v;
  }

 private:
  std::size_t total_, work_, tension_;
  int constraint_ = -1;
  bool have_ = false;
  double e0_ = 0, drift_ = 0, tmin_ = std::numeric_limits<double>::infinity(), cmax_ = 0, t_slack_ = NAN;
};

/// The drawn carriage's half length and the ball's radius as fractions of the rod's length; the spring's fixed end
/// lies one rod length left of the carriage's rest position.
constexpr double kCarriageSize = 0.15, kBallSize = 0.06;

/// The rail and the spring's anchor (ground), the spring, the carriage, the rod and the ball; x right, y up, the
/// origin at the carriage's rest position (the body coordinates' frame).
Scene carriage_scene(const Params& p) {
  const double l = p.rod_length, half = kCarriageSize * l;
  return {2,
          {draw::ground(draw::line("rail", 2, 0, "#7f7f7f")), draw::ground(draw::line("anchor", 2, 0, "#7f7f7f")),
           draw::spring("spring", "#2ca02c"), draw::box("carriage", {half, 0.5 * half, half}, "#8c564b"),
           draw::line("rod", 2, 0, "#404040"), draw::point("ball", kBallSize * l, "#1f77b4")}};
}

/// One sample of carriage_scene: the carriage at x, the ball at (bx, by).
void carriage_scene_values(const Params& p, double x, double bx, double by, double* v) {
  const double l = p.rod_length, half = kCarriageSize * l;
  SceneValues(v)
      .point(-2 * l, -0.5 * half).point(2 * l, -0.5 * half)
      .point(-l, -half).point(-l, half)
      .spring(-l, 0, x - half, 0, 0.25 * half)
      .planar_pose(x, 0, 0)
      .point(x, 0).point(bx, by)
      .point(bx, by);
}

const Witness& slack_witness(bool stop) {
  static const Witness w[2] = {{"rod_slack", -1, false}, {"rod_slack", -1, true}};
  return w[stop ? 1 : 0];
}

class CarriageSystem final : public mechanics::ConstrainedSystem<BodyModel>, public WitnessSystem, public SceneSystem {
 public:
  CarriageSystem(const Params& p, const double* minimal0, const DaeOptions& o, bool stop)
      : ConstrainedSystem(BodyModel{p}, o.stabilization_rate), stop_(stop), scene_(carriage_scene(p)) {
    body_state(p, o, minimal0, x0_);
  }
  std::string model_name() const override { return "carriage_pendulum"; }
  const Signals& states() const override { return state_signals(); }
  const Signals& outputs() const override { return body_outputs().signals(); }
  void initial_state(double* x0) const override { std::copy(x0_, x0_ + kStates, x0); }
  std::vector<Witness> witnesses(int) const override { return {slack_witness(stop_)}; }
  std::size_t witness_count(int) const override { return 1; }
  void witness_values(double, const double* x, int, double* g) const override { g[0] = -x[kLam]; }
  void compute_outputs(double, const double* x, int, double* y) const override {
    const Params& p = m_.p;
    const double dx = x[kBx] - x[kX], dy = x[kBy];
    const double dvx = x[kBvx] - x[kV], dvy = x[kBvy];
    OutputContext<double> c;
    c.minimal[0] = x[kX];
    c.minimal[1] = std::atan2(dx, -dy);
    c.minimal[2] = x[kV];
    c.minimal[3] = (dx * dvy - dy * dvx) / (dx * dx + dy * dy);
    c.tension = -x[kLam];
    c.kinetic = 0.5 * p.carriage_mass * x[kV] * x[kV] + 0.5 * p.bob_mass * (x[kBvx] * x[kBvx] + x[kBvy] * x[kBvy]);
    c.potential = 0.5 * p.spring_stiffness * x[kX] * x[kX] + p.bob_mass * p.gravity * x[kBy];
    c.input_work = p.force * (x[kX] - x0_[kX]);
    m_.constraints(x, &c.constraint);
    body_outputs().compute(c, y);
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<CarriageSummarizer>(body_outputs());
  }
  const Scene& scene() const override { return scene_; }
  void scene_values(double, const double* x, const double*, int, double* v) const override {
    carriage_scene_values(m_.p, x[kX], x[kBx], x[kBy], v);
  }

 private:
  bool stop_;
  Scene scene_;
  double x0_[kStates];
};

/// The minimal form on CVODE; linearisable, with the force F as its input.
class MinimalSystem final : public OdeSystem, public WitnessSystem, public Linearizable, public SceneSystem {
 public:
  MinimalSystem(const Params& p, const double* x0, bool stop) : p_(p), stop_(stop), scene_(carriage_scene(p)) {
    std::copy(x0, x0 + kMinimalStates, x0_);
  }
  std::string model_name() const override { return "carriage_pendulum"; }
  const Signals& states() const override { return minimal_signals(); }
  const Signals& outputs() const override { return shared_outputs().signals(); }
  void initial_state(double* x0) const override { std::copy(x0_, x0_ + kMinimalStates, x0); }
  void rhs(double, const double* x, int, double* xdot) const override { minimal_rhs(p_, x, p_.force, xdot); }
  bool jacobian(double, const double* x, int, double* J) const override {
    using ADn = Eigen::AutoDiffScalar<Eigen::Matrix<double, kMinimalStates, 1>>;
    ADn xa[kMinimalStates], fa[kMinimalStates];
    for (int i = 0; i < kMinimalStates; ++i) xa[i] = ADn(x[i], kMinimalStates, i);
    minimal_rhs(p_, xa, ADn(p_.force), fa);
    for (int i = 0; i < kMinimalStates; ++i)
      for (int j = 0; j < kMinimalStates; ++j) J[i + kMinimalStates * j] = fa[i].derivatives()[j];
    return true;
  }
  std::vector<Witness> witnesses(int) const override { return {slack_witness(stop_)}; }
  std::size_t witness_count(int) const override { return 1; }
  void witness_values(double, const double* x, int, double* g) const override {
    g[0] = minimal_tension(p_, x, p_.force);
  }
  void compute_outputs(double, const double* x, int, double* y) const override {
    shared_outputs().compute(context(x, p_.force), y);
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<CarriageSummarizer>(shared_outputs());
  }

  // Linearizable
  const Signals& inputs() const override {
    static const Signals s{{"force", "N", "constant force F on the carriage along its line"}};
    return s;
  }
  std::vector<double> input_values() const override { return {p_.force}; }
  void rhs_ad(const AD* x, const AD* u, AD* xdot) const override { minimal_rhs(p_, x, u[0], xdot); }
  void signals_ad(const AD* x, const AD* u, AD* y) const override {
    for (int i = 0; i < kMinimalStates; ++i) y[i] = x[i];
    shared_outputs().compute(context(x, u[0]), y + kMinimalStates);
  }
  int degrees_of_freedom() const override { return 2; }
  std::vector<std::string> default_linear_outputs() const override { return {"x"}; }
  /// The ball at x + l sin phi, -l cos phi (phi from the downward vertical).
  const Scene& scene() const override { return scene_; }
  void scene_values(double, const double* x, const double*, int, double* v) const override {
    carriage_scene_values(p_, x[0], x[0] + p_.rod_length * std::sin(x[1]), -p_.rod_length * std::cos(x[1]), v);
  }

 private:
  /// The outputs' shared values at the minimal state x with force F.
  template <class S>
  OutputContext<S> context(const S* x, S force) const {
    OutputContext<S> c;
    c.tension = minimal_tension(p_, x, force);
    c.kinetic = minimal_kinetic_energy(p_, x);
    c.potential = minimal_potential_energy(p_, x);
    c.input_work = force * (x[0] - x0_[0]);
    return c;
  }

  Params p_;
  bool stop_;
  Scene scene_;
  double x0_[kMinimalStates];
};

}  // namespace

const Parameters<Params>& parameters() {
  static const Parameters<Params> list{
      "carriage_pendulum parameters",
      {
          param(&Params::carriage_mass, real_key("parameters.carriage_mass", "kg", "carriage mass m_c").positive()),
          param(&Params::bob_mass, real_key("parameters.bob_mass", "kg", "ball mass m").positive()),
          param(&Params::rod_length, real_key("parameters.rod_length", "m", "rod length l").positive()),
          param(&Params::spring_stiffness,
                real_key("parameters.spring_stiffness", "N/m", "spring constant k").non_negative()),
          param(&Params::gravity,
                real_key("parameters.gravity", "m/s^2", "gravitational acceleration g").non_negative()),
          param(&Params::force, real_key("parameters.force", "N", "constant external force F on the carriage")),
      }};
  return list;
}

const Parameters<MinimalState>& initial_values() {
  static const Parameters<MinimalState> list{
      "carriage_pendulum initial values",
      {
          element<MinimalState>(0, real_key("initial.x", "m", "carriage position")),
          element<MinimalState>(1, real_key("initial.phi", "rad", "rod angle from the downward vertical")),
          element<MinimalState>(2, real_key("initial.x_dot", "m/s", "carriage velocity")),
          element<MinimalState>(3, real_key("initial.phi_dot", "rad/s", "rod angular velocity")),
      }};
  return list;
}

namespace {

/// What the run does at an event: stop or only record it.
struct EventKeys {
  bool stop_at_slack = false;
};

const Parameters<EventKeys>& event_parameters() {
  static const Parameters<EventKeys> list{
      "carriage_pendulum [events] keys",
      {event_action(&EventKeys::stop_at_slack, "events.rod_slack",
                    "when the rod tension falls through zero: stop the run, or only record the event")}};
  return list;
}

std::vector<KeySpec> schema(const std::map<std::string, std::string>& raw) {
  const auto f = raw.find("formulation");
  const bool dae = f == raw.end() || f->second == "dae";
  std::vector<KeySpec> v = parameters().keys();
  for (auto& k : initial_values().keys()) v.push_back(std::move(k));
  for (auto& k : std::vector<KeySpec>{
      dae_parameters().key("dae.stabilization_rate"),
      KeyVariant(formulation_parameters().key("formulation"))
          .only_choices({"dae", "ode"})
          .with_default(std::string("dae"))
          .with_description("dae: body coordinates with a rod-length constraint on IDA; ode: the minimal form on CVODE"),
      event_parameters().key("events.rod_slack"),
      output_parameters().key("title"),
  })
    v.push_back(std::move(k));
  if (dae) v.push_back(dae_solver_method_key(""));
  for (auto& k : smooth_model_keys()) v.push_back(std::move(k));
  for (auto& k : formulation_check_keys()) v.push_back(std::move(k));
  return v;
}

}  // namespace

void body_state(const Params& p, const DaeOptions& o, const double* mn, double* x) {
  const double l = p.rod_length, s = std::sin(mn[1]), c = std::cos(mn[1]);
  x[kX] = mn[0];
  x[kBx] = mn[0] + l * s;
  x[kBy] = -l * c;
  x[kV] = mn[2];
  x[kBvx] = mn[2] + l * c * mn[3];
  x[kBvy] = l * s * mn[3];
  mechanics::consistent_multipliers(BodyModel{p}, 0.0, o.stabilization_rate, x);
}

std::unique_ptr<HybridSystem> make_system(const Params& p, const double* minimal0, const DaeOptions& o,
                                          bool stop_at_slack) {
  return std::make_unique<CarriageSystem>(p, minimal0, o, stop_at_slack);
}

std::unique_ptr<HybridSystem> make_minimal_system(const Params& p, const double* minimal0, bool stop_at_slack) {
  return std::make_unique<MinimalSystem>(p, minimal0, stop_at_slack);
}

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "carriage_pendulum";
  e.description = "carriage on a spring with a pendulum (exercise 4:14), body coordinates with a rod constraint";
  e.schema = schema;
  e.make_system = [](const Scenario& sc) {
    const Params p = parameters().read(sc);
    const MinimalState mn = initial_values().read(sc);
    const bool stop = event_parameters().read(sc).stop_at_slack;
    if (formulation_of(sc) == FormulationChoice::Ode) return make_minimal_system(p, mn.data(), stop);
    return make_system(p, mn.data(), dae_parameters().read(sc), stop);
  };
  return e;
}

}  // namespace rollsim::carriage_pendulum
