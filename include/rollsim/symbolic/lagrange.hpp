#pragma once
/// \file Lagrange's equations of a user model, derived with GiNaC, and the kernels that evaluate them.
///
/// Coordinates q (n), rates q' (n), accelerations a = q'' (n), parameters p, time t. With L = T - V,
/// generalized forces Q(t, q, q') and, for a Coulomb contact with slip velocity w(q, q') (linear in q'),
/// normal force N, friction coefficient mu and sliding direction s = sgn(w), the residual of the equations is
///
///   R_s(t, q, q', a) = d/dt dL/dq' - dL/dq - Q + s mu N dw/dq'
///                    = M(t, q, q') a + (d2L/dq'dq) q' + d2L/dq'dt - dL/dq - Q + s mu N dw/dq'
///
/// with M = d2L/dq'2. The ODE solves M a = f_s := -R_s(a = 0) numerically at every evaluation (M is never
/// inverted symbolically); its Jacobian is da/dx = -M^-1 dR_s/dx at the current a, from exact derivatives.
///
/// Energy: the Jacobi energy h = q'.dL/dq' - L (T + V when T is quadratic in q' and L has no explicit t)
/// obeys dh/dt = Q.q' - s mu N (dw/dq').q' - dL/dt, so h - W_Q + D + P is conserved, with the integrated
/// states W_Q' = Q.q' (work of the forces), D' = s mu N (dw/dq').q' (energy taken by friction; = mu N |w| >= 0
/// when w has no part without rates) and P' = dL/dt (for a Lagrangian with explicit time).
///
/// Holonomic constraints C(t, q) = 0 (nc) give the index-1 DAE of the built-in constrained models, in
/// x = [q, v, lambda]:  q' - v = 0;  R(t, q, v, v') - G^T lambda = 0;  C'' + 2 alpha C' + alpha^2 C = 0, where
/// G = dC/dq and C', C'' are total time derivatives (alpha: the Baumgarte rate). The constraints' generalized
/// force G^T lambda has the power (G^T lambda).q' (nonzero for a moving, rheonomic constraint): with W_C' equal to
/// it, h - W_Q + P - W_C is conserved. A model with contacts holds its constraints on the contact engine instead
/// (rs_contact_constraints).
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ginac/ginac.h>

#include "rollsim/symbolic/codegen.hpp"

namespace rollsim::symbolic {

/// The model in symbols, as the scenario gives it.
struct LagrangeModel {
  std::vector<std::string> parameters, coordinates;
  // The symbols (made by make_symbols()).
  GiNaC::ex t, s, alpha;
  std::vector<GiNaC::ex> p, q, qd, a, lambda;

  GiNaC::ex kinetic, potential;
  std::vector<GiNaC::ex> forces;  ///< Q, one per coordinate (0 where none is given)
  std::vector<std::string> constraint_names;
  std::vector<GiNaC::ex> constraints;
  bool has_contact = false;
  GiNaC::ex slip_velocity, normal_force, friction_coefficient;
  /// Contacts for the contact engine (hybrid/contacts.hpp): unilateral gaps, several contacts. (The single
  /// contact with a given normal force above, has_contact, is the Filippov form.)
  struct Contact {
    std::string name;
    bool unilateral = false, friction = false;
    GiNaC::ex gap, slip_velocity, friction_coefficient, restitution, normal_force;
    /// The bound on the friction force while sticking (>= friction_coefficient; equal to it where the scenario
    /// gives no static coefficient).
    GiNaC::ex static_friction_coefficient;
  };
  std::vector<Contact> contacts;
  /// Velocity (nonholonomic) constraint rows r(t, q, q') = A(t, q) q' + b(t, q) = 0, linear in q'. A model with
  /// any row here is integrated in independent speeds (src/models/lagrangian_nonholonomic.cpp): its holonomic
  /// `constraints` become rows too (their time derivative, with `position` set), and a rolling contact from
  /// geometry (src/kinematics) contributes its tangential rows and, where its gap is not identically zero in q,
  /// its normal row, whose multiplier is the contact's normal force.
  struct VelocityConstraint {
    enum class Kind { Constraint, Normal, Tangential };
    std::string name;  ///< the output name stem: "no_side_slip", "ground_x", "ground_y", "ground_normal"
    GiNaC::ex rate;    ///< r(t, q, q'), linear in q'
    /// For a row that is the time derivative of a position-level constraint g(t, q) = 0 (a holonomic constraint,
    /// a contact's gap): g, whose drift is monitored and audited. Unset for a nonholonomic row.
    std::optional<GiNaC::ex> position;
    Kind kind = Kind::Constraint;
    std::string contact;  ///< the contact the row belongs to; empty for a constraint the scenario writes
    std::string source;   ///< the scenario key that declared it, for messages ("constraints.no_side_slip.velocity")
  };
  std::vector<VelocityConstraint> velocity_constraints;
  /// Frictional 3-D point contacts for the Coulomb cone's engine (hybrid/cone_engine.hpp): a rolling contact from
  /// geometry with a friction coefficient instead of ideal rolling. The gap g(t, q) >= 0; the slip u (its two
  /// components along the tangents of the surface, linear in q') and the spin w_n (the angular velocity relative to
  /// the surface about its normal, linear in q'); the coefficients, constants of the parameters.
  struct ConeContact {
    std::string name, source;  ///< source: the scenario key that declared it, for messages
    GiNaC::ex gap, slip[2], spin, friction_coefficient, static_friction_coefficient, restitution, spin_radius;
    bool spin_friction = false;  ///< a drilling torque about the normal (the Contensou law with radius spin_radius)
  };
  std::vector<ConeContact> cone_contacts;
  /// The generalized inertia forces of the 3-D bodies in Kane's form, one per coordinate, functions of (t, q, q',
  /// a): sum over bodies of J_v^T m a_G + J_w^T (I alpha + w x I w). Empty when the model has no 3-D body. It
  /// equals d/dt dT3/dq' - dT3/dq of the bodies' kinetic energy T3 (which `kinetic` includes, for the energy),
  /// and derive() uses it in place of Lagrange's terms of T3.
  std::vector<GiNaC::ex> inertia_residual;
  GiNaC::ex kinetic_3d;  ///< T3, the part of `kinetic` that inertia_residual accounts for (0 when none)
  /// Orientation charts that can become singular (a rotation sequence's gimbal lock): the determinant of the map
  /// from angle rates to the angular velocity, a function of q; the run stops with a message before it is 0.
  struct Chart {
    std::string body, sequence;
    GiNaC::ex determinant;
  };
  std::vector<Chart> charts;
  std::vector<GiNaC::ex> outputs;  ///< may use a (accelerations)
  std::vector<GiNaC::ex> events;   ///< may use a
  /// The values of the model's scene at a sample (include/rollsim/hybrid/scene.hpp's order), functions of (t, q)
  /// and the parameters.
  std::vector<GiNaC::ex> scene;

  /// Create the symbols for the names in `parameters` and `coordinates` and `nc` multipliers.
  void make_symbols(std::size_t nc);
  /// Every input symbol in the order of the kernels' input array: t, q, q', a, p, lambda, s, alpha.
  std::vector<GiNaC::ex> inputs() const;
  std::size_t n() const { return coordinates.size(); }
};

/// Where each block sits in a kernel's input array.
struct InputLayout {
  std::size_t t = 0, q = 1, qd, a, p, lambda, s, alpha, size;
  explicit InputLayout(const LagrangeModel& m);
};

/// The kernels' names and output sizes.
struct KernelNames {
  static constexpr const char* dyn = "rs_dyn";              ///< M (n*n, column-major), f_s (n)
  static constexpr const char* jac = "rs_jac";              ///< dR_s/dq, dR_s/dq' (n x 2n), then the extra rates' (E x 2n)
  static constexpr const char* extra = "rs_extra";          ///< the extra states' rates (E): W_Q', D', P'
  static constexpr const char* energy = "rs_energy";        ///< h, T, V
  static constexpr const char* contact = "rs_contact";      ///< w, dw/dq (n), dw/dq' (n), N, mu
  /// Per contact of LagrangeModel::contacts (2n + 8 each): g, dg/dq (n), g'' - dg/dq.a, w, dw/dq' (n),
  /// w' - dw/dq'.a, mu, e, N, mu_static.
  static constexpr const char* contacts = "rs_contacts";
  static std::size_t contact_stride(std::size_t n) { return 2 * n + 8; }
  /// Per contact of LagrangeModel::cone_contacts (4n + 12 each): g, dg/dq (n), g'' - dg/dq.a, u1, du1/dq' (n),
  /// u1' - du1/dq'.a, u2, du2/dq' (n), u2' - du2/dq'.a, w_n, dw_n/dq' (n), w_n' - dw_n/dq'.a, mu, mu_s (mu where
  /// none is given), e, R (0 without spin friction). The biases are total time derivatives without the a-terms.
  static constexpr const char* cone_contacts = "rs_cone_contacts";
  static std::size_t cone_contact_stride(std::size_t n) { return 4 * n + 12; }
  /// Per holonomic constraint of a model with contacts (the contact engine holds them; n + 3 each): C,
  /// C' (total time derivative), dC/dq (n), C'' - dC/dq.a.
  static constexpr const char* contact_constraints = "rs_contact_constraints";
  static std::size_t constraint_stride(std::size_t n) { return n + 3; }
  static constexpr const char* outputs = "rs_outputs";      ///< the outputs
  static constexpr const char* charts = "rs_charts";        ///< each chart's determinant (LagrangeModel::charts)
  static constexpr const char* outputs_jac = "rs_outputs_jac";  ///< dy/dq, dy/dq', dy/da (m x 3n)
  static constexpr const char* events = "rs_events";        ///< the event witnesses
  static constexpr const char* scene = "rs_scene";          ///< the scene's values (LagrangeModel::scene)
  static constexpr const char* dae = "rs_dae";              ///< R - G^T lambda (n), C'' + 2 alpha C' + alpha^2 C (nc)
  static constexpr const char* dae_jac = "rs_dae_jac";      ///< d/dq, d/dv, d/dlambda, d/da of rs_dae
  static constexpr const char* constraints = "rs_constraints";  ///< C (nc), C' (nc)
  /// The DAE's extra states' rates (those present, in this order): W_Q' = Q.q', P' = dL/dt, and
  /// W_C' = (G^T lambda).q' (the constraints' work; always present).
  static constexpr const char* dae_extra = "rs_dae_extra";
  static constexpr const char* dae_extra_jac = "rs_dae_extra_jac";  ///< d/dq, d/dv, d/dlambda of rs_dae_extra
  /// Names the layout above; part of the compiled library's cache key, so that a library built for another
  /// layout is never loaded.
  static constexpr const char* layout = "kernel-layout-6";
};

/// What the derivation found about the model.
struct Derivation {
  std::vector<Kernel> kernels;
  bool explicit_time = false;    ///< L depends on t: the state P is integrated
  bool has_forces = false;       ///< some Q is not zero: the state W_Q is integrated
  bool friction_dissipates = false;  ///< w has no part free of rates: D' = mu N |w| >= 0
  std::size_t n_extra = 0;       ///< W_Q, D, P: those present, in that order
  double seconds = 0;            ///< time spent deriving
};

/// What derive() finds about the model without deriving its kernels (cheap: for a model whose compiled kernels
/// are cached).
Derivation derivation_flags(const LagrangeModel& m);

/// Derive the kernels. Throws std::invalid_argument with a message for the user.
Derivation derive(const LagrangeModel& m);

/// Differentiation by symbols that remembers the derivative of every subexpression it meets, per symbol: an
/// expression's shared parts (a body's rotation entries, its velocity) are differentiated once however often they
/// occur, in one expression or across the many a derivation differentiates. The result equals GiNaC's ex::diff
/// (sum, product and power rules; a function's partial derivatives by the chain rule), without GiNaC's route for
/// functions, which throws and catches an exception at every sin and cos it meets (GiNaC 1.8: function::derivative
/// tries the explicit derivative first). Functions other than the elementary ones of expression.hpp and step go
/// to ex::diff.
class Differentiator {
 public:
  /// d e / d x for a symbol x.
  GiNaC::ex operator()(const GiNaC::ex& e, const GiNaC::ex& x);

 private:
  GiNaC::ex derivative(const GiNaC::ex& e, const GiNaC::symbol& x, std::unordered_map<GiNaC::ex, GiNaC::ex>& memo);
  std::unordered_map<GiNaC::ex, std::unordered_map<GiNaC::ex, GiNaC::ex>> memo_;  ///< by symbol, then expression
};

/// d e / d x for a symbol x (a Differentiator of its own: shared parts within e are differentiated once).
GiNaC::ex d(const GiNaC::ex& e, const GiNaC::ex& x);

}  // namespace rollsim::symbolic
