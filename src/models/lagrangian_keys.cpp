// The user model's keys: one row per key (its KeySpec and how it is read), the schema made from the rows, and
// the reader's parsing of expressions with their positions in the scenario.
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <tuple>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/models/contact_keys.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian::detail {

namespace {

/// Where offset `offset` of the string value of `key` is in the scenario.
Origin origin_in(const Scenario& sc, const std::string& key, std::size_t offset) {
  Origin o = sc.origin(key);
  if (o.file != sc.path || o.line <= 0) return o;
  std::istringstream is(sc.text);
  std::string line;
  for (int i = 0; i < o.line && std::getline(is, line);) ++i;
  const std::size_t col = static_cast<std::size_t>(o.column - 1);
  std::size_t open = 1;
  if (line.compare(col, 3, "\"\"\"") == 0 || line.compare(col, 3, "'''") == 0) open = 3;
  o.column += static_cast<int>(open + offset);
  return o;
}

/// Where item k of the list `key` (counted across a matrix's rows) is, at offset `offset` inside its string.
Origin item_origin(const Scenario& sc, const std::string& key, std::size_t k, std::size_t offset) {
  Origin o = sc.origin(key);
  if (o.file != sc.path || o.line <= 0) return o;
  // The index of the list's first character in the text, then a scan of its items (strings and bare numbers).
  std::size_t at = 0;
  for (int line = 1; line < o.line && at < sc.text.size(); ++at)
    if (sc.text[at] == '\n') ++line;
  at += static_cast<std::size_t>(std::max(o.column - 1, 0));
  std::size_t item = 0, start = std::string::npos;
  for (bool expect_item = false; at < sc.text.size(); ++at) {
    const char ch = sc.text[at];
    if (ch == '[' || ch == ',') {
      expect_item = true;
    } else if (ch == '"' || ch == '\'') {
      if (item == k) {
        start = at + 1;
        break;
      }
      for (++at; at < sc.text.size() && sc.text[at] != ch; ++at)
        if (sc.text[at] == '\\' && ch == '"') ++at;
      ++item;
      expect_item = false;
    } else if (expect_item && !std::isspace(static_cast<unsigned char>(ch)) && ch != ']') {
      if (item == k) {
        start = at;
        break;
      }
      ++item;
      expect_item = false;
    }
  }
  if (start == std::string::npos) return o;
  Origin r = o;
  r.line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < start; ++i)
    if (sc.text[i] == '\n') {
      ++r.line;
      line_start = i + 1;
    }
  r.column = static_cast<int>(start - line_start + offset + 1);
  return r;
}

/// The distinct second components of raw keys "section.NAME[.rest]".
std::vector<std::string> names_in(const std::map<std::string, std::string>& raw, const std::string& section) {
  std::set<std::string> out;
  const std::string prefix = section + ".";
  for (const auto& [k, v] : raw)
    if (k.rfind(prefix, 0) == 0) {
      const std::string rest = k.substr(prefix.size());
      out.insert(rest.substr(0, rest.find('.')));
    }
  return {out.begin(), out.end()};
}

/// An expression key without a value of its own: "" stands for absent (the reader asks whether it is given);
/// `shown_default` is what the key tables show.
KeySpec optional_expression_key(std::string path, std::string shown_default, std::string description) {
  KeySpec spec = expression_key(std::move(path), "", std::move(description));
  spec.default_text = std::move(shown_default);
  return spec;
}

/// An optional expression member read where the scenario gives it a text (a resolved scenario writes an absent one as
/// ""), absent otherwise.
template <class S>
KeyRow<S> optional_row(std::optional<ex> S::*member, KeySpec spec, Depends depends) {
  return {std::move(spec), [member, depends](const Reader& rd, const std::string& key, S& s) {
            if (rd.has_text(key)) s.*member = rd.parse(key, depends);
          }};
}

/// An optional string member (no schema default, so that an absent key stays absent in a resolved scenario), ""
/// when absent; `shown_default` is what the key tables show.
template <class S>
KeyRow<S> optional_string_row(std::string S::*member, KeySpec spec, std::string shown_default) {
  spec.def.reset();
  spec.default_text = std::move(shown_default);
  return {std::move(spec), [member](const Reader& rd, const std::string& key, S& s) {
            s.*member = rd.sc.has(key) ? rd.sc.string(key) : std::string();
          }};
}

/// What a position, a mass or a constraint may depend on.
Depends configuration(std::string why_no_rates) { return {false, std::move(why_no_rates), false}; }
/// What an output or an event's witness may depend on: the accelerations too.
const Depends with_accelerations{true, "", true};

KeyTable make_key_table() {
  KeyTable t;
  t.parameters.rows = {
      row(&ParameterKeys::value, real_key("parameters.{name}", "", "model parameter {name} (a number the expressions use)").required())};
  t.coordinates.rows = {
      row(&CoordinateKeys::unit, string_key("coordinates.{name}", "", {}, "unit of the generalized coordinate {name}").required())};
  const Depends start = configuration("a start value is a number or an expression of the parameters");
  t.coordinate_terms.rows = {
      row(&CoordinateTerms::initial_expression,
          expression_key("initial.{name}", "0", "q(0) of {name} (its unit): a number or an expression of the parameters"),
          start),
      row(&CoordinateTerms::initial_rate_expression,
          expression_key("initial_rates.{name}", "0", "q'(0) of {name} (its unit/s): a number or an expression of the parameters"),
          start),
      row(&CoordinateTerms::force, expression_key("lagrangian.forces.{name}", "0", "generalized force Q(t, q, der(q)) on {name}"))};
  t.energies.rows = {
      row(&EnergyKeys::kinetic, expression_key("lagrangian.kinetic", "0", "kinetic energy T(t, q, der(q))")),
      row(&EnergyKeys::potential, expression_key("lagrangian.potential", "0", "potential energy V(t, q), no der()"),
          configuration("the potential V(t, q) depends on coordinates only; rate-dependent terms belong in the kinetic "
                        "energy or in [lagrangian] forces"))};
  const Depends body = configuration("a body's mass, inertia and position depend on (t, q) only");
  t.bodies.rows = {
      row(&BodyKeys::name, string_key("bodies.{name}.name", "body {name}", {}, "the body's name, for messages")),
      row(&BodyKeys::mass, expression_key("bodies.{name}.mass", "", "mass m (t, q)").required(), body),
      row(&BodyKeys::inertia, expression_key("bodies.{name}.inertia", "0", "moment of inertia about the centre of mass (t, q); for a 3-D body a list (below)"), body),
      row(&BodyKeys::x, expression_key("bodies.{name}.x", "0", "x of the centre of mass (t, q)"), body),
      row(&BodyKeys::y, expression_key("bodies.{name}.y", "0", "y of the centre of mass (t, q), up; gravity g along -y"), body),
      row(&BodyKeys::angle, expression_key("bodies.{name}.angle", "0", "rotation angle of the body (t, q)"), body)};
  const Depends constant = configuration("a 3-D body's mass and inertia, a contact's radius and a disk's axis are "
                                         "constants (expressions of the parameters)");
  t.bodies_3d.rows = {
      row(&Body3Keys::name, string_key("bodies.{name}.name", "body {name}", {}, "the body's name, for messages and for `from` and `parent`")),
      row(&Body3Keys::mass, expression_key("bodies.{name}.mass", "", "mass m (a constant)").required(), constant),
      row(&Body3Keys::inertia, string_list_key("bodies.{name}.inertia", "a 3-D body: central inertia in body axes, 3 principal "
                                               "moments or 6 entries [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] of the tensor (constants)").required(),
          constant)};
  const Depends placement = configuration("a position or an orientation depends on (t, q) only");
  t.world_position.rows = {row(&PlacementKeys::position,
                               string_list_key("{name}.position", "position in the world [x, y, z] (t, q), z up; for a body its centre of mass"),
                               placement)};
  t.relative_position.rows = {
      row(&PlacementKeys::from, string_key("{name}.position.from", "", {}, "position relative to the body (its centre of mass) or point of this name").required()),
      row(&PlacementKeys::offset, string_list_key("{name}.position.offset", "the offset [e1, e2, e3] (t, q) in the axes of `axes`").required(),
          placement),
      row(&PlacementKeys::axes, string_key("{name}.position.axes", "", {}, "the body whose axes the offset is in (default: `from` when it is a body)"))};
  t.orientation.rows = {
      row(&PlacementKeys::sequence, string_key("{name}.orientation.sequence", "", {},
                                               "body-fixed rotations about the letters X, Y, Z in turn (e.g. \"ZXY\"), with `angles`")),
      row(&PlacementKeys::angles, string_list_key("{name}.orientation.angles", "the sequence's angles (t, q), one per letter"), placement),
      row(&PlacementKeys::axis, string_list_key("{name}.orientation.axis", "a fixed axis of the parent (constants; normalised), with `angle`"),
          constant),
      row(&PlacementKeys::angle, optional_expression_key("{name}.orientation.angle", "none", "the angle (t, q) about `axis`"), placement),
      row(&PlacementKeys::matrix, [] {
            KeySpec k = string_list_key("{name}.orientation.matrix", "the rotation matrix by rows [[..], [..], [..]] (t, q); "
                                                                     "orthonormal with determinant +1 at the start");
            k.rows = true;
            return k;
          }(),
          placement),
      row(&PlacementKeys::parent, string_key("{name}.orientation.parent", "", {}, "the body the orientation is relative to (default: the world)"))};
  t.point.rows = {row(&PlacementKeys::name, string_key("points.{name}.name", "", {}, "the point's name, for `from`").required())};
  t.rolling_contacts.rows = {
      row(&RollingContactKeys::body, string_key("contacts.{name}.body", "", {}, "a rolling contact from geometry: the 3-D body that rolls").required()),
      row(&RollingContactKeys::disk_radius, optional_expression_key("contacts.{name}.shape.disk.radius", "none", "a disk's radius (a constant)"),
          constant),
      row(&RollingContactKeys::disk_axis, string_list_key("contacts.{name}.shape.disk.axis", "the disk's axis in the body's axes (constants)"),
          constant),
      row(&RollingContactKeys::sphere_radius,
          optional_expression_key("contacts.{name}.shape.sphere.radius", "none", "a sphere's radius (a constant)"), constant),
      optional_string_row(&RollingContactKeys::friction,
                          string_key("contacts.{name}.friction", "", {"no_slip"},
                                     "ideal rolling (or friction_coefficient: Coulomb friction, the contact slips)"),
                          "none")};
  t.surface_at_rest.rows = {row(&RollingContactKeys::surface, string_key("contacts.{name}.surface", "plane", {"plane"}, "the plane z = 0 at rest"))};
  t.surface_turning.rows = {row(&RollingContactKeys::rotation_rate,
                                optional_expression_key("contacts.{name}.surface.plane.rotation_rate", "none",
                                                        "the plane z = 0 turning about the z axis at this rate Omega(t) [rad/s]"),
                                configuration("the surface's rotation rate depends on t and the parameters only"))};
  t.constraints.rows = {
      row(&ConstraintKeys::expression,
          optional_expression_key("constraints.{name}.expression", "none", "holonomic constraint C(t, q) = 0 (or `velocity`)"),
          configuration("holonomic constraints g(t, q) = 0 depend on coordinates only")),
      row(&ConstraintKeys::velocity,
          optional_expression_key("constraints.{name}.velocity", "none",
                                  "velocity (nonholonomic) constraint A(t, q) der(q) + b(t, q) = 0, linear in der(q) "
                                  "(or `expression`)"))};
  // Declared once, read by the planar contacts' rows and by a rolling contact's Coulomb friction.
  const KeySpec friction_coefficient = optional_expression_key(
      "contacts.{name}.friction_coefficient", "none",
      "Coulomb friction coefficient mu >= 0, the sliding one: mu(t, q, der(q)) with a slip velocity; a constant on a "
      "rolling contact (with `body`; instead of friction = \"no_slip\"), which then sticks and slides in the Coulomb cone");
  const KeySpec static_friction_coefficient = optional_expression_key(
      "contacts.{name}.static_friction_coefficient", "friction_coefficient",
      "the bound mu_s >= mu of the friction force while sticking (with friction_coefficient)");
  const KeySpec restitution = expression_key(
      "contacts.{name}.restitution", "0",
      "Newton's restitution e in [0, 1] at an impact: e(t, q, der(q)) with a gap; a constant on a rolling contact "
      "with friction_coefficient");
  const Depends cone_constant = configuration("a rolling contact's friction coefficients, restitution and spin "
                                              "friction radius are constants (expressions of the parameters)");
  t.rolling_friction.rows = {
      optional_row(&RollingContactKeys::friction_coefficient, friction_coefficient, cone_constant),
      optional_row(&RollingContactKeys::static_friction_coefficient, static_friction_coefficient, cone_constant),
      optional_row(&RollingContactKeys::restitution, optional_expression_key(restitution.path, "0", restitution.description),
                   cone_constant),
      optional_row(&RollingContactKeys::spin_friction_radius,
                   optional_expression_key("contacts.{name}.spin_friction_radius", "none",
                                           "R > 0 of a rolling contact's drilling (spin) friction, with "
                                           "friction_coefficient: the Coulomb-Contensou law of a contact disk of "
                                           "radius R under uniform pressure (a constant) [m]; none: no torque about "
                                           "the normal"),
                   cone_constant)};
  t.contacts.rows = {
      row(&ContactKeys::gap,
          optional_expression_key("contacts.{name}.gap", "none", "unilateral contact: the gap g(q) >= 0; its normal force is computed"),
          configuration("a gap g(q) depends on coordinates only")),
      row(&ContactKeys::restitution, restitution),
      row(&ContactKeys::slip_velocity,
          optional_expression_key("contacts.{name}.slip_velocity", "none", "slip velocity w(q, der(q)), linear in der(q)")),
      row(&ContactKeys::normal_force,
          optional_expression_key("contacts.{name}.normal_force", "none", "a given normal force N(t, q, der(q)) (without a gap)")),
      row(&ContactKeys::friction_coefficient, friction_coefficient),
      row(&ContactKeys::static_friction_coefficient, static_friction_coefficient)};
  t.outputs.rows = {
      row(&OutputKeys::expression, expression_key("outputs.{name}.expression", "", "the output (t, q, der(q), der2(q))").required(),
          with_accelerations),
      row(&OutputKeys::unit, string_key("outputs.{name}.unit", "", {}, "its unit")),
      row(&OutputKeys::description, string_key("outputs.{name}.description", "", {}, "its meaning"))};
  const Depends drawn = configuration("a drawing's points depend on (t, q) only");
  t.draws.rows = {
      row(&DrawKeys::name, string_key("draw.{name}.name", "draw_{name}", {}, "the drawing's name (its /scene subgroup's)")),
      choice_row(&DrawKeys::kind, string_key("draw.{name}.kind", "", {}, "what is drawn through the points").required(),
                 std::vector<std::pair<std::string, DrawKind>>{{"line", DrawKind::Line},
                                                               {"polygon", DrawKind::Polygon},
                                                               {"circle", DrawKind::Circle},
                                                               {"point", DrawKind::Point},
                                                               {"trail", DrawKind::Trail}}),
      row(&DrawKeys::points, [] {
            KeySpec k = string_list_key("draw.{name}.points", "the points [[x, y], ...] (t, q): [x, y] in a planar model, "
                                                              "[x, y, z] with 3-D bodies; a line 2 or more, a polygon 3 or "
                                                              "more, a circle, point or trail 1")
                            .required();
            k.rows = true;
            return k;
          }(),
          drawn),
      row(&DrawKeys::radius, optional_expression_key("draw.{name}.radius", "none",
                                                     "a circle's radius, a point's size (parameters only)"),
          drawn),
      row(&DrawKeys::color, string_key("draw.{name}.color", "#404040", {}, "its colour, #rrggbb"))};
  const Depends fixed_in_body = configuration("a body's drawn shape is fixed in the body: its sizes and points are "
                                              "constants (expressions of the parameters)");
  t.body_draws.rows = {
      row(&BodyDrawKeys::half_extents,
          string_list_key("{name}.box.half_extents", "a box fixed in the body: its half extents [a, b, c] along the "
                                                     "body's axes ([a, b] for a planar body; constants > 0) [m]"),
          fixed_in_body),
      row(&BodyDrawKeys::centre,
          string_list_key("{name}.box.centre", "the box's centre [x, y, z] in the body's axes from its centre of mass "
                                               "([x, y] for a planar body; constants; default the centre of mass) [m]"),
          fixed_in_body),
      row(&BodyDrawKeys::from, string_list_key("{name}.rod.from", "a rod fixed in the body: one end [x, y, z] in the "
                                                                  "body's axes from its centre of mass ([x, y] for a "
                                                                  "planar body; constants) [m]"),
          fixed_in_body),
      row(&BodyDrawKeys::to, string_list_key("{name}.rod.to", "the rod's other end, as `from` [m]"), fixed_in_body),
      row(&BodyDrawKeys::radius,
          optional_expression_key("{name}.rod.radius", "none", "the rod's radius (a constant > 0), drawn as a line "
                                                               "2 radius wide [m]"),
          fixed_in_body)};
  t.events.rows = {
      row(&EventKeys::when,
          expression_key("events.{name}.when", "", "the witness (t, q, der(q), der2(q)); the event is where it crosses zero").required(),
          with_accelerations),
      choice_row(&EventKeys::direction, string_key("events.{name}.direction", "both", {}, "crossings that count"),
                 {{"rising", 1}, {"falling", -1}, {"both", 0}}),
      choice_row(&EventKeys::terminal, string_key("events.{name}.action", "record", {}, "stop the run, or only record the event"),
                 {{"record", false}, {"stop", true}})};
  // The shared declarations of dae.stabilization_rate (with the user model's default) and of a DAE's solver.method.
  t.dae.rows = {
      row(&DaeKeys::stabilization_rate,
          KeyVariant(dae_parameters().key("dae.stabilization_rate"))
              .with_default(DaeKeys{}.stabilization_rate)
              .with_description("Baumgarte rate a of the constraints: C'' + 2 a C' + a^2 C = 0")),
      row(&DaeKeys::method, dae_solver_method_key("for a model with constraints"))};
  return t;
}

}  // namespace

std::string with_name(std::string text, const std::string& name) {
  static const std::string placeholder = "{name}";
  for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + name.size()))
    text.replace(at, placeholder.size(), name);
  return text;
}

const KeyTable& keys() {
  static const KeyTable table = make_key_table();
  return table;
}

ex Reader::parse(const std::string& key, const Depends& depends) const {
  symbolic::NameTable t = names;
  t.rates_allowed = depends.rates;
  t.rates_forbidden_reason = depends.why_no_rates;
  t.accelerations_allowed = depends.accelerations;
  const std::string& text = sc.string(key);
  try {
    return symbolic::parse_expression(text, t);
  } catch (const symbolic::ExpressionError& e) {
    throw InputError(origin_in(sc, key, e.offset),
                     key + " = \"" + text + "\": " + e.what() + " (at character " + std::to_string(e.offset + 1) + ")");
  }
}

std::vector<ex> Reader::parse_list(const std::string& key, const Depends& depends) const {
  symbolic::NameTable t = names;
  t.rates_allowed = depends.rates;
  t.rates_forbidden_reason = depends.why_no_rates;
  t.accelerations_allowed = depends.accelerations;
  const auto items = sc.string_list(key);
  std::vector<ex> out;
  for (std::size_t k = 0; k < items.size(); ++k) {
    try {
      out.push_back(symbolic::parse_expression(items[k], t));
    } catch (const symbolic::ExpressionError& e) {
      throw InputError(item_origin(sc, key, k, e.offset), key + "[" + std::to_string(k) + "] = \"" + items[k] + "\": " + e.what() +
                                                           " (at character " + std::to_string(e.offset + 1) + ")");
    }
  }
  return out;
}

bool is_3d(const std::map<std::string, std::string>& raw, const std::string& path) {
  for (const auto& leaf : {".position", ".orientation"}) {
    const std::string k = path + leaf;
    for (auto it = raw.lower_bound(k); it != raw.end() && it->first.rfind(k, 0) == 0; ++it)
      if (it->first.size() == k.size() || it->first[k.size()] == '.') return true;
  }
  return false;
}

bool is_3d(const Scenario& sc, const std::string& path) {
  std::map<std::string, std::string> raw;
  for (const auto& [k, e] : sc.values)
    if (!e.defaulted && k.rfind(path + ".", 0) == 0) raw[k];
  return is_3d(raw, path);
}

std::vector<std::string> draw_shapes(const std::map<std::string, std::string>& raw, const std::string& path) {
  const std::string prefix = path + ".draw.";
  std::map<long, std::string> listed;
  bool one = false;
  for (auto it = raw.lower_bound(prefix); it != raw.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string first = it->first.substr(prefix.size(), it->first.find('.', prefix.size()) - prefix.size());
    const bool index = !first.empty() && std::all_of(first.begin(), first.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch)) != 0;
    });
    if (index) listed[std::stol(first)] = prefix + first;
    else one = true;
  }
  std::vector<std::string> out;
  if (one) out.push_back(path + ".draw");
  for (const auto& [k, shape] : listed) out.push_back(shape);
  return out;
}

std::vector<std::string> draw_shapes(const Scenario& sc, const std::string& path) {
  std::map<std::string, std::string> raw;
  for (const auto& [k, e] : sc.values)
    if (!e.defaulted && k.rfind(path + ".draw.", 0) == 0) raw[k];
  return draw_shapes(raw, path);
}

bool is_rolling_contact(const std::map<std::string, std::string>& raw, const std::string& name) {
  return raw.count("contacts." + name + ".body") != 0;
}
bool is_rolling_contact(const Scenario& sc, const std::string& name) {
  return sc.has("contacts." + name + ".body") && !sc.values.at("contacts." + name + ".body").defaulted;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::vector<std::string> ordered(const Scenario& sc, const std::string& section, const std::string& leaf) {
  std::vector<std::pair<std::tuple<int, int, int>, std::string>> v;
  const std::string prefix = section + ".";
  std::set<std::string> seen;
  for (const auto& [k, e] : sc.values) {
    if (k.rfind(prefix, 0) != 0 || e.defaulted) continue;
    std::string rest = k.substr(prefix.size());
    const auto dot = rest.find('.');
    if (leaf.empty() != (dot == std::string::npos)) continue;
    const std::string name = rest.substr(0, dot);
    if (!seen.insert(name).second) continue;
    const Origin o = e.origin;
    const bool from_file = o.file == sc.path;
    v.push_back({{from_file ? 0 : 1, o.line, o.column}, name});
  }
  std::sort(v.begin(), v.end());
  std::vector<std::string> names;
  for (auto& p : v) names.push_back(p.second);
  return names;
}

/// The keys of a 3-D body's or a point's placement at `path`: its position in the form the scenario gives it (a list,
/// or a table {from, offset, axes}) and a body's orientation and 3-D keys. A listing gets every form; its body keys
/// already listed for a planar body (name, mass, inertia) are not repeated.
static void append_placement_keys(const KeyTable& t, const std::map<std::string, std::string>& raw, const std::string& path,
                           bool listing, bool body, std::vector<KeySpec>& v) {
  if (body) {
    std::vector<KeySpec> b3;
    t.bodies_3d.append_keys(path.substr(path.find('.') + 1), b3);
    for (auto& k : b3)
      if (!listing || std::none_of(v.begin(), v.end(), [&](const KeySpec& s) { return s.path == k.path; })) v.push_back(std::move(k));
  }
  bool relative = false;
  for (auto it = raw.lower_bound(path + ".position."); it != raw.end() && it->first.rfind(path + ".position.", 0) == 0; ++it)
    relative = true;
  if (listing || !relative) t.world_position.append_keys(path, v);
  if (listing || relative) t.relative_position.append_keys(path, v);
  if (body) t.orientation.append_keys(path, v);
}

/// The keys of a user model. A scenario names its parameters, coordinates, bodies, constraints, contacts, outputs
/// and events, and gets the keys of those names. A key listing (`rollsim keys lagrangian`: its raw keys hold no
/// `model`, which every scenario file has) gets them for the placeholder name NAME of each section, and every
/// optional section's keys, so that the listing and the validation come from the rows alone.
std::vector<KeySpec> schema(const std::map<std::string, std::string>& raw) {
  const bool listing = raw.count("model") == 0;
  auto names = [&](const std::string& section) {
    auto v = names_in(raw, section);
    if (listing && v.empty()) v.push_back(section == "bodies" || section == "points" || section == "draw" ? "N" : "NAME");
    return v;
  };
  const KeyTable& t = keys();
  std::vector<KeySpec> v;
  for (const auto& p : names("parameters")) t.parameters.append_keys(p, v);
  auto coords = names("coordinates");
  for (const auto& c : coords) t.coordinates.append_keys(c, v);
  // Without [coordinates], the names [initial], [initial_rates] and [lagrangian.forces] use are declared all the
  // same, so that the model refuses the file for its missing [coordinates] (make_system), not for those keys.
  if (coords.empty()) {
    std::set<std::string> used;
    for (const auto* section : {"initial", "initial_rates", "lagrangian.forces"})
      for (const auto& n : names_in(raw, section)) used.insert(n);
    coords.assign(used.begin(), used.end());
  }
  for (const auto& c : coords) t.coordinate_terms.append_keys(c, v);
  t.energies.append_keys("", v);
  for (const auto& b : names("bodies")) {
    const std::string path = "bodies." + b;
    if (listing || !is_3d(raw, path)) t.bodies.append_keys(b, v);
    if (listing || is_3d(raw, path)) append_placement_keys(t, raw, path, listing, true, v);
    const std::vector<std::string> shapes = listing ? std::vector<std::string>{path + ".draw"} : draw_shapes(raw, path);
    for (const auto& shape : shapes) t.body_draws.append_keys(shape, v);
  }
  for (const auto& p : names("points")) {
    t.point.append_keys(p, v);
    append_placement_keys(t, raw, "points." + p, listing, false, v);
  }
  const auto constraints = names("constraints");
  for (const auto& c : constraints) t.constraints.append_keys(c, v);
  const auto contact_names = names("contacts");
  for (const auto& c : contact_names) {
    if (listing || !is_rolling_contact(raw, c)) t.contacts.append_keys(c, v);
    if (!listing && !is_rolling_contact(raw, c)) continue;
    t.rolling_contacts.append_keys(c, v);
    // A listing holds the planar contacts' declarations of the shared paths already.
    std::vector<KeySpec> friction;
    t.rolling_friction.append_keys(c, friction);
    for (auto& k : friction)
      if (std::none_of(v.begin(), v.end(), [&](const KeySpec& s) { return s.path == k.path; })) v.push_back(std::move(k));
    const bool turning = raw.count("contacts." + c + ".surface.plane.rotation_rate") != 0;
    if (listing || !turning) t.surface_at_rest.append_keys(c, v);
    if (listing || turning) t.surface_turning.append_keys(c, v);
  }
  if (!contact_names.empty())
    for (auto& k : nonsmooth_keys()) v.push_back(std::move(k));
  for (const auto& o : names("outputs")) t.outputs.append_keys(o, v);
  for (const auto& e : names("events")) t.events.append_keys(e, v);
  for (const auto& d : names("draw")) t.draws.append_keys(d, v);
  // Constraints without contacts: the DAE on IDA. With contacts, the contact engine holds the constraints
  // (nonsmooth.stabilization_rate, any solver.method). With a velocity constraint, every constraint is a row of the
  // ODE in independent speeds (docs/nonholonomic.md): any ODE solver.method.
  const bool velocity_rows = std::any_of(constraints.begin(), constraints.end(), [&](const std::string& c) {
    const auto it = raw.find("constraints." + c + ".velocity");
    return it != raw.end() && !it->second.empty();  // a resolved scenario writes an unset optional key as ""
  });
  if (!constraints.empty() && ((contact_names.empty() && !velocity_rows) || listing)) t.dae.append_keys("", v);
  for (auto& k : smooth_model_keys()) v.push_back(std::move(k));
  v.push_back(output_parameters().key("title"));
  return v;
}

}  // namespace rollsim::lagrangian::detail
