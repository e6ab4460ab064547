#pragma once
// A user model while it is built, and the steps of the build that live in their own files (private to
// src/models/lagrangian*.cpp): lagrangian_build.cpp (the names, the expressions, the start and the system),
// lagrangian_contacts.cpp, lagrangian_compile.cpp (outputs, events, derivation, compilation) and
// lagrangian_checks.cpp (the checks at the initial state).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rollsim/hybrid/cone_engine.hpp"
#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/kinematics/frames.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian::detail {

/// A user model while it is built: the scenario and its reader, the symbolic model and the compiled form, and
/// what the later steps take from the earlier ones.
struct Build {
  explicit Build(const Scenario& scenario) : sc(scenario), rd{scenario, {}} {}

  const Scenario& sc;
  Reader rd;
  symbolic::LagrangeModel m;
  std::shared_ptr<Compiled> c = std::make_shared<Compiled>();
  std::vector<std::string> constraints;             ///< constraint names, in the file's order
  std::vector<std::string> velocity_constraints;    ///< velocity (nonholonomic) constraint names, in the file's order
  std::vector<std::string> contacts;                ///< contact names, in the file's order
  std::vector<std::string> bodies;                  ///< body names, in the order of their keys
  std::vector<CoordinateTerms> coordinate_terms;    ///< per coordinate: its start and its force
};

// ---- the scene (lagrangian_scene.cpp) ------------------------------------------------------------------------

/// The colour of the body drawn `index`-th.
std::string body_color(std::size_t index);
/// Appends the drawable d to the scene and the expressions of its values (d.size() of them, functions of t, q and
/// the parameters) to m.scene.
void add_drawable(Scene& scene, symbolic::LagrangeModel& m, Drawable d, const std::vector<ex>& values);
/// A pose's values: the position, then the rotation's rows.
std::vector<ex> pose_values(const kinematics::Vec3& position, const kinematics::Mat3& rotation);
/// A rotation whose third column is the direction `axis` (the frame of a disk whose axis it is, in the axes `axis`
/// is given in).
kinematics::Mat3 to_local_z(const std::array<double, 3>& axis);
/// The [[draw]] entries, after the bodies (their scene's dimension): each point's coordinates checked against the
/// dimension, the count of points against the kind, the colour and a constant positive radius.
void read_draws(Build& b);
/// The drawn shapes of the body at `path` ("bodies.0", named `name`, coloured `color`; docs/user-models.md): each
/// box and rod of its `draw` key, fixed in the body at `position` (its centre of mass) with the rotation R from its
/// axes to the world, their sizes and points checked (`dims` components each: 3 for a 3-D body, 2 for a planar
/// one). A shape is named `name` when it is all the body's drawing (`alone` and one shape), else name_1, name_2, ...
/// Returns how many it drew.
std::size_t add_body_shapes(const Reader& rd, symbolic::LagrangeModel& m, const std::vector<double>& p, Scene& scene,
                            const std::string& path, const std::string& name, const kinematics::Vec3& position,
                            const kinematics::Mat3& R, std::size_t dims, const std::string& color, bool alone);
/// A body drawn as a dot at its centre of mass: its radius [m].
inline constexpr double kBodyDot = 0.02;

// ---- contacts (lagrangian_contacts.cpp) ---------------------------------------------------------------------

/// Contacts: one with a given normal force and no gap is the Filippov form (has_contact); any other set goes to
/// the contact engine (m.contacts).
void read_contacts(Build& b);
/// The contact engine's description of the model's contacts.
std::vector<ContactSpec> contact_specs(const symbolic::LagrangeModel& m);
/// The value of `e` at time 0 with the parameters' values `p` and, if `x0` is given, the coordinates and rates of
/// x0; nothing if it depends on more than that or is not a real number.
std::optional<double> value_of(const GiNaC::ex& e, const symbolic::LagrangeModel& m, const std::vector<double>& p,
                               const std::vector<double>* x0);
/// The friction coefficients of contact `key` at the initial state x0, mu as the kernels evaluate it.
void check_friction_at_start(const Build& b, const std::string& key, double mu, const GiNaC::ex& static_mu,
                             const std::vector<double>& x0);
/// The contacts at the initial state: no gap below zero, no approach at zero gap, restitutions in [0, 1].
void check_contacts_at_start(const Build& b, const std::vector<double>& x0, const ContactSettings& settings);
/// Refuses a friction coefficient mu < 0 (or not finite) and a static one mu_s < mu of contact `key` ("contacts.NAME.")
/// with their values; `where` says when they were evaluated.
void check_friction_values(const Scenario& sc, const std::string& key, double mu, std::optional<double> mu_s,
                           const std::string& where);
/// Refuses a model whose rolling contacts with Coulomb friction (m.cone_contacts) come with other constraints or
/// contacts (not supported yet), or more than 15 of them.
void check_cone_combination(const Build& b);
/// The cone engine's description of the model's contacts with Coulomb friction.
std::vector<ConeContactSpec> cone_contact_specs(const symbolic::LagrangeModel& m);
/// The contacts with Coulomb friction at the initial state: no gap below zero, no approach at zero gap.
void check_cone_contacts_at_start(const Build& b, const std::vector<double>& x0, const ContactSettings& settings);

// ---- outputs, events, derivation and compilation (lagrangian_compile.cpp) -----------------------------------

void read_outputs_and_events(Build& b);
/// Names must not collide with the built-in signals.
void check_signal_names(const Build& b);
/// The derivation and the compiled kernels (shared by every build of the same model text), the layout.
void derive_and_compile(Build& b);

// ---- checks at the initial state (lagrangian_checks.cpp) ----------------------------------------------------

/// The mass matrix d2T/dder(q)2 must be regular at the initial state.
/// The mass matrix M and the forces f of M q'' = f at the start x0 (2n values), from the kernels alone (no GiNaC):
/// M's extreme singular values, whether it is regular (smin > 1e-12 smax) and f finite. f stays in the scratch.
struct MassAtStart {
  Eigen::MatrixXd M;
  double smax = 0, smin = 0;
  bool regular = false, forces_finite = false;
};
MassAtStart mass_at_start(const Compiled& c, const double* x0);
void check_mass_matrix(const Build& b, const std::vector<double>& x0);
/// The generalized forces f of M q'' = f are finite at the initial state (after check_mass_matrix, which evaluates them).
void check_forces_finite(const Build& b);
/// The constraints at the initial state: satisfied, with their rates, and independent.
void check_constraints_at_start(const Build& b, const std::vector<double>& x0);

}  // namespace rollsim::lagrangian::detail
