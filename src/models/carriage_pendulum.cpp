#include "rollsim/models/carriage_pendulum.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "rollsim/analysis/compare.hpp"
#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/models/constrained_mechanics.hpp"

namespace rollsim::carriage_pendulum {

namespace {

static_assert(mechanics::state_size<BodyModel>() == kStates);

enum State { kX, kBx, kBy, kV, kBvx, kBvy, kLam };
enum DaeOut { kOx, kOphi, kOxd, kOphid };  // the DAE's outputs start with the minimal state
/// Offsets within the outputs both forms share (after the minimal state in the DAE's outputs).
enum Shared { kTension, kKin, kPot, kTot, kWork, kShared };
constexpr int kDaeShared = kMinimalStates;           // where the shared outputs start in the DAE's outputs
constexpr int kDaeConstraint = kDaeShared + kShared;  // constraint_length, the DAE's last output

const Signals& state_signals() {
  static const Signals s{
      {"carriage_x", "m", "carriage position from the unstretched spring"},
      {"bob_x", "m", "ball position, horizontal"},
      {"bob_y", "m", "ball position, vertical (up)"},
      {"carriage_v", "m/s", "carriage velocity"},
      {"bob_vx", "m/s", "ball velocity, horizontal"},
      {"bob_vy", "m/s", "ball velocity, vertical"},
      {"lambda_rod", "N", "multiplier of the rod-length constraint (= -rod_tension)"},
  };
  return s;
}

/// The minimal coordinates: the ODE's states, and the DAE's first outputs (named as the [initial] keys).
const Signals& minimal_signals() {
  static const Signals s{
      {"x", "m", "carriage position (minimal coordinate)"},
      {"phi", "rad", "rod angle from the downward vertical (minimal coordinate)"},
      {"x_dot", "m/s", "carriage velocity"},
      {"phi_dot", "rad/s", "rod angular velocity"},
  };
  return s;
}

/// The outputs of both forms, in this order (Shared).
const Signals& shared_signals() {
  static const Signals s{
      {"rod_tension", "N", "tension in the rod (positive pulls the ball towards the carriage)"},
      {"kinetic_energy", "J", "kinetic energy"},
      {"potential_energy", "J", "spring and gravity potential energy (gravity zero at the carriage's height)"},
      {"total_energy", "J", "kinetic + potential"},
      {"input_work", "J", "work done by the force F since the start, F (x - x(0))"},
  };
  return s;
}

const Signals& output_signals() {
  static const Signals s = [] {
    Signals v = minimal_signals();
    for (const auto& sig : shared_signals()) v.push_back(sig);
    v.push_back({"constraint_length", "m", "rod-length constraint residual C = (|d|^2 - l^2) / (2 l) (drift)"});
    return v;
  }();
  return s;
}

/// \param shared index of the shared outputs in y; \param constraint index of constraint_length, or -1.
class CarriageSummarizer final : public Summarizer {
 public:
  CarriageSummarizer(int shared, int constraint) : at_(shared), constraint_(constraint) {}
  void on_point(double, const double*, const double* y, int) override {
    const double* o = y + at_;
    const double e = o[kTot] - o[kWork];
    if (!have_) {
      e0_ = e;
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(e - e0_));
    tmin_ = std::min(tmin_, o[kTension]);
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
  int at_, constraint_;
  bool have_ = false;
  double e0_ = 0, drift_ = 0, tmin_ = std::numeric_limits<double>::infinity(), cmax_ = 0, t_slack_ = NAN;
};

const Witness& slack_witness(bool stop) {
  static const Witness w[2] = {{"rod_slack", -1, false}, {"rod_slack", -1, true}};
  return w[stop ? 1 : 0];
}

EventOutcome slack_event(int mode) {
  EventOutcome o;
  o.kind = "rod_slack";
  o.new_mode = mode;
  return o;
}

class CarriageSystem final : public mechanics::ConstrainedSystem<BodyModel> {
 public:
  CarriageSystem(const Params& p, const double* minimal0, const DaeOptions& o, bool stop)
      : ConstrainedSystem(BodyModel{p}, o.stabilization_rate), stop_(stop) {
    body_state(p, o, minimal0, x0_);
  }
  std::string model_name() const override { return "carriage_pendulum"; }
  const Signals& states() const override { return state_signals(); }
  const Signals& outputs() const override { return output_signals(); }
  void initial_state(double* x0) const override { std::copy(x0_, x0_ + kStates, x0); }
  std::vector<Witness> witnesses(int) const override { return {slack_witness(stop_)}; }
  std::size_t witness_count(int) const override { return 1; }
  void witness_values(double, const double* x, int, double* g) const override { g[0] = -x[kLam]; }
  EventOutcome on_event(double, double*, int mode, int, int) const override { return slack_event(mode); }
  void compute_outputs(double, const double* x, int, double* y) const override {
    const Params& p = m_.p;
    const double dx = x[kBx] - x[kX], dy = x[kBy];
    const double dvx = x[kBvx] - x[kV], dvy = x[kBvy];
    y[kOx] = x[kX];
    y[kOphi] = std::atan2(dx, -dy);
    y[kOxd] = x[kV];
    y[kOphid] = (dx * dvy - dy * dvx) / (dx * dx + dy * dy);
    double* o = y + kDaeShared;
    o[kTension] = -x[kLam];
    o[kKin] = 0.5 * p.carriage_mass * x[kV] * x[kV] + 0.5 * p.bob_mass * (x[kBvx] * x[kBvx] + x[kBvy] * x[kBvy]);
    o[kPot] = 0.5 * p.spring_stiffness * x[kX] * x[kX] + p.bob_mass * p.gravity * x[kBy];
    o[kTot] = o[kKin] + o[kPot];
    o[kWork] = p.force * (x[kX] - x0_[kX]);
    double c;
    m_.constraints(x, &c);
    y[kDaeConstraint] = c;
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<CarriageSummarizer>(kDaeShared, kDaeConstraint);
  }

 private:
  bool stop_;
  double x0_[kStates];
};

/// The minimal form on CVODE; linearisable, with the force F as its input.
class MinimalSystem final : public HybridSystem, public Linearizable {
 public:
  MinimalSystem(const Params& p, const double* x0, bool stop) : p_(p), stop_(stop) {
    std::copy(x0, x0 + kMinimalStates, x0_);
  }
  std::string model_name() const override { return "carriage_pendulum"; }
  const Signals& states() const override { return minimal_signals(); }
  const Signals& outputs() const override { return shared_signals(); }
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
  EventOutcome on_event(double, double*, int mode, int, int) const override { return slack_event(mode); }
  void compute_outputs(double, const double* x, int, double* y) const override { shared_outputs(x, p_.force, y); }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<CarriageSummarizer>(0, -1);
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
    shared_outputs(x, u[0], y + kMinimalStates);
  }
  int degrees_of_freedom() const override { return 2; }
  std::vector<std::string> default_linear_outputs() const override { return {"x"}; }
  std::unique_ptr<HybridSystem> starting_at(const double* x0) const override {
    return std::make_unique<MinimalSystem>(p_, x0, stop_);
  }

 private:
  template <class S>
  void shared_outputs(const S* x, S force, S* o) const {
    o[kTension] = minimal_tension(p_, x, force);
    o[kKin] = minimal_kinetic_energy(p_, x);
    o[kPot] = minimal_potential_energy(p_, x);
    o[kTot] = o[kKin] + o[kPot];
    o[kWork] = force * (x[0] - x0_[0]);
  }

  Params p_;
  bool stop_;
  double x0_[kMinimalStates];
};

std::vector<KeySpec> schema(const std::map<std::string, std::string>& raw) {
  const Params d;
  const auto f = raw.find("formulation");
  const bool dae = f == raw.end() || f->second == "dae";
  std::vector<KeySpec> v{
      real_key("parameters.carriage_mass", "kg", "carriage mass m_c").with_default(d.carriage_mass).positive(),
      real_key("parameters.bob_mass", "kg", "ball mass m").with_default(d.bob_mass).positive(),
      real_key("parameters.rod_length", "m", "rod length l").with_default(d.rod_length).positive(),
      real_key("parameters.spring_stiffness", "N/m", "spring constant k")
          .with_default(d.spring_stiffness)
          .non_negative(),
      real_key("parameters.gravity", "m/s^2", "gravitational acceleration g").with_default(d.gravity).non_negative(),
      real_key("parameters.force", "N", "constant external force F on the carriage").with_default(d.force),
      real_key("initial.x", "m", "carriage position").with_default(0.0),
      real_key("initial.phi", "rad", "rod angle from the downward vertical").with_default(0.0),
      real_key("initial.x_dot", "m/s", "carriage velocity").with_default(0.0),
      real_key("initial.phi_dot", "rad/s", "rod angular velocity").with_default(0.0),
      real_key("dae.stabilization_rate", "1/s", "Baumgarte rate a: C'' + 2 a C' + a^2 C = 0")
          .with_default(DaeOptions{}.stabilization_rate)
          .non_negative(),
      string_key("formulation", "dae", {"dae", "ode"},
                 "dae: body coordinates with a rod-length constraint on IDA; ode: the minimal form on CVODE"),
      string_key("events.rod_slack", "record", {"stop", "record"},
                 "when the rod tension falls through zero: stop the run, or only record the event"),
      string_key("title", "", {}, "a title for plots and reports"),
  };
  if (dae) v.push_back(string_key("solver.method", "bdf", {"bdf"}, "IDA integrates with variable-order BDF (the only choice)"));
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
    Params p;
    p.carriage_mass = sc.real("parameters.carriage_mass");
    p.bob_mass = sc.real("parameters.bob_mass");
    p.rod_length = sc.real("parameters.rod_length");
    p.spring_stiffness = sc.real("parameters.spring_stiffness");
    p.gravity = sc.real("parameters.gravity");
    p.force = sc.real("parameters.force");
    const double mn[4] = {sc.real("initial.x"), sc.real("initial.phi"), sc.real("initial.x_dot"),
                          sc.real("initial.phi_dot")};
    const bool stop = sc.string("events.rod_slack") == "stop";
    if (sc.string("formulation") == "ode") return make_minimal_system(p, mn, stop);
    DaeOptions o;
    o.stabilization_rate = sc.real("dae.stabilization_rate");
    return make_system(p, mn, o, stop);
  };
  return e;
}

}  // namespace rollsim::carriage_pendulum
