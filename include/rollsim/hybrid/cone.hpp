#pragma once
/// \file The Coulomb cone at one 3-D point contact: the law that decides sticking and sliding in the tangent plane,
/// with exact stick -> slip and slip -> stick events (issue 26). A self-contained mathematical core: the contact
/// engine gives it the contact's data at an instant and reads back forces, directions and polar slip rates.
///
/// The data (ConeData), all in the contact's tangent plane with an orthonormal basis (t1, t2):
///   u       the 2-vector of slip velocity of the contact point;
///   N >= 0  the normal force; mu >= 0 the friction coefficient (mu = 0 is frictionless and legal);
///   W       the tangential Delassus matrix, 2x2: the slip acceleration is a = a_free + W F_t, where a_free is the
///           slip acceleration without friction force and F_t the friction force. For one contact it is
///           J_t M^-1 J_t^T, symmetric positive definite when the tangential rows are independent; with several
///           contacts the engine passes the contact's 2x2 diagonal block of the full Delassus matrix and folds the
///           other contacts' forces into a_free, so nothing here assumes a single contact. Only the sticking
///           force needs W invertible; the direction solver takes any real 2x2 W (also a non-symmetric one).
///
/// The law (Coulomb's cone; Glocker, Set-Valued Force Laws, Springer 2001, ch. 7; Pfeiffer and Glocker,
/// Multibody Dynamics with Unilateral Contacts, Wiley 1996, sec. 6.2; Leine and Glocker 2003, Eur. J. Mech.
/// A/Solids 22:193, for its use in an event-driven scheme):
///   sliding   |u| > 0:  F_t = -mu N u/|u|;
///   sticking  u = 0:    F_t = -W^-1 a_free (the force that keeps a = 0), which holds while |F_t| <= mu N;
///   stick -> slip where sticking needs |F_t| > mu N: the new slip direction d (unit) is consistent when, with
///             F_t = -mu N d, the slip acceleration a(d) = a_free - mu N W d equals kappa d with kappa > 0 (the
///             slip grows along d). With d = (cos th, sin th) that is the scalar equation
///             g(th) = cross(d, a(d)) = 0 on [0, 2 pi), kappa = d . a(d) > 0. g is a trigonometric polynomial of
///             degree 2, so it has at most 4 roots; they are found by sampling g at 1024 angles, refining every
///             sign change to round-off (core/crossing.hpp) and every sampled minimum of |g| that touches zero
///             (a double root, to about sqrt(eps) in the angle) by golden-section search; a sampled minimum
///             below zero brackets two close roots, each then refined. Not found: a cluster of three roots
///             within one sample spacing (2 pi/1024), a near-triple root, of which only one is returned.
///   For W = w I the only consistent direction is d = a_free/|a_free|, kappa = |a_free| - w mu N.
///   For W symmetric positive definite the sticking and sliding solutions together are the KKT points of the
///   strictly convex problem min_{|F| <= mu N} (1/2) F.W F + F.a_free (Moreau's maximal dissipation form of the
///   cone), whose minimiser is unique: so exactly one of (a) sticking is feasible, (b) there is exactly one
///   consistent direction, holds (both at the boundary |W^-1 a_free| = mu N, where kappa = 0).
///   For any invertible W, at least one consistent direction exists where sticking is infeasible: a(d) traces the
///   ellipse a_free - mu N W (circle), and a = 0 only at F = -W^-1 a_free, outside the disk |F| <= mu N, so the
///   map d -> a(d)/|a(d)| of the unit circle to itself has degree 0; a map of degree other than 1 has a point
///   where it equals d, where kappa = |a(d)| > 0. So the outcome `painleve` (none) is a guard only (the root
///   search failed); it is reported, never hidden. Several consistent directions need a W that is not positive
///   definite (the Painleve-like non-uniqueness of a Delassus block coupled to the normal force); they are
///   reported, never guessed silently:
///   consistent_directions() lists every one by decreasing kappa (round-off ties by increasing angle in [0, 2 pi)),
///   and the one chosen is the first (the largest kappa: the fastest growing slip), with `unique` false.
///
/// Slip -> stick is codimension two (both components of u vanish together). The polar slip variables make it a
/// simple root: u = s (cos phi, sin phi), with rates s' = d.a and phi' = (d_perp . a)/s, d = (cos phi, sin phi),
/// d_perp = (-sin phi, cos phi). Integrated with the field of the last direction, the signed speed s passes
/// through 0 linearly at the stick (s' = d.a(d) < 0 there), a sign change a root finder locates. At s = 0 the
/// engine calls decide_at_rest: stick when |W^-1 a_free| <= mu N, else slip along the consistent direction.
/// With mu = 0 the friction force is zero; sticking is feasible only for a_free = 0, which is reported as
/// sticking (at rest, zero force: consistent), and any a_free != 0 slips along a_free/|a_free|.
///
/// Not here: the normal force and its complementarity, impacts, drilling (Contensou) friction, the choice of
/// modes over several contacts, and the wiring into a model; the engine does those.
#include <vector>

#include <Eigen/Core>

namespace rollsim::cone {

using Vec2 = Eigen::Vector2d;
using Mat2 = Eigen::Matrix2d;

/// One contact's data at an instant (see the file comment). mu and normal_force must be finite and >= 0.
struct ConeData {
  Vec2 a_free = Vec2::Zero();  ///< slip acceleration without friction force
  Mat2 W = Mat2::Identity();   ///< tangential Delassus matrix (or a 2x2 block of a larger one)
  double mu = 0;               ///< friction coefficient
  double normal_force = 0;     ///< N

  double limit() const { return mu * normal_force; }  ///< the cone's radius mu N
};

/// The sliding force for slip velocity u != 0: -mu N u/|u|. Throws std::invalid_argument for u = 0.
Vec2 sliding_force(const ConeData& c, const Vec2& u);

/// The slip acceleration when the contact slides along the unit direction d: a(d) = a_free - mu N W d.
Vec2 slip_acceleration(const ConeData& c, const Vec2& d);

/// The sticking force -W^-1 a_free and whether the cone holds it.
struct StickForce {
  Vec2 force = Vec2::Zero();
  double demand = 0;      ///< |force|
  bool feasible = false;  ///< demand <= mu N
};
/// Throws std::invalid_argument when W is singular (|det W| <= 1e-14 |W|^2): the sticking force is not unique.
StickForce sticking_force(const ConeData& c);

/// A consistent slip direction: d = (cos angle, sin angle), a(d) = kappa d.
struct SlipDirection {
  Vec2 d = Vec2::UnitX();
  double angle = 0;   ///< in [0, 2 pi)
  double kappa = 0;   ///< d . a(d), > 0
  double residual = 0;  ///< |a(d) - kappa d|, the check of the root
};

/// g(angle) = cross(d, a(d)), whose roots are the candidate directions.
double direction_function(const ConeData& c, double angle);

/// Every consistent direction (kappa > 0), by decreasing kappa, ties (within 64 eps of g's scale) by increasing
/// angle. Empty when there is
/// none; also when g vanishes identically (W = w I and a_free = 0), where every direction has kappa = -w mu N <= 0.
std::vector<SlipDirection> consistent_directions(const ConeData& c);

/// The decision at zero slip (s = 0).
enum class RestOutcome {
  stick,    ///< |W^-1 a_free| <= mu N: the contact sticks with the sticking force
  slip,     ///< sticking is infeasible; the contact slips along `chosen`
  painleve  ///< sticking is infeasible and no consistent direction exists: no solution of the law here
};
struct RestDecision {
  RestOutcome outcome = RestOutcome::stick;
  StickForce stick;                       ///< always computed
  std::vector<SlipDirection> directions;  ///< the consistent directions (computed when sticking is infeasible)
  SlipDirection chosen;                   ///< directions.front() when outcome == slip
  bool unique = true;                     ///< false when several consistent directions exist
};
RestDecision decide_at_rest(const ConeData& c);

/// Polar slip variables: u = s (cos phi, sin phi); s may be negative (the speed continued through zero).
struct Polar {
  double s = 0;
  double phi = 0;
};
Vec2 from_polar(const Polar& p);
/// s = |u| >= 0 and phi = atan2(u) shifted by a multiple of 2 pi to lie within pi of phi_near (so that a
/// recorded angle stays continuous); for u = 0, (0, phi_near).
Polar to_polar(const Vec2& u, double phi_near = 0);

/// The rates of the polar variables for the slip acceleration a. At s = 0 the direction's rate is undefined:
/// phi_dot is then 0 and direction_defined false (the engine decides there with decide_at_rest).
struct PolarRates {
  double s_dot = 0;
  double phi_dot = 0;
  double cross = 0;  ///< d_perp . a, the numerator of phi_dot
  bool direction_defined = true;
};
PolarRates polar_rates(const Polar& p, const Vec2& a);

/// The rates while sliding along phi with the field of that direction, a = a(d), d = (cos phi, sin phi), for any
/// sign of s: the sliding mode keeps s > 0, and past a stick the field of the last direction continues s through
/// zero linearly (flipping the force with the sign of s would make s chatter about zero instead).
PolarRates sliding_rates(const ConeData& c, const Polar& p);

}  // namespace rollsim::cone
