// The user model's scene (docs/scene.md): a drawable per body (its contact shape, else a dot at its centre of
// mass), the plane its rolling contacts roll on, and the values of them all per sample from the compiled kernel
// rs_scene, whose expressions the build appends here.
#include <algorithm>
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
    if (d.radius) {
      const std::optional<double> r = value_of(*d.radius, b.m, b.c->p, nullptr);
      if (!r || !(*r > 0) || !std::isfinite(*r)) {
        std::ostringstream os;
        os.precision(10);
        os << key << "radius = " << b.sc.string(key + "radius") << " is ";
        if (r) os << *r;
        else os << "not a number of the parameters";
        os << "; allowed range (0, inf), a number or an expression of the parameters";
        b.sc.fail(key + "radius", os.str());
      }
      radius = *r;
    }
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
