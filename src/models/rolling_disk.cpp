#include "rollsim/models/rolling_disk.hpp"
#include "rollsim/hybrid/integrator.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/core/store_pair.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/scene.hpp"

namespace rollsim::rolling_disk {

Scales scales(const Params& p) {
  Scales s;
  if (!p.physical) return s;
  const double j = p.inertia_ratio, m = p.mass, k = p.stiffness, mu = p.friction_coefficient, g = p.gravity;
  s.omega0 = std::sqrt(k / (m * (1 + j)));
  s.length = mu * g * m * (1 + j) / (k * j);
  s.speed = s.length * s.omega0;
  s.energy = m * s.speed * s.speed;
  s.force = mu * m * g;
  return s;
}

void field(double j, int mode, const double* q, double* f) {
  f[0] = q[kY];
  if (mode == 0) {
    f[1] = -q[kX];
    f[2] = 0;
    return;
  }
  const double s = mode > 0 ? 1.0 : -1.0;
  f[1] = -(1 + j) * q[kX] - s * j;
  f[2] = -(1 + j) * (q[kX] + s);
}

double kinetic(double j, const double* q) {
  const double r = q[kY] - q[kZ];
  return 0.5 * (q[kY] * q[kY] + j * r * r);
}

double potential(double j, const double* q) { return 0.5 * (1 + j) * q[kX] * q[kX]; }

void to_dimensionless(const Params& p, double u, double v, double w, double* q) {
  const Scales s = scales(p);
  q[kX] = u / s.length;
  q[kY] = v / s.speed;
  q[kZ] = w / s.speed;
}

std::string classify(const std::string& symbols, const std::vector<double>& radii, int final_mode,
                     double final_radius, double radius_error, bool exact) {
  // The exact method's radius is exact to round-off, and it counts R^2 - 1 <= 16 eps as the unit circle.
  if (final_mode == 0 && final_radius <= (exact ? 1.0 + radius_error : 1.0 - radius_error)) return "A";
  // Within the error of the unit circle: rolling on R = 1 is permanent, on R = 1 + 1e-12 it slips; the run
  // cannot tell which.
  if (final_mode == 0 && std::abs(final_radius - 1.0) <= radius_error) return "undetermined";
  const size_t n = symbols.size();
  if (n >= 8 && radii.size() >= 3) {
    bool periodic = true;
    // The last 8 symbols alternate rolling and sliding, and the sliding directions alternate.
    for (size_t i = n - 8; i < n && periodic; ++i) {
      const bool zero_here = symbols[i] == '0';
      if (i > n - 8 && zero_here == (symbols[i - 1] == '0')) periodic = false;
      if (!zero_here && i >= n - 6 && symbols[i] == symbols[i - 2]) periodic = false;
    }
    const size_t m = radii.size();
    const bool decreasing = radii[m - 1] > 1.0 && radii[m - 2] > radii[m - 1] && radii[m - 3] > radii[m - 2];
    if (periodic && decreasing) return "B";
  }
  return "undetermined";
}

namespace {

/// What the disk's outputs share at one state.
template <class S>
struct OutputContext {
  const S* x;         ///< the state (x, y, z, dissipated)
  const Scales* scale;
  S kinetic, potential, utilization;  ///< dimensionless energies; friction force / (mu m g)
};
using Outputs = OutputList<OutputContext, double>;

/// The outputs; in physical units u, v, w first, and energies in J, the force in N.
Outputs disk_outputs(bool physical) {
  using O = Outputs;
  const std::string eu = physical ? "J" : "1", fu = physical ? "N" : "1";
  std::vector<O::Output> v;
  if (physical)
    v = {O::output("u", "m", "displacement of the centre", [](const auto& c) { return c.scale->length * c.x[kX]; }),
         O::output("v", "m/s", "velocity of the centre", [](const auto& c) { return c.scale->speed * c.x[kY]; }),
         O::output("w", "m/s", "velocity of the contact point (sliding velocity)",
                   [](const auto& c) { return c.scale->speed * c.x[kZ]; })
             .of_contact(Role::SlipVelocity, "ground")};
  return O(std::move(v)).extended({
      O::output("kinetic_energy", eu, "kinetic energy (translation and rotation)",
                [](const auto& c) { return c.scale->energy * c.kinetic; })
          .as(Role::KineticEnergy),
      O::output("potential_energy", eu, "spring energy", [](const auto& c) { return c.scale->energy * c.potential; })
          .as(Role::PotentialEnergy),
      O::output("total_energy", eu, "kinetic + potential energy",
                [](const auto& c) { return c.scale->energy * (c.kinetic + c.potential); })
          .as(Role::TotalEnergy),
      O::output("friction_force", fu, "friction force on the disk, along +u",
                [](const auto& c) { return c.scale->force * c.utilization; })
          .of_contact(Role::TangentialForce, "ground"),
      O::output("friction_utilization", "1", "friction force / (mu m g): x rolling, -sgn(z) sliding",
                [](const auto& c) { return c.utilization; }),
  });
}

/// The disk's own summary items: the classification (from the engine's symbols), the last rolling radius, the
/// energy balance, and the scales in physical units.
class DiskSummarizer final : public Summarizer {
 public:
  DiskSummarizer(const FilippovRecord& record, const Scales& s, bool physical, size_t i_total)
      : record_(record), scales_(s), physical_(physical), i_total_(i_total) {
    radii_.reserve(4);  // the last three, and one more before the oldest is dropped
  }

  void on_point(double, const double* x, const double* y, int mode) override {
    if (!started_) {
      started_ = true;
      if (y) e0_ = y[i_total_];
      if (mode == 0) last_radius_ = std::hypot(x[kX], x[kY]);
    }
    if (y) err_ = std::max(err_, std::abs(e0_ - y[i_total_] - x[kDissipated]));
    final_mode_ = mode;
    final_x_ = x[kX];  // the radius of the last point only is used: worked out in items()
    final_y_ = x[kY];
  }

  void on_tolerances(double rtol, double atol, bool exact) override {
    // The exact method counts R^2 - 1 <= 16 eps as the unit circle (rolling_disk_exact.cpp); an integrated radius
    // carries the global error, estimated as 1000 (rtol + atol) (a radius computed to 1 + 2e-10 at rtol 1e-10 on
    // the unit circle after a few turns).
    radius_error_ = exact ? 8 * std::numeric_limits<double>::epsilon() : 1000 * (rtol + atol);
    exact_ = exact;
  }
  double radius_error() const { return radius_error_; }

  /// The energy items read the outputs (the total energy); the others the states and the events only.
  void select(const std::vector<std::string>& keys) override { reads_outputs_ = names_any(keys, kEnergyKeys); }
  bool reads_outputs() const override { return reads_outputs_; }
  /// A sample moves only the energy error: the final state and mode are the last point's, the radii the events'.
  bool reads_samples() const override { return reads_outputs_; }
  std::vector<std::size_t> output_columns() const override { return {i_total_}; }
  /// The note on a radius within the integration error of 1, reported only then.
  std::vector<std::string> conditional_keys() const override { return {kNoteKey}; }

  void on_event(double, const std::string& kind, int, int, const double* x) override {
    static const std::string stick = "stick";  // compared as a string: the lengths first
    if (kind == stick) {
      last_radius_ = std::hypot(x[kX], x[kY]);
      radii_.push_back(last_radius_);
      if (radii_.size() > 3) radii_.erase(radii_.begin());
    }
  }

  std::vector<SummaryItem> items() const override {
    const std::string eu = physical_ ? "J" : "1";
    const double final_radius = std::hypot(final_x_, final_y_);
    // Each item built in place (an initializer list would copy every string once more: a sweep asks per point).
    std::vector<SummaryItem> items;
    items.reserve(11);
    items.push_back({"classification", 0,
                     classify(record_.symbols, radii_, final_mode_, final_radius, radius_error(), exact_), "",
                     "orbit type (A: permanent rolling, B: +0-0 tail towards the unit circle)", false,
                     /*tallied=*/true});
    items.push_back({"rolling_radius", last_radius_, "", "1", "radius sqrt(x^2+y^2) of the last rolling circle", false});
    items.push_back({kEnergyKeys[0], e0_, "", eu, "initial energy E(0)", false});
    items.push_back({kEnergyKeys[1], err_, "", eu, "max |E(0) - E(t) - dissipated(t)|", false});
    items.push_back({kEnergyKeys[2], e0_ != 0 ? err_ / std::abs(e0_) : err_, "", "1",
                     "max |E(0) - E(t) - dissipated(t)| / E(0)", false});
    if (!exact_ && final_mode_ == 0 && std::abs(final_radius - 1.0) <= radius_error())
      items.push_back({kNoteKey, 0,
                       "the last rolling radius is within the integration error of 1 (|R - 1| <= " +
                           std::to_string(radius_error()) +
                           "): rolling on R <= 1 is permanent (A), on R > 1 it slips; tighten solver.rtol, or use "
                           "solver.method = \"exact\"",
                       "", "why the classification is undetermined", false});
    if (physical_) {
      // The scales of the dimensionless form, so that x, y, z and the energies convert back.
      items.push_back({"scale_length", scales_.length, "", "m", "U = mu g m (1+j) / (k j): x = u/U", false});
      items.push_back({"scale_omega0", scales_.omega0, "", "1/s", "Omega0 = sqrt(k / (m (1+j))): tau = Omega0 t", false});
      items.push_back({"scale_speed", scales_.speed, "", "m/s", "U Omega0: y = v/(U Omega0), z = w/(U Omega0)", false});
      items.push_back({"scale_energy", scales_.energy, "", "J", "E* = m U^2 Omega0^2, the unit of e", false});
      items.push_back({"scale_force", scales_.force, "", "N", "mu m g, the unit of friction_utilization", false});
    }
    return items;
  }

 private:
  /// The items that read the outputs, written once (items(), select()).
  static constexpr const char* kEnergyKeys[] = {"energy_initial", "energy_balance_error_abs",
                                                "energy_balance_error_rel"};
  static constexpr const char* kNoteKey = "classification_note";
  bool reads_outputs_ = true;
  const FilippovRecord& record_;
  Scales scales_;
  bool physical_;
  size_t i_total_;
  double radius_error_ = 0;
  bool exact_ = false;
  bool started_ = false;
  double e0_ = 0, err_ = 0;
  std::vector<double> radii_;
  double last_radius_ = std::numeric_limits<double>::quiet_NaN(), final_x_ = 0, final_y_ = 0;
  int final_mode_ = 0;
};

/// The drawn disk's radius in units of U where the scenario gives none (the model needs no radius), and its thickness
/// as a fraction of its radius.
constexpr double kDrawnRadius = 0.5, kDiskThickness = 0.2;

class DiskSystem final : public FilippovSystem, public ExactSystem, public SceneSystem {
 public:
  DiskSystem(const Params& p, const double* q0)
      : p_(p),
        s_(scales(p)),
        states_(disk_states(p.physical)),
        outputs_(shared_outputs(p.physical)),
        friction_(outputs_.index("friction_force")) {
    std::copy(q0, q0 + 3, q0_);
    const double r = p.radius.value_or(kDrawnRadius * s_.length), wall = -2 * s_.length - r;
    scene_ = {2,
              {draw::ground(draw::line("ground", 2, 0, "#7f7f7f")), draw::ground(draw::line("wall", 2, 0, "#7f7f7f")),
               draw::spring("spring", "#2ca02c"), draw::disk("disk", r, kDiskThickness * r, "#1f77b4"),
               draw::contact("ground", true)}};
    wall_ = wall;
  }

  /// The ground (y = 0) and the wall the spring is tied to, the spring to the centre (u, r), the disk (its turning
  /// is not a state: drawn unturned), the contact below the centre with the friction force along +u and the normal
  /// force m g (in units of mu m g: 1/mu). Lengths in m (physical) or in U.
  const Scene& scene() const override { return scene_; }
  void scene_values(double, const double* x, const double* y, int, double* v) const override {
    const double r = scene_.drawables[3].radius, u = s_.length * x[kX];
    SceneValues(v)
        .point(wall_, 0).point(-wall_ + 4 * r, 0)
        .point(wall_, 0).point(wall_, 2 * r)
        .spring(wall_, r, u - r, r, 0.25 * r)
        .planar_pose(u, r, 0)
        .point(u, 0).point(y[friction_], s_.force / p_.friction_coefficient);
  }

  std::string model_name() const override { return "rolling_disk"; }
  Signal time_signal() const override {
    if (p_.physical) return {"time", "s", "time"};
    return {"time", "1", "dimensionless time tau = Omega0 t"};
  }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_.signals(); }
  std::string mode_name(int mode) const override {
    return mode > 0 ? "+1 (sliding, z > 0)" : (mode < 0 ? "-1 (sliding, z < 0)" : "0 (rolling)");
  }
  void initial_state(double* x0) const override {
    std::copy(q0_, q0_ + 3, x0);
    x0[kDissipated] = 0;
  }

  void field_plus(double, const double* x, double* f) const override { fill(+1, x, f); }
  void field_minus(double, const double* x, double* f) const override { fill(-1, x, f); }
  double switching(double, const double* x) const override { return x[kZ]; }
  void switching_gradient(double, const double*, double* g) const override {
    g[0] = g[1] = g[3] = 0;
    g[2] = 1;
  }
  /// In rolling (mode 0, sliding on Σ) the Filippov combination of F+ and F- is Omega0 (y, -x, 0) whatever z, as
  /// the fields' normal components -(1 + j)(x +- 1) do not depend on z, and on Σ no energy is dissipated: that
  /// closed form, not the combination formed anew at every evaluation.
  void rhs(double t, const double* x, int mode, double* xdot) const override {
    if (mode != 0) return FilippovSystem::rhs(t, x, mode, xdot);
    fill(0, x, xdot);  // field(j, 0, ...): the rolling field F0 = (y, -x, 0), no dissipation
  }
  bool jacobian_plus(double, const double*, double* J) const override { return jac(+1, J); }
  bool jacobian_minus(double, const double*, double* J) const override { return jac(-1, J); }
  bool jacobian(double t, const double* x, int mode, double* J) const override {
    if (mode != 0) return FilippovSystem::jacobian(t, x, mode, J);
    // F0 = (y, -x, 0, 0) exactly on Σ.
    std::fill(J, J + kStates * kStates, 0.0);
    J[kX + kStates * kY] = s_.omega0;
    J[kY + kStates * kX] = -s_.omega0;
    return true;
  }
  std::string crossing_kind() const override { return "reversal"; }
  /// σ± = Ω0 (-(1+j)(x ± 1)), so along F0 (x' = Ω0 y): dσ±/dt = -(1+j) Ω0² y, exactly.
  void sigma_rates(double, const double* x, double& rp, double& rm) const override {
    rp = rm = -(1 + p_.inertia_ratio) * s_.omega0 * s_.omega0 * x[kY];
  }
  bool energy_ledger(double, const double* x, int, EnergyLedger& e) const override {
    const double j = p_.inertia_ratio;
    e.energy = s_.energy * (kinetic(j, x) + potential(j, x));
    e.dissipated = x[kDissipated];
    e.dissipated_state = kDissipated;
    return true;
  }
  std::unique_ptr<Integrator> make_exact_integrator(const SolverOptions& options) const override {
    return rolling_disk::make_exact_integrator(p_, options);
  }
  void project_to_surface(double, double* x) const override { x[kZ] = 0; }

  void compute_outputs(double, const double* x, int mode, double* y) const override {
    outputs_.compute(context(x, mode), y);
  }
  /// The summary's energy items read the total energy alone: a sweep's grid samples compute that column only.
  void compute_output_columns(double, const double* x, int mode, std::span<const std::size_t> columns,
                              double* y) const override {
    outputs_.compute_columns(context(x, mode), columns, y);
  }

  std::string symbol_legend() const override { return "+ sliding forward, - backward, 0 rolling"; }
  std::unique_ptr<Summarizer> make_physics_summarizer(const FilippovRecord& record) const override {
    return std::make_unique<DiskSummarizer>(record, s_, p_.physical, outputs_.index("total_energy"));
  }

 private:
  /// What the outputs share at x in `mode`.
  OutputContext<double> context(const double* x, int mode) const {
    const double j = p_.inertia_ratio;
    // Rolling: m v' = -k u + F with x'' = -x gives F = k u j/(1+j), i.e. F/(mu m g) = x; sliding: -sgn(z).
    const double util = mode == 0 ? x[kX] : -static_cast<double>(mode);
    return {x, &s_, kinetic(j, x), potential(j, x), util};
  }

  /// F (mode +1, -1) or F0 (mode 0) times Omega0, with the dissipation's rate, formed apart and stored in pairs
  /// (store_pair): scaling f in place read back two at a time values just stored one at a time (a tenth of a DOP853
  /// run).
  void fill(int mode, const double* x, double* f) const {
    double g[3];
    field(p_.inertia_ratio, mode, x, g);
    // Smooth extension of j |z| on each side (mode z > 0 or z < 0), not |z| itself.
    const double dissipation = s_.energy * p_.inertia_ratio * mode * x[kZ];
    const double w = s_.omega0;
    store_pair(f, g[kX] * w, g[kY] * w);
    store_pair(f + 2, g[kZ] * w, dissipation * w);
  }
  bool jac(int mode, double* J) const {
    const double j = p_.inertia_ratio, w = s_.omega0;
    std::fill(J, J + kStates * kStates, 0.0);
    J[kX + kStates * kY] = w;
    J[kY + kStates * kX] = -(1 + j) * w;
    J[kZ + kStates * kX] = -(1 + j) * w;
    J[kDissipated + kStates * kZ] = w * s_.energy * j * mode;
    return true;
  }

  Params p_;
  Scales s_;
  double q0_[3];
  Scene scene_;
  double wall_ = 0;
  /// The signals of each unit system, built once and shared by every system (a sweep builds one per point).
  static const Signals& disk_states(bool physical) {
    static const auto make = [](bool phys) {
      return Signals{{"x", "1", "dimensionless displacement of the centre, u/U"},
                     Signal{"y", "1", "dimensionless velocity of the centre, v/(U Omega0)"}.as(Role::Rate),
                     Signal{"z", "1", "dimensionless velocity of the contact point, w/(U Omega0)"}.as(Role::Rate),
                     Signal{"dissipated_energy", phys ? "J" : "1",
                            "energy dissipated by friction since the start (integrated)"}
                         .as(Role::Dissipation)};
    };
    static const Signals physical_states = make(true), scaled_states = make(false);
    return physical ? physical_states : scaled_states;
  }
  static const Outputs& shared_outputs(bool physical) {
    static const Outputs physical_outputs = disk_outputs(true), scaled_outputs = disk_outputs(false);
    return physical ? physical_outputs : scaled_outputs;
  }

  const Signals& states_;
  const Outputs& outputs_;
  std::size_t friction_;
};

// ---- scenario keys --------------------------------------------------------------------------------------

const std::vector<std::string>& physical_only() {
  static const std::vector<std::string> v{"parameters.mass",      "parameters.radius",
                                          "parameters.inertia",   "parameters.stiffness",
                                          "parameters.friction_coefficient", "parameters.gravity",
                                          "initial.u",            "initial.v",
                                          "initial.w"};
  return v;
}
const std::vector<std::string>& dimensionless_only() {
  static const std::vector<std::string> v{"initial.x", "initial.y", "initial.z"};
  return v;
}

}  // namespace

const Parameters<Params>& parameters() {
  static const Parameters<Params> list{
      "rolling_disk parameters",
      {
          param(&Params::mass, real_key("parameters.mass", "kg", "disk mass m (required with units = \"physical\")").positive())
              .unset_when_absent(),
          param(&Params::radius, real_key("parameters.radius", "m",
                                          "disk radius r (units = \"physical\"; needed with inertia)")
                                     .positive()),
          param(&Params::inertia,
                real_key("parameters.inertia", "kg m^2",
                         "moment of inertia J about the centre (units = \"physical\"; give exactly one of inertia and inertia_ratio)")
                    .positive()),
          param(&Params::inertia_ratio,
                real_key("parameters.inertia_ratio", "1",
                         "j = J/(m r^2): 0.5 solid disk, 1 ring (both unit systems; required with units = \"dimensionless\")")
                    .positive())
              .unset_when_absent(),
          param(&Params::stiffness,
                real_key("parameters.stiffness", "N/m", "spring stiffness k (required with units = \"physical\")").positive())
              .unset_when_absent(),
          param(&Params::friction_coefficient,
                real_key("parameters.friction_coefficient", "1",
                         "Coulomb friction coefficient mu (required with units = \"physical\")")
                    .positive())
              .unset_when_absent(),
          param(&Params::gravity, real_key("parameters.gravity", "m/s^2",
                                           "gravitational acceleration g (units = \"physical\"; default {default})")
                                      .positive())
              .keep_when_absent(),
      }};
  return list;
}

const Parameters<InitialValues>& initial_values() {
  auto value = [](double InitialValues::*m, const char* name, const char* unit, const char* what) {
    return param(m, real_key(std::string("initial.") + name, unit, what)).keep_when_absent();
  };
  static const Parameters<InitialValues> list{
      "rolling_disk initial values",
      {
          value(&InitialValues::u, "u", "m", "displacement of the centre (units = \"physical\"; default {default})"),
          value(&InitialValues::v, "v", "m/s", "velocity of the centre (units = \"physical\"; default {default})"),
          value(&InitialValues::w, "w", "m/s",
                "velocity of the contact point (units = \"physical\"; default {default})"),
          value(&InitialValues::x, "x", "1", "u/U (units = \"dimensionless\"; default {default})"),
          value(&InitialValues::y, "y", "1", "v/(U Omega0) (units = \"dimensionless\"; default {default})"),
          value(&InitialValues::z, "z", "1", "w/(U Omega0) (units = \"dimensionless\"; default {default})"),
      }};
  return list;
}

namespace {

/// Every key of both unit systems is in the schema (optional, no default); make_system checks that the
/// given keys belong to the unit system `units` selects, so that a key of the other set gets a message saying so.
std::vector<KeySpec> schema(const std::map<std::string, std::string>&) {
  std::vector<KeySpec> v = parameters().keys();
  for (auto& k : initial_values().keys()) v.push_back(std::move(k));
  v.push_back(string_key("units", "physical", {"physical", "dimensionless"},
                         "physical: SI parameters, time in s; dimensionless: inertia_ratio only, time tau = Omega0 t"));
  // The shared keys this model narrows: its own integrator, and times in tau when dimensionless.
  const auto& shared = simulation_parameters();
  v.push_back(exact_solver_method_key("exact: closed-form propagation between events"));
  v.push_back(KeyVariant(shared.key("simulation.t_end"))
                  .with_unit("s or 1")
                  .with_description("end time (s; tau when units = \"dimensionless\")")
                  .with_default(50.0));
  v.push_back(KeyVariant(shared.key("simulation.output_dt"))
                  .with_unit("s or 1")
                  .with_description("sample spacing (s; tau when dimensionless)")
                  .with_default(0.01));
  v.push_back(output_parameters().key("title"));
  return v;
}

/// The scales of the dimensionless form, the start in its units and the fields' rates there must be finite, non-zero
/// doubles: a parameter far out of scale (g = 1e308) would give an energy unit of inf and a dissipation rate of inf
/// (or, far the other way, a length unit of 0 and a start at inf), a run that cannot be vouched for. The key blamed
/// is the parameter of the overflowing scale whose value is farthest from 1 in magnitude, or the start's largest
/// value.
void check_in_range(const Scenario& sc, const Params& p, const double* q0, const InitialValues& given) {
  struct Named {
    const char* name;
    double value;
  };
  const Scales s = scales(p);  // all 1 in dimensionless units
  if (p.physical) {
    const Named units[] = {{"Omega0 = sqrt(k / (m (1+j)))", s.omega0},
                 {"U = mu g m (1+j) / (k j)", s.length},
                 {"U Omega0", s.speed},
                 {"E* = m U^2 Omega0^2", s.energy},
                 {"mu m g", s.force},
                 {"E* Omega0 (the unit of the dissipation rate)", s.energy * s.omega0}};
    for (const auto& u : units) {
      if (std::isfinite(u.value) && u.value > 0) continue;
      const Named given_params[] = {{"parameters.mass", p.mass},
                                    {"parameters.stiffness", p.stiffness},
                                    {"parameters.friction_coefficient", p.friction_coefficient},
                                    {"parameters.gravity", p.gravity},
                                    {"parameters.inertia_ratio", p.inertia_ratio}};
      Named blamed = given_params[0];
      double far = -1;
      for (const auto& g : given_params)
        if (sc.has(g.name) && std::abs(std::log10(g.value)) > far) {
          far = std::abs(std::log10(g.value));
          blamed = g;
        }
      std::ostringstream m;
      m << "the disk's unit " << u.name << " = " << u.value << " with these parameters (" << blamed.name << " = "
        << blamed.value << "): the scales of the dimensionless form must be finite, non-zero numbers; allowed: "
        << "parameters whose products stay within the doubles' range (about 1e-300 to 1e300)";
      sc.fail(blamed.name, m.str());
    }
  }
  bool finite = std::isfinite(q0[kX]) && std::isfinite(q0[kY]) && std::isfinite(q0[kZ]);
  for (int mode = -1; mode <= 1 && finite; ++mode) {
    double f[3];
    field(p.inertia_ratio, mode, q0, f);
    for (double v : f) finite = finite && std::isfinite(v * s.omega0);
  }
  if (finite) return;
  const Named start[3] = {p.physical ? Named{"initial.u", given.u} : Named{"initial.x", given.x},
                          p.physical ? Named{"initial.v", given.v} : Named{"initial.y", given.y},
                          p.physical ? Named{"initial.w", given.w} : Named{"initial.z", given.z}};
  int worst = 0;
  for (int i = 1; i < 3; ++i)
    if (!(std::abs(q0[i]) <= std::abs(q0[worst]))) worst = i;
  std::ostringstream m;
  m << "'" << start[worst].name << "' = " << start[worst].value << " is " << q0[worst]
    << " in the units of the dimensionless form, where the disk's rates are not finite numbers; allowed: a start "
       "whose dimensionless values x, y, z and (1 + j) x stay within the doubles' range (about 1e-300 to 1e300)";
  sc.fail(sc.has(start[worst].name) ? start[worst].name : "parameters.inertia_ratio", m.str());
}

std::unique_ptr<HybridSystem> system_from(const Scenario& sc) {
  const std::string units = sc.string("units");
  const std::string where = sc.is_default("units") ? "model" : "units";
  Params p = parameters().read(sc);
  const InitialValues given = initial_values().read(sc);
  double q0[3];
  if (units == "dimensionless") {
    for (const auto& k : physical_only())
      if (sc.has(k))
        sc.fail(k, "'" + k + "' belongs to units = \"physical\", but this scenario has units = \"dimensionless\", which takes "
                   "parameters.inertia_ratio and initial.x, initial.y, initial.z only");
    if (!sc.has("parameters.inertia_ratio"))
      sc.fail(where, "units = \"dimensionless\" requires parameters.inertia_ratio (j = J/(m r^2))");
    p.physical = false;
    q0[kX] = given.x;
    q0[kY] = given.y;
    q0[kZ] = given.z;
  } else {
    for (const auto& k : dimensionless_only())
      if (sc.has(k))
        sc.fail(k, "'" + k + "' belongs to units = \"dimensionless\", but this scenario has units = \"physical\", which takes "
                   "initial.u, initial.v, initial.w (or set units = \"dimensionless\")");
    for (const auto* k : {"parameters.mass", "parameters.stiffness", "parameters.friction_coefficient"})
      if (!sc.has(k)) sc.fail(where, std::string("units = \"physical\" requires ") + k);
    const bool has_j = sc.has("parameters.inertia_ratio"), has_J = sc.has("parameters.inertia");
    if (has_j && has_J)
      sc.fail("parameters.inertia",
              "give exactly one of parameters.inertia and parameters.inertia_ratio, not both");
    if (!has_j && !has_J) sc.fail(where, "units = \"physical\" requires parameters.inertia or parameters.inertia_ratio");
    p.physical = true;
    if (has_J) {
      if (!p.radius) sc.fail("parameters.inertia", "parameters.inertia needs parameters.radius");
      p.inertia_ratio = *p.inertia / (p.mass * *p.radius * *p.radius);
    }
    to_dimensionless(p, given.u, given.v, given.w, q0);
  }
  check_in_range(sc, p, q0, given);
  return make_system(p, q0);
}

}  // namespace

std::unique_ptr<HybridSystem> make_system(const Params& p, const double* xyz0) {
  return std::make_unique<DiskSystem>(p, xyz0);
}

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "rolling_disk";
  e.description = "disk rolling or sliding under Coulomb friction, tied to a wall by a spring (Filippov system)";
  e.schema = schema;
  e.make_system = system_from;
  return e;
}

}  // namespace rollsim::rolling_disk
