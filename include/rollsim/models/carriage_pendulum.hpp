#pragma once
/// \file A carriage on a spring with a pendulum (lecture notes, exercise 4:14), in body coordinates with
/// a rod-length constraint, as a constrained (DAE) system for IDA.
///
/// A carriage (mass m_c) slides without friction along a horizontal line, tied to a fixed point by a
/// linear spring k (unstretched at x = 0) and pushed by a constant force F along the line. A ball
/// (mass m) hangs from it on a massless inextensible rod of length l; phi is the rod's angle from the
/// downward vertical. Coordinates q = [x m, bx m, by m]: the carriage position and the ball position
/// (x right, y up, origin at the carriage's rest position). Velocities v = q', multiplier lambda [N].
/// State x = [q, v, lambda], dim 7. Constraint:
///   C = ((bx - x)^2 + by^2 - l^2) / (2 l) = 0,   so that lambda is a force:
/// G^T lambda puts lambda along the rod, outwards, on the ball: the rod tension is -lambda.
/// Minimal form (the notes' result): with M = [[m + m_c, m l cos phi], [m l cos phi, m l^2]],
///   M [x'', phi'']^T = [F - k x + m l phi'^2 sin phi, -m g l sin phi]^T.
/// `formulation = "ode"` integrates this minimal form on CVODE (state [x, phi, x', phi']); it is the form
/// `rollsim linearize` and `rollsim check growth` use. `formulation = "dae"` (the default) is the body form.
#include <array>
#include <cmath>
#include <memory>

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/scenario/parameters.hpp"

namespace rollsim::carriage_pendulum {

struct Params {
  double carriage_mass = 1.0;     ///< m_c [kg]
  double bob_mass = 0.5;          ///< m [kg]
  double rod_length = 1.0;        ///< l [m]
  double spring_stiffness = 10.0; ///< k [N/m]
  double gravity = 9.81;          ///< g [m/s^2]
  double force = 0.0;             ///< F [N], constant, along the carriage's line
};

struct BodyModel {
  static constexpr int nq = 3, nc = 1;
  Params p;

  template <class S>
  void mass(const S*, S* M) const {
    for (int i = 0; i < nq * nq; ++i) M[i] = S(0.0);
    M[0] = S(p.carriage_mass);
    M[1 + nq] = S(p.bob_mass);
    M[2 + 2 * nq] = S(p.bob_mass);
  }
  template <class S>
  void applied_forces(double, const S* q, const S*, S* Q) const {
    Q[0] = p.force - p.spring_stiffness * q[0];
    Q[1] = S(0.0);
    Q[2] = S(-p.bob_mass * p.gravity);
  }
  template <class S>
  void constraints(const S* q, S* C) const {
    const S dx = q[1] - q[0];
    C[0] = (dx * dx + q[2] * q[2] - p.rod_length * p.rod_length) / (2.0 * p.rod_length);
  }
  template <class S>
  void constraint_jacobian(const S* q, S* G) const {
    const S dx = q[1] - q[0];
    G[0] = -dx / p.rod_length;
    G[1] = dx / p.rod_length;
    G[2] = q[2] / p.rod_length;
  }
  template <class S>
  void constraint_bias(const S*, const S* v, S* b) const {
    const S dvx = v[1] - v[0];
    b[0] = (dvx * dvx + v[2] * v[2]) / p.rod_length;
  }
};

inline constexpr int kStates = 7;
inline constexpr int kMinimalStates = 4;  ///< [x m, phi rad, x' m/s, phi' rad/s]

/// The minimal form's accelerations [x'', phi''] at the minimal state x with force F (the model input).
template <class S>
void minimal_accelerations(const Params& p, const S* x, S force, S* acc) {
  using std::cos;
  using std::sin;
  const double m = p.bob_mass, l = p.rod_length;
  const S c = cos(x[1]), s = sin(x[1]);
  const double m11 = m + p.carriage_mass, m22 = m * l * l;
  const S m12 = m * l * c;
  const S b1 = force - p.spring_stiffness * x[0] + m * l * x[3] * x[3] * s;
  const S b2 = -m * p.gravity * l * s;
  const S det = m11 * m22 - m12 * m12;  // = m l^2 (m_c + m sin^2 phi) > 0
  acc[0] = (m22 * b1 - m12 * b2) / det;
  acc[1] = (m11 * b2 - m12 * b1) / det;
}

/// x' = f(x, F) of the minimal form.
template <class S>
void minimal_rhs(const Params& p, const S* x, S force, S* xdot) {
  S acc[2];
  minimal_accelerations(p, x, force, acc);
  xdot[0] = x[2];
  xdot[1] = x[3];
  xdot[2] = acc[0];
  xdot[3] = acc[1];
}

/// Rod tension [N] (positive pulls the ball towards the carriage) at the minimal state, from the ball's
/// acceleration along the rod: T = m (l phi'^2 - x'' sin phi) + m g cos phi.
template <class S>
S minimal_tension(const Params& p, const S* x, S force) {
  using std::cos;
  using std::sin;
  S acc[2];
  minimal_accelerations(p, x, force, acc);
  return p.bob_mass * (p.rod_length * x[3] * x[3] - acc[0] * sin(x[1])) + p.bob_mass * p.gravity * cos(x[1]);
}

/// Kinetic energy [J] at the minimal state: 1/2 m_c x'^2 + 1/2 m (x'^2 + 2 l cos phi x' phi' + l^2 phi'^2).
template <class S>
S minimal_kinetic_energy(const Params& p, const S* x) {
  using std::cos;
  const double l = p.rod_length;
  return 0.5 * p.carriage_mass * x[2] * x[2] +
         0.5 * p.bob_mass * (x[2] * x[2] + 2.0 * l * cos(x[1]) * x[2] * x[3] + l * l * x[3] * x[3]);
}

/// Potential energy [J] at the minimal state: 1/2 k x^2 - m g l cos phi (gravity zero at the carriage's height).
template <class S>
S minimal_potential_energy(const Params& p, const S* x) {
  using std::cos;
  return 0.5 * p.spring_stiffness * x[0] * x[0] - p.bob_mass * p.gravity * p.rod_length * cos(x[1]);
}

/// Body state with a consistent multiplier from the minimal state [x, phi, x', phi'].
void body_state(const Params& p, const DaeOptions& o, const double* minimal, double* x);

/// \param minimal0 initial [x m, phi rad, x' m/s, phi' rad/s]; \param stop_at_slack end the run when the rod tension
/// falls through zero (an inextensible string would go slack there).
std::unique_ptr<HybridSystem> make_system(const Params& p, const double* minimal0, const DaeOptions& o,
                                          bool stop_at_slack);

/// The minimal form on CVODE (formulation = "ode"), linearisable. \param minimal0 as for make_system.
std::unique_ptr<HybridSystem> make_minimal_system(const Params& p, const double* minimal0, bool stop_at_slack);

/// The minimal state [x m, phi rad, x' m/s, phi' rad/s], as the [initial] keys give it.
using MinimalState = std::array<double, kMinimalStates>;

/// The [parameters] keys, each declared once and bound to its member of Params (whose initializers are the
/// defaults): the schema, the reader and typed access by name come from these.
const Parameters<Params>& parameters();
/// The [initial] keys, bound to the elements of the minimal state.
const Parameters<MinimalState>& initial_values();

ModelEntry model_entry();

}  // namespace rollsim::carriage_pendulum
