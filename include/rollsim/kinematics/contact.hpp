#pragma once
/// \file Rolling contacts from geometry: a disk or a sphere of a rigid body on the plane z = 0, at rest or turning
/// about the z axis at a rate Omega(t). The contact point, the gap and the rows of ideal rolling (no slip) as
/// VelocityConstraint rows of the user model.
///
/// Plane z = 0. Sphere (centre c, radius r): p = c - r e_z, gap c_z - r. Disk (centre c, unit axis n in the world,
/// radius a): k = (e_z - (e_z.n) n) / |e_z - (e_z.n) n| (the direction from the centre to the highest rim point,
/// |e_z - n_z n| = sqrt(1 - n_z^2) for a unit n), p = c - a k, gap p_z (the disk lies flat where n_z^2 = 1: the
/// contact's chart is singular there). The material point at p slips with
///   u = v_G + w x (p - G) - v_surface(p),  v_surface(p) = Omega e_z x p,
/// whose x and y components are the tangential rows (nonholonomic) and whose z component is the gap's rate (the
/// normal row, whose multiplier is the normal force). A gap identically zero in q (the coordinates already keep the
/// body on the plane) is "embedded": no normal row.
///
/// A contact that slips (the Coulomb cone's engine, hybrid/cone_engine.hpp) takes instead the gap, the x and y
/// components of u (along the plane's tangents e_x, e_y) and the spin w_n = w.e_z - Omega, the body's angular
/// velocity relative to the surface about the normal.
#include <string>
#include <vector>

#include "rollsim/kinematics/bodies.hpp"

namespace rollsim::kinematics {

struct RollingContact {
  enum class Shape { Disk, Sphere };
  std::string name;
  const RigidBody* body = nullptr;
  Shape shape = Shape::Sphere;
  ex radius;
  Vec3 axis{0, 1, 0};  ///< a disk's axis in body axes (normalised here)
  ex rotation_rate = 0;  ///< Omega(t) of the plane about the z axis (0: at rest)
  std::string source;  ///< the scenario key that declared it, for messages

  /// The contact point p in the world.
  Vec3 point() const;
  /// The gap: p_z.
  ex gap() const { return point()[2]; }
  /// The slip velocity of the body's material point at p relative to the surface.
  Vec3 slip(const Symbols& s) const;
  /// The spin about the normal relative to the surface: the body's angular velocity in the world along e_z, less
  /// the surface's rotation rate Omega.
  ex spin() const { return body->frame.w[2] - rotation_rate; }
  /// The rows NAME_x, NAME_y (tangential) and, unless `embedded`, NAME_normal (with the gap as its position).
  std::vector<symbolic::LagrangeModel::VelocityConstraint> rows(const Symbols& s, bool embedded) const;
};

/// Whether `e`, a function of (t, q) and the parameters, vanishes at `samples` random points: q around `q0`
/// (uniform within +-0.2 max(1, |q0_i|) of each q0_i), t in [0, 1], the parameters at `p` (their values). The
/// tolerance is 1e-10 times (1 + the largest |value| of `scale_terms` at the same point).
bool vanishes_identically(const ex& e, const std::vector<ex>& scale_terms, const symbolic::LagrangeModel& m,
                          const std::vector<double>& p, const std::vector<double>& q0, int samples = 8);

}  // namespace rollsim::kinematics
