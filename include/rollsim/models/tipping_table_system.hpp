#pragma once
/// \file The wheel on the tipping table as a runnable system (ODE formulation), and its scenario keys.
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>

#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/models/tipping_table.hpp"
#include "rollsim/scenario/parameters.hpp"

namespace rollsim::tipping_table {

/// What the run does at each event.
struct EventActions {
  bool stop_at_edge = true;
  bool stop_at_lift_off = true;
  bool stop_at_slip_onset = false;
};

/// The initial state [theta1, theta2, omega1, omega2].
using InitialState = std::array<double, kStates>;

/// The [parameters] keys, each declared once and bound to its member of Params: the schema, the reader and
/// typed access by name (parameters().set(p, "wheel_mass", 2.0)) come from these.
const Parameters<Params>& parameters();
/// The [initial] keys, bound to the elements of the initial state.
const Parameters<InitialState>& initial_values();

/// Parameters and initial state read from a validated scenario (throws InputError on inconsistent values).
Params params_from(const Scenario& sc);
void initial_from(const Scenario& sc, const Params& p, double* x0);
/// The [events] keys, bound to EventActions: table_edge, lift_off and slip_onset; with formulation = "contact"
/// table_edge only, recorded by default.
const Parameters<EventActions>& event_parameters(bool contact);
/// The event actions of a validated scenario (of either formulation: a key it lacks keeps EventActions{}'s value).
EventActions actions_from(const Scenario& sc);

/// The system, in the minimal coordinates of (1.3)-(1.4).
std::unique_ptr<HybridSystem> make_system(const Params& p, const double* x0, const EventActions& actions);

/// The states of the minimal (ODE) formulation: theta1, theta2, omega1, omega2 (the DAE's columns use them too).
const Signals& state_signals();
/// What the table's outputs share at one state: every formulation fills it from its own coordinates (a field
/// no formulation sets stays NaN, and the test comparing the formulations by name fails).
template <class S>
struct OutputContext {
  S s = S(NAN);                   ///< contact position [m]
  S normal = S(NAN);              ///< contact forces [N]
  S tangential = S(NAN);
  S kinetic = S(NAN);             ///< energies [J]
  S potential = S(NAN);
  S input_work = S(NAN);          ///< tau (theta1 - theta1(0)) [J]
  S constraint_normal = S(NAN);   ///< the constrained formulation's residuals [m]
  S constraint_rolling = S(NAN);
};
using Outputs = OutputList<OutputContext, double, Linearizable::AD>;
/// The outputs of the minimal formulation; the constrained one extends them (tipping_table_dae.cpp).
const Outputs& outputs();
/// The friction demand's window in the summary: friction_demand_max_loaded is the largest |T_c|/N while
/// N >= this fraction of the wheel's weight m_w g.
inline constexpr double kDemandWindowFraction = 0.1;

/// The table's summary (energy drift, smallest N, the friction demand's supremum and its largest value while
/// N >= kDemandWindowFraction m_w g, both located exactly between points, event times). \param minimal the
/// positions of theta1, theta2, omega1, omega2 in the system's state; \param outputs the system's outputs (the
/// summary reads its columns by name).
std::unique_ptr<Summarizer> make_table_summarizer(const Params& p, const std::array<int, kStates>& minimal,
                                                  const Signals& outputs);

/// The conserved quantity T + V - tau theta1 [J] (the torque's work is counted).
double energy_with_input(const Params& p, const double* x);

/// The table's drawing (docs/scene.md), every formulation's: the hinge's stand (ground), the table top (a box whose
/// top face is the line the wheel rolls on, through the hinge: the table's frame e1 = (cos theta1, sin theta1),
/// e2 = (-sin theta1, cos theta1)), the wheel (a disk turned by theta2, its marked radius along e1 at theta2 = 0)
/// and the contact with its force on the wheel. World x right, y up, origin at the hinge.
Scene table_scene(const Params& p);
/// One sample of table_scene: the table angle, the wheel's centre and absolute rotation, the contact point and the
/// contact force on the wheel (world coordinates; NaN where there is no contact).
void table_scene_values(const Params& p, double theta1, const double* wheel, double theta2, const double* contact,
                        const double* force, double* v);

/// The drawing of a formulation that keeps the wheel on the table (the ODE and the DAE), from its states theta1,
/// theta2 (and wheel_x, wheel_y where it has them, else the centre s e1 + r e2 of docs/equations.md §1) and its
/// outputs contact_position s, normal_force N and tangential_force T_c: the contact at s e1, the force T_c e1 + N e2.
class RollingTableScene : public SceneSystem {
 public:
  RollingTableScene(const Params& p, const Signals& states, const Signals& outputs);
  /// Built at the first call (a file that draws the scene), not with the system: a sweep builds a system per point
  /// and draws none.
  const Scene& scene() const override;
  void scene_values(double t, const double* x, const double* y, int mode, double* v) const override;

 private:
  Params p_;
  mutable std::once_flag scene_built_;
  mutable Scene scene_;
  std::size_t theta1_, theta2_, s_, normal_, tangential_;
  std::optional<std::size_t> wheel_x_, wheel_y_;
};

ModelEntry model_entry();

}  // namespace rollsim::tipping_table
