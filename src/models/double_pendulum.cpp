#include "rollsim/models/double_pendulum.hpp"

#include <algorithm>

#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/models/model_kit.hpp"

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

/// The physics, from which the model kit derives the system, the schema and the entry (models/model_kit.hpp).
struct Pendulum {
  static constexpr const char* name = "double_pendulum";
  static constexpr const char* description =
      "damped double pendulum: two point masses on massless links, viscous joint damping";
  using Params = double_pendulum::Params;
  using Initial = InitialState;
  static constexpr int kStates = double_pendulum::kStates, kDegreesOfFreedom = 2;
  static constexpr auto parameters = &double_pendulum::parameters;
  static constexpr auto initial_values = &double_pendulum::initial_values;
  static constexpr auto states = &state_signals;
  static constexpr auto outputs = &double_pendulum::outputs;
  /// The linearisation's input: a torque at the pivot, 0 in a run.
  static const Signals& inputs() {
    static const Signals s{{"pivot_torque", "N m", "torque on the first link at the pivot (0 in a run)"}};
    return s;
  }
  static std::vector<double> input_values(const Params&) { return {0.0}; }
  template <class S>
  static OutputContext<S> context(const Params& p, const S* x, const S*) {
    return double_pendulum::context(p, x);
  }
  template <class S>
  static void rhs(const Params& p, const S* x, const S* u, S* xdot) {
    double_pendulum::rhs(p, x, u[0], xdot);
  }
  /// The dissipated energy starts at 0.
  static void start(const Params&, const Initial& x0, double* x) {
    std::copy(x0.begin(), x0.end(), x);
    x[4] = 0;
  }
  static bool energy_ledger(const Params& p, const double* x, EnergyLedger& e) {
    const auto c = double_pendulum::context(p, x);
    e.energy = c.kinetic + c.potential;
    e.dissipated = x[4];
    e.dissipated_state = 4;
    // V is measured from the pivot: T + V is 0 for links released at its height, and small while T and |V| are not.
    e.scale = std::abs(c.kinetic) + std::abs(c.potential) + std::abs(e.dissipated);
    return true;
  }
  static std::vector<std::string> default_linear_outputs() { return {"theta1"}; }
  /// The pivot (ground), the links from the pivot through m1 to m2, the masses and m2's path; x right, y up, the
  /// pivot at the origin (the outputs tip_x, tip_y are m2's position).
  static Scene scene(const Params& p) {
    const double dot = kMassSize * (p.length1 + p.length2);
    return {2,
            {draw::ground(draw::point("pivot", 0.5 * dot, "#7f7f7f")), draw::line("links", 3, 0, "#404040"),
             draw::point("mass1", dot, "#1f77b4"), draw::point("mass2", dot, "#ff7f0e"), draw::trail("path2", "#ff7f0e")}};
  }
  static void scene_values(const Params& p, const double* x, double* v) {
    const auto c = double_pendulum::context(p, x);
    const double x1 = p.length1 * std::sin(x[0]), y1 = -p.length1 * std::cos(x[0]);
    SceneValues(v).point(0, 0).point(0, 0).point(x1, y1).point(c.tip_x, c.tip_y).point(x1, y1).point(c.tip_x, c.tip_y)
        .point(c.tip_x, c.tip_y);
  }
  /// A mass's drawn radius as a fraction of the pendulum's reach l1 + l2.
  static constexpr double kMassSize = 0.04;
};

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
  return kit::SmoothModel<Pendulum>::make_system(p, {x0[0], x0[1], x0[2], x0[3]});
}

ModelEntry model_entry() { return kit::SmoothModel<Pendulum>::entry(); }

}  // namespace rollsim::double_pendulum
