#include "rollsim/models/carriage_pendulum.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "rollsim/models/constrained_mechanics.hpp"

namespace rollsim::carriage_pendulum {

namespace {

static_assert(mechanics::state_size<BodyModel>() == kStates);

enum State { kX, kBx, kBy, kV, kBvx, kBvy, kLam };
enum Out { kOx, kOphi, kOxd, kOphid, kTension, kKin, kPot, kTot, kWork, kConstraint, kOutputs };

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

const Signals& output_signals() {
  static const Signals s{
      {"x", "m", "carriage position (minimal coordinate)"},
      {"phi", "rad", "rod angle from the downward vertical (minimal coordinate)"},
      {"x_dot", "m/s", "carriage velocity"},
      {"phi_dot", "rad/s", "rod angular velocity"},
      {"rod_tension", "N", "tension in the rod (positive pulls the ball towards the carriage)"},
      {"kinetic_energy", "J", "kinetic energy"},
      {"potential_energy", "J", "spring and gravity potential energy (gravity zero at the carriage's height)"},
      {"total_energy", "J", "kinetic + potential"},
      {"input_work", "J", "work done by the force F since the start, F (x - x(0))"},
      {"constraint_length", "m", "rod-length constraint residual C = (|d|^2 - l^2) / (2 l) (drift)"},
  };
  return s;
}

class CarriageSummarizer final : public Summarizer {
 public:
  void on_point(double, const double*, const double* y, int) override {
    const double e = y[kTot] - y[kWork];
    if (!have_) {
      e0_ = e;
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(e - e0_));
    tmin_ = std::min(tmin_, y[kTension]);
    cmax_ = std::max(cmax_, std::abs(y[kConstraint]));
  }
  void on_event(double t, const std::string& kind, int, int, const double*) override {
    if (kind == "rod_slack" && std::isnan(t_slack_)) t_slack_ = t;
  }
  std::vector<SummaryItem> items() const override {
    return {
        {"energy_initial", e0_, "", "J", "initial energy (T + V)", false},
        {"energy_drift_abs", drift_, "", "J", "largest energy drift (input work counted)", false},
        {"rod_tension_min", tmin_, "", "N", "smallest rod tension", false},
        {"constraint_length_max", cmax_, "", "m", "largest rod-length constraint residual", false},
        {"t_rod_slack", t_slack_, "", "s", "time the rod tension first falls through zero", false},
    };
  }

 private:
  bool have_ = false;
  double e0_ = 0, drift_ = 0, tmin_ = std::numeric_limits<double>::infinity(), cmax_ = 0, t_slack_ = NAN;
};

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
  std::vector<Witness> witnesses(int) const override { return {{"rod_slack", -1, stop_}}; }
  void witness_values(double, const double* x, int, double* g) const override { g[0] = -x[kLam]; }
  EventOutcome on_event(double, double*, int mode, int, int) const override {
    EventOutcome o;
    o.kind = "rod_slack";
    o.new_mode = mode;
    return o;
  }
  void compute_outputs(double, const double* x, int, double* y) const override {
    const Params& p = m_.p;
    const double dx = x[kBx] - x[kX], dy = x[kBy];
    const double dvx = x[kBvx] - x[kV], dvy = x[kBvy];
    y[kOx] = x[kX];
    y[kOphi] = std::atan2(dx, -dy);
    y[kOxd] = x[kV];
    y[kOphid] = (dx * dvy - dy * dvx) / (dx * dx + dy * dy);
    y[kTension] = -x[kLam];
    y[kKin] = 0.5 * p.carriage_mass * x[kV] * x[kV] + 0.5 * p.bob_mass * (x[kBvx] * x[kBvx] + x[kBvy] * x[kBvy]);
    y[kPot] = 0.5 * p.spring_stiffness * x[kX] * x[kX] + p.bob_mass * p.gravity * x[kBy];
    y[kTot] = y[kKin] + y[kPot];
    y[kWork] = p.force * (x[kX] - x0_[kX]);
    double c;
    m_.constraints(x, &c);
    y[kConstraint] = c;
  }
  std::unique_ptr<Summarizer> make_summarizer() const override { return std::make_unique<CarriageSummarizer>(); }

 private:
  bool stop_;
  double x0_[kStates];
};

std::vector<KeySpec> schema(const std::map<std::string, std::string>&) {
  const Params d;
  return {
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
      string_key("formulation", "dae", {"dae"}, "body coordinates with a rod-length constraint on IDA (the only one)"),
      string_key("solver.method", "bdf", {"bdf"}, "IDA integrates with variable-order BDF (the only choice)"),
      string_key("events.rod_slack", "record", {"stop", "record"},
                 "when the rod tension falls through zero: stop the run, or only record the event"),
      string_key("title", "", {}, "a title for plots and reports"),
  };
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
    DaeOptions o;
    o.stabilization_rate = sc.real("dae.stabilization_rate");
    return make_system(p, mn, o, sc.string("events.rod_slack") == "stop");
  };
  return e;
}

}  // namespace rollsim::carriage_pendulum
