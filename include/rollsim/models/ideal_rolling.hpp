#pragma once
/// \file The ideal rolling constraint element (docs/equations.md §4): a massless, lossless link between a
/// rotational port (angle phi, torque tau) and a translational port (position s, force f), each
/// relative to its support:
///
///     kinematics:  (phi - phi_support) r = s - s_support
///     statics:     r f + tau = 0
///
/// f and tau are what the element applies to the bodies on its ports (the supports receive -f, -tau).
/// Written between a wheel and the surface it rolls on, this is the no-slip condition; in a
/// constrained formulation its force f is the Lagrange multiplier of the kinematic relation, and
/// the torque follows from the statics. Free functions templated on the scalar type (double or
/// automatic differentiation), in the style of the other models.
namespace rollsim::ideal_rolling {

struct Element {
  double radius = 1.0;  ///< r [m], > 0
};

/// The positions at the four ports [rad, rad, m, m].
template <class S>
struct Ports {
  S phi{}, phi_support{}, s{}, s_support{};
};

/// Position-level residual r (phi - phi_support) - (s - s_support) [m]; zero when the element holds.
template <class S>
S kinematic_residual(const Element& e, const Ports<S>& x) {
  return e.radius * (x.phi - x.phi_support) - (x.s - x.s_support);
}

/// Velocity-level residual r (phi' - phi_support') - (s' - s_support') [m/s], from the port rates.
template <class S>
S velocity_residual(const Element& e, const Ports<S>& v) {
  return e.radius * (v.phi - v.phi_support) - (v.s - v.s_support);
}

/// The translational position the kinematics implies: s = s_support + r (phi - phi_support) [m].
template <class S>
S rolled_position(const Element& e, const S& phi, const S& phi_support, const S& s_support) {
  return s_support + e.radius * (phi - phi_support);
}

/// The torque on the rotational port that balances a force f on the translational port: tau = -r f [N m].
template <class S>
S torque(const Element& e, const S& f) {
  return -e.radius * f;
}

/// Static residual r f + tau [N m]; zero when the element holds.
template <class S>
S force_residual(const Element& e, const S& f, const S& tau) {
  return e.radius * f + tau;
}

/// Net power the element delivers through its ports and supports [W]:
/// f (s' - s_support') + tau (phi' - phi_support'). Zero for any motion that satisfies the kinematics
/// and any (f, tau) that satisfies the statics: the element is lossless and stores nothing.
template <class S>
S power(const Ports<S>& v, const S& f, const S& tau) {
  return f * (v.s - v.s_support) + tau * (v.phi - v.phi_support);
}

/// Generalized force of the element on coordinates q, given the gradients of its port positions with
/// respect to q: Q_k = f d(s - s_support)/dq_k + tau d(phi - phi_support)/dq_k, with tau = -r f.
/// Equals -f d(kinematic_residual)/dq_k: the multiplier of the kinematic relation is -f.
template <class S>
S generalized_force(const Element& e, const S& f, const S& d_rel_s, const S& d_rel_phi) {
  return f * d_rel_s + torque(e, f) * d_rel_phi;
}

}  // namespace rollsim::ideal_rolling
