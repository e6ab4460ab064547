#pragma once
/// \file A mechanical system with several contacts, each unilateral (a gap g(q) >= 0 with a normal force
/// lambda_N >= 0 complementary to it) or bilateral with a given normal force, each with or without Coulomb
/// friction, and impacts with Newton's restitution and Coulomb friction in the impulse. docs/user-models.md is the
/// reference; what follows is the contract with the model that supplies the mechanics.
///
/// State x = [q (n), q' (n), the model's integrated extras, D_friction, D_impact]. The model supplies, at (t, x):
/// the mass matrix M and the smooth forces f (M q'' = f + the contact forces), and per contact the gap g with
/// its gradient W_n = dg/dq and g'' - W_n.q'' (the curvature term), the slip velocity w = W_t.q' + w0(q) with
/// W_t = dw/dq' and w' - W_t.q'', the friction coefficient mu, the restitution e and (bilateral) the normal
/// force N.
///
/// Each contact has its own mode: open (separated), stick, slide + (w > 0) or slide - (w < 0); a unilateral
/// contact without friction is open or closed (stored as stick). The system's mode is the contacts' modes in
/// base 4 (contact k in digit k). In a mode the accelerations and the multipliers solve
///
///   M q'' = f + sum over closed contacts of (W_n - s mu W_t) lambda_N  (sliding, s = +-1) or W_n lambda_N
///           + sum over sticking contacts of W_t lambda_T  (- s mu N W_t for a sliding bilateral contact)
///   g'' + 2 a g' + a^2 g = 0 for every closed unilateral contact, w' + a w = 0 for every sticking contact
///
/// (a: the Baumgarte rate, which holds the closed gaps and the sticking slips at zero against drift).
///
/// Witnesses, per contact: open: g (falling: touchdown); closed: lambda_N (falling: lift-off); stick:
/// mu lambda_N -+ lambda_T (falling: slip); slide s: w (crossing against s: stick or reversal). Every one
/// bounds its mode's region, so the simulate loop finds every crossing and audits the region.
///
/// At an event the new mode of all contacts is chosen together, by enumeration, from the complementarity
/// conditions at that instant: lambda_N >= 0 for a closed contact, g'' >= 0 for an open one at g = 0, g' = 0,
/// |lambda_T| <= mu lambda_N while sticking, s w' >= 0 for a slide starting at w = 0. The mode the event left is
/// excluded for the contact whose witness fired. One strictly consistent mode is taken; among modes that are
/// consistent only at the limit, the one that changes fewest contacts. None, or several strictly consistent
/// (the Painlevé paradox), stops the run with a SolverError (exit 3) naming the contacts and the conditions.
/// A mode whose rows are dependent (statically indeterminate contacts) is solved by the force distribution rule
/// (force_distribution.hpp): consistent where a distribution inside the cones exists, with its forces chosen by
/// the stated rule. A contact whose friction coefficients are both 0 is frictionless (one closed mode, kStick).
/// Among several strictly consistent modes, those sticking at the most contacts whose static coefficient exceeds
/// the kinetic one are kept (prefer_static_sticking).
///
/// Many contacts undecided at once (above ContactSettings::kAutoCombinations combinations, or always with
/// mode_selection = Lcp) are first posed as one linear complementarity problem (lcp.hpp: the normal forces, and
/// the friction forces of the contacts at rest, with Coulomb's law split into two complementarity pairs), solved by
/// Siconos Numerics' Lemke method. Each contact's mode is then read from that solution: one mode where the solution
/// decides it, the modes on both sides where a force and its rate are both zero (the event's degenerate instant).
/// The enumeration above runs over those combinations alone, with the same conditions and rules, so that every mode
/// taken passes the same checks. Where that still leaves more than 256 combinations (many contacts with a zero force
/// and a zero rate at once), those contacts but the one whose event it is take one reading: closed wherever the
/// solution allows it (every touching contact shares the load by the force distribution rule), else, where no mode
/// of that reading is consistent, the solution's own.
/// The enumeration then sees only the modes next to one solution of the LCP: where the
/// LCP has several solutions (friction can make it so), the others are not looked at, and the uniqueness of forward
/// motion is checked among the combinations left only. An LCP without a solution found stops the run (exit 3).
/// The same holds for the impulses of an impact. Events that used the LCP record the number of combinations it
/// left in the event extras lcp_candidates (the modes) and lcp_impulse_candidates (an impact's impulses).
///
/// At touchdown (a gap reaching zero), the impulses P of the contacts at zero gap solve, by the same enumeration,
/// M dq' = sum (W_n P_N + W_t P_T) with Newton's law g'+ >= -e g'-, P_N >= 0 complementary, and Coulomb's law in
/// the impulse (sticking: w+ = 0, |P_T| <= mu P_N; sliding: P_T = -s mu P_N, s w+ >= 0). Where that impulse would
/// raise the kinetic energy (coupled normal and tangential directions), the tangential law takes the normal
/// restitution too (sticking: w+ = -e w-; sliding: s (w+ + e w-) >= 0), which never does for contacts of one
/// restitution (Glocker, Multibody Syst. Dyn. 29, 2013); the event's extra tangential_restitution says which law
/// acted (0 or e). An impact whose rebound
/// e |g'-| would be slower than the capture velocity (given, or derived from what the integration resolves:
/// ContactSettings::capture_velocity) is plastic (e = 0): the contact closes ("capture"), which ends an
/// accumulation of impacts.
/// The energy lost in the impact is added to D_impact; an impact that would create energy stops the run.
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// What a contact is.
struct ContactSpec {
  std::string name;
  bool unilateral = false;  ///< a gap with a computed normal force; else a given normal force
  bool friction = false;    ///< a slip velocity and a friction coefficient
  /// The slip velocity has a part w0 that does not vanish with the rates (a belt, a moving surface): its friction
  /// force does work on the system, W_S' = -lambda_T w0, kept in the state work_surfaces.
  bool moving_surface = false;
};

/// One contact's terms at (t, x), filled by the model (W_n, W_t have dimension n, sized by the engine).
struct ContactTerms {
  double gap = 0, gap_bias = 0;    ///< g, and g'' - W_n.q''
  double slip = 0, slip_bias = 0;  ///< w, and w' - W_t.q''
  /// mu: the kinetic (sliding) coefficient; mu_static: the bound while sticking (>= mu; the model sets it to mu
  /// where no static coefficient is given).
  double mu = 0, mu_static = 0, restitution = 0, given_normal = 0;
  std::vector<double> Wn, Wt;
};

/// One holonomic constraint C(t, q) = 0 held together with the contacts (bilateral: its multiplier has any sign),
/// filled by the model (G has dimension n, sized by the engine). M q'' = f + G^T lambda_C + the contact forces.
struct ConstraintTerms {
  double value = 0;  ///< C
  double rate = 0;   ///< C' = G q' + dC/dt
  double bias = 0;   ///< C'' - G q''
  std::vector<double> G;  ///< dC/dq
};

/// How the engine chooses the contacts' modes and impulses at an event.
enum class ModeSelection : int {
  Auto,       ///< enumerate up to kAutoCombinations combinations; above, narrow them by the LCP first
  Enumerate,  ///< always enumerate every combination (refused above kMaxCombinations)
  Lcp,        ///< always narrow the combinations by the LCP first
};
/// The names of ModeSelection's values, in its order (the scenario key nonsmooth.mode_selection).
inline constexpr const char* kModeSelectionNames[3] = {"auto", "enumerate", "lcp"};

/// The engine's settings.
struct ContactSettings {
  /// The capture rule. Given (> 0): an impact whose rebound would be slower than this is plastic (e = 0): the
  /// contact closes. 0 (the default): derived at each impact from what the integration resolves: a rebound whose
  /// flight would rise less than kResolvedApex times the gap's resolution sum |dg/dq_i| (rtol |q_i| + atol) +
  /// gap_tolerance (under the gap's free acceleration, apex = v^2 / (2 |g''|)) is plastic. Either rule ends every
  /// accumulation of impacts (Zeno) in persistent contact with a `capture` event.
  double capture_velocity = 0;
  double rtol = 1e-6, atol = 1e-9;  ///< the integration's tolerances (solver.rtol, solver.atol), for the derived rule
  static constexpr double kResolvedApex = 10;
  /// A gap rate or a slip counts as zero below 1e-3 of this plus 1e-9 of the largest rate; a start faster than this
  /// slides or approaches. The given capture velocity, or 1e-6 (m/s, or the model's unit) with the derived rule.
  double rest_speed() const { return capture_velocity > 0 ? capture_velocity : 1e-6; }
  double gap_tolerance = 1e-9;     ///< a gap within this of zero counts as touching
  double stabilization_rate = 10;  ///< Baumgarte rate a [1/s]
  ModeSelection mode_selection = ModeSelection::Auto;
  /// Above this many combinations of undecided contacts' modes, "auto" narrows them by the LCP (4^6: six
  /// contacts undecided at once); "enumerate" refuses above kMaxCombinations (4^8).
  static constexpr double kAutoCombinations = 4096, kMaxCombinations = 65536;
};

enum ContactMode : int { kOpen = 0, kStick = 1, kSlidePlus = 2, kSlideMinus = 3 };

class ContactEngine : public OdeSystem, public WitnessSystem {
 public:
  /// "auto" keeps CVODE's Adams here, not DOP853: on the contact engines' runs DOP853 held a body at rest only to
  /// 2e-12 where the tests ask 1e-12 (the stabilised rest of the ladder), failed the self-audit at a sphere's
  /// capture (several events at one instant) and took over ten minutes on the rimless wheel's Zeno run.
  const char* auto_method() const override { return "adams"; }
  /// The contacts' modes in a system mode, and back.
  static int contact_mode(int mode, std::size_t k) { return (mode >> (2 * k)) & 3; }
  static int with_contact_mode(int mode, std::size_t k, int cm) {
    return (mode & ~(3 << (2 * k))) | (cm << (2 * k));
  }

  bool has_modes() const override { return true; }
  int largest_mode() const override { return (1 << (2 * static_cast<int>(contacts_.size()))) - 1; }
  std::string mode_name(int mode) const override;
  int initial_mode(const double* x0) const override;
  void initial_state(double* x0) const override;
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void rhs(double t, const double* x, int mode, double* xdot) const override;
  std::vector<Witness> witnesses(int mode) const override;
  std::size_t witness_count(int mode) const override;
  void witness_values(double t, const double* x, int mode, double* g) const override;
  bool energy_ledger(double t, const double* x, int mode, EnergyLedger& e) const override;
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int crossing_direction) const override;
  void compute_outputs(double t, const double* x, int mode, double* y) const override;
  std::unique_ptr<Summarizer> make_summarizer() const override;
  std::vector<std::string> event_extras() const override;

  const std::vector<ContactSpec>& contacts() const { return contacts_; }
  /// The states the engine adds, and the outputs it computes ahead of the model's own.
  static Signals engine_states(bool constraints = false, bool moving_surfaces = false);
  static Signals engine_outputs(const std::vector<ContactSpec>& contacts,
                                const std::vector<std::string>& constraint_names = {});
  /// Every witness name a contact can have (in some mode), and the prefixes the engine builds them with.
  static std::vector<std::string> witness_names(const ContactSpec& contact);

 protected:
  /// Called by the model's constructor. \param base_states the model's states: q, q' and its extras;
  /// \param x0 their initial values; \param user_outputs, user_witnesses the model's own.
  /// \param constraint_names the holonomic constraints held with the contacts (constraint_terms), in order.
  void configure(std::size_t n, std::vector<ContactSpec> contacts, Signals base_states, std::vector<double> x0,
                 Signals user_outputs, std::vector<Witness> user_witnesses, ContactSettings settings,
                 std::vector<std::string> constraint_names = {});

  // ---- what the model supplies -----------------------------------------------------------------------
  /// M (n x n, column-major) and f (n) at (t, x).
  virtual void mass_and_forces(double t, const double* x, double* M, double* f) const = 0;
  /// Every contact's terms at (t, x).
  virtual void contact_terms(double t, const double* x, ContactTerms* terms) const = 0;
  /// Every holonomic constraint's terms at (t, x), in the order of configure's constraint_names (default: none).
  virtual void constraint_terms(double /*t*/, const double* /*x*/, ConstraintTerms* /*terms*/) const {}
  /// The rates of the model's extra states, given the accelerations a (default: none).
  virtual void extra_rates(double /*t*/, const double* /*x*/, const double* /*a*/, double* /*r*/) const {}
  /// The kinetic and potential energy, the Jacobi energy h and the model's conserved combination
  /// E = h - (work of the forces) + (work of explicit time) at (t, x).
  virtual void energies(double t, const double* x, double& T, double& V, double& h, double& E) const = 0;
  /// The model's outputs and witnesses, given the accelerations a.
  virtual void user_output_values(double /*t*/, const double* /*x*/, const double* /*a*/, double* /*y*/) const {}
  virtual void user_witness_values(double /*t*/, const double* /*x*/, const double* /*a*/, double* /*g*/) const {}

 private:
  struct Solution;
  struct Choice;
  class ModeSelector;  ///< the choice of modes at one event (contact_modes.cpp)
  class ImpactLaw;     ///< the impact law at one touchdown (contact_impact.cpp)
  struct OutputContext;  ///< what the outputs are computed from: the mode's solution, the terms, the energies
  /// The engine's outputs, declared once (engine_outputs gives their signals).
  static RuntimeOutputList<OutputContext> engine_output_list(const std::vector<ContactSpec>& contacts,
                                                             const std::vector<std::string>& constraint_names);
  /// The model's contact terms at (t, x), every scalar the model leaves alone 0.
  void fill_terms(double t, const double* x, std::vector<ContactTerms>& terms) const;
  /// The accelerations and the contact forces of `mode` at (t, x); false if its matrix is singular.
  bool solve(double t, const double* x, int mode, Solution& s) const;
  /// The consistent mode at (t, x) (the continuous problem); `fired`/`left`: a contact and the mode it left.
  /// `lcp_candidates`, if given, receives the number of combinations the LCP left (unchanged if it was not used).
  int select_mode(double t, const double* x, int current, int fired, int left, const char* when,
                  double* lcp_candidates = nullptr) const;
  /// Among several strictly consistent modes, keeps those that stick at the most contacts whose static friction
  /// coefficient exceeds the kinetic one (Coulomb's law with static friction: at rest below mu_s N, it sticks).
  void prefer_static_sticking(double t, const double* x, std::vector<Choice>& strict) const;
  /// Narrows each contact's candidate modes at (t, x) to those next to a solution of the contact LCP (`fired`: the
  /// contact whose event this is, or -1).
  /// `prefer_closed`: where the LCP leaves too many combinations, the contacts at rest take the closed reading
  /// (returns whether that reading was taken), else the solution's own.
  bool narrow_modes(double t, const double* x, int current, int fired, std::vector<std::vector<int>>& options,
                    const std::string& where, bool prefer_closed) const;
  /// The capture velocity of a contact at an impact: the given one, or the derived rule's (ContactSettings) from the
  /// gap's free acceleration (g'' with the contact open).
  double capture_speed(const double* x, const ContactTerms& c, double free_gap_acceleration) const;
  /// A contact back at zero gap while still opening slower than its capture velocity (a flight too short to
  /// follow): it lands plastically, its rate `rate` taken to zero by the least change of kinetic energy that keeps
  /// the other closed contacts, the sticking slips and the constraints. A capture event.
  void land_unresolved(double t, double* x, int mode, std::size_t fired, double rate, EventOutcome& out) const;
  /// The impact at (t, x) (touchdown of `fired`): applies the impulses to x; returns the event's extras.
  void impact(double t, double* x, int mode, std::size_t fired, EventOutcome& out) const;
  /// Makes the rates consistent with `mode` after an event: g' = 0 for each closed contact (for `lifted`, a contact
  /// that lifts off at zero rate: 0.1 gap_tolerance clear and g' = the zero-speed tolerance) and w = 0 for each sticking one, or for one starting to slide from rest, by the smallest change in kinetic energy (M-weighted);
  /// the event instant's residual slips and gap rates are rounding (below the zero-speed tolerance). Returns
  /// whether x changed.
  bool settle_rates(double t, double* x, int mode, int lifted = -1) const;

  /// The constraints' work W_C (0 without constraints): the energy balance is E - W_C + the dissipated energies.
  double constraint_work(const double* x) const { return constraint_names_.empty() ? 0.0 : x[n_base_ + 2]; }
  /// The moving surfaces' work W_S (0 without one): the balance is E - W_C - W_S + the dissipated energies.
  std::size_t surface_work_state() const { return n_base_ + 2 + (constraint_names_.empty() ? 0 : 1); }
  double surface_work(const double* x) const { return moving_surfaces_ ? x[surface_work_state()] : 0.0; }
  bool moving_surfaces_ = false;
  std::size_t n_ = 0, n_base_ = 0;
  std::vector<ContactSpec> contacts_;
  std::vector<std::string> constraint_names_;
  std::vector<double> x0_;
  Signals states_, outputs_;
  RuntimeOutputList<OutputContext> output_list_;  ///< the engine's outputs, then the model's (outputs_: their signals)
  std::vector<Witness> user_witnesses_;
  ContactSettings settings_;
};

}  // namespace rollsim
