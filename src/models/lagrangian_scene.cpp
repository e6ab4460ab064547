// The user model's scene (docs/scene.md): a drawable per body (its contact shape and its drawn shapes, else a dot
// at its centre of mass), the plane its rolling contacts roll on, and the values of them all per sample from the
// compiled kernel rs_scene, whose expressions the build appends here.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "lagrangian_build.hpp"

namespace rollsim::lagrangian {

const SetupTimes& UserModel::setup_times() const { return compiled_->setup; }

const Scene& UserModel::scene() const { return compiled_->scene; }

void UserModel::scene_values(double t, const double* x, const double*, int, double* v) const {
  const detail::Compiled& c = *compiled_;
  // The scene depends on t, q and the parameters: the rates' and the other inputs' slots hold zeros (a system in
  // independent speeds has fewer than n rates in its state).
  double* in = detail::scratch(c).in.data();
  std::fill(in, in + c.in_size, 0.0);
  in[0] = t;
  std::copy(x, x + c.n, in + 1);
  std::copy(c.p.begin(), c.p.end(), in + c.in_p);
  c.scene_values(in, v);
}

namespace detail {

namespace {
/// The bodies' colours, in turn.
constexpr const char* kBodyColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};
}  // namespace

std::string body_color(std::size_t index) { return kBodyColors[index % std::size(kBodyColors)]; }

namespace {
/// The value of the constant `e` at the parameters' values p; nothing if it depends on t or the coordinates.
std::optional<double> constant_value(const ex& e, const symbolic::LagrangeModel& m, const std::vector<double>& p) {
  if (e.has(m.t)) return std::nullopt;
  return value_of(e, m, p, nullptr);
}

/// `v`, the value of `shown` = `text` (a constant of `key`), unless it is not a finite number of the parameters, or
/// not > 0 when `positive`: then the run stops at the key with the value and the allowed range.
double checked_constant(const Scenario& sc, const std::string& key, const std::string& shown, const std::string& text,
                        std::optional<double> v, bool positive) {
  if (v && std::isfinite(*v) && (!positive || *v > 0)) return *v;
  std::ostringstream os;
  os.precision(10);
  os << shown << " = " << text << " is ";
  if (v) os << *v;
  else os << "not a number of the parameters";
  os << "; allowed range " << (positive ? "(0, inf)" : "(-inf, inf)") << ", a number or an expression of the parameters";
  sc.fail(key, os.str());
}
}  // namespace

std::size_t add_body_shapes(const Reader& rd, symbolic::LagrangeModel& m, const std::vector<double>& p, Scene& scene,
                            const std::string& path, const std::string& name, const kinematics::Vec3& position,
                            const kinematics::Mat3& R, std::size_t dims, const std::string& color, bool alone) {
  const Scenario& sc = rd.sc;
  const std::vector<std::string> shapes = draw_shapes(sc, path);
  const std::string form = dims == 3 ? "[x, y, z] in the body's axes" : "[x, y] in a planar body's axes";
  // A point or a size fixed in the body: `dims` constants (finite; > 0 for a size), as a 3-vector (z = 0 in the
  // plane) and their values.
  auto fixed = [&](const std::vector<ex>& v, const std::string& key, bool positive, std::array<double, 3>& values) {
    if (v.size() != dims)
      sc.fail(key, key + " has " + std::to_string(v.size()) + " values; allowed: " + std::to_string(dims) + ", " + form);
    const std::vector<std::string> texts = sc.string_list(key);
    values = {0, 0, 0};
    for (std::size_t i = 0; i < dims; ++i)
      values[i] = checked_constant(sc, key, key + "[" + std::to_string(i) + "]", "\"" + texts[i] + "\"",
                                   constant_value(v[i], m, p), positive);
    return kinematics::Vec3{v[0], v[1], dims == 3 ? v[2] : ex(0)};
  };
  auto world = [&](const kinematics::Vec3& local) { return kinematics::add(position, kinematics::mul(R, local)); };
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const std::string& shape = shapes[k];
    const BodyDrawKeys d = keys().body_draws.read(rd, shape);
    const bool box = !d.half_extents.empty() || !d.centre.empty(), rod = !d.from.empty() || !d.to.empty() || d.radius;
    const std::string box_key = shape + (d.half_extents.empty() ? ".box.centre" : ".box.half_extents");
    const std::string rod_key = shape + (!d.from.empty() ? ".rod.from" : !d.to.empty() ? ".rod.to" : ".rod.radius");
    if (box && rod)
      sc.fail(rod_key, shape + " gives a box and a rod; allowed: one shape each, a list draw = [{ box = {...} }, "
                               "{ rod = {...} }] for several");
    const std::string drawn = alone && shapes.size() == 1 ? name : name + "_" + std::to_string(k + 1);
    std::array<double, 3> values{};
    if (box) {
      if (d.half_extents.empty()) sc.fail(box_key, "the box " + shape + " needs its half_extents, " + form);
      const kinematics::Vec3 centre = d.centre.empty() ? kinematics::Vec3{0, 0, 0}
                                                       : fixed(d.centre, shape + ".box.centre", false, values);
      fixed(d.half_extents, shape + ".box.half_extents", true, values);
      if (dims == 2) values[2] = std::min(values[0], values[1]);  // drawn as deep as it is narrow
      add_drawable(scene, m, draw::box(drawn, values, color), pose_values(world(centre), R));
      continue;
    }
    if (d.from.empty() || d.to.empty() || !d.radius)
      sc.fail(rod_key, "the rod " + shape + " needs its ends from and to, " + form + ", and its radius");
    const kinematics::Vec3 a = world(fixed(d.from, shape + ".rod.from", false, values));
    const kinematics::Vec3 b = world(fixed(d.to, shape + ".rod.to", false, values));
    const std::string radius_key = shape + ".rod.radius";
    const double r =
        checked_constant(sc, radius_key, radius_key, sc.string(radius_key), constant_value(*d.radius, m, p), true);
    add_drawable(scene, m, draw::line(drawn, 2, 2 * r, color), {a[0], a[1], a[2], b[0], b[1], b[2]});
  }
  return shapes.size();
}

void add_drawable(Scene& scene, symbolic::LagrangeModel& m, Drawable d, const std::vector<ex>& values) {
  if (values.size() != d.size())
    throw std::logic_error("drawable " + d.name + ": " + std::to_string(values.size()) + " values for " +
                           std::to_string(d.size()));
  scene.drawables.push_back(std::move(d));
  m.scene.insert(m.scene.end(), values.begin(), values.end());
}

std::vector<ex> pose_values(const kinematics::Vec3& position, const kinematics::Mat3& rotation) {
  std::vector<ex> v(position.begin(), position.end());
  for (const auto& row : rotation) v.insert(v.end(), row.begin(), row.end());
  return v;
}

kinematics::Mat3 to_local_z(const std::array<double, 3>& axis) {
  const double norm = std::hypot(axis[0], axis[1], axis[2]);
  const std::array<double, 3> a{axis[0] / norm, axis[1] / norm, axis[2] / norm};
  // The coordinate axis least along a, made perpendicular to it: the disk's marked radius (local x).
  std::size_t least = 0;
  for (std::size_t i = 1; i < 3; ++i)
    if (std::abs(a[i]) < std::abs(a[least])) least = i;
  std::array<double, 3> u{0, 0, 0};
  u[least] = 1;
  const double along = u[least] * a[least];
  for (std::size_t i = 0; i < 3; ++i) u[i] -= along * a[i];
  const double un = std::hypot(u[0], u[1], u[2]);
  for (double& e : u) e /= un;
  const std::array<double, 3> w{a[1] * u[2] - a[2] * u[1], a[2] * u[0] - a[0] * u[2], a[0] * u[1] - a[1] * u[0]};
  kinematics::Mat3 A;
  for (std::size_t i = 0; i < 3; ++i) A[i] = {u[i], w[i], a[i]};  // columns u, a x u, a
  return A;
}

void read_draws(Build& b) {
  Scene& scene = b.c->scene;
  const std::size_t dims = scene.dimension == 3 ? 3 : 2;
  const char* form = dims == 3 ? "[x, y, z] in a scene with 3-D bodies" : "[x, y] in a planar scene";
  for (const auto& n : ordered(b.sc, "draw", "kind")) {
    const std::string key = "draw." + n + ".";
    const DrawKeys d = keys().draws.read(b.rd, n);
    const std::vector<double>& rows = b.sc.values.at(key + "points").list;
    const std::size_t least = d.kind == DrawKind::Line ? 2 : d.kind == DrawKind::Polygon ? 3 : 1;
    const bool one = d.kind != DrawKind::Line && d.kind != DrawKind::Polygon;
    if (rows.size() < least || (one && rows.size() > 1))
      b.sc.fail(key + "points", key + "points has " + std::to_string(rows.size()) + " points; a " +
                                    draw_kind_name(d.kind) + " takes " +
                                    (one ? std::string("1") : std::to_string(least) + " or more"));
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i] != static_cast<double>(dims))
        b.sc.fail(key + "points", key + "points: point " + std::to_string(i + 1) + " has " +
                                      std::to_string(static_cast<long>(rows[i])) + " coordinates; allowed: " +
                                      std::to_string(dims) + ", " + form);
    const bool hex = d.color.size() == 7 && d.color[0] == '#' &&
                     std::all_of(d.color.begin() + 1, d.color.end(), [](char ch) { return std::isxdigit(ch) != 0; });
    if (!hex) b.sc.fail(key + "color", key + "color = \"" + d.color + "\"; allowed: #rrggbb, six hexadecimal digits");
    double radius = kBodyDot;
    if (d.radius)
      radius = checked_constant(b.sc, key + "radius", key + "radius", b.sc.string(key + "radius"),
                                constant_value(*d.radius, b.m, b.c->p), true);
    Drawable drawn = d.kind == DrawKind::Circle ? draw::circle(d.name, radius, d.color)
                     : d.kind == DrawKind::Point ? draw::point(d.name, radius, d.color)
                     : d.kind == DrawKind::Trail ? draw::trail(d.name, d.color)
                     : d.kind == DrawKind::Polygon ? draw::polygon(d.name, rows.size(), d.color)
                                                   : draw::line(d.name, rows.size(), 0, d.color);
    drawn.role = DrawRole::Draw;
    std::vector<ex> values;
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t j = 0; j < 3; ++j) values.push_back(j < dims ? d.points[dims * i + j] : ex(0));
    add_drawable(scene, b.m, std::move(drawn), values);
  }
}

}  // namespace detail

}  // namespace rollsim::lagrangian
