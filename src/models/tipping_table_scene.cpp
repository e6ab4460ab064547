#include <cmath>
#include <limits>

#include "rollsim/models/tipping_table_system.hpp"

namespace rollsim::tipping_table {

namespace {

/// The drawn table top's thickness and depth, and the hinge stand's half width, as fractions of the table's length.
constexpr double kTopThickness = 0.02, kTopDepth = 0.2, kStand = 0.04;
/// The drawn wheel's thickness as a fraction of its radius.
constexpr double kWheelThickness = 0.2;

std::optional<std::size_t> find(const Signals& signals, std::string_view name) {
  for (std::size_t i = 0; i < signals.size(); ++i)
    if (signals[i].name == name) return i;
  return std::nullopt;
}

}  // namespace

Scene table_scene(const Params& p) {
  const double l = p.table_length, r = p.wheel_radius;
  return {2,
          {draw::ground(draw::polygon("hinge", 3, "#7f7f7f")),
           draw::box("table", {0.5 * l, 0.5 * kTopThickness * l, 0.5 * kTopDepth * l}, "#8c564b"),
           draw::disk("wheel", r, kWheelThickness * r, "#1f77b4"), draw::contact("table", true)}};
}

void table_scene_values(const Params& p, double theta1, const double* wheel, double theta2, const double* contact,
                        const double* force, double* v) {
  const double l = p.table_length, a = kStand * l, h = 0.5 * kTopThickness * l;
  SceneValues(v)
      .point(0, 0)
      .point(-a, -h - 3 * a)
      .point(a, -h - 3 * a)
      .planar_pose(h * std::sin(theta1), -h * std::cos(theta1), theta1)  // the top face through the hinge: -h e2
      .planar_pose(wheel[0], wheel[1], theta2)
      .point(contact[0], contact[1])
      .point(force[0], force[1]);
}

RollingTableScene::RollingTableScene(const Params& p, const Signals& states, const Signals& outputs)
    : p_(p),
      theta1_(signal_index(states, "theta1", "the table's scene")),
      theta2_(signal_index(states, "theta2", "the table's scene")),
      s_(signal_index(outputs, "contact_position", "the table's scene")),
      normal_(signal_index(outputs, "normal_force", "the table's scene")),
      tangential_(signal_index(outputs, "tangential_force", "the table's scene")),
      wheel_x_(find(states, "wheel_x")),
      wheel_y_(find(states, "wheel_y")) {}

const Scene& RollingTableScene::scene() const {
  std::call_once(scene_built_, [this] { scene_ = table_scene(p_); });
  return scene_;
}

void RollingTableScene::scene_values(double, const double* x, const double* y, int, double* v) const {
  const double th = x[theta1_], c = std::cos(th), sn = std::sin(th), s = y[s_], n = y[normal_], t = y[tangential_];
  double wheel[2];
  centre_at(p_.wheel_radius, s, c, sn, wheel[0], wheel[1]);
  if (wheel_x_ && wheel_y_) {
    wheel[0] = x[*wheel_x_];
    wheel[1] = x[*wheel_y_];
  }
  const double contact[2] = {s * c, s * sn}, force[2] = {t * c - n * sn, t * sn + n * c};
  table_scene_values(p_, th, wheel, x[theta2_], contact, force, v);
}

}  // namespace rollsim::tipping_table
