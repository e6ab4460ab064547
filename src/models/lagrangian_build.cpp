// Building a user model's system from a validated scenario, in the order of its seams: the names, the
// expressions, the contacts, the outputs and events, the derivation and compilation, the layout of the compiled
// form, and the checks at the initial state.
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <Eigen/Dense>

#include "rollsim/core/error.hpp"
#include "rollsim/models/contact_keys.hpp"
#include "rollsim/symbolic/nonholonomic.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian::detail {

namespace {

using symbolic::KernelNames;

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

// ---- names -------------------------------------------------------------------------------------------------

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> r = [] {
    std::set<std::string> s{"t", "pi"};
    for (const auto& [f, n] : symbolic::functions()) s.insert(f);
    return s;
  }();
  return r;
}

/// Refuses a scenario without [coordinates], at the first key that presumes coordinates ([initial],
/// [initial_rates], [lagrangian]), else at `model`.
[[noreturn]] void fail_without_coordinates(const Scenario& sc) {
  std::string at = "model";
  for (const auto& [k, e] : sc.values)
    if (!e.defaulted && (k.rfind("initial.", 0) == 0 || k.rfind("initial_rates.", 0) == 0 || k.rfind("lagrangian.", 0) == 0) &&
        (at == "model" || std::tie(e.origin.line, e.origin.column) < std::tie(sc.values.at(at).origin.line, sc.values.at(at).origin.column)))
      at = k;
  sc.fail(at, "a user model needs [coordinates]: the scenario has no [coordinates] table; name each generalized "
              "coordinate with its unit, e.g. [coordinates] x = \"m\"" +
                  (at == "model" ? std::string() : " (" + at + " refers to coordinates)"));
}

/// The parameters and coordinates (names, values, units), the constraints' names, the model's symbols and the
/// reader's name table.
void read_names(Build& b) {
  const Scenario& sc = b.sc;
  symbolic::LagrangeModel& m = b.m;
  m.parameters = ordered(sc, "parameters");
  m.coordinates = ordered(sc, "coordinates");
  if (m.coordinates.empty()) fail_without_coordinates(sc);
  for (const auto& section : {"parameters", "coordinates"})
    for (const auto& name : section == std::string("parameters") ? m.parameters : m.coordinates) {
      const std::string key = std::string(section) + "." + name;
      if (!is_identifier(name))
        sc.fail(key, "'" + name + "' is not a valid name: use letters, digits and _, not starting with a digit");
      if (reserved_names().count(name))
        sc.fail(key, "'" + name + "' is reserved (t is time, pi the constant, and function names); choose another name");
    }
  for (const auto& q : m.coordinates)
    if (std::find(m.parameters.begin(), m.parameters.end(), q) != m.parameters.end())
      sc.fail("coordinates." + q, "'" + q + "' is both a coordinate and a parameter (parameters." + q + "); rename one");
  for (const auto& p : m.parameters) b.c->p.push_back(keys().parameters.read(b.rd, p).value);
  for (const auto& q : m.coordinates) b.c->units.push_back(keys().coordinates.read(b.rd, q).unit);
  b.constraints.clear();
  for (const auto& name : ordered(sc, "constraints", "expression"))
    (b.rd.has_text("constraints." + name + ".velocity") ? b.velocity_constraints : b.constraints).push_back(name);
  m.make_symbols(b.constraints.size());

  symbolic::NameTable& names = b.rd.names;
  names.symbols["t"] = m.t;
  for (std::size_t i = 0; i < m.parameters.size(); ++i) names.symbols[m.parameters[i]] = m.p[i];
  for (std::size_t i = 0; i < m.coordinates.size(); ++i) {
    names.symbols[m.coordinates[i]] = m.q[i];
    names.rates[m.coordinates[i]] = m.qd[i];
    names.accelerations[m.coordinates[i]] = m.a[i];
  }
}

// ---- expressions -------------------------------------------------------------------------------------------

/// A body `name`: T += 1/2 m (x'^2 + y'^2) + 1/2 I angle'^2, V += m g y.
void add_body(Build& b, const std::string& name) {
  symbolic::LagrangeModel& m = b.m;
  const BodyKeys body = keys().bodies.read(b.rd, name);
  auto rate = [&](const ex& e) {
    ex r = symbolic::d(e, m.t);
    for (std::size_t i = 0; i < m.n(); ++i) r += symbolic::d(e, m.q[i]) * m.qd[i];
    return r;
  };
  const ex xd = rate(body.x), yd = rate(body.y), wd = rate(body.angle);
  m.kinetic += GiNaC::numeric(1, 2) * body.mass * (xd * xd + yd * yd) + GiNaC::numeric(1, 2) * body.inertia * wd * wd;
  if (!body.y.is_zero()) {
    auto g = b.rd.names.symbols.find("g");
    if (g == b.rd.names.symbols.end())
      b.sc.fail("bodies." + name + ".y", "a body with a height needs the gravitational acceleration as parameters.g (gravity along -y)");
    m.potential += body.mass * g->second * body.y;
  }
}

/// constraints.NAME.velocity: a row of the independent-speed form (lagrangian_nonholonomic.cpp), linear in der(q).
void add_velocity_constraint(Build& b, const std::string& name) {
  const std::string key = "constraints." + name + ".velocity";
  if (!is_identifier(name))
    b.sc.fail(key, "'" + name + "' is not a valid constraint name: use letters, digits and _, not starting with a digit");
  if (b.rd.has_text("constraints." + name + ".expression"))
    b.sc.fail(key, "constraint " + name + " has both `expression` and `velocity`: give one (a holonomic constraint is "
                   "carried as its rate in a model with velocity constraints)");
  const ex rate = *keys().constraints.read(b.rd, name).velocity;
  if (!symbolic::linear_in_rates(b.m, rate))
    b.sc.fail(key, key + " = \"" + b.sc.string(key) + "\": a velocity constraint must be linear in the rates der(q) "
                   "(A(t, q) der(q) + b(t, q) = 0)");
  bool has_rate = false;
  for (const auto& v : b.m.qd) has_rate = has_rate || !symbolic::d(rate, v).is_zero();
  if (!has_rate)
    b.sc.fail(key, key + " = \"" + b.sc.string(key) + "\" has no rate der(q): a position-level constraint belongs in "
                   "`expression`");
  symbolic::LagrangeModel::VelocityConstraint row;
  row.name = name;
  row.rate = rate;
  row.source = key;
  b.m.velocity_constraints.push_back(std::move(row));
}

/// In a model with velocity rows, the holonomic constraints become rows too (their total time derivative, with
/// the constraint as the position-level residual), and contacts other than rolling ones are refused.
void holonomic_as_rows(Build& b) {
  symbolic::LagrangeModel& m = b.m;
  if (m.velocity_constraints.empty()) return;
  if (!b.contacts.empty()) {
    std::string at = "model";  // the contact's first key the file gives
    for (const auto& [k, e] : b.sc.values)
      if (!e.defaulted && k.rfind("contacts." + b.contacts.front() + ".", 0) == 0 && (at == "model" ||
          std::tie(e.origin.line, e.origin.column) < std::tie(b.sc.values.at(at).origin.line, b.sc.values.at(at).origin.column)))
        at = k;
    b.sc.fail(at, "contact " + b.contacts.front() + " (a gap or a Coulomb slip velocity) "
              "cannot be combined with velocity constraints or rolling contacts in one model; only rolling contacts "
              "(contacts.NAME.body) can");
  }
  for (std::size_t k = 0; k < m.constraints.size(); ++k) {
    symbolic::LagrangeModel::VelocityConstraint row;
    row.name = m.constraint_names[k];
    row.rate = symbolic::d(m.constraints[k], m.t);
    for (std::size_t i = 0; i < m.n(); ++i) row.rate += symbolic::d(m.constraints[k], m.q[i]) * m.qd[i];
    row.position = m.constraints[k];
    row.source = "constraints." + row.name + ".expression";
    m.velocity_constraints.push_back(std::move(row));
  }
  m.constraints.clear();
  m.constraint_names.clear();
}

std::optional<double> value_of(const ex& e, const symbolic::LagrangeModel& m, const std::vector<double>& p,
                               const std::vector<double>* x0);

/// The value of a start key (initial.q, initial_rates.q): a number or an expression of the parameters; an input
/// error at the key for one of t or the coordinates, or without a finite real value.
double start_value(const Build& b, const ex& e, const std::string& key) {
  const std::optional<double> v = value_of(e, b.m, b.c->p, nullptr);
  if (!v || e.has(b.m.t))
    b.sc.fail(key, key + " = \"" + b.sc.string(key) + "\": a start value is a number or an expression of the parameters, "
                   "not of t or the coordinates");
  if (!std::isfinite(*v))
    b.sc.fail(key, key + " = \"" + b.sc.string(key) + "\" is not a finite real number at the parameters' values");
  return *v;
}

/// The energies, the generalized forces and the start of each coordinate, the bodies and the constraints.
void read_expressions(Build& b) {
  symbolic::LagrangeModel& m = b.m;
  const EnergyKeys energies = keys().energies.read(b.rd, "");
  m.kinetic = energies.kinetic;
  m.potential = energies.potential;
  for (const auto& q : m.coordinates) {
    CoordinateTerms terms = keys().coordinate_terms.read(b.rd, q);
    terms.initial = start_value(b, terms.initial_expression, "initial." + q);
    terms.initial_rate = start_value(b, terms.initial_rate_expression, "initial_rates." + q);
    b.coordinate_terms.push_back(std::move(terms));
    m.forces.push_back(b.coordinate_terms.back().force);
  }
  for (const auto& [k, e] : b.sc.values)
    if (k.rfind("bodies.", 0) == 0 && k.size() > 5 && k.compare(k.size() - 5, 5, ".mass") == 0)
      b.bodies.push_back(k.substr(7, k.size() - 12));
  for (const auto& name : b.bodies)
    if (!is_3d(b.sc, "bodies." + name)) add_body(b, name);
  for (const auto& name : b.constraints) {
    const ConstraintKeys keys_read = keys().constraints.read(b.rd, name);
    if (!keys_read.expression)
      b.sc.fail("constraints." + name, "constraint " + name + " needs `expression` (a holonomic constraint C(t, q) = 0) or "
                                       "`velocity` (a velocity constraint, linear in der(q))");
    m.constraint_names.push_back(name);
    m.constraints.push_back(*keys_read.expression);
  }
  for (const auto& name : b.velocity_constraints) add_velocity_constraint(b, name);
  // The 3-D bodies, the points and the rolling contacts (lagrangian_3d.cpp).
  std::vector<double> q0;
  for (const auto& term : b.coordinate_terms) q0.push_back(term.initial);
  std::vector<std::string> rolling;
  for (const auto& name : ordered(b.sc, "contacts", "x"))
    if (is_rolling_contact(b.sc, name)) rolling.push_back(name);
  read_3d(b.rd, m, b.c->p, q0, b.bodies, rolling);
}

// ---- contacts ----------------------------------------------------------------------------------------------

bool linear_in(const ex& e, const std::vector<ex>& rates) {
  for (const auto& a : rates)
    for (const auto& b : rates)
      if (!symbolic::d(symbolic::d(e, a), b).normal().is_zero()) return false;
  return true;
}

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
  GiNaC::exmap values{{m.t, 0}};
  for (std::size_t i = 0; i < m.p.size(); ++i) values[m.p[i]] = GiNaC::numeric(p[i]);
  if (x0)
    for (std::size_t i = 0; i < m.n(); ++i) {
      values[m.q[i]] = GiNaC::numeric((*x0)[i]);
      values[m.qd[i]] = GiNaC::numeric((*x0)[m.n() + i]);
    }
  try {
    const ex v = e.subs(values).evalf();
    if (!GiNaC::is_a<GiNaC::numeric>(v)) return std::nullopt;  // it depends on what is not given here
    // A complex value (e.g. a negative base to a fractional power) is not a real number: NaN, which the checks
    // refuse with the expression and where it was evaluated.
    if (!GiNaC::ex_to<GiNaC::numeric>(v).is_real()) return std::numeric_limits<double>::quiet_NaN();
    return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
  } catch (const std::exception&) {
    return std::nullopt;  // e.g. a division by zero at these values: the kernels' evaluation reports it
  }
}

/// Refuses a friction coefficient mu < 0 (or not finite) and a static one mu_s < mu of contact `key` ("contacts.NAME.")
/// with their values; `where` says when they were evaluated.
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

/// A friction coefficient that depends on the parameters only, checked as soon as it is read.
void check_friction_at_load(const Build& b, const std::string& key, const symbolic::LagrangeModel::Contact& c) {
  const auto mu = value_of(c.friction_coefficient, b.m, b.c->p, nullptr);
  if (!mu) return;  // it depends on the state: checked at the initial state
  const bool has_static = b.rd.given(key + "static_friction_coefficient");
  check_friction_values(b.sc, key, *mu, has_static ? value_of(c.static_friction_coefficient, b.m, b.c->p, nullptr) : std::nullopt, "");
}

/// The friction coefficients of contact `key` at the initial state x0, mu as the kernels evaluate it.
void check_friction_at_start(const Build& b, const std::string& key, double mu, const ex& static_mu,
                             const std::vector<double>& x0) {
  const bool has_static = b.rd.given(key + "static_friction_coefficient");
  check_friction_values(b.sc, key, mu, has_static ? value_of(static_mu, b.m, b.c->p, &x0) : std::nullopt,
                        " at the initial state");
}

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
    if (!linear_in(c.slip_velocity, b.m.qd))
      sc.fail(k + "slip_velocity", k + "slip_velocity = \"" + sc.string(k + "slip_velocity") +
                                       "\": the slip velocity must be linear in the rates der(q) (w = J(q) der(q) + w0(q))");
    if (c.slip_velocity.has(b.m.t))
      sc.fail(k + "slip_velocity", "the slip velocity must not depend on t explicitly (the switching surface is fixed)");
  }
  c.friction_coefficient = keys_read.friction_coefficient.value_or(0);
  c.static_friction_coefficient = keys_read.static_friction_coefficient.value_or(c.friction_coefficient);
  if (c.friction) check_friction_at_load(b, k, c);
  return c;
}

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
}

// ---- outputs and events ------------------------------------------------------------------------------------

void read_outputs_and_events(Build& b) {
  symbolic::LagrangeModel& m = b.m;
  for (const auto& o : ordered(b.sc, "outputs", "expression")) {
    const OutputKeys out = keys().outputs.read(b.rd, o);
    m.outputs.push_back(out.expression);
    b.c->user_outputs.push_back({o, out.unit, out.description});
  }
  for (const auto& e : ordered(b.sc, "events", "when")) {
    const std::string k = "events." + e + ".";
    const EventKeys event = keys().events.read(b.rd, e);
    m.events.push_back(event.when);
    if (m.has_contact && (e == "switching_surface" || e == "sigma_plus" || e == "sigma_minus"))
      b.sc.fail(k + "when", "the event name '" + e + "' is the contact's own witness; choose another name");
    for (const auto& spec : contact_specs(m))
      for (const auto& w : ContactEngine::witness_names(spec))
        if (e == w) b.sc.fail(k + "when", "the event name '" + e + "' is a witness of contact " + spec.name + "; choose another name");
    b.c->events.push_back({e, event.direction, event.terminal});
  }
}

/// Names must not collide with the built-in signals.
void check_signal_names(const Build& b) {
  const symbolic::LagrangeModel& m = b.m;
  std::set<std::string> taken;
  Compiled probe;
  probe.n = m.n();
  probe.coordinates = m.coordinates;
  probe.units.assign(m.n(), "");
  probe.has_contact = m.has_contact;
  probe.constraint_names = m.constraint_names;
  for (const auto& s : state_signals(probe)) taken.insert(s.name);
  for (const auto& s : output_signals(probe)) taken.insert(s.name);
  for (const auto& s : {"work_forces", "dissipated_friction", "work_explicit_time", "work_constraints"}) taken.insert(s);
  for (const auto& s : ContactEngine::engine_states(true, true)) taken.insert(s.name);
  for (const auto& s : ContactEngine::engine_outputs(contact_specs(m))) taken.insert(s.name);
  // A constraint's multiplier (lambda_NAME) must not take a coordinate's or a built-in signal's name.
  for (const auto& n : m.constraint_names)
    if (taken.count("lambda_" + n))
      b.sc.fail("constraints." + n + ".expression", "constraint " + n + " would name its multiplier 'lambda_" + n +
                                                        "', which another signal has; rename the constraint");
  for (const auto& n : m.constraint_names) taken.insert("lambda_" + n);
  for (const auto& o : b.c->user_outputs)
    if (taken.count(o.name))
      b.sc.fail("outputs." + o.name + ".expression", "the output name '" + o.name + "' is taken by a built-in signal; choose another");
}

// ---- derivation and compilation ----------------------------------------------------------------------------

/// Every scenario text that defines the model's equations (not the parameter values or the start).
std::string model_text_key(const Scenario& sc) {
  std::string key;
  for (const auto& [k, e] : sc.values) {
    const bool defining = k.rfind("lagrangian.", 0) == 0 || k.rfind("bodies.", 0) == 0 || k.rfind("constraints.", 0) == 0 ||
                          k.rfind("contacts.", 0) == 0 || k.rfind("outputs.", 0) == 0 || k.rfind("events.", 0) == 0 ||
                          k.rfind("coordinates.", 0) == 0 || k.rfind("points.", 0) == 0;
    if (defining && std::holds_alternative<std::string>(e.value)) key += k + "=" + std::get<std::string>(e.value) + "\n";
    if (defining && !e.strings.empty()) {  // a list of expressions (a 3-D position, an inertia, a matrix by rows)
      key += k + "=[";
      for (const auto& item : e.strings) key += item + "\x1f";
      for (double row : e.list) key += std::to_string(row) + "\x1f";
      key += "]\n";
    }
    if (k.rfind("parameters.", 0) == 0) key += k + "\n";
  }
  // The order of the coordinates and parameters (the file's) matters too.
  for (const auto& s : {"coordinates", "parameters", "constraints", "contacts", "outputs", "events"})
    for (const auto& n : ordered(sc, s, s == std::string("coordinates") || s == std::string("parameters") ? "" : "x"))
      key += std::string(s) + ":" + n + "\n";
  return key;
}

struct DerivedModel {
  std::shared_ptr<symbolic::CompiledKernels> lib;
  symbolic::Derivation flags;  ///< without its kernels
  SetupTimes setup;
};

/// The derivation and the compiled kernels of a model, once per process for each model text; the compiled
/// library is cached on disk under the same text, so a run that finds it derives nothing.
DerivedModel derived_model(const std::string& key, const symbolic::LagrangeModel& m, const Scenario& sc) {
  static std::mutex mutex;
  static std::map<std::string, DerivedModel> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  DerivedModel out;
  try {
    out.lib = symbolic::CompiledKernels::find(key);
    if (out.lib) {
      out.flags = symbolic::derivation_flags(m);
    } else {
      out.flags = symbolic::derive(m);
      out.setup.derive_seconds = out.flags.seconds;
      const auto generate_start = std::chrono::steady_clock::now();
      const std::string source = symbolic::generate_source(out.flags.kernels, m.inputs());
      out.setup.generate_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - generate_start).count();
      out.lib = symbolic::CompiledKernels::load(source, key);
    }
  } catch (const IoError&) {
    throw;  // an unsafe or unwritable model cache: exit 4
  } catch (const symbolic::CompileError& e) {
    throw InputError(sc.origin("model"), e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(sc.origin("model"), std::string("the model uses an operation rollsim cannot compile: ") + e.what());
  } catch (const std::exception& e) {
    throw InputError(sc.origin("model"), std::string("deriving the equations of motion failed: ") + e.what());
  }
  out.setup.compile_seconds = out.lib->compile_seconds();
  out.setup.from_cache = out.lib->from_cache();
  out.setup.library = out.lib->library_path();
  out.flags.kernels.clear();
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, out);
  return out;
}

// ---- layout ------------------------------------------------------------------------------------------------

/// The compiled form's sizes, flags and input layout, from the model and its derivation.
void lay_out(Build& b, const symbolic::Derivation& dv) {
  const symbolic::LagrangeModel& m = b.m;
  Compiled& c = *b.c;
  const symbolic::InputLayout lay(m);
  c.n = m.n();
  c.np = m.p.size();
  c.nc = m.constraints.size();
  c.n_extra = dv.n_extra;
  c.n_user_outputs = m.outputs.size();
  c.n_events = m.events.size();
  c.n_contacts = m.contacts.size();
  c.n_dae_extra = c.nc && !c.n_contacts ? (dv.has_forces ? 1 : 0) + (dv.explicit_time ? 1 : 0) + 1 : 0;
  c.has_contact = m.has_contact;
  c.has_forces = dv.has_forces;
  c.explicit_time = dv.explicit_time;
  c.friction_dissipates = dv.friction_dissipates;
  c.coordinates = m.coordinates;
  c.constraint_names = m.constraint_names;
  for (const auto& chart : m.charts) c.charts.emplace_back(chart.body, chart.sequence);
  if (c.nc && b.contacts.empty()) c.alpha = keys().dae.read(b.rd, "").stabilization_rate;
  c.in_size = lay.size;
  c.in_a = lay.a;
  c.in_p = lay.p;
  c.in_lambda = lay.lambda;
  c.in_s = lay.s;
  c.in_alpha = lay.alpha;
}

/// The kernels the compiled form uses, from its library.
void load_kernels(Compiled& c) {
  const auto& lib = *c.lib;
  c.dyn = lib.get(KernelNames::dyn);
  c.jac = lib.get(KernelNames::jac);
  c.extra = lib.get(KernelNames::extra);
  c.energy = lib.get(KernelNames::energy);
  c.outputs = lib.get(KernelNames::outputs);
  c.outputs_jac = lib.get(KernelNames::outputs_jac);
  c.witnesses = lib.get(KernelNames::events);
  if (c.has_contact) c.contact = lib.get(KernelNames::contact);
  if (c.n_contacts) c.contacts = lib.get(KernelNames::contacts);
  if (!c.charts.empty()) c.chart_determinants = lib.get(KernelNames::charts);
  if (c.nc) c.constraints = lib.get(KernelNames::constraints);
  if (c.nc && c.n_contacts) c.contact_constraints = lib.get(KernelNames::contact_constraints);
  if (c.nc && !c.n_contacts) {
    c.dae = lib.get(KernelNames::dae);
    c.dae_jac = lib.get(KernelNames::dae_jac);
    c.dae_extra = lib.get(KernelNames::dae_extra);
    c.dae_extra_jac = lib.get(KernelNames::dae_extra_jac);
  }
}

/// The derivation and the compiled kernels depend on the model's text only, not on parameter values or the
/// start: runs in one process (sweep points, growth runs) share them.
void derive_and_compile(Build& b) {
  std::string model_key = model_text_key(b.sc) + KernelNames::layout + "\n";
  if (!b.m.velocity_constraints.empty()) model_key += std::string(symbolic::NonholonomicKernels::layout) + "\n";
  const DerivedModel dm = derived_model(model_key, b.m, b.sc);
  b.c->lib = dm.lib;
  b.c->setup = dm.setup;
  lay_out(b, dm.flags);
  load_kernels(*b.c);
}

// ---- checks at the initial state ---------------------------------------------------------------------------

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

/// Refuses constraints that are dependent: `G` holds their gradients dC/dq, each row scaled to unit length.
void check_gradients_independent(const Scenario& sc, const Compiled& c, const Eigen::MatrixXd& G) {
  const std::size_t n = c.n, nc = c.nc;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(G, Eigen::ComputeFullU);
  const auto& sv = svd.singularValues();
  Eigen::Index rank = 0;
  for (Eigen::Index i = 0; i < sv.size(); ++i)
    if (sv(i) > 1e-8) ++rank;
  if (rank == static_cast<Eigen::Index>(nc)) return;
  // A left null vector of G: the constraints with a weight in it are the dependent ones.
  const Eigen::VectorXd u = svd.matrixU().col(static_cast<Eigen::Index>(nc) - 1);
  std::vector<std::size_t> dependent;
  for (std::size_t k = 0; k < nc; ++k)
    if (std::abs(u(static_cast<Eigen::Index>(k))) > 1e-6) dependent.push_back(k);
  std::ostringstream os;
  os.precision(3);
  os << "the constraints";
  for (std::size_t i = 0; i < dependent.size(); ++i)
    os << (i == 0 ? " " : i + 1 == dependent.size() ? " and " : ", ") << c.constraint_names[dependent[i]];
  os << " are dependent at the initial state: their gradients dC/dq are linearly dependent (" << nc
     << " constraints of rank " << rank << ", " << n << " coordinates; smallest singular value of the gradients scaled "
     << "to unit length " << (sv.size() < static_cast<Eigen::Index>(nc) ? 0.0 : sv.minCoeff())
     << "), so their multipliers are not determined; remove the redundant constraint, or start where they are independent";
  sc.fail("constraints." + c.constraint_names[dependent.back()] + ".expression", os.str());
}

/// The constraints' gradients G = dC/dq at the initial state must be independent: otherwise the multipliers are not
/// determined and the DAE solver's initial condition fails without saying why. G's column j is C' at the rate e_j
/// less C' at rate 0 (C' = G q' + dC/dt is affine in the rates); each row is scaled to unit length, so that a
/// constraint written twice with different factors is seen as the same one.
void check_constraints_independent(const Scenario& sc, const Compiled& c, const std::vector<double>& x0) {
  const std::size_t n = c.n, nc = c.nc;
  if (!nc || !c.constraints) return;
  Scratch& w = scratch(c);
  std::vector<double> x(x0.begin(), x0.begin() + static_cast<std::ptrdiff_t>(2 * n)), base(2 * nc), col(2 * nc);
  for (std::size_t i = 0; i < n; ++i) x[n + i] = 0.0;
  c.constraints(fill(c, w, 0.0, x.data(), 0.0), base.data());
  Eigen::MatrixXd G(static_cast<Eigen::Index>(nc), static_cast<Eigen::Index>(n));
  for (std::size_t j = 0; j < n; ++j) {
    x[n + j] = 1.0;
    c.constraints(fill(c, w, 0.0, x.data(), 0.0), col.data());
    x[n + j] = 0.0;
    for (std::size_t k = 0; k < nc; ++k)
      G(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = col[nc + k] - base[nc + k];
  }
  for (std::size_t k = 0; k < nc; ++k) {
    const double norm = G.row(static_cast<Eigen::Index>(k)).norm();
    if (!(norm > 0) || !std::isfinite(norm))
      sc.fail("constraints." + c.constraint_names[k] + ".expression",
              "the gradient dC/dq of constraint " + c.constraint_names[k] + " is " +
                  (std::isfinite(norm) ? "zero" : "not finite") +
                  " at the initial state, so its multiplier is not determined (a constraint written as a square, such "
                  "as (x^2 + y^2 - l^2)^2, has a zero gradient on its own surface): write it so that its gradient is "
                  "not zero there");
    G.row(static_cast<Eigen::Index>(k)) /= norm;
  }
  check_gradients_independent(sc, c, G);
}

/// Why the mass matrix M (finite, singular) is singular: the coordinate that moves without inertia is the largest
/// component of the right singular vector of the smallest singular value. Whether its kinetic term d2T/dder(q_i)2
/// is zero everywhere, or only here (a chart singular at this point, such as the spherical pendulum's azimuth at
/// the pole), tells the remedy.
void explain_singular_mass(const symbolic::LagrangeModel& m, const Eigen::MatrixXd& M, double smax, std::ostream& os) {
  const Eigen::Index n = M.rows();
  Eigen::JacobiSVD<Eigen::MatrixXd> full(M, Eigen::ComputeFullV);
  Eigen::Index i = 0;
  full.matrixV().col(n - 1).cwiseAbs().maxCoeff(&i);
  const std::string& q = m.coordinates[static_cast<std::size_t>(i)];
  const ex mii = symbolic::d(symbolic::d(m.kinetic, m.qd[static_cast<std::size_t>(i)]), m.qd[static_cast<std::size_t>(i)]);
  if (M(i, i) > 1e-12 * smax) {
    // Every coordinate has inertia of its own, but a combination of rates has none.
    os << ": the combination of rates";
    const Eigen::VectorXd nv = full.matrixV().col(n - 1);
    for (Eigen::Index j = 0; j < n; ++j)
      if (std::abs(nv(j)) > 1e-6) os << " " << (nv(j) >= 0 ? "+" : "-") << std::abs(nv(j)) << " der(" << m.coordinates[static_cast<std::size_t>(j)] << ")";
    os << " has no inertia: the kinetic energy depends on these rates through fewer combinations than "
       << "coordinates; give every coordinate a kinetic energy term of its own, or remove one";
  } else if (!mii.normal().is_zero()) {
    os << " (coordinate " << q << ": its kinetic term vanishes there; the coordinates are singular at this point, "
       << "like a spherical pendulum at the pole): start away from it or choose other coordinates";
  } else {
    os << ": coordinate " << q << " has no inertia (d2T/dder(" << q << ")2 = 0 everywhere); give every coordinate "
       << "a kinetic energy term";
  }
}

/// The mass matrix d2T/dder(q)2 must be regular at the initial state.
void check_mass_matrix(const Build& b, const std::vector<double>& x0) {
  const Compiled& c = *b.c;
  Scratch& w = scratch(c);
  c.dyn(fill(c, w, 0.0, x0.data(), 0.0), w.dyn.data());
  const auto n = static_cast<Eigen::Index>(c.n);
  Eigen::MatrixXd M(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) M(i, j) = w.dyn[static_cast<std::size_t>(i + n * j)];
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(M);
  const auto& sv = svd.singularValues();
  const double smax = sv.maxCoeff(), smin = sv.minCoeff();
  if (std::isfinite(smax) && smin > 1e-12 * smax) return;
  std::ostringstream os;
  os.precision(6);
  os << "the mass matrix d2T/dder(q)2 is singular at the initial state (singular values from " << smax << " down to "
     << smin << ")";
  const std::string key =
      b.sc.string("lagrangian.kinetic") != "0" || b.bodies.empty() ? "lagrangian.kinetic" : "bodies." + b.bodies.front() + ".mass";
  if (std::isfinite(smax))
    explain_singular_mass(b.m, M, smax, os);
  else
    os << ": give every coordinate a kinetic energy term";
  b.sc.fail(key, os.str());
}

/// The constraints at the initial state: satisfied, with their rates, and independent.
void check_constraints_at_start(const Build& b, const std::vector<double>& x0) {
  const Compiled& c = *b.c;
  Scratch& w = scratch(c);
  std::vector<double> cons(2 * c.nc);
  c.constraints(fill(c, w, 0.0, x0.data(), 0.0), cons.data());
  for (std::size_t k = 0; k < c.nc; ++k) {
    double largest = 1.0;  // the scale of the coordinates
    for (std::size_t i = 0; i < c.n; ++i) largest = std::max(largest, std::abs(x0[i]));
    const double scale = 1e-9 * largest;
    if (std::abs(cons[k]) > scale || std::abs(cons[c.nc + k]) > scale) {
      std::ostringstream os;
      os.precision(10);
      os << "constraint " << b.m.constraint_names[k] << " is violated at the initial state: residual " << cons[k]
         << ", its rate " << cons[c.nc + k] << " (allowed: |residual| <= " << scale
         << "); give [initial] and [initial_rates] values that satisfy it";
      b.sc.fail("constraints." + b.m.constraint_names[k] + ".expression", os.str());
    }
  }
  check_constraints_independent(b.sc, c, x0);
}

/// The initial state (q, q') and the checks at it, then the system of the model's form.
std::unique_ptr<HybridSystem> system_at_start(const Build& b) {
  const Compiled& c = *b.c;
  std::vector<double> x0(2 * c.n);
  for (std::size_t i = 0; i < c.n; ++i) {
    x0[i] = b.coordinate_terms[i].initial;
    x0[c.n + i] = b.coordinate_terms[i].initial_rate;
  }
  check_mass_matrix(b, x0);
  if (!b.m.velocity_constraints.empty()) {
    std::vector<bool> given;
    for (const auto& q : b.m.coordinates) given.push_back(b.rd.given("initial_rates." + q));
    return nonholonomic_system(b.c, b.m, b.sc, x0, given);
  }
  if (c.nc) check_constraints_at_start(b, x0);
  if (c.nc && !c.n_contacts) return constrained_system(b.c, std::move(x0));
  x0.resize(2 * c.n + c.n_extra, 0.0);
  if (c.has_contact) {
    if (const auto mu = value_of(b.m.friction_coefficient, b.m, c.p, &x0))
      check_friction_at_start(b, "contacts." + b.contacts.front() + ".", *mu, b.m.friction_coefficient, x0);
    return filippov_contact_system(b.c, std::move(x0));
  }
  if (c.n_contacts) {
    const ContactSettings settings = contact_settings_from(b.sc);
    check_contacts_at_start(b, x0, settings);
    return user_contact_system(b.c, std::move(x0), contact_specs(b.m), settings, b.m.constraint_names);
  }
  return smooth_system(b.c, std::move(x0));
}

/// GiNaC is not thread-safe (its expressions share reference-counted nodes, its numbers included), and sweep
/// threads build their points' systems concurrently: every use of GiNaC, from parsing to the destruction of the
/// last expression, happens under this lock. The systems built use only the compiled kernels.
std::unique_ptr<HybridSystem> make_system(const Scenario& sc) {
  static std::mutex ginac;
  std::lock_guard<std::mutex> lock(ginac);
  return make_system_unlocked(sc);
}

}  // namespace

std::unique_ptr<HybridSystem> make_system_unlocked(const Scenario& sc) {
  Build b(sc);
  read_names(b);
  read_expressions(b);
  read_contacts(b);
  holonomic_as_rows(b);
  read_outputs_and_events(b);
  check_signal_names(b);
  derive_and_compile(b);
  return system_at_start(b);
}

}  // namespace rollsim::lagrangian::detail

namespace rollsim::lagrangian {

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "lagrangian";
  e.description = "a model written in the scenario: Lagrangian, bodies, forces, constraints, one Coulomb contact";
  e.schema = detail::schema;
  e.make_system = detail::make_system;
  return e;
}

}  // namespace rollsim::lagrangian
