// Building a user model's system from a validated scenario, in the order of its seams: the names, the
// expressions, the contacts (lagrangian_contacts.cpp), the outputs and events, the derivation and compilation
// (lagrangian_compile.cpp), the checks at the initial state (lagrangian_checks.cpp) and the system of the model's form.
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>

#include "rollsim/core/error.hpp"
#include "rollsim/core/lock_wait.hpp"
#include "rollsim/models/contact_keys.hpp"
#include "rollsim/symbolic/nonholonomic.hpp"
#include "lagrangian_build.hpp"

namespace rollsim::lagrangian::detail {

namespace {

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
  // Its drawn shapes in its axes (x along `angle`, y across, z out of the plane), else a dot at its centre of mass.
  const std::string color = body_color(b.c->scene.drawables.size());
  const ex c = GiNaC::cos(body.angle), s = GiNaC::sin(body.angle);
  const kinematics::Mat3 R{kinematics::Vec3{c, -s, 0}, kinematics::Vec3{s, c, 0}, kinematics::Vec3{0, 0, 1}};
  const kinematics::Vec3 centre{body.x, body.y, 0};
  if (add_body_shapes(b.rd, m, b.c->p, b.c->scene, "bodies." + name, body.name, centre, R, 2, color, true) == 0)
    add_drawable(b.c->scene, m, draw::point(body.name, kBodyDot, color), {body.x, body.y, 0});
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
  symbolic::Differentiator D;
  const std::optional<ex> form = symbolic::linear_form(D, b.m.qd, *keys().constraints.read(b.rd, name).velocity);
  if (!form)
    b.sc.fail(key, key + " = \"" + b.sc.string(key) + "\": a velocity constraint must be linear in the rates der(q) "
                   "(A(t, q) der(q) + b(t, q) = 0)");
  const ex rate = *form;
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

/// The value of a start key (initial.q, initial_rates.q): a number or an expression of the parameters; an input
/// error at the key for one of t or the coordinates, or without a finite real value.
double start_value(const Build& b, const ex& e, const std::string& key) {
  const std::optional<double> v = value_of(e, b.m, b.c->p, nullptr);
  bool varies = e.has(b.m.t);
  for (std::size_t i = 0; i < b.m.n(); ++i) varies = varies || e.has(b.m.q[i]) || e.has(b.m.qd[i]);
  if (varies)
    b.sc.fail(key, key + " = \"" + b.sc.string(key) + "\": a start value is a number or an expression of the parameters, "
                   "not of t or the coordinates");
  if (!v || !std::isfinite(*v))
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
  read_3d(b.rd, m, b.c->p, q0, b.bodies, rolling, *b.c);
  read_draws(b);
}

std::unique_ptr<HybridSystem> system_at_start(const Build& b) {
  const Compiled& c = *b.c;
  std::vector<double> x0(2 * c.n);
  for (std::size_t i = 0; i < c.n; ++i) {
    x0[i] = b.coordinate_terms[i].initial;
    x0[c.n + i] = b.coordinate_terms[i].initial_rate;
  }
  check_mass_matrix(b, x0);
  check_forces_finite(b);
  if (!b.m.velocity_constraints.empty()) {
    std::vector<bool> given;
    for (const auto& q : b.m.coordinates) given.push_back(b.rd.given("initial_rates." + q));
    return nonholonomic_system(b.c, b.m, b.sc, x0, given);
  }
  if (c.nc) check_constraints_at_start(b, x0);
  if (c.nc && !c.n_contacts) return constrained_system(b.c, std::move(x0));
  x0.resize(2 * c.n + c.n_extra, 0.0);
  if (c.n_cone_contacts) {
    const ContactSettings settings = contact_settings_from(b.sc);
    check_cone_contacts_at_start(b, x0, settings);
    return user_cone_system(b.c, std::move(x0), cone_contact_specs(b.m), settings);
  }
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

// ---- sweep points without GiNaC ------------------------------------------------------------------------------

/// A smooth model (no constraints, contacts or 3-D bodies) as one thread last built it: its compiled form, whose
/// kernels library is held through a control block of this thread (so that copying it touches no reference count
/// another thread shares), and the names of its parameters in the order of Compiled::p.
struct PointPrototype {
  std::shared_ptr<const Compiled> c;
  std::vector<std::string> parameters;
};

/// The scenario without the values a point of a sweep varies: every resolved key and value, except the values of
/// [parameters], [initial] and [initial_rates] (their names stay). Two scenarios with the same key are the same
/// model but for those numbers. The values go in as their bytes, each part preceded by its length (not as
/// Scenario::resolved_text() writes them: formatting every number of the scenario at every point was 18 % of the
/// instructions of a sweep of the table written as a user model).
std::string structure_key(const Scenario& sc) {
  std::string key;
  const auto bytes = [&key](const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); };
  const auto size = [&bytes](std::size_t n) { bytes(&n, sizeof n); };
  const auto text = [&](std::string_view t) {
    size(t.size());
    key.append(t);
  };
  for (const auto& [k, e] : sc.values) {
    text(k);
    if (k.rfind("parameters.", 0) == 0 || k.rfind("initial.", 0) == 0 || k.rfind("initial_rates.", 0) == 0) continue;
    key += static_cast<char>(e.value.index());
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) text(v);
          else bytes(&v, sizeof v);
        },
        e.value);
    size(e.list.size());
    bytes(e.list.data(), e.list.size() * sizeof(double));
    size(e.strings.size());
    for (const auto& str : e.strings) text(str);
  }
  return key;
}

/// At most this many models' prototypes are kept, per thread and in the process (a sweep has one).
constexpr std::size_t kMaxPrototypes = 4;

/// The prototypes of this thread: its own copies (system_from_prototype builds every point from here, touching
/// nothing another thread touches).
std::map<std::string, PointPrototype>& prototypes() {
  thread_local std::map<std::string, PointPrototype> p;
  return p;
}

/// The prototypes derived in this process, by structure_key: the first point of a model is derived (GiNaC, under
/// its lock) once, and every thread takes its own copy of the result the first time it builds a point of that model.
struct SharedPrototypes {
  std::mutex mutex;
  std::map<std::string, PointPrototype> all;
};
SharedPrototypes& shared_prototypes() {
  static SharedPrototypes s;
  return s;
}

/// A copy for this thread: a Compiled of its own, with a control block of its own for the kernels' library (which
/// keeps the shared one alive), so that its points copy and release no reference count another thread touches.
PointPrototype own_copy(const PointPrototype& pr) {
  auto copy = std::make_shared<Compiled>(*pr.c);
  copy->lib = std::shared_ptr<symbolic::CompiledKernels>(pr.c->lib.get(), [keep = pr.c->lib](symbolic::CompiledKernels*) {});
  return {std::move(copy), pr.parameters};
}

/// This thread's prototype of the model of `key`: its own, else a copy of the process's (taken under the shared
/// store's lock, once per thread and model); null where the model was not derived yet.
const PointPrototype* prototype_of(const std::string& key) {
  auto& mine = prototypes();
  if (const auto it = mine.find(key); it != mine.end()) return &it->second;
  std::optional<PointPrototype> copy;
  {
    auto& shared = shared_prototypes();
    const auto lock = timed_lock(shared.mutex);
    const auto it = shared.all.find(key);
    if (it == shared.all.end()) return nullptr;
    copy = own_copy(it->second);
  }
  if (mine.size() >= kMaxPrototypes) mine.clear();
  return &mine.emplace(key, std::move(*copy)).first->second;
}

/// A start value written as a plain decimal number ([-]digits[.digits][e[+-]digits], as a sweep writes its
/// values): its double, correctly rounded as the expression parser's exact rational is. Anything else (an
/// expression of the parameters) is for the full build.
std::optional<double> plain_number(const std::string& text) {
  std::size_t i = text[0] == '-' ? 1 : 0, digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.')
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));) ++i, ++digits;
  if (!digits) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const std::size_t e0 = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == e0 || i - e0 > 3) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v) || (v != 0 && std::abs(v) < std::numeric_limits<double>::min())) return std::nullopt;
  return v;
}

/// The system of a sweep point from this thread's prototype of its model, with the point's parameters and start:
/// no GiNaC, no lock, no shared reference count. Nothing (the full build then runs, and says what is wrong) where
/// there is no prototype, a start is an expression, or the start is not regular (M singular or f not finite).
std::unique_ptr<HybridSystem> system_from_prototype(const Scenario& sc) {
  const PointPrototype* found = prototype_of(structure_key(sc));
  if (!found) return nullptr;
  const PointPrototype& pr = *found;
  if (pr.c->p.size() != pr.parameters.size()) return nullptr;
  auto c = std::make_shared<Compiled>(*pr.c);
  c->setup.from_prototype = true;
  for (std::size_t i = 0; i < pr.parameters.size(); ++i) c->p[i] = sc.real("parameters." + pr.parameters[i]);
  const std::size_t n = c->n;
  std::vector<double> x0(2 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& [section, at] : {std::pair{"initial.", i}, std::pair{"initial_rates.", n + i}}) {
      const std::string key = section + c->coordinates[i];
      const std::optional<double> v = sc.has(key) ? plain_number(sc.string(key)) : std::nullopt;
      if (!v) return nullptr;
      x0[at] = *v;
    }
  const MassAtStart start = mass_at_start(*c, x0.data());
  if (!start.regular || !start.forces_finite) return nullptr;
  x0.resize(2 * n + c->n_extra, 0.0);
  return smooth_system(std::move(c), std::move(x0));
}

/// Keeps the model just built as this thread's prototype where its points can be built from it: a smooth model.
void keep_prototype(const Build& b, const Scenario& sc) {
  const Compiled& c = *b.c;
  if (!b.m.velocity_constraints.empty() || c.nc || c.n_cone_contacts || c.has_contact || c.n_contacts ||
      !c.charts.empty())
    return;
  for (const auto& name : b.bodies)
    if (is_3d(sc, "bodies." + name)) return;
  const std::string key = structure_key(sc);
  const PointPrototype kept{std::make_shared<Compiled>(c), b.m.parameters};
  {
    auto& shared = shared_prototypes();
    const auto lock = timed_lock(shared.mutex);
    if (shared.all.size() >= kMaxPrototypes) shared.all.clear();
    shared.all[key] = kept;
  }
  auto& mine = prototypes();
  if (mine.size() >= kMaxPrototypes) mine.clear();
  mine[key] = own_copy(kept);
}

/// GiNaC is not thread-safe (its expressions share reference-counted nodes, its numbers included), and sweep
/// threads build their points' systems concurrently: every use of GiNaC, from parsing to the destruction of the
/// last expression, happens under this lock. The systems built use only the compiled kernels, and a smooth model's
/// later points, in every thread, are built from its prototype without the lock (system_from_prototype). Threads
/// that wait here while another derives the same model take its prototype when their turn comes: a sweep derives
/// its model once, however many threads run it.
std::unique_ptr<HybridSystem> make_system(const Scenario& sc) {
  if (auto fast = system_from_prototype(sc)) return fast;
  static std::mutex ginac;
  const auto lock = timed_lock(ginac);
  if (auto fast = system_from_prototype(sc)) return fast;
  return make_system_unlocked(sc);
}

}  // namespace

std::atomic<std::size_t>& full_build_count() {
  static std::atomic<std::size_t> n{0};
  return n;
}

std::unique_ptr<HybridSystem> make_system_unlocked(const Scenario& sc) {
  full_build_count().fetch_add(1, std::memory_order_relaxed);
  Build b(sc);
  read_names(b);
  read_expressions(b);
  read_contacts(b);
  holonomic_as_rows(b);
  read_outputs_and_events(b);
  check_signal_names(b);
  derive_and_compile(b);
  // The contacts with Coulomb friction (the cone's engine) and their kernel.
  b.c->n_cone_contacts = b.m.cone_contacts.size();
  if (b.c->n_cone_contacts) b.c->cone_contacts = b.c->lib->get(symbolic::KernelNames::cone_contacts);
  auto system = system_at_start(b);
  keep_prototype(b, sc);
  return system;
}

}  // namespace rollsim::lagrangian::detail

namespace rollsim::lagrangian {

std::size_t full_builds() { return detail::full_build_count().load(std::memory_order_relaxed); }

void forget_prototypes() {
  detail::prototypes().clear();
  auto& shared = detail::shared_prototypes();
  const std::lock_guard lock(shared.mutex);
  shared.all.clear();
}

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "lagrangian";
  e.description = "a model written in the scenario: Lagrangian, bodies, forces, constraints, one Coulomb contact";
  e.schema = detail::schema;
  e.make_system = detail::make_system;
  return e;
}

}  // namespace rollsim::lagrangian
