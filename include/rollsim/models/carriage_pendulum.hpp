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
#include <cmath>
#include <memory>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/registry.hpp"

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

/// Options of the constrained formulation.
struct DaeOptions {
  double stabilization_rate = 20.0;  ///< Baumgarte rate a [1/s]
};

/// Body state with a consistent multiplier from the minimal state [x, phi, x', phi'].
void body_state(const Params& p, const DaeOptions& o, const double* minimal, double* x);

/// \param minimal0 initial [x m, phi rad, x' m/s, phi' rad/s]; \param stop_at_slack end the run when the rod tension
/// falls through zero (an inextensible string would go slack there).
std::unique_ptr<HybridSystem> make_system(const Params& p, const double* minimal0, const DaeOptions& o,
                                          bool stop_at_slack);

ModelEntry model_entry();

}  // namespace rollsim::carriage_pendulum
