#include "rollsim/models/tipping_table_contact.hpp"

#include <cmath>
#include <sstream>

#include "rollsim/core/error.hpp"
#include "rollsim/models/contact_keys.hpp"
#include "rollsim/models/tipping_table_system.hpp"

namespace rollsim::tipping_table {

namespace {

enum Q : std::size_t { kTheta1 = 0, kS = 1, kD = 2, kTheta2 = 3, kN = 4 };

/// The unit normal from the table to the wheel's centre (s, d), in the table's frame: (0, sign d) over a face
/// (|s| <= l/2), else from the nearer corner. The gap's gradient in (s, d); the slip's is its tangent (n_y, -n_x).
void table_normal(const Params& p, double s, double d, double* n) {
  const double half = 0.5 * p.table_length;
  if (std::abs(s) <= half) {
    n[0] = 0;
    n[1] = d >= 0 ? 1.0 : -1.0;
    return;
  }
  const double a = s - (s > 0 ? half : -half), rho = std::hypot(a, d);
  n[0] = a / rho;
  n[1] = d / rho;
}

/// The contact's geometry at (q, q'): the gap, its gradient and curvature term, the slip, its gradient and
/// rate term (ContactTerms without the coefficients). On the top or bottom face (|s| <= l/2) the gap is |d| - r;
/// beyond the face the distance to the nearer corner minus r (the two meet with equal value and slope).
void geometry(const Params& p, const double* x, ContactTerms& c) {
  const double r = p.wheel_radius, half = 0.5 * p.table_length;
  const double s = x[kS], d = x[kD], sd = x[kN + kS], dd = x[kN + kD];
  std::fill(c.Wn.begin(), c.Wn.end(), 0.0);
  std::fill(c.Wt.begin(), c.Wt.end(), 0.0);
  c.Wt[kTheta1] = -r;
  c.Wt[kTheta2] = r;
  double n[2];
  table_normal(p, s, d, n);
  c.Wn[kS] = n[0];
  c.Wn[kD] = n[1];
  c.Wt[kS] = n[1];
  c.Wt[kD] = -n[0];
  if (std::abs(s) <= half) {
    const double side = n[1];
    c.gap = std::abs(d) - r;
    c.gap_bias = 0;
    c.slip = side * sd + r * (x[kN + kTheta2] - x[kN + kTheta1]);
    c.slip_bias = 0;
    return;
  }
  const double a = s - (s > 0 ? half : -half), rho = std::hypot(a, d);
  const double along = a * sd + d * dd, across = d * sd - a * dd;  // rho rho', rho^2 psi'
  c.gap = rho - r;
  c.gap_bias = across * across / (rho * rho * rho);
  c.slip = across / rho + r * (x[kN + kTheta2] - x[kN + kTheta1]);
  c.slip_bias = -along * across / (rho * rho * rho);
}

Signals base_states() {
  return {{"theta1", "rad", "table angle"},
          {"s", "m", "wheel centre along the table, in the table's frame"},
          {"d", "m", "wheel centre above the table's surface line, in the table's frame"},
          {"theta2", "rad", "absolute wheel rotation"},
          Signal{"omega1", "rad/s", "table angular velocity"}.as(Role::Rate),
          Signal{"der_s", "m/s", "rate of s"}.as(Role::Rate),
          Signal{"der_d", "m/s", "rate of d"}.as(Role::Rate),
          Signal{"omega2", "rad/s", "wheel angular velocity"}.as(Role::Rate)};
}

/// The model's own outputs, each with its compute function (after the engine's).
struct ModelOutput {
  Signal signal;
  double (*value)(const Params&, const double* x);
};

double centre_x(const Params&, const double* x) {
  return x[kS] * std::cos(x[kTheta1]) - x[kD] * std::sin(x[kTheta1]);
}
double centre_y(const Params&, const double* x) {
  return x[kS] * std::sin(x[kTheta1]) + x[kD] * std::cos(x[kTheta1]);
}
double momentum(const Params& p, const double* x) {
  // The wheel centre's velocity in the table's frame is (s' - theta1' d, d' + theta1' s); its moment about the
  // pivot is (s, d) x that, frame-independent.
  const double s = x[kS], d = x[kD], w = x[kN + kTheta1];
  const double u = x[kN + kS] - w * d, v = x[kN + kD] + w * s;
  return p.table_inertia * w + p.wheel_inertia * x[kN + kTheta2] + p.wheel_mass * (s * v - d * u);
}

const std::vector<ModelOutput>& model_outputs() {
  static const std::vector<ModelOutput> v = {
      {{"wheel_x", "m", "wheel centre, horizontal (from the pivot)"}, centre_x},
      {{"wheel_y", "m", "wheel centre, vertical (from the pivot)"}, centre_y},
      {{"angular_momentum", "kg m^2/s", "angular momentum of wheel and table about the pivot"}, momentum},
  };
  return v;
}

class TableContactSystem final : public ContactEngine, public SceneSystem {
 public:
  TableContactSystem(const Params& p, const ContactOptions& o, std::vector<double> x0)
      : p_(p), o_(o), scene_(table_scene(p)) {
    Signals user;
    for (const auto& m : model_outputs()) user.push_back(m.signal);
    configure(kN, {{"table", true, p.friction_coefficient.has_value()}}, base_states(), std::move(x0), user,
              {{"table_edge", -1, o.stop_at_edge}}, o.settings);
    normal_ = signal_index(outputs(), "normal_force_table", "the table's scene");
    tangential_ = signal_index(outputs(), "tangential_force_table", "the table's scene");
  }

  const Scene& scene() const override { return scene_; }
  /// The contact point is the wheel's point nearest the table (on a face, or at the nearer corner), its force N along
  /// the gap's gradient and T along the slip's (table_normal()), turned into the world; NaN while the contact is open.
  void scene_values(double, const double* x, const double* y, int mode, double* v) const override {
    const double th = x[kTheta1], c = std::cos(th), sn = std::sin(th), r = p_.wheel_radius;
    double n[2];
    table_normal(p_, x[kS], x[kD], n);
    const bool open = contact_mode(mode, 0) == kOpen;
    const double fn = open ? NAN : y[normal_], ft = open ? NAN : y[tangential_];
    const double local[2] = {x[kS] - r * n[0], x[kD] - r * n[1]};  // the wheel's point nearest the table
    const double force_local[2] = {fn * n[0] + ft * n[1], fn * n[1] - ft * n[0]};  // tangent (n_y, -n_x)
    const double wheel[2] = {centre_x(p_, x), centre_y(p_, x)};
    const double contact[2] = {open ? NAN : local[0] * c - local[1] * sn, open ? NAN : local[0] * sn + local[1] * c};
    const double force[2] = {force_local[0] * c - force_local[1] * sn, force_local[0] * sn + force_local[1] * c};
    table_scene_values(p_, th, wheel, x[kTheta2], contact, force, v);
  }
  std::string model_name() const override { return "tipping_table"; }

  /// Whether the equations (M, f, the contact's terms, the energies) are finite at the positions and rates x.
  bool finite_at(const double* x) const {
    double M[kN * kN], f[kN], T, V, h, E;
    mass_and_forces(0.0, x, M, f);
    std::vector<ContactTerms> c(1);
    c[0].Wn.assign(kN, 0.0);
    c[0].Wt.assign(kN, 0.0);
    contact_terms(0.0, x, c.data());
    energies(0.0, x, T, V, h, E);
    bool ok = std::isfinite(T) && std::isfinite(V) && std::isfinite(E) && std::isfinite(c[0].gap) &&
              std::isfinite(c[0].gap_bias) && std::isfinite(c[0].slip) && std::isfinite(c[0].slip_bias);
    for (double v : M) ok = ok && std::isfinite(v);
    for (double v : f) ok = ok && std::isfinite(v);
    return ok;
  }

 protected:
  void mass_and_forces(double, const double* x, double* M, double* f) const override {
    const double m = p_.wheel_mass, g = p_.gravity;
    const double th = x[kTheta1], s = x[kS], d = x[kD];
    const double w = x[kN + kTheta1], sd = x[kN + kS], dd = x[kN + kD];
    for (std::size_t i = 0; i < kN * kN; ++i) M[i] = 0;
    auto at = [&](std::size_t i, std::size_t j) -> double& { return M[i + kN * j]; };
    at(kTheta1, kTheta1) = p_.table_inertia + m * (s * s + d * d);
    at(kTheta1, kS) = at(kS, kTheta1) = -m * d;
    at(kTheta1, kD) = at(kD, kTheta1) = m * s;
    at(kS, kS) = at(kD, kD) = m;
    at(kTheta2, kTheta2) = p_.wheel_inertia;
    // Lagrange's equations of T = 1/2 It w^2 + 1/2 J theta2'^2 + 1/2 m ((s' - w d)^2 + (d' + w s)^2) and
    // V = m g (s sin theta1 + d cos theta1) + 1/2 k theta1^2, with the torque tau on the table.
    const double c = std::cos(th), sn = std::sin(th);
    f[kTheta1] = -2 * m * w * (s * sd + d * dd) - m * g * (s * c - d * sn) - o_.pivot_stiffness * th + p_.table_torque;
    f[kS] = 2 * m * w * dd + m * w * w * s - m * g * sn;
    f[kD] = -2 * m * w * sd + m * w * w * d - m * g * c;
    f[kTheta2] = 0;
  }
  void contact_terms(double, const double* x, ContactTerms* terms) const override {
    ContactTerms& c = terms[0];
    geometry(p_, x, c);
    c.mu = p_.friction_coefficient.value_or(0.0);
    c.restitution = o_.restitution;
  }
  void energies(double, const double* x, double& T, double& V, double& h, double& E) const override {
    const double m = p_.wheel_mass, th = x[kTheta1], s = x[kS], d = x[kD], w = x[kN + kTheta1];
    const double u = x[kN + kS] - w * d, v = x[kN + kD] + w * s, w2 = x[kN + kTheta2];
    T = 0.5 * p_.table_inertia * w * w + 0.5 * p_.wheel_inertia * w2 * w2 + 0.5 * m * (u * u + v * v);
    V = m * p_.gravity * (s * std::sin(th) + d * std::cos(th)) + 0.5 * o_.pivot_stiffness * th * th;
    h = T + V;
    E = h - p_.table_torque * th;  // the torque's work, tau (theta1 - theta1(0)), up to a constant
  }
  void user_output_values(double, const double* x, const double*, double* y) const override {
    std::size_t j = 0;
    for (const auto& m : model_outputs()) y[j++] = m.value(p_, x);
  }
  void user_witness_values(double, const double* x, const double*, double* g) const override {
    const double half = 0.5 * p_.table_length;
    g[0] = half * half - x[kS] * x[kS];  // falls through 0 where the centre passes either corner
  }

 private:
  Params p_;
  ContactOptions o_;
  Scene scene_;
  std::size_t normal_ = 0, tangential_ = 0;
};

}  // namespace

namespace {

/// The contact formulation's own keys, bound to ContactOptions (its default member initializers are the defaults).
const Parameters<ContactOptions>& contact_parameters() {
  using O = ContactOptions;
  static const Parameters<O> list{
      "tipping_table contact keys",
      {
          param(&O::restitution,
                real_key("contact.restitution", "1", "Newton's restitution e of wheel and table at an impact").range(0, 1)),
          param(&O::pivot_stiffness,
                real_key("contact.pivot_stiffness", "N m/rad",
                         "a torsional spring at the pivot, torque -k theta1 (0: the benchmark's free table)")
                    .non_negative()),
          param(&O::height,
                real_key("initial.height", "m", "the wheel's rim above the table at the start (0: on it)").non_negative()),
          param(&O::slip, real_key("initial.slip", "m/s", "the initial slip velocity s' + r (omega2 - omega1) (0: rolling)")),
          param(&O::normal_rate,
                real_key("initial.normal_rate", "m/s", "the initial rate of the wheel centre's height over the table")),
      }};
  return list;
}

}  // namespace

std::vector<KeySpec> contact_formulation_keys() {
  std::vector<KeySpec> v = contact_parameters().keys();
  for (auto& k : nonsmooth_keys()) v.push_back(std::move(k));
  return v;
}

ContactOptions contact_options_from(const Scenario& sc) {
  ContactOptions o = contact_parameters().read(sc);
  o.stop_at_edge = actions_from(sc).stop_at_edge;
  o.settings = contact_settings_from(sc);
  return o;
}

std::unique_ptr<HybridSystem> make_contact_system(const Scenario& sc, const Params& p, const double* x0,
                                                  const ContactOptions& o) {
  const double r = p.wheel_radius, s = contact_position(p, x0);
  if (std::abs(s) >= 0.5 * p.table_length) {
    std::ostringstream os;
    os.precision(10);
    os << "the wheel starts at s = r (theta1 - theta2) = " << s << " m, at or beyond the table edge; allowed range ("
       << -0.5 * p.table_length << ", " << 0.5 * p.table_length << ") m";
    sc.fail(sc.is_default("initial.theta1") ? "initial.theta2" : "initial.theta1", os.str());
  }
  if (o.height <= o.settings.gap_tolerance && o.normal_rate < -o.settings.rest_speed()) {
    std::ostringstream os;
    os << "the wheel starts on the table approaching it at d' = " << o.normal_rate << " m/s (allowed: >= -"
       << o.settings.rest_speed() << "): start above it (initial.height > 0)";
    sc.fail("initial.normal_rate", os.str());
  }
  std::vector<double> x(2 * kN);
  x[kTheta1] = x0[0];
  x[kS] = s;
  x[kD] = r + o.height;
  x[kTheta2] = x0[1];
  x[kN + kTheta1] = x0[2];
  x[kN + kTheta2] = x0[3];
  x[kN + kS] = r * (x0[2] - x0[3]) + o.slip;
  x[kN + kD] = o.normal_rate;
  auto overflow = [&] {
    return InputError(Origin{sc.path, 0, 0},
                      "the equations of motion are not finite at the initial state: the parameters or the initial "
                      "state overflow double precision");
  };
  auto system = std::make_unique<TableContactSystem>(p, o, x);
  if (!system->finite_at(x.data())) throw overflow();
  // Nor the motion from there (its mode first: a start with no consistent contact mode is a SolverError).
  std::vector<double> xs(system->size()), xdot(system->size());
  system->initial_state(xs.data());
  system->rhs(0.0, xs.data(), system->initial_mode(xs.data()), xdot.data());
  for (double v : xdot)
    if (!std::isfinite(v)) throw overflow();
  return system;
}

}  // namespace rollsim::tipping_table
