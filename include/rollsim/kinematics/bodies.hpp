#pragma once
/// \file Rigid bodies in 3-D: mass, central inertia in body axes, the centre of mass's position, the body's frame;
/// their kinetic energy, gravity's potential and the generalized inertia forces in Kane's form, which the user
/// model's derivation takes in place of Lagrange's terms of the bodies' kinetic energy.
///
/// Kane's form, per coordinate i (q'' = the symbols a):
///   F_i = sum over bodies of dv_G/dq'_i . m a_G + dw_b/dq'_i . (I alpha_b + w_b x I w_b),
/// with v_G = dG/dt, a_G = dv_G/dt, w_b the angular velocity in body axes and alpha_b = dw_b/dt (= R^T dw/dt, since
/// R'^T w = -R^T (w x w) = 0). It equals d/dt dT/dq' - dT/dq of T = 1/2 m v_G.v_G + 1/2 w_b.I w_b (a second
/// formulation, tests/test_kinematics.cpp), with far smaller expressions: no second derivative of T is formed.
#include <string>
#include <vector>

#include "rollsim/kinematics/frames.hpp"

namespace rollsim::kinematics {

/// A point with a name: its position in the world (for relative positions).
struct Point {
  std::string name;
  Vec3 position;
};

/// The position `origin` + R(axes) offset: a point given relative to another point, in a frame's axes.
Vec3 relative_position(const Vec3& origin, const Frame& axes, const Vec3& offset);

/// The central inertia tensor in body axes from 3 principal moments or 6 entries [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]
/// (tensor entries: Ixy is the (x, y) entry, minus the product of inertia). Throws std::invalid_argument for
/// another count.
Mat3 inertia_tensor(const std::vector<ex>& values);

struct RigidBody {
  std::string name;
  ex mass;
  Mat3 inertia;  ///< central, body axes (constant)
  Vec3 position; ///< G in the world, a function of (t, q)
  Frame frame;

  Vec3 velocity(const Symbols& s) const { return s.rate(position); }
  /// 1/2 m v.v + 1/2 w_b.I w_b.
  ex kinetic_energy(const Symbols& s) const;
  /// m g z_G.
  ex potential_energy(const ex& g) const { return mass * g * position[2]; }
  /// Adds this body's generalized inertia forces (Kane's form) to F (one per coordinate).
  void add_inertia_forces(const Symbols& s, std::vector<ex>& F) const;
};

/// The model's 3-D part: T3, V += m g z for each body, inertia_residual and the charts of LagrangeModel.
void add_bodies(symbolic::LagrangeModel& m, const std::vector<RigidBody>& bodies, const ex& g);

}  // namespace rollsim::kinematics
