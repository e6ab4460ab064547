#include "rollsim/hybrid/scene.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace rollsim {

const char* draw_kind_name(DrawKind kind) {
  switch (kind) {
    case DrawKind::Disk: return "disk";
    case DrawKind::Sphere: return "sphere";
    case DrawKind::Box: return "box";
    case DrawKind::Plane: return "plane";
    case DrawKind::Line: return "line";
    case DrawKind::Polygon: return "polygon";
    case DrawKind::Circle: return "circle";
    case DrawKind::Point: return "point";
    case DrawKind::Trail: return "trail";
    case DrawKind::Contact: return "contact";
  }
  return "";
}

const char* draw_role_name(DrawRole role) {
  switch (role) {
    case DrawRole::Body: return "body";
    case DrawRole::Ground: return "ground";
    case DrawRole::Contact: return "contact";
    case DrawRole::Draw: return "draw";
  }
  return "";
}

std::size_t Drawable::size() const {
  if (has_pose(kind)) return 12;
  return 3 * points + (force ? 3 : 0);
}

void Drawable::reach(const double* values, double* out) const {
  const double* R = values + 3;  // a pose's rotation, row-major
  for (int i = 0; i < 3; ++i) {
    switch (kind) {
      case DrawKind::Disk: {
        const double along = std::abs(R[3 * i + 2]);  // the axis' component
        out[i] = radius * std::sqrt(std::max(0.0, 1 - along * along)) + 0.5 * thickness * along;
        break;
      }
      case DrawKind::Box:
        out[i] = std::abs(R[3 * i]) * half_extents[0] + std::abs(R[3 * i + 1]) * half_extents[1] +
                 std::abs(R[3 * i + 2]) * half_extents[2];
        break;
      case DrawKind::Plane: out[i] = std::abs(R[3 * i]) * half_size[0] + std::abs(R[3 * i + 1]) * half_size[1]; break;
      case DrawKind::Line: out[i] = 0.5 * width; break;
      default: out[i] = radius;
    }
  }
}

namespace draw {

namespace {
Drawable make(std::string name, DrawKind kind, std::string color) {
  Drawable d;
  d.name = std::move(name);
  d.kind = kind;
  d.color = std::move(color);
  return d;
}

/// A drawable whose size is its radius.
Drawable round(std::string name, DrawKind kind, double radius, std::string color) {
  Drawable d = make(std::move(name), kind, std::move(color));
  d.radius = radius;
  return d;
}
}  // namespace

Drawable disk(std::string name, double radius, double thickness, std::string color) {
  Drawable d = round(std::move(name), DrawKind::Disk, radius, std::move(color));
  d.thickness = thickness;
  return d;
}

Drawable sphere(std::string name, double radius, std::string color) {
  return round(std::move(name), DrawKind::Sphere, radius, std::move(color));
}

Drawable box(std::string name, std::array<double, 3> half_extents, std::string color) {
  Drawable d = make(std::move(name), DrawKind::Box, std::move(color));
  d.half_extents = half_extents;
  return d;
}

Drawable plane(std::string name, std::array<double, 2> half_size, std::string color) {
  Drawable d = make(std::move(name), DrawKind::Plane, std::move(color));
  d.half_size = half_size;
  return ground(std::move(d));
}

Drawable line(std::string name, std::size_t points, double width, std::string color) {
  Drawable d = make(std::move(name), DrawKind::Line, std::move(color));
  d.points = points;
  d.width = width;
  return d;
}

Drawable polygon(std::string name, std::size_t points, std::string color) {
  Drawable d = make(std::move(name), DrawKind::Polygon, std::move(color));
  d.points = points;
  return d;
}

Drawable circle(std::string name, double radius, std::string color) {
  return round(std::move(name), DrawKind::Circle, radius, std::move(color));
}

Drawable point(std::string name, double radius, std::string color) {
  return round(std::move(name), DrawKind::Point, radius, std::move(color));
}

Drawable trail(std::string name, std::string color) { return make(std::move(name), DrawKind::Trail, std::move(color)); }

Drawable spring(std::string name, std::string color) { return line(std::move(name), kSpringPoints, 0, std::move(color)); }

Drawable contact(std::string contact, bool force) {
  Drawable d = make("contact_" + contact, DrawKind::Contact, "#d62728");
  d.role = DrawRole::Contact;
  d.contact = std::move(contact);
  d.force = force;
  return d;
}

Drawable ground(Drawable d) {
  d.role = DrawRole::Ground;
  d.fixed = true;
  return d;
}

}  // namespace draw

std::size_t Scene::size() const {
  std::size_t n = 0;
  for (const auto& d : drawables) n += d.size();
  return n;
}

SceneValues& SceneValues::planar_pose(double x, double y, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  const double position[3] = {x, y, 0}, rotation[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  return pose(position, rotation);
}

SceneValues& SceneValues::pose(const double* position, const double* rotation) {
  for (int i = 0; i < 3; ++i) *v_++ = position[i];
  for (int i = 0; i < 9; ++i) *v_++ = rotation[i];
  return *this;
}

SceneValues& SceneValues::point(double x, double y, double z) {
  *v_++ = x;
  *v_++ = y;
  *v_++ = z;
  return *this;
}

SceneValues& SceneValues::spring(double x0, double y0, double x1, double y1, double amplitude) {
  const double dx = x1 - x0, dy = y1 - y0, length = std::hypot(dx, dy);
  const double nx = length > 0 ? -dy / length : 0, ny = length > 0 ? dx / length : 1;  // across the spring
  constexpr std::size_t corners = kSpringPoints - 2;
  point(x0, y0);
  for (std::size_t k = 0; k < corners; ++k) {
    const double f = (k + 0.5) / corners, side = k % 2 == 0 ? amplitude : -amplitude;
    point(x0 + f * dx + side * nx, y0 + f * dy + side * ny);
  }
  return point(x1, y1);
}

}  // namespace rollsim
