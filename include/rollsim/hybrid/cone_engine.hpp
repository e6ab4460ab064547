#pragma once
/// \file Point contacts of 3-D bodies with an isotropic Coulomb cone: unilateral normal forces, sticking and sliding
/// with exact events, impacts with Newton's restitution and a friction impulse inside the cone, and optional spin
/// (drilling) friction. The planar engine (contacts.hpp) has one slip direction per contact; here the slip is a
/// vector of the tangent plane. docs/user-models.md is the reference; what follows is the contract with the model.
///
/// State x = [q (n), q' (n), the model's extras, D_friction, D_impact, per contact its slip reference r_k (3, a unit
/// vector of the generalized slip space), then W_S where a surface moves].
/// The model supplies, at (t, x): M and f (M q'' = f + the contact forces), and per contact the gap g with its
/// gradient W_n and g'' - W_n.q'', the slip u (2: the contact point's velocity relative to the surface in the
/// tangent plane, along two orthonormal tangents), its rows W_t (2 x n) and u' - W_t.q'', the spin w_n (the
/// relative angular velocity about the normal), its row W_s and w_n' - W_s.q'', the friction coefficients mu
/// (sliding) and mu_s (sticking bound), the restitution e and the spin friction radius R (0: none).
///
/// The law. With spin friction the generalized slip is v = (u, rho w_n) and the generalized friction force
/// P = (F_t, tau_n / rho), rho = 2 R / 3; without it v = u and P = F_t. Coulomb's law on the round cone |P| <= mu N:
///   sliding |v| > 0: P = -mu N v / |v|;   sticking v = 0: |P| <= mu_s N.
/// With spin friction this is the ellipsoidal approximation of the Coulomb-Contensou law of a circular contact of
/// radius R under uniform pressure (Leine and Glocker 2003, Eur. J. Mech. A/Solids 22:193-216): force and drilling
/// torque bounded together by (|F_t| / (mu N))^2 + (tau_n / (mu N rho))^2 <= 1, where rho = 2R/3 makes the pure spin
/// torque (2/3) mu N R, that of uniform pressure, and the pure sliding force mu N; the sliding force and torque are
/// normal to that ellipsoid (maximal dissipation). Without spin friction no torque acts about the normal, so
/// Jellett's integral of a body with a spherical contact surface is conserved.
///
/// Modes per contact (2 bits each, contact k in bits 2k, 2k+1): open (0), stick (1), slide (2). Closed contacts hold
/// g'' + 2 a g' + a^2 g = 0, sticking ones v' + a v = 0 (a: the Baumgarte rate). A sliding contact's friction acts
/// along d = sign(v.r) v/|v| (and along r/|r| where v vanishes), r the slip reference: the slip continued through
/// zero along its last direction, so that the signed slip s = v.r passes zero linearly at a stick (codimension two:
/// both components of v vanish together; with the force of the last direction held, v reaches zero on the line of
/// r, and s has a simple root a root finder locates). The reference is reset to the slip when its angle to v reaches
/// 60 degrees (the witness v.r - |v||r|/2; an event of kind slip_direction that changes nothing else).
///
/// Witnesses per contact: open: gap_NAME (touchdown); closed: normal_force_NAME (lift-off); stick:
/// stick_margin_NAME = mu_s N - |P| (slip starts); slide: slip_NAME = v.r (stick) and slip_turn_NAME = v.r - |v|/2 +
/// the zero-speed tolerance (the direction of a slip below it is not the motion's).
///
/// Near zero slip (cone_engine.cpp): below the zero-speed tolerance the sliding force keeps the reference's direction
/// (the slip's direction relaxes there at a rate growing as 1/|v|, a stiffness that stalls an integrator); a slide
/// from rest whose slip rate kappa is consistent only at the limit (on the cone's edge) starts at the zero-speed
/// tolerance along its direction, as the planar engine opens a lift-off at zero rate at that rate; a contact that
/// comes to rest sticks where sticking and sliding both hold only at the limit, its stick margin offset by the
/// deficit it starts with (kept in its reference's first component) so that its witness starts at 0.
///
/// At an event the modes of the contacts at rest (gap and gap rate zero; and the slip zero for stick) are chosen
/// together by enumeration of open / stick / slide, each combination solved with its forces and, for contacts that
/// start to slide from rest, the slip directions d with v' = kappa d, kappa > 0 (Newton's method on the directions,
/// from the direction of the free slip acceleration). A combination is consistent when every closed contact presses
/// (N >= 0), every open one at rest does not approach (g'' >= 0), every sticking one holds its force inside the cone
/// (|P| <= mu_s N) and every one starting to slide accelerates along its direction (kappa >= 0). As the planar
/// engine: one strictly consistent combination is taken; among those consistent only at the limit, the one that
/// changes fewest contacts; several strictly consistent ones (after preferring those that stick where mu_s > mu)
/// or none stop the run (exit 3). The mode the event left is excluded for the contact whose witness fired.
/// Where the rows a combination holds are dependent (a rigid body held at two or more points is statically
/// indeterminate), its forces are one of many that give the same motion: the rule takes the least-norm split where it
/// keeps every cone, else the split farthest inside the cones (the largest smallest margin of N >= 0 and
/// mu_s N - |P| >= 0, by a simplex search over the null space), so a combination is consistent where some split
/// keeps every cone.
///
/// At touchdown the impulses of the contacts at zero gap solve the same problem one level down: post-impact
/// velocities y+ = y- + G P (G = J M^-1 J^T), Newton's law g'+ >= -e g'- complementary to P_N >= 0, and the cone in
/// the impulse (v+ = 0 with |P_t| <= mu_s P_N, or P_t = -mu P_N d with v+ = kappa d, kappa >= 0). An impact that
/// would raise the kinetic energy stops the run (exit 3). The energy lost goes to D_impact; the rates settled to a
/// new mode (the residual slip at a stick, of the size of the integration error) lose kinetic energy by the
/// M-weighted least change, also added to D_impact, so that E + D_friction + D_impact stays constant.
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// What a frictional 3-D point contact is.
struct ConeContactSpec {
  std::string name;
  bool spin_friction = false;  ///< a drilling torque (the Contensou coupling above); its radius comes with the terms
  /// The surface moves (a turning plane): the slip has a part that does not vanish with the rates, through which
  /// the friction force does work on the system, kept in the state work_surfaces (W_S' = P.(J_t q' - v)); the
  /// balance is then E + D - W_S.
  bool moving_surface = false;
};

/// One cone contact's terms at (t, x), filled by the model (the rows have dimension n, sized by the engine).
struct ConeTerms {
  double gap = 0, gap_bias = 0;          ///< g, and g'' - W_n.q''
  double slip[2] = {0, 0};               ///< u along the two tangents
  double slip_bias[2] = {0, 0};          ///< u' - W_t.q''
  double spin = 0, spin_bias = 0;        ///< w_n and w_n' - W_s.q''
  double mu = 0, mu_static = 0;          ///< sliding coefficient; sticking bound (>= mu; the model sets mu if none)
  double restitution = 0;                ///< Newton's e in [0, 1]
  double spin_radius = 0;                ///< R of the Contensou law (used where the spec has spin friction)
  std::vector<double> Wn, Wt1, Wt2, Ws;  ///< dg/dq, du/dq' (two rows), dw_n/dq'
};

class ConeEngine : public OdeSystem, public WitnessSystem {
 public:
  /// "auto" keeps CVODE's Adams here, not DOP853: on the contact engines' runs DOP853 held a body at rest only to
  /// 2e-12 where the tests ask 1e-12 (the stabilised rest of the ladder), failed the self-audit at a sphere's
  /// capture (several events at one instant) and took over ten minutes on the rimless wheel's Zeno run.
  const char* auto_method() const override { return "adams"; }
  enum ConeMode : int { kOpen = 0, kStick = 1, kSlide = 2 };
  static int contact_mode(int mode, std::size_t k) { return (mode >> (2 * k)) & 3; }
  static int with_contact_mode(int mode, std::size_t k, int cm) { return (mode & ~(3 << (2 * k))) | (cm << (2 * k)); }

  bool has_modes() const override { return true; }
  int largest_mode() const override { return (1 << (2 * static_cast<int>(contacts_.size()))) - 1; }
  std::string mode_name(int mode) const override;
  int initial_mode(const double* x0) const override;
  void initial_state(double* x0) const override;
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void rhs(double t, const double* x, int mode, double* xdot) const override;
  /// Forward differences of rhs, each column's increment small enough that the slip of every sliding contact changes
  /// by at most kJacobianSlip of its size (cone_engine.cpp says why).
  bool jacobian(double t, const double* x, int mode, double* J) const override;
  std::vector<Witness> witnesses(int mode) const override;
  std::size_t witness_count(int mode) const override;
  void witness_values(double t, const double* x, int mode, double* g) const override;
  bool energy_ledger(double t, const double* x, int mode, EnergyLedger& e) const override;
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int crossing_direction) const override;
  void compute_outputs(double t, const double* x, int mode, double* y) const override;
  std::vector<std::string> event_extras() const override;
  std::unique_ptr<Summarizer> make_summarizer() const override;

  const std::vector<ConeContactSpec>& contacts() const { return contacts_; }
  /// The engine's states (after the model's) and its outputs (before the model's own).
  static Signals engine_states(const std::vector<ConeContactSpec>& contacts);
  static Signals engine_outputs(const std::vector<ConeContactSpec>& contacts);
  /// Every witness name a contact can have (in some mode).
  static std::vector<std::string> witness_names(const ConeContactSpec& contact);

  /// The solution of one mode at (t, x): accelerations, each contact's normal force, generalized friction force
  /// P (3: F_t and tau_n / rho; the third 0 without spin friction), the rates of g and v.
  struct Solution {
    std::vector<double> a, N, P, gdot, gddot, v, vdot, dir;  ///< P, v, vdot, dir: 3 per contact
    bool ok = false;
  };
  /// The mode's solution at (t, x) (sliding contacts along their continued direction). false: singular.
  bool solve(double t, const double* x, int mode, Solution& s) const;

 protected:
  /// Called by the model's constructor. \param base_states the model's states (q, q', its extras) and \param x0 their
  /// initial values; \param user_outputs, user_witnesses the model's own.
  void configure(std::size_t n, std::vector<ConeContactSpec> contacts, Signals base_states, std::vector<double> x0,
                 Signals user_outputs, std::vector<Witness> user_witnesses, ContactSettings settings);

  virtual void mass_and_forces(double t, const double* x, double* M, double* f) const = 0;
  virtual void cone_terms(double t, const double* x, ConeTerms* terms) const = 0;
  virtual void extra_rates(double /*t*/, const double* /*x*/, const double* /*a*/, double* /*r*/) const {}
  /// T, V, the Jacobi energy h and the conserved combination E = h - (work of the forces) + (work of explicit time).
  virtual void energies(double t, const double* x, double& T, double& V, double& h, double& E) const = 0;
  virtual void user_output_values(double /*t*/, const double* /*x*/, const double* /*a*/, double* /*y*/) const {}
  virtual void user_witness_values(double /*t*/, const double* /*x*/, const double* /*a*/, double* /*g*/) const {}

 private:
  struct OutputContext;
  class Chooser;  ///< the choice of modes (and of impulses) at one event (cone_modes.cpp)
  static RuntimeOutputList<OutputContext> engine_output_list(const std::vector<ConeContactSpec>& contacts);
  std::size_t dim(std::size_t k) const { return contacts_[k].spin_friction ? 3 : 2; }
  std::size_t ref_state(std::size_t k) const { return n_base_ + 2 + 3 * k; }
  std::size_t d_friction() const { return n_base_; }
  std::size_t d_impact() const { return n_base_ + 1; }
  std::size_t surface_work_state() const { return n_base_ + 2 + 3 * contacts_.size(); }
  bool moving_surfaces_ = false;
  void fill_terms(double t, const double* x, std::vector<ConeTerms>& terms) const;
  /// rhs from the mode's solution `s` at (t, x) (solve's, with `ok` its result).
  void rhs_of(double t, const double* x, int mode, const Solution& s, bool ok, double* xdot) const;
  /// The generalized slip v (dim(k) values, the rest 0) of contact k from its terms and the rates.
  void slip_of(std::size_t k, const ConeTerms& c, double* v) const;
  /// The consistent mode at (t, x); `fired`: the contact whose witness fired (or -1), `left`: its mode before (or -1:
  /// none excluded); `fired_at_rest`: the fired contact's slip counts as zero (a slip that reached zero). Settles the
  /// rates and sets the slip references (settle) when `settle_state`.
  int select_mode(double t, double* x, int current, int fired, int left, bool fired_at_rest, EventOutcome& out,
                  bool settle_state = true) const;
  /// The slip speed below which contact k's slip counts as zero at x: the zero-speed tolerance plus 100 times what
  /// the integration resolves of the slip (sum over its rows of |J_ij| (rtol |q'_j| + atol)).
  double slip_tolerance(std::size_t k, const double* x) const;
  /// Applies the impact of `fired` at (t, x); returns whether an impact took place.
  void impact(double t, double* x, int mode, std::size_t fired, EventOutcome& out) const;
  /// Makes the rates consistent with the contacts' `modes` (closed: g' = 0; stick and `hold_slip`, a slide from rest:
  /// v = 0, or v = seed[k] d for a slide from rest on the cone's edge) by the M-weighted least change, the kinetic
  /// energy lost added to D_impact; sets the slip references. Returns the energy lost.
  double settle(double t, double* x, const std::vector<int>& modes, const std::vector<bool>& hold_slip,
                const std::vector<double>& seed, const std::vector<Eigen::Vector3d>& dirs) const;
  /// Sliding contact k's slip reference at x as a unit vector (x along the contact's first axis where it is zero).
  Eigen::Vector3d slip_reference(std::size_t k, const double* x) const;
  /// The zero-speed tolerance at x: rates below it count as zero.
  double rest_speed(const double* x) const;

  std::size_t n_ = 0, n_base_ = 0;
  std::vector<ConeContactSpec> contacts_;
  std::vector<double> x0_;
  Signals states_, outputs_;
  RuntimeOutputList<OutputContext> output_list_;
  std::vector<Witness> user_witnesses_;
  ContactSettings settings_;
};

}  // namespace rollsim
