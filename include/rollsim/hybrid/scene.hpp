#pragma once
/// \file How a model looks (docs/scene.md): its drawables, each declared once with its fixed attributes (a shape
/// with a pose, or world points), and per sample the values that move them, filled from (t, x, y, mode). A system
/// that can be drawn has the facet SceneSystem; the result file's /scene group is written from it.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// What a drawable is. Disk, Sphere, Box and Plane have a pose (a centre and a rotation); the others are world
/// points (a line's or polygon's vertices, a circle's centre, a dot, a trail's point, a contact point).
enum class DrawKind { Disk, Sphere, Box, Plane, Line, Polygon, Circle, Point, Trail, Contact };
/// What a drawable stands for: a body of the model, fixed surroundings, a contact point, a user's [[draw]] entry.
enum class DrawRole { Body, Ground, Contact, Draw };

/// The names the result file writes (`kind`, `role`).
const char* draw_kind_name(DrawKind kind);
const char* draw_role_name(DrawRole role);
inline bool has_pose(DrawKind kind) { return kind <= DrawKind::Plane; }

/// One drawable: its fixed attributes. Its values per sample (size()) are, for a kind with a pose, the centre (3)
/// and the rotation matrix from the shape's frame to the world (9, row-major); for a point kind, the points
/// (3 each), then the contact's force (3) when `force`. (A circle is drawn in a plane of constant z: the file's
/// optional `normal` dataset is never written.)
struct Drawable {
  std::string name;
  DrawKind kind = DrawKind::Point;
  DrawRole role = DrawRole::Body;
  std::string color;           ///< #rrggbb
  bool fixed = false;          ///< the values do not change: the file keeps one row (`static`)
  std::size_t points = 1;      ///< the world points per sample of a point kind (k)
  double radius = 0;           ///< disk, sphere, circle; a point's size on screen [m]
  double thickness = 0;        ///< disk [m]
  double width = 0;            ///< line: a rod's diameter, 0 a hairline [m]
  std::array<double, 3> half_extents{};  ///< box [m]
  std::array<double, 2> half_size{};     ///< plane [m]
  bool force = false;          ///< contact: the contact force on the body per sample [N]
  std::string contact;         ///< contact: the contact's name, as in the signals' roles

  std::size_t size() const;
  /// How far the drawing reaches along each world axis from a point or the centre of `values`, its values at a
  /// sample (an oriented shape's reach follows its rotation) [m]: the scene's extent.
  void reach(const double* values, double* out) const;
};

/// Drawables by kind (the attributes each kind needs; colour last).
namespace draw {
Drawable disk(std::string name, double radius, double thickness, std::string color);
Drawable sphere(std::string name, double radius, std::string color);
Drawable box(std::string name, std::array<double, 3> half_extents, std::string color);
/// A fixed plane of the surroundings (role ground).
Drawable plane(std::string name, std::array<double, 2> half_size, std::string color);
Drawable line(std::string name, std::size_t points, double width, std::string color);
Drawable polygon(std::string name, std::size_t points, std::string color);
Drawable circle(std::string name, double radius, std::string color);
Drawable point(std::string name, double radius, std::string color);
Drawable trail(std::string name, std::string color);
/// A spring drawn as a zigzag line of kSpringPoints points (SceneValues::spring).
Drawable spring(std::string name, std::string color);
/// The contact point of the contact `contact`, with its force when `force`.
Drawable contact(std::string contact, bool force);
/// `d` as fixed surroundings: role ground, values that never change.
Drawable ground(Drawable d);
}  // namespace draw

/// A model's drawables in drawing order.
struct Scene {
  int dimension = 2;  ///< 2: the x-y plane, y up; 3: z up
  std::vector<Drawable> drawables;
  /// The values of one sample, every drawable's in order.
  std::size_t size() const;
};

/// The points of a drawn spring: its two ends and the corners of its zigzag between them.
inline constexpr std::size_t kSpringPoints = 14;

/// Writes one sample's values in the scene's order, drawable after drawable.
class SceneValues {
 public:
  explicit SceneValues(double* v) : v_(v) {}
  /// A pose in the x-y plane: the centre (x, y, 0) and the rotation by `angle` about z.
  SceneValues& planar_pose(double x, double y, double angle);
  /// A pose: the centre and the rotation matrix (row-major).
  SceneValues& pose(const double* position, const double* rotation);
  /// A world point, a normal or a force.
  SceneValues& point(double x, double y, double z = 0);
  /// A spring's kSpringPoints points in the x-y plane from (x0, y0) to (x1, y1), zigzagging `amplitude` to each side.
  SceneValues& spring(double x0, double y0, double x1, double y1, double amplitude);

 private:
  double* v_;
};

/// The scene facet: a system that can be drawn.
class SceneSystem : public virtual HybridSystem {
 public:
  /// The drawables, the same for the whole run; none when the system has nothing to draw.
  virtual const Scene& scene() const = 0;
  /// One sample's values (scene().size() of them) at (t, x) in `mode`, with the outputs y there. Values that
  /// cannot be formed at this sample (a contact point after lift-off) are NaN. Must not allocate.
  virtual void scene_values(double t, const double* x, const double* y, int mode, double* v) const = 0;
};

}  // namespace rollsim
