#include "rollsim/models/double_pendulum.hpp"

#include <algorithm>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/hybrid/outputs.hpp"

namespace rollsim::double_pendulum {

namespace {

const Signals& state_signals() {
  static const Signals s{
      {"theta1", "rad", "first link's angle from the downward vertical"},
      {"theta2", "rad", "second link's angle from the downward vertical"},
      Signal{"omega1", "rad/s", "first link's angular velocity"}.as(Role::Rate),
      Signal{"omega2", "rad/s", "second link's angular velocity"}.as(Role::Rate),
      Signal{"dissipated_energy", "J", "energy dissipated by the joint dampers since the start (integrated)"}.as(
          Role::Dissipation),
  };
  return s;
}

/// What the outputs share at one state.
template <class S>
struct OutputContext {
  S kinetic, potential, dissipated, tip_x, tip_y;
};
using Outputs = OutputList<OutputContext, double, Linearizable::AD>;

const Outputs& outputs() {
  using O = Outputs;
  static const O list{{
      O::output("kinetic_energy", "J", "kinetic energy T", [](const auto& c) { return c.kinetic; })
          .as(Role::KineticEnergy),
      O::output("potential_energy", "J", "potential energy V (zero at the pivot's height)",
                [](const auto& c) { return c.potential; })
          .as(Role::PotentialEnergy),
      O::output("total_energy", "J", "T + V", [](const auto& c) { return c.kinetic + c.potential; })
          .as(Role::TotalEnergy),
      O::output("energy_with_dissipated", "J", "T + V + dissipated_energy, constant",
                [](const auto& c) { return c.kinetic + c.potential + c.dissipated; })
          .as(Role::Ledger),
      O::output("tip_x", "m", "second mass, horizontal from the pivot", [](const auto& c) { return c.tip_x; }),
      O::output("tip_y", "m", "second mass, vertical from the pivot (up)", [](const auto& c) { return c.tip_y; }),
  }};
  return list;
}

template <class S>
OutputContext<S> context(const Params& p, const S* x) {
  using std::cos;
  using std::sin;
  const double m1 = p.mass1, m2 = p.mass2, l1 = p.length1, l2 = p.length2;
  OutputContext<S> c;
  c.kinetic = 0.5 * (m1 + m2) * l1 * l1 * x[2] * x[2] + m2 * l1 * l2 * cos(x[0] - x[1]) * x[2] * x[3] +
              0.5 * m2 * l2 * l2 * x[3] * x[3];
  c.potential = -(m1 + m2) * p.gravity * l1 * cos(x[0]) - m2 * p.gravity * l2 * cos(x[1]);
  c.dissipated = x[4];
  c.tip_x = l1 * sin(x[0]) + l2 * sin(x[1]);
  c.tip_y = -l1 * cos(x[0]) - l2 * cos(x[1]);
  return c;
}

class PendulumSystem final : public HybridSystem, public Linearizable {
 public:
  PendulumSystem(const Params& p, const double* x0) : p_(p) {
    std::copy(x0, x0 + 4, x0_);
    x0_[4] = 0;
  }
  std::string model_name() const override { return "double_pendulum"; }
  const Signals& states() const override { return state_signals(); }
  const Signals& outputs() const override { return double_pendulum::outputs().signals(); }
  void initial_state(double* x0) const override { std::copy(x0_, x0_ + kStates, x0); }
  void rhs(double, const double* x, int, double* xdot) const override { double_pendulum::rhs(p_, x, 0.0, xdot); }
  bool energy_ledger(double, const double* x, int, EnergyLedger& e) const override {
    const auto c = context(p_, x);
    e.energy = c.kinetic + c.potential;
    e.dissipated = x[4];
    e.dissipated_state = 4;
    // V is measured from the pivot: T + V is 0 for links released at its height, and small while T and |V| are not.
    e.scale = std::abs(c.kinetic) + std::abs(c.potential) + std::abs(e.dissipated);
    return true;
  }
  void compute_outputs(double, const double* x, int, double* y) const override {
    double_pendulum::outputs().compute(context(p_, x), y);
  }

  // Linearizable: the same templated equations with AD scalars; the input is a torque at the pivot.
  const Signals& inputs() const override {
    static const Signals s{{"pivot_torque", "N m", "torque on the first link at the pivot (0 in a run)"}};
    return s;
  }
  std::vector<double> input_values() const override { return {0.0}; }
  void rhs_ad(const AD* x, const AD* u, AD* xdot) const override { double_pendulum::rhs(p_, x, u[0], xdot); }
  void signals_ad(const AD* x, const AD*, AD* y) const override {
    for (int i = 0; i < kStates; ++i) y[i] = x[i];
    double_pendulum::outputs().compute(context(p_, x), y + kStates);
  }
  int degrees_of_freedom() const override { return 2; }
  std::vector<std::string> default_linear_outputs() const override { return {"theta1"}; }
  std::unique_ptr<HybridSystem> starting_at(const double* x0) const override {
    return std::make_unique<PendulumSystem>(p_, x0);
  }

 private:
  Params p_;
  double x0_[kStates];
};

std::vector<KeySpec> schema(const std::map<std::string, std::string>&) {
  std::vector<KeySpec> v = parameters().keys();
  for (auto& k : initial_values().keys()) v.push_back(std::move(k));
  v.push_back(string_key("title", "", {}, "a title for plots and reports"));
  for (auto& k : smooth_model_keys()) v.push_back(std::move(k));
  return v;
}

}  // namespace

const Parameters<Params>& parameters() {
  static const Parameters<Params> list{
      "double_pendulum parameters",
      {
          param(&Params::mass1, real_key("parameters.mass1", "kg", "first (inner) point mass m1").positive()),
          param(&Params::mass2, real_key("parameters.mass2", "kg", "second (outer) point mass m2").positive()),
          param(&Params::length1, real_key("parameters.length1", "m", "first link length l1 (pivot to m1)").positive()),
          param(&Params::length2, real_key("parameters.length2", "m", "second link length l2 (m1 to m2)").positive()),
          param(&Params::gravity, real_key("parameters.gravity", "m/s^2", "gravitational acceleration g").non_negative()),
          param(&Params::damping1,
                real_key("parameters.damping1", "N m s", "viscous damping c1 at the pivot: torque -c1 theta1'").non_negative()),
          param(&Params::damping2, real_key("parameters.damping2", "N m s",
                                            "viscous damping c2 at the elbow: torque -c2 (theta2' - theta1')")
                                       .non_negative()),
      }};
  return list;
}

const Parameters<InitialState>& initial_values() {
  static const Parameters<InitialState> list{
      "double_pendulum initial values",
      {
          element<InitialState>(0, real_key("initial.theta1", "rad", "first link's angle from the downward vertical")),
          element<InitialState>(1, real_key("initial.theta2", "rad", "second link's angle from the downward vertical")),
          element<InitialState>(2, real_key("initial.omega1", "rad/s", "first link's angular velocity")),
          element<InitialState>(3, real_key("initial.omega2", "rad/s", "second link's angular velocity")),
      }};
  return list;
}

std::unique_ptr<HybridSystem> make_system(const Params& p, const double* x0) {
  return std::make_unique<PendulumSystem>(p, x0);
}

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "double_pendulum";
  e.description = "damped double pendulum: two point masses on massless links, viscous joint damping";
  e.schema = schema;
  e.make_system = [](const Scenario& sc) {
    const InitialState x0 = initial_values().read(sc);
    return make_system(parameters().read(sc), x0.data());
  };
  return e;
}

}  // namespace rollsim::double_pendulum
