#pragma once
/// \file 3-D kinematics in symbols: vectors and rotation matrices of GiNaC expressions, reference frames built
/// from a rotation sequence, an axis and angle, or a matrix (each relative to the world or to a parent frame), and
/// their angular velocities. Shaped after sympy.physics.mechanics (ReferenceFrame, Point, RigidBody).
///
/// World frame: x, y horizontal, z up. A frame's R maps its axes to the world's (world <- frame); its angular
/// velocity is kept twice, in world axes (w) and in the frame's own axes (w_body), each built from the rotation's
/// parts, never as R^T R' (whose entries GiNaC cannot reduce to the angle rates):
/// - a sequence R = R_parent R_1(a1) R_2(a2) R_3(a3) (intrinsic, body-fixed rotations about the named axes):
///   w = w_parent + sum_k (R_parent R_1 .. R_{k-1} e_k) a_k', and
///   w_body = R_seq^T w_parent_body + sum_k (R_{k+1} .. R_3)^T e_k a_k';
/// - an angle d about a fixed axis n of the parent (normalised): w = w_parent + R_parent n d',
///   w_body = R_loc^T w_parent_body + n d';
/// - a matrix M (relative to the parent): w = w_parent + R_parent vee(skew(M' M^T)),
///   w_body = M^T w_parent_body + vee(skew(M^T M')), which is exact for an orthonormal M.
/// Rates are total time derivatives along q' (and t).
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ginac/ginac.h>

#include "rollsim/symbolic/lagrange.hpp"

namespace rollsim::kinematics {

using GiNaC::ex;
using Vec3 = std::array<ex, 3>;
using Mat3 = std::array<Vec3, 3>;  ///< rows

Vec3 add(const Vec3& a, const Vec3& b);
Vec3 sub(const Vec3& a, const Vec3& b);
Vec3 scale(const ex& s, const Vec3& a);
ex dot(const Vec3& a, const Vec3& b);
Vec3 cross(const Vec3& a, const Vec3& b);
Vec3 mul(const Mat3& m, const Vec3& v);
Vec3 mul_transposed(const Mat3& m, const Vec3& v);  ///< m^T v
Mat3 mul(const Mat3& a, const Mat3& b);
Mat3 transpose(const Mat3& m);
Mat3 identity();
ex determinant(const Mat3& m);
Vec3 unit(int axis);  ///< e_x, e_y, e_z for 0, 1, 2
/// The rotation about axis 0, 1 or 2 by `angle` (right-handed).
Mat3 axis_rotation(int axis, const ex& angle);
/// The rotation about the unit vector n by `angle` (Rodrigues).
Mat3 axis_angle_rotation(const Vec3& n, const ex& angle);
/// vee of the skew-symmetric part of m: (m32 - m23, m13 - m31, m21 - m12) / 2.
Vec3 skew_vector(const Mat3& m);

/// The symbols derivatives are taken along: the model's t, q, q' and q'' = a.
struct Symbols {
  ex t;
  std::vector<ex> q, qd, a;
  /// Shared by the copies of these Symbols: a body's positions and rotations, differentiated for its velocity,
  /// again for its acceleration and for the contacts' rows, are differentiated once per symbol.
  std::shared_ptr<symbolic::Differentiator> diff = std::make_shared<symbolic::Differentiator>();
  static Symbols of(const symbolic::LagrangeModel& m) {
    return {m.t, m.q, m.qd, m.a, std::make_shared<symbolic::Differentiator>()};
  }
  /// de/dx for a symbol x.
  ex d(const ex& e, const ex& x) const { return (*diff)(e, x); }
  /// de/dt + sum de/dq_i q'_i + de/dq'_i a_i.
  ex rate(const ex& e) const;
  Vec3 rate(const Vec3& v) const;
  Mat3 rate(const Mat3& m) const;
};

/// The axis index of a sequence letter X, Y or Z, or -1.
int axis_of(char letter);

/// A reference frame: its rotation (world <- frame), its angular velocity in world and in its own axes, and the
/// chart of its orientation coordinates where they can become singular.
struct Frame {
  std::string name;
  Mat3 R = identity();
  Vec3 w{0, 0, 0}, w_body{0, 0, 0};
  /// A three-angle sequence's chart: the sequence and the determinant of the map from the angle rates to the
  /// angular velocity (cos of the middle angle for a Tait-Bryan sequence, sin of it for a proper Euler one, up to
  /// sign); unset for other orientations, which have no singular attitude.
  std::optional<std::string> sequence;
  ex chart_determinant = 1;

  /// The world frame.
  static Frame world();
  /// R = R_parent R_1(a1) .. R_k(ak) for the letters of `sequence` (1 to 3 of X, Y, Z; angles.size() of them).
  /// Throws std::invalid_argument for a letter that is not X, Y or Z or a count that differs.
  static Frame from_sequence(const std::string& name, const Frame& parent, const std::string& sequence,
                             const std::vector<ex>& angles, const Symbols& s);
  /// R = R_parent Rot(n / |n|, angle), n in the parent's axes (a constant of the parameters).
  static Frame from_axis_angle(const std::string& name, const Frame& parent, const Vec3& axis, const ex& angle,
                               const Symbols& s);
  /// R = R_parent M, M's rows given (it must be orthonormal; checked by the caller where values are known).
  static Frame from_matrix(const std::string& name, const Frame& parent, const Mat3& M, const Symbols& s);
};

}  // namespace rollsim::kinematics
