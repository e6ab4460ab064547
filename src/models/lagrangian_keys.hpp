#pragma once
// The user model's scenario keys, one row each, and their reader (private to src/models/lagrangian*.cpp;
// lagrangian_keys.cpp defines them).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "rollsim/scenario/scenario.hpp"
#include "rollsim/symbolic/expression.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "lagrangian_internal.hpp"


namespace rollsim::lagrangian::detail {

using GiNaC::ex;

/// What an expression key may depend on besides t, q and the parameters: the rates der(q) (unless
/// `why_no_rates` says why not) and the accelerations der2(q).
struct Depends {
  bool rates = true;
  std::string why_no_rates;
  bool accelerations = false;
};

/// Reads the user model's keys from a validated scenario: numbers and strings as they are, expressions parsed
/// with the names of `names` (an error at its file:line:column inside the expression's text).
struct Reader {
  const Scenario& sc;
  symbolic::NameTable names;

  ex parse(const std::string& key, const Depends& depends = {}) const;
  /// A list of expressions (a StringList key), each parsed; an error at its item inside the list.
  std::vector<ex> parse_list(const std::string& key, const Depends& depends = {}) const;
  /// Whether the scenario gives `key` (not its schema default). A text key given as "" is not given: a resolved
  /// scenario (the one every result file stores) writes an unset optional key as "", which must load as unset again.
  bool given(const std::string& key) const {
    const auto it = sc.values.find(key);
    if (it == sc.values.end() || it->second.defaulted) return false;
    const auto* text = std::get_if<std::string>(&it->second.value);
    return !text || !text->empty();
  }
  /// The same for an optional text key.
  bool has_text(const std::string& key) const { return given(key); }
};

/// One key of a user model, declared once: its schema (the KeySpec, whose path, description and string default
/// may hold "{name}" for the name of the item it belongs to, e.g. "bodies.{name}.mass") and how the reader reads
/// it into the item's values S.
template <class S>
struct KeyRow {
  KeySpec spec;
  std::function<void(const Reader&, const std::string& key, S&)> read;
};

/// An expression member: parsed, from the scenario's text or the key's default.
template <class S>
KeyRow<S> row(ex S::*member, KeySpec spec, Depends depends = {}) {
  return {std::move(spec), [member, depends](const Reader& rd, const std::string& key, S& s) {
            s.*member = rd.parse(key, depends);
          }};
}
/// An optional expression member: parsed when the scenario gives the key, absent otherwise.
template <class S>
KeyRow<S> row(std::optional<ex> S::*member, KeySpec spec, Depends depends = {}) {
  return {std::move(spec), [member, depends](const Reader& rd, const std::string& key, S& s) {
            if (rd.given(key)) s.*member = rd.parse(key, depends);
          }};
}
/// A list of expressions (a StringList key of expressions): parsed when the scenario has the key, empty otherwise.
template <class S>
KeyRow<S> row(std::vector<ex> S::*member, KeySpec spec, Depends depends = {}) {
  spec.expression = true;
  return {std::move(spec), [member, depends](const Reader& rd, const std::string& key, S& s) {
            if (rd.sc.has(key)) s.*member = rd.parse_list(key, depends);
          }};
}
/// A string member (a unit, a description, a choice).
template <class S>
KeyRow<S> row(std::string S::*member, KeySpec spec) {
  return {std::move(spec), [member](const Reader& rd, const std::string& key, S& s) { s.*member = rd.sc.string(key); }};
}
/// A number member.
template <class S>
KeyRow<S> row(double S::*member, KeySpec spec) {
  return {std::move(spec), [member](const Reader& rd, const std::string& key, S& s) { s.*member = rd.sc.real(key); }};
}

/// A string key whose choices stand for values of a member: `names` gives each choice with its value, in the
/// order the key's choices show them (they replace the spec's choices).
template <class S, class M>
KeyRow<S> choice_row(M S::*member, KeySpec spec, std::vector<std::pair<std::string, M>> names) {
  spec.choices.clear();
  for (const auto& n : names) spec.choices.push_back(n.first);
  return {std::move(spec), [member, names](const Reader& rd, const std::string& key, S& s) {
            const std::string& text = rd.sc.string(key);
            for (const auto& [name, value] : names)
              if (text == name) s.*member = value;
          }};
}

/// `text` with every "{name}" replaced by `name`.
std::string with_name(std::string text, const std::string& name);

/// The rows of one kind of item (a body, a contact, ...), in the order the schema lists them.
template <class S>
struct Rows {
  std::vector<KeyRow<S>> rows;

  /// The keys of the item `name`.
  void append_keys(const std::string& name, std::vector<KeySpec>& out) const {
    for (const auto& r : rows) {
      KeySpec k = r.spec;
      k.path = with_name(k.path, name);
      k.description = with_name(k.description, name);
      if (k.def && std::holds_alternative<std::string>(*k.def)) k.def = with_name(std::get<std::string>(*k.def), name);
      out.push_back(std::move(k));
    }
  }
  /// The values of the item `name`, read key by key in the rows' order.
  S read(const Reader& rd, const std::string& name) const {
    S s;
    read_into(rd, name, s);
    return s;
  }
  /// The same into values read in part by other rows (an item whose keys come in alternative forms).
  void read_into(const Reader& rd, const std::string& name, S& s) const {
    for (const auto& r : rows) r.read(rd, with_name(r.spec.path, name), s);
  }
};

/// parameters.NAME: a model parameter.
struct ParameterKeys {
  double value = 0;
};
/// coordinates.NAME: a generalized coordinate.
struct CoordinateKeys {
  std::string unit;
};
/// The keys of each coordinate in other sections: its start and its generalized force.
struct CoordinateTerms {
  /// The start as the scenario writes it: a number or an expression of the parameters (so that a parameter such as
  /// a bicycle's forward speed sets the rates), and its value.
  ex initial_expression, initial_rate_expression;
  double initial = 0, initial_rate = 0;
  ex force;
};
/// [lagrangian]: the energies.
struct EnergyKeys {
  ex kinetic, potential;
};
/// [bodies.N]: a planar rigid body.
struct BodyKeys {
  std::string name;
  ex mass, inertia, x, y, angle;
};
/// [[bodies]] in 3-D (a body with a position or an orientation): its inertia is a list (3 principal moments or 6
/// tensor entries in body axes). Its position and orientation are PlacementKeys.
struct Body3Keys {
  std::string name;
  ex mass;
  std::vector<ex> inertia;
};
/// A 3-D body's or a [[points]] entry's position (a list in the world, or {from, offset, axes}) and a body's
/// orientation ({sequence, angles}, {axis, angle} or {matrix}, each with an optional parent). The keys' paths
/// start with the item's own path ("bodies.0", "points.1").
struct PlacementKeys {
  std::string name;
  std::vector<ex> position, offset;
  std::string from, axes;
  std::string sequence, parent;
  std::vector<ex> angles, axis, matrix;
  std::optional<ex> angle;
};
/// [contacts.NAME] of a rolling contact from geometry: the body, its shape, the surface and the friction law: ideal
/// rolling (friction = "no_slip") or Coulomb friction (friction_coefficient and the optional keys after it), each
/// absent unless the scenario gives it.
struct RollingContactKeys {
  std::string body, surface, friction;
  std::optional<ex> disk_radius, sphere_radius, rotation_rate;
  std::vector<ex> disk_axis;
  std::optional<ex> friction_coefficient, static_friction_coefficient, restitution, spin_friction_radius;
};
/// [constraints.NAME]: a holonomic constraint (expression) or a velocity (nonholonomic) one; one of the two.
struct ConstraintKeys {
  std::optional<ex> expression, velocity;
};
/// [contacts.NAME]: a contact; its optional keys are absent unless the scenario gives them.
struct ContactKeys {
  std::optional<ex> gap, slip_velocity, normal_force, friction_coefficient, static_friction_coefficient;
  ex restitution;
};
/// [outputs.NAME]: an output signal.
struct OutputKeys {
  ex expression;
  std::string unit, description;
};
/// [events.NAME]: an event.
struct EventKeys {
  ex when;
  int direction = 0;      ///< the crossings that count: 1 rising, -1 falling, 0 both
  bool terminal = false;  ///< the event stops the run
};
/// [[draw]]: a drawing of the scene (docs/scene.md) whose points are expressions of (t, q).
struct DrawKeys {
  std::string name, color;
  DrawKind kind = DrawKind::Line;
  std::vector<ex> points;  ///< by rows, (x, y) in a planar scene, (x, y, z) in a 3-D one
  std::optional<ex> radius;
};
/// A body's drawn shape (bodies.N.draw, or bodies.N.draw.K in a list of shapes): a box or a rod fixed in the
/// body, in its axes from its centre of mass; each list empty (the radius absent) unless the scenario gives it.
struct BodyDrawKeys {
  std::vector<ex> half_extents, centre, from, to;
  std::optional<ex> radius;
};
/// The keys of a model with constraints and no contacts (the DAE on IDA).
struct DaeKeys {
  double stabilization_rate = kDefaultBaumgarte;
  std::string method;
};

/// Every key of the user model, one row each.
struct KeyTable {
  Rows<ParameterKeys> parameters;
  Rows<CoordinateKeys> coordinates;
  Rows<CoordinateTerms> coordinate_terms;
  Rows<EnergyKeys> energies;
  Rows<BodyKeys> bodies;
  Rows<Body3Keys> bodies_3d;
  /// The forms of a placement: a position in the world or relative; an orientation; a [[points]] entry's name.
  Rows<PlacementKeys> world_position, relative_position, orientation, point;
  /// A rolling contact: its body, shape and friction; its surface at rest ("plane") or turning.
  Rows<RollingContactKeys> rolling_contacts, surface_at_rest, surface_turning;
  /// A rolling contact's Coulomb friction (the cone's engine): its coefficients, restitution and spin friction radius.
  /// The paths of the first three are the planar contacts' (the same declarations); a listing shows them once.
  Rows<RollingContactKeys> rolling_friction;
  Rows<ConstraintKeys> constraints;
  Rows<ContactKeys> contacts;
  Rows<OutputKeys> outputs;
  Rows<EventKeys> events;
  Rows<DrawKeys> draws;
  /// A body's drawn shape; the item's name is the shape's path ("bodies.0.draw", "bodies.0.draw.1").
  Rows<BodyDrawKeys> body_draws;
  Rows<DaeKeys> dae;
};
const KeyTable& keys();

/// The user model's schema for a scenario's raw keys (ModelEntry::schema).
std::vector<KeySpec> schema(const std::map<std::string, std::string>& raw);

bool is_identifier(const std::string& s);
/// The names of a section in the order the scenario gives them (by origin; overrides last). With a `leaf`,
/// the names of tables [section.NAME] (any leaf), else of keys section.NAME.
std::vector<std::string> ordered(const Scenario& sc, const std::string& section, const std::string& leaf = "");

/// Whether the body or point at `path` ("bodies.0", "points.1") is given in 3-D (a position or an orientation): by
/// the scenario's raw keys (before loading) or its values.
bool is_3d(const std::map<std::string, std::string>& raw, const std::string& path);
bool is_3d(const Scenario& sc, const std::string& path);
/// The paths of the drawn shapes of the body at `path` ("bodies.0"): "bodies.0.draw" for one shape, else one
/// "bodies.0.draw.K" per element of the list, in the list's order; none without `draw`. By the scenario's raw keys
/// (before loading) or its values.
std::vector<std::string> draw_shapes(const std::map<std::string, std::string>& raw, const std::string& path);
std::vector<std::string> draw_shapes(const Scenario& sc, const std::string& path);
/// Whether contact `name` is a rolling contact from geometry (it names a body).
bool is_rolling_contact(const std::map<std::string, std::string>& raw, const std::string& name);
bool is_rolling_contact(const Scenario& sc, const std::string& name);
/// Reads the 3-D bodies, [[points]] and rolling contacts (lagrangian_3d.cpp) into m: T3 and V of the bodies, the
/// Kane-form inertia residual, the charts, and the contacts' velocity rows. `p` holds the parameters' values and
/// `q0` the coordinates' at the start, for the checks at the start (an orthonormal matrix, a chart not singular, a
/// positive radius) and the test of an embedded contact. With 3-D bodies c's scene becomes 3-D: the plane the
/// rolling contacts roll on (ground), then each body as its contact shape (a disk or sphere), else a dot at its
/// centre.
void read_3d(const Reader& rd, symbolic::LagrangeModel& m, const std::vector<double>& p, const std::vector<double>& q0,
             const std::vector<std::string>& bodies, const std::vector<std::string>& rolling_contacts, Compiled& c);

}  // namespace rollsim::lagrangian::detail
