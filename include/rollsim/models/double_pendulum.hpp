#pragma once
/// \file A damped double pendulum in a vertical plane: two point masses m1, m2 on massless rigid links of lengths
/// l1, l2, the first hinged at a fixed pivot, the second at the first mass; viscous damping c1 at the pivot
/// (torque -c1 theta1') and c2 at the elbow (torque -c2 (theta2' - theta1') on link 2, its reaction on link 1);
/// gravity g. theta1, theta2 are the links' absolute angles from the downward vertical.
///
/// Lagrange's equations, with d = theta1 - theta2:
///   M(d) [theta1'', theta2'']^T = b,
///   M = [[(m1+m2) l1^2, m2 l1 l2 cos d], [m2 l1 l2 cos d, m2 l2^2]],
///   b1 = -m2 l1 l2 sin d theta2'^2 - (m1+m2) g l1 sin theta1 - c1 theta1' + c2 (theta2' - theta1') + tau,
///   b2 =  m2 l1 l2 sin d theta1'^2 - m2 g l2 sin theta2 - c2 (theta2' - theta1'),
/// with tau a torque at the pivot: the linearisation's input, 0 in a run. The energy E = T + V,
///   T = 1/2 (m1+m2) l1^2 theta1'^2 + m2 l1 l2 cos d theta1' theta2' + 1/2 m2 l2^2 theta2'^2,
///   V = -(m1+m2) g l1 cos theta1 - m2 g l2 cos theta2   (zero at the pivot's height),
/// falls at the rate the dampers dissipate, P = c1 theta1'^2 + c2 (theta2' - theta1')^2; the state carries the
/// dissipated energy D (D' = P), so that E + D is conserved (the self-audit's energy ledger).
/// State: theta1 rad, theta2 rad, omega1 rad/s, omega2 rad/s, dissipated_energy J.
#include <array>
#include <cmath>
#include <memory>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/scenario/parameters.hpp"

namespace rollsim::double_pendulum {

struct Params {
  double mass1 = 1.0, mass2 = 1.0;      ///< m1, m2 [kg]
  double length1 = 1.0, length2 = 1.0;  ///< l1, l2 [m]
  double gravity = 9.81;                ///< g [m/s^2]
  double damping1 = 0.0, damping2 = 0.0;  ///< c1 (pivot), c2 (elbow) [N m s]
};

inline constexpr int kStates = 5;

/// x' = f(x) with pivot torque tau. \param x [theta1, theta2, omega1, omega2, D]; \param xdot out, dim kStates.
template <class S>
void rhs(const Params& p, const S* x, S tau, S* xdot) {
  using std::cos;
  using std::sin;
  const double m1 = p.mass1, m2 = p.mass2, l1 = p.length1, l2 = p.length2, g = p.gravity;
  const S d = x[0] - x[1], c = cos(d), s = sin(d);
  const S w1 = x[2], w2 = x[3], rel = w2 - w1;
  const double a = (m1 + m2) * l1 * l1, e = m2 * l2 * l2;
  const S b = m2 * l1 * l2 * c;
  const S r1 = -m2 * l1 * l2 * s * w2 * w2 - (m1 + m2) * g * l1 * sin(x[0]) - p.damping1 * w1 + p.damping2 * rel + tau;
  const S r2 = m2 * l1 * l2 * s * w1 * w1 - m2 * g * l2 * sin(x[1]) - p.damping2 * rel;
  const S det = a * e - b * b;  // = m2 l1^2 l2^2 (m1 + m2 sin^2 d) > 0
  xdot[0] = w1;
  xdot[1] = w2;
  xdot[2] = (e * r1 - b * r2) / det;
  xdot[3] = (a * r2 - b * r1) / det;
  xdot[4] = p.damping1 * w1 * w1 + p.damping2 * rel * rel;
}

/// The runnable system. \param x0 [theta1, theta2, omega1, omega2]; the dissipated energy starts at 0.
std::unique_ptr<HybridSystem> make_system(const Params& p, const double* x0);

ModelEntry model_entry();

/// The [initial] state [theta1 rad, theta2 rad, omega1 rad/s, omega2 rad/s].
using InitialState = std::array<double, 4>;
/// The [parameters] keys, each declared once and bound to its member of Params (whose initializers are the
/// defaults).
const Parameters<Params>& parameters();
/// The [initial] keys, bound to the elements of the initial state.
const Parameters<InitialState>& initial_values();

}  // namespace rollsim::double_pendulum
