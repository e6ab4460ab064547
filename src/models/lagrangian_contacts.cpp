// The user model's contacts from the scenario (a Coulomb contact of the Filippov form, or contacts of the contact
// engine): their keys, expressions and friction coefficients, and the checks at the initial state.
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "rollsim/core/error.hpp"
#include "rollsim/symbolic/nonholonomic.hpp"
#include "lagrangian_build.hpp"

namespace rollsim::lagrangian::detail {

using symbolic::KernelNames;

std::vector<ContactSpec> contact_specs(const symbolic::LagrangeModel& m) {
  std::vector<ContactSpec> v;
  GiNaC::exmap at_rest;
  for (const auto& qd : m.qd) at_rest[qd] = 0;
  for (const auto& c : m.contacts)
    v.push_back({c.name, c.unilateral, c.friction, c.friction && !c.slip_velocity.subs(at_rest).expand().is_zero()});
  return v;
}

/// The value of `e` at time 0 with the parameters' values `p` and, if `x0` is given, the coordinates and rates of
/// x0; nothing if it depends on more than that or is not a real number.
std::optional<double> value_of(const ex& e, const symbolic::LagrangeModel& m, const std::vector<double>& p,
                               const std::vector<double>* x0) {
  try {
    // Inside the try: CLN refuses a subnormal double (floating_point_underflow_exception, found by the fuzzing run).
    GiNaC::exmap values{{m.t, 0}};
    for (std::size_t i = 0; i < m.p.size(); ++i) values[m.p[i]] = GiNaC::numeric(p[i]);
    if (x0)
      for (std::size_t i = 0; i < m.n(); ++i) {
        values[m.q[i]] = GiNaC::numeric((*x0)[i]);
        values[m.qd[i]] = GiNaC::numeric((*x0)[m.n() + i]);
      }
    const ex v = e.subs(values).evalf();
    if (!GiNaC::is_a<GiNaC::numeric>(v)) return std::nullopt;  // it depends on what is not given here
    // A complex value (e.g. a negative base to a fractional power) is not a real number: NaN, which the checks
    // refuse with the expression and where it was evaluated.
    if (!GiNaC::ex_to<GiNaC::numeric>(v).is_real()) return std::numeric_limits<double>::quiet_NaN();
    return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
  } catch (...) {  // CLN's exceptions too
    return std::nullopt;  // e.g. a division by zero at these values: the kernels' evaluation reports it
  }
}

void check_friction_values(const Scenario& sc, const std::string& key, double mu, std::optional<double> mu_s,
                           const std::string& where) {
  std::ostringstream os;
  os.precision(10);
  if (!(mu >= 0) || !std::isfinite(mu)) {
    os << key << "friction_coefficient = " << sc.string(key + "friction_coefficient") << " is " << mu << where
       << "; allowed range [0, inf) (a Coulomb friction coefficient)";
    sc.fail(key + "friction_coefficient", os.str());
  }
  if (mu_s && (!(*mu_s >= mu) || !std::isfinite(*mu_s))) {
    os << key << "static_friction_coefficient = " << sc.string(key + "static_friction_coefficient") << " is " << *mu_s
       << where << "; allowed range [" << mu << ", inf): at least the sliding coefficient friction_coefficient = " << mu;
    sc.fail(key + "static_friction_coefficient", os.str());
  }
}

namespace {

/// A friction coefficient that depends on the parameters only, checked as soon as it is read.
void check_friction_at_load(const Build& b, const std::string& key, const symbolic::LagrangeModel::Contact& c) {
  const auto mu = value_of(c.friction_coefficient, b.m, b.c->p, nullptr);
  if (!mu) return;  // it depends on the state: checked at the initial state
  const bool has_static = b.rd.given(key + "static_friction_coefficient");
  check_friction_values(b.sc, key, *mu, has_static ? value_of(c.static_friction_coefficient, b.m, b.c->p, nullptr) : std::nullopt, "");
}

}  // namespace

/// The friction coefficients of contact `key` at the initial state x0, mu as the kernels evaluate it.
void check_friction_at_start(const Build& b, const std::string& key, double mu, const ex& static_mu,
                             const std::vector<double>& x0) {
  const bool has_static = b.rd.given(key + "static_friction_coefficient");
  check_friction_values(b.sc, key, mu, has_static ? value_of(static_mu, b.m, b.c->p, &x0) : std::nullopt,
                        " at the initial state");
}

namespace {

/// Refuses a contact whose given keys do not make a contact (before any of them is parsed).
void check_contact_keys(const Build& b, const std::string& name) {
  const Scenario& sc = b.sc;
  const std::string k = "contacts." + name + ".";
  auto given = [&](const std::string& leaf) { return b.rd.given(k + leaf); };
  const bool unilateral = given("gap"), friction = given("slip_velocity");
  if (!is_identifier(name))
    sc.fail(k + (unilateral ? "gap" : "slip_velocity"),
            "'" + name + "' is not a valid contact name: use letters, digits and _, not starting with a digit");
  const std::string first = unilateral ? "gap" : friction ? "slip_velocity" : "normal_force";
  if (!unilateral && !given("normal_force"))
    sc.fail(k + first, "contact " + name + " needs either a gap (a unilateral contact, its normal force computed) "
                       "or a given normal_force");
  if (unilateral && given("normal_force"))
    sc.fail(k + "normal_force", "contact " + name + " has a gap, so its normal force is computed: remove normal_force");
  if (!unilateral && !friction)
    sc.fail(k + "normal_force", "contact " + name + " has neither a gap nor a slip velocity: it would do nothing");
  if (friction != given("friction_coefficient"))
    sc.fail(k + (friction ? "slip_velocity" : "friction_coefficient"),
            "contact " + name + ": slip_velocity and friction_coefficient come together (Coulomb friction)");
  if (given("static_friction_coefficient") && !given("friction_coefficient"))
    sc.fail(k + "static_friction_coefficient", "contact " + name + ": static_friction_coefficient bounds the sticking "
                                               "friction of a contact with friction: it needs slip_velocity and "
                                               "friction_coefficient (the sliding coefficient mu, mu_s >= mu)");
  if (!unilateral && given("restitution"))
    sc.fail(k + "restitution", "contact " + name + ": restitution applies to a contact with a gap (an impact)");
}

/// The contact `name` as the derivation takes it, its expressions checked.
symbolic::LagrangeModel::Contact read_contact(const Build& b, const std::string& name) {
  const Scenario& sc = b.sc;
  const std::string k = "contacts." + name + ".";
  check_contact_keys(b, name);
  const ContactKeys keys_read = keys().contacts.read(b.rd, name);
  symbolic::LagrangeModel::Contact c;
  c.name = name;
  c.unilateral = keys_read.gap.has_value();
  c.friction = keys_read.slip_velocity.has_value();
  c.gap = keys_read.gap.value_or(0);
  if (c.gap.has(b.m.t)) sc.fail(k + "gap", "the gap must not depend on t explicitly (a fixed surface)");
  c.restitution = c.unilateral ? keys_read.restitution : ex(0);
  c.normal_force = keys_read.normal_force.value_or(0);
  c.slip_velocity = keys_read.slip_velocity.value_or(0);
  if (c.friction) {
    const std::string linear = "the slip velocity must be linear in the rates der(q) (w = J(q) der(q) + w0(q))";
    symbolic::Differentiator D;
    const std::optional<ex> form = symbolic::linear_form(D, b.m.qd, c.slip_velocity);
    if (!form)
      sc.fail(k + "slip_velocity", k + "slip_velocity = \"" + sc.string(k + "slip_velocity") + "\": " + linear);
    // Its value with every rate at 0 (w0(q), which contact_specs forms: does the surface move?) can be formed from
    // the form: linear_form checks it.
    c.slip_velocity = *form;
    if (c.slip_velocity.has(b.m.t))
      sc.fail(k + "slip_velocity", "the slip velocity must not depend on t explicitly (the switching surface is fixed)");
  }
  c.friction_coefficient = keys_read.friction_coefficient.value_or(0);
  c.static_friction_coefficient = keys_read.static_friction_coefficient.value_or(c.friction_coefficient);
  if (c.friction) check_friction_at_load(b, k, c);
  return c;
}

}  // namespace

/// Contacts: one with a given normal force and no gap is the Filippov form (has_contact); any other set goes to
/// the contact engine (m.contacts).
void read_contacts(Build& b) {
  symbolic::LagrangeModel& m = b.m;
  b.contacts.clear();
  for (const auto& name : ordered(b.sc, "contacts", "x"))
    if (!is_rolling_contact(b.sc, name)) b.contacts.push_back(name);  // a rolling contact is read with the 3-D bodies
  // With constraints, every contact goes to the contact engine, which holds the constraints too.
  // The Filippov construction sticks while the friction needed stays within mu N, the sliding bound: a static
  // coefficient takes the single contact to the contact engine, whose sticking bound is its own.
  const bool filippov_form = b.contacts.size() == 1 && !b.rd.given("contacts." + b.contacts[0] + ".gap") &&
                             !b.rd.given("contacts." + b.contacts[0] + ".static_friction_coefficient") && b.constraints.empty();
  for (const auto& name : b.contacts) {
    const symbolic::LagrangeModel::Contact c = read_contact(b, name);
    if (filippov_form) {
      m.has_contact = true;
      m.slip_velocity = c.slip_velocity;
      m.normal_force = c.normal_force;
      m.friction_coefficient = c.friction_coefficient;
    } else {
      m.contacts.push_back(c);
    }
  }
  if (m.contacts.size() > 15)
    b.sc.fail("contacts." + b.contacts[15] + ".gap", "at most 15 contacts per model are supported; this model declares " +
                                                      std::to_string(b.contacts.size()));
  check_cone_combination(b);
}

void check_cone_combination(const Build& b) {
  const symbolic::LagrangeModel& m = b.m;
  if (m.cone_contacts.empty()) return;
  const auto& first = m.cone_contacts.front();
  auto refuse = [&](const std::string& other) {
    b.sc.fail(first.source, "contact " + first.name + " (a rolling contact with Coulomb friction) and " + other +
                                " in one model: combining them is not supported yet; a model with contacts that slip "
                                "(friction_coefficient on contacts with `body`) has no other constraints or contacts");
  };
  if (!b.contacts.empty())
    refuse("contact " + b.contacts.front() + " (a gap or a slip velocity, contacts." + b.contacts.front() + ")");
  for (const auto& row : m.velocity_constraints)
    refuse(row.contact.empty() ? "velocity constraint " + row.name + " (" + row.source + ")"
                               : "the rolling contact " + row.contact + " without slip (" + row.source + ", friction = \"no_slip\")");
  if (!b.constraints.empty())
    refuse("holonomic constraint " + b.constraints.front() + " (constraints." + b.constraints.front() + ".expression)");
  if (m.cone_contacts.size() > 15)
    b.sc.fail(m.cone_contacts[15].source, "at most 15 contacts with Coulomb friction per model are supported; this model "
                                          "declares " + std::to_string(m.cone_contacts.size()));
}

std::vector<ConeContactSpec> cone_contact_specs(const symbolic::LagrangeModel& m) {
  std::vector<ConeContactSpec> v;
  GiNaC::exmap at_rest;
  for (const auto& qd : m.qd) at_rest[qd] = 0;
  for (const auto& c : m.cone_contacts) {
    // A moving surface: a slip or spin that does not vanish with the rates (a turning plane).
    bool moving = false;
    for (const ex* e : {&c.slip[0], &c.slip[1], &c.spin}) moving = moving || !e->subs(at_rest).expand().is_zero();
    ConeContactSpec spec;
    spec.name = c.name;
    spec.spin_friction = c.spin_friction;
    spec.moving_surface = moving;
    v.push_back(std::move(spec));
  }
  return v;
}

void check_cone_contacts_at_start(const Build& b, const std::vector<double>& x0, const ContactSettings& settings) {
  const Compiled& c = *b.c;
  const symbolic::LagrangeModel& m = b.m;
  Scratch& w = scratch(c);
  c.cone_contacts(fill(c, w, 0.0, x0.data(), 0.0), w.out.data());
  const std::size_t n = c.n, stride = KernelNames::cone_contact_stride(n);
  for (std::size_t k = 0; k < c.n_cone_contacts; ++k) {
    const double* o = w.out.data() + k * stride;
    double gd = 0;
    for (std::size_t i = 0; i < n; ++i) gd += o[1 + i] * x0[n + i];
    std::ostringstream os;
    os.precision(10);
    const std::string key = "contacts." + m.cone_contacts[k].name + ".body";
    if (o[0] < -settings.gap_tolerance) {
      os << "the gap of contact " << m.cone_contacts[k].name << " is " << o[0] << " at the initial state (allowed: >= -"
         << settings.gap_tolerance << ", nonsmooth.gap_tolerance): the body is below the surface; change [initial]";
      b.sc.fail(key, os.str());
    }
    if (o[0] <= settings.gap_tolerance && gd < -settings.rest_speed()) {
      os << "contact " << m.cone_contacts[k].name << " starts at zero gap approaching at g' = " << gd
         << " (allowed: >= -" << settings.rest_speed() << "): start just above the surface, or with g' >= 0";
      b.sc.fail(key, os.str());
    }
  }
}

/// The contacts at the initial state: no gap below zero, no approach at zero gap, restitutions in [0, 1].
void check_contacts_at_start(const Build& b, const std::vector<double>& x0, const ContactSettings& settings) {
  const Scenario& sc = b.sc;
  const Compiled& c = *b.c;
  const symbolic::LagrangeModel& m = b.m;
  Scratch& w = scratch(c);
  c.contacts(fill(c, w, 0.0, x0.data(), 0.0), w.out.data());
  const std::size_t n = c.n, stride = KernelNames::contact_stride(n);
  for (std::size_t k = 0; k < c.n_contacts; ++k) {
    const double* o = w.out.data() + k * stride;
    const std::string key = "contacts." + m.contacts[k].name + ".";
    std::ostringstream os;
    os.precision(10);
    if (m.contacts[k].friction) check_friction_at_start(b, key, o[4 + 2 * n], m.contacts[k].static_friction_coefficient, x0);
    if (!m.contacts[k].unilateral) continue;
    double gd = 0;
    for (std::size_t i = 0; i < n; ++i) gd += o[1 + i] * x0[n + i];
    if (o[0] < -settings.gap_tolerance) {
      os << "the gap of contact " << m.contacts[k].name << " is " << o[0] << " at the initial state (allowed: >= -"
         << settings.gap_tolerance << ", nonsmooth.gap_tolerance): the bodies overlap; change [initial]";
      sc.fail(key + "gap", os.str());
    }
    if (o[0] <= settings.gap_tolerance && gd < -settings.rest_speed()) {
      os << "contact " << m.contacts[k].name << " starts at zero gap approaching at g' = " << gd
         << " (allowed: >= -" << settings.rest_speed() << "): start just above the surface, or with g' >= 0";
      sc.fail(key + "gap", os.str());
    }
    const double e = o[5 + 2 * n];
    if (!(e >= 0 && e <= 1)) {
      os << "restitution e = " << e << " of contact " << m.contacts[k].name << " is outside [0, 1]";
      sc.fail(key + "restitution", os.str());
    }
  }
}
}  // namespace rollsim::lagrangian::detail
