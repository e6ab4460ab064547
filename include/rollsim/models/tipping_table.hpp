#pragma once
/// \file The wheel on the tipping table (IFToMM benchmark), general form of docs/equations.md §1.
/// A parameter struct plus free functions; every function is a template on the scalar type so that
/// the same code serves double, automatic differentiation and complex-step differentiation.
///
/// State x, dim 4: [theta1 rad, theta2 rad, omega1 rad/s, omega2 rad/s].
/// theta1: table angle from level; theta2: absolute wheel rotation. Both zero with the table level
/// and the wheel at the table centre. Contact position along the table s = r (theta1 - theta2).
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <type_traits>

#include "rollsim/core/store_pair.hpp"

namespace rollsim::tipping_table {

/// Inertia of a uniform disk about its centre, 1/2 m r^2 [kg m^2] (the default wheel inertia).
inline double uniform_disk_inertia(double mass, double radius) { return 0.5 * mass * radius * radius; }
/// Inertia of a thin plate about its middle, 1/12 m l^2 [kg m^2] (the default table inertia).
inline double thin_plate_inertia(double mass, double length) { return mass * length * length / 12.0; }

/// Physical parameters; the defaults are the IFToMM benchmark (uniform disk wheel, thin square plate table).
/// These initializers are the defaults of the scenario keys (parameters() in tipping_table_system.hpp).
struct Params {
  double wheel_mass = 1.0;            ///< m_w [kg]
  double wheel_radius = 0.25;         ///< r [m]
  double wheel_inertia = uniform_disk_inertia(wheel_mass, wheel_radius);  ///< J_w about the wheel centre [kg m^2]
  double table_mass = 1.0;            ///< [kg]; enters only through table_inertia
  double table_length = 1.0;          ///< l [m]
  double table_inertia = thin_plate_inertia(table_mass, table_length);  ///< I_t about the pivot [kg m^2]
  double gravity = 9.81;              ///< g [m/s^2]
  double table_torque = 0.0;          ///< constant torque on the table [N m], positive increases theta1
  std::optional<double> friction_coefficient;  ///< mu [-]; only the slip_onset witness uses it
};

inline constexpr int kStates = 4;

/// Contact position along the table, s = r (theta1 - theta2) [m].
template <class S>
S contact_position(const Params& p, const S* x) {
  return p.wheel_radius * (x[0] - x[1]);
}

/// cos and sin of an angle.
template <class S>
void cos_sin(const S& a, S& c, S& s) {
  using std::cos;
  using std::sin;
  c = cos(a);
  s = sin(a);
}

/// The same for a double, with the last angle's pair kept per thread: within a step the witnesses, the outputs
/// and the summaries all evaluate the state at the step's end, which the right-hand side has just evaluated.
/// The values are those of std::cos and std::sin (the angle is compared bit for bit, so -0 is not 0).
inline void cos_sin(double a, double& c, double& s) {
  thread_local std::uint64_t last_bits = ~std::uint64_t{0};  // a NaN's bits: no angle computed yet
  thread_local double last_c = 0, last_s = 0;
  const auto bits = std::bit_cast<std::uint64_t>(a);
  if (bits != last_bits) {
    last_c = std::cos(a);
    last_s = std::sin(a);
    last_bits = bits;
  }
  c = last_c;
  s = last_s;
}

}  // namespace rollsim::tipping_table

namespace Eigen {
template <typename DerivativeType>
class AutoDiffScalar;
}

namespace rollsim::tipping_table {

/// The same for a forward-mode derivative: the value's pair from the cache above, so that the derivatives of the
/// forces at a state (witness rates, the friction demand's rate, the Jacobian) cost no trigonometry of their own.
template <class D>
void cos_sin(const Eigen::AutoDiffScalar<D>& a, Eigen::AutoDiffScalar<D>& c, Eigen::AutoDiffScalar<D>& s) {
  double cv, sv;
  cos_sin(a.value(), cv, sv);
  c = Eigen::AutoDiffScalar<D>(cv, -sv * a.derivatives());
  s = Eigen::AutoDiffScalar<D>(sv, cv * a.derivatives());
}

/// Kinetic energy T [J].
template <class S>
S kinetic_energy(const Params& p, const S* x) {
  const S s = contact_position(p, x);
  const double r = p.wheel_radius;
  return 0.5 * p.table_inertia * x[2] * x[2] + 0.5 * p.wheel_inertia * x[3] * x[3] +
         0.5 * p.wheel_mass * (r * r * x[3] * x[3] + s * s * x[2] * x[2]);
}

/// Potential energy V [J], zero with the wheel centre at the pivot's height.
template <class S>
S potential_energy(const Params& p, const S* x) {
  S c, sn;
  cos_sin(x[0], c, sn);
  const S s = contact_position(p, x);
  return p.wheel_mass * p.gravity * (s * sn + p.wheel_radius * c);
}

/// Accelerations from Lagrange's equations of T and V with generalized force (table_torque, 0):
///   (I_t + m s^2) th1'' + m s r (th1'^2 - 2 th1' th2') + m g s cos th1 = tau
///   (J_w + m r^2) th2'' + m s r th1'^2 - m g r sin th1 = 0
/// The mass matrix is diagonal in these coordinates.
/// The same with cos theta1 and sin theta1 given (computed once by a caller that needs them too).
template <class S>
void accelerations(const Params& p, const S* x, S tau, const S& cos1, const S& sin1, S* acc) {
  const double m = p.wheel_mass, r = p.wheel_radius, g = p.gravity;
  const S s = contact_position(p, x);
  const S w1 = x[2], w2 = x[3];
  const S m11 = p.table_inertia + m * s * s;
  const double m22 = p.wheel_inertia + m * r * r;
  acc[0] = (tau - m * s * r * (w1 * w1 - 2.0 * w1 * w2) - m * g * s * cos1) / m11;
  acc[1] = (m * g * r * sin1 - m * s * r * w1 * w1) / m22;
}

template <class S>
void accelerations(const Params& p, const S* x, S tau, S* acc) {
  S c, s;
  cos_sin(x[0], c, s);
  accelerations(p, x, tau, c, s, acc);
}

/// Right-hand side x' = f(x, tau). \param tau table torque [N m] (the model input).
/// In double precision x' is stored in two pairs (store_pair), (theta1', theta2') and the two accelerations: with
/// dopri5 this took a fifth off the table's time (73 to 59 us a point of a sweep to the edge with the event times only,
/// `rollsim bench --sweep`), the accelerations' two quotients then formed in one packed division.
template <class S>
void rhs(const Params& p, const S* x, S tau, S* xdot) {
  S acc[2];
  accelerations(p, x, tau, acc);
  if constexpr (std::is_same_v<S, double>) {
    store_pair(xdot, x[2], x[3]);
    store_pair(xdot + 2, acc[0], acc[1]);
  } else {
    xdot[0] = x[2];
    xdot[1] = x[3];
    xdot[2] = acc[0];
    xdot[3] = acc[1];
  }
}

/// Contact force on the wheel from the table: normal N (along the table normal e2) and tangential T_c
/// (along e1, towards increasing s), both [N], from m_w p'' = F - m_w g y; with cos theta1, sin theta1 and the
/// accelerations given.
template <class S>
void forces_from(const Params& p, const S* x, const S& cos1, const S& sin1, const S* acc, S& normal, S& tangential) {
  const double m = p.wheel_mass, r = p.wheel_radius, g = p.gravity;
  const S s = contact_position(p, x);
  const S sd = r * (x[2] - x[3]);
  const S sdd = r * (acc[0] - acc[1]);
  const S w1 = x[2];
  normal = m * (2.0 * sd * w1 + s * acc[0] - r * w1 * w1) + m * g * cos1;
  tangential = m * (sdd - s * w1 * w1 - r * acc[0]) + m * g * sin1;
}

/// The contact forces N and T_c at state x with table torque tau.
template <class S>
void contact_forces(const Params& p, const S* x, S tau, S& normal, S& tangential) {
  S cos1, sin1;
  cos_sin(x[0], cos1, sin1);
  S acc[2];
  accelerations(p, x, tau, cos1, sin1, acc);
  forces_from(p, x, cos1, sin1, acc, normal, tangential);
}

/// The contact forces at x and their rates along x' = v (any direction; along the motion v = f(x)).
struct ForceRates {
  double n = 0, t = 0, n_rate = 0, t_rate = 0;
};

/// N and T as contact_forces computes them (forces_from: the same values bit for bit), and their derivatives in
/// the direction v by the chain rule through s, the angle's cosine and sine and the accelerations (tau held fixed).
/// A step's witness rates of the table with dopri5 took 240 instructions a call this way, 283 by forward-mode
/// differentiation of contact_forces with a dual-number type (callgrind, the per-thread cache's check included).
inline ForceRates contact_force_rates(const Params& p, const double* x, const double* v, double tau) {
  double c, sn;
  cos_sin(x[0], c, sn);
  double acc[2];
  accelerations(p, x, tau, c, sn, acc);
  ForceRates out;
  forces_from(p, x, c, sn, acc, out.n, out.t);
  const double m = p.wheel_mass, r = p.wheel_radius, g = p.gravity;
  const double s = contact_position(p, x);
  const double sd = r * (x[2] - x[3]);
  const double w1 = x[2], w2 = x[3];
  // The derivatives (suffix _d) of the quantities accelerations and forces_from form, in their order.
  const double s_d = r * (v[0] - v[1]), c_d = -sn * v[0], sn_d = c * v[0], w1_d = v[2], w2_d = v[3];
  const double m11 = p.table_inertia + m * s * s, m11_d = 2.0 * m * s * s_d;
  const double m22 = p.wheel_inertia + m * r * r;
  const double q = w1 * w1 - 2.0 * w1 * w2, q_d = 2.0 * (w1 * w1_d - w1_d * w2 - w1 * w2_d);
  // acc0 = (tau - m s r q - m g s c) / m11, acc1 = (m g r sn - m s r w1^2) / m22
  const double acc0_d = (-m * r * (s_d * q + s * q_d) - m * g * (s_d * c + s * c_d) - acc[0] * m11_d) / m11;
  const double acc1_d = (m * g * r * sn_d - m * r * (s_d * w1 * w1 + 2.0 * s * w1 * w1_d)) / m22;
  const double sd_d = r * (w1_d - w2_d), sdd_d = r * (acc0_d - acc1_d);
  out.n_rate = m * (2.0 * (sd_d * w1 + sd * w1_d) + s_d * acc[0] + s * acc0_d - 2.0 * r * w1 * w1_d) + m * g * c_d;
  out.t_rate = m * (sdd_d - s_d * w1 * w1 - 2.0 * s * w1 * w1_d - r * acc0_d) + m * g * sn_d;
  return out;
}

/// The inputs of a computation last made, kept bit for bit (-0 is not 0), so that a per-thread cache redoes it only
/// for other inputs.
template <std::size_t N>
class LastInputs {
 public:
  /// True when `key` is the inputs kept; else keeps `key` and returns false.
  bool same_or_keep(const double (&key)[N]) {
    bool same = true;
    for (std::size_t i = 0; i < N; ++i) same = same && std::bit_cast<std::uint64_t>(key[i]) == bits_[i];
    if (!same)
      for (std::size_t i = 0; i < N; ++i) bits_[i] = std::bit_cast<std::uint64_t>(key[i]);
    return same;
  }

 private:
  std::uint64_t bits_[N] = {~std::uint64_t{0}};  // a NaN's bits first: nothing computed yet
};

/// The same in double precision, with the last state's forces kept per thread: at a step's end the witnesses, the
/// step search, the outputs and the summary all ask for the forces the integrator's witnesses have just computed.
/// The key is every input bit for bit (the state, tau and the parameters the forces depend on), so the values are
/// those of the template above.
inline void contact_forces(const Params& p, const double* x, double tau, double& normal, double& tangential) {
  const double key[] = {x[0], x[1], x[2], x[3], tau, p.wheel_mass, p.wheel_radius, p.gravity, p.wheel_inertia,
                        p.table_inertia};
  thread_local LastInputs<std::size(key)> last;
  thread_local double last_n = 0, last_t = 0;
  if (!last.same_or_keep(key)) contact_forces<double>(p, x, tau, last_n, last_t);
  normal = last_n;
  tangential = last_t;
}

/// The centre p = s e1 + r e2 of a wheel of radius r touching the table at s, with e1 = (c, sn), e2 = (-sn, c) for the
/// table at c = cos theta1, sn = sin theta1 [m].
template <class S>
void centre_at(double r, const S& s, const S& c, const S& sn, S& px, S& py) {
  px = s * c - r * sn;
  py = s * sn + r * c;
}

/// Position of the wheel centre in the fixed frame (x right, y up) [m], origin at the pivot.
template <class S>
void wheel_centre(const Params& p, const S* x, S& px, S& py) {
  S c, sn;
  cos_sin(x[0], c, sn);
  centre_at(p.wheel_radius, contact_position(p, x), c, sn, px, py);
}

}  // namespace rollsim::tipping_table
