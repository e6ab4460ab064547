// The user model's 3-D bodies, [[points]] and rolling contacts: their keys read into the kinematics layer's frames,
// points, rigid bodies and contacts, checked at the start, and added to the symbolic model.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "rollsim/kinematics/bodies.hpp"
#include "rollsim/kinematics/contact.hpp"
#include "lagrangian_build.hpp"

namespace rollsim::lagrangian::detail {

namespace {

/// A disk's drawn thickness as a fraction of its radius.
constexpr double kDiskThickness = 0.1;

using kinematics::Frame;
using kinematics::Mat3;
using kinematics::Vec3;

/// A 3-D body or a point, by the name `from` and `parent` use.
struct Item {
  std::string path;  ///< "bodies.0", "points.1"
  bool body = false;
  PlacementKeys place;
  Body3Keys keys;  ///< a body's
};

/// The frames and positions of the scenario's 3-D bodies and points, resolved on demand through their parents and
/// `from` references (a cycle is refused with its chain).
class Placements {
 public:
  Placements(const Reader& rd, const symbolic::LagrangeModel& m, const std::vector<double>& p, const std::vector<double>& q0)
      : rd_(rd), s_(kinematics::Symbols::of(m)) {
    start_ = {{m.t, 0}};
    for (std::size_t i = 0; i < m.p.size(); ++i) start_[m.p[i]] = GiNaC::numeric(p[i]);
    for (std::size_t i = 0; i < m.q.size(); ++i) start_[m.q[i]] = GiNaC::numeric(q0[i]);
  }

  void add(Item item, const std::string& name_key) {
    const std::string name = item.body ? item.keys.name : item.place.name;
    if (items_.count(name))
      rd_.sc.fail(name_key, "the name '" + name + "' is taken by " + items_.at(name).path + "; each body and point needs its own name");
    order_.push_back(name);
    items_.emplace(name, std::move(item));
  }
  const Item& item(const std::string& name, const std::string& key, bool body_only) const {
    auto it = items_.find(name);
    if (it == items_.end() || (body_only && !it->second.body)) {
      std::string known;
      for (const auto& n : order_)
        if (!body_only || items_.at(n).body) known += (known.empty() ? "" : ", ") + ("\"" + n + "\"");
      rd_.sc.fail(key, key + " = \"" + name + "\" names no " + (body_only ? "3-D body" : "3-D body or point") +
                           "; allowed: " + (known.empty() ? "none is declared" : known));
    }
    return it->second;
  }
  const std::vector<std::string>& names() const { return order_; }

  /// The value of `e` at the start (t = 0, the initial coordinates, the parameters' values), NaN if not a real number.
  double at_start(const ex& e) const {
    try {
      const ex v = e.subs(start_).evalf();
      if (GiNaC::is_a<GiNaC::numeric>(v) && GiNaC::ex_to<GiNaC::numeric>(v).is_real()) return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
    } catch (const std::exception&) {
    }
    return std::nan("");
  }

  const Frame& frame(const std::string& name) {
    if (auto it = frames_.find(name); it != frames_.end()) return it->second;
    const Item& it = items_.at(name);
    const std::string key = it.path + ".orientation.";
    enter(frame_chain_, name, key + "parent", "parents");
    const PlacementKeys& o = it.place;
    Frame parent = Frame::world();
    if (!o.parent.empty()) parent = frame(item(o.parent, key + "parent", true).keys.name);
    const int forms = (o.sequence.empty() ? 0 : 1) + (o.axis.empty() ? 0 : 1) + (o.matrix.empty() ? 0 : 1);
    if (forms > 1) rd_.sc.fail(key + (o.sequence.empty() ? "axis" : "sequence"), "the orientation of " + name +
                                   " is given twice: give one of {sequence, angles}, {axis, angle} or {matrix}");
    if (forms == 0 && (rd_.given(key + "parent") || !o.angles.empty() || o.angle))
      rd_.sc.fail(key + (o.angles.empty() ? "parent" : "angles"), "the orientation of " + name +
                      " needs one of {sequence, angles}, {axis, angle} or {matrix}");
    Frame f = parent;
    f.name = name;
    f.sequence.reset();
    f.chart_determinant = 1;
    if (!o.sequence.empty()) f = sequence_frame(name, parent, o, key);
    if (!o.axis.empty()) f = axis_frame(name, parent, o, key);
    if (!o.matrix.empty()) f = matrix_frame(name, parent, o, key);
    frame_chain_.pop_back();
    return frames_.emplace(name, std::move(f)).first->second;
  }

  const Vec3& position(const std::string& name) {
    if (auto it = positions_.find(name); it != positions_.end()) return it->second;
    const Item& it = items_.at(name);
    const PlacementKeys& o = it.place;
    const std::string key = it.path + ".position";
    enter(position_chain_, name, key + ".from", "positions (from)");
    Vec3 p;
    if (o.from.empty()) {
      if (o.position.size() != 3)
        rd_.sc.fail(key, key + " has " + std::to_string(o.position.size()) + " values; allowed: 3, [x, y, z] in the world (z up)");
      p = {o.position[0], o.position[1], o.position[2]};
    } else {
      const Item& origin = item(o.from, key + ".from", false);
      if (o.offset.size() != 3)
        rd_.sc.fail(key + ".offset", key + ".offset has " + std::to_string(o.offset.size()) + " values; allowed: 3, [e1, e2, e3]");
      if (o.axes.empty() && !origin.body)
        rd_.sc.fail(key + ".from", key + ".from = \"" + o.from + "\" is a point, which has no axes: give `axes`, the body whose "
                                   "axes the offset is in");
      const std::string axes = o.axes.empty() ? o.from : item(o.axes, key + ".axes", true).keys.name;
      const Vec3 origin_position = position(o.from);
      p = kinematics::relative_position(origin_position, frame(axes), {o.offset[0], o.offset[1], o.offset[2]});
    }
    position_chain_.pop_back();
    return positions_.emplace(name, p).first->second;
  }

 private:
  void enter(std::vector<std::string>& chain, const std::string& name, const std::string& key, const std::string& what) {
    for (const auto& n : chain)
      if (n == name) {
        std::string text;
        for (const auto& c : chain) text += c + " -> ";
        rd_.sc.fail(key, "a cycle of " + what + ": " + text + name + "; each chain must end at the world");
      }
    chain.push_back(name);
  }

  Frame sequence_frame(const std::string& name, const Frame& parent, const PlacementKeys& o, const std::string& key) {
    Frame f;
    try {
      f = Frame::from_sequence(name, parent, o.sequence, o.angles, s_);
    } catch (const std::invalid_argument& e) {
      rd_.sc.fail(key + "sequence", key + "sequence = \"" + o.sequence + "\" with " + std::to_string(o.angles.size()) +
                                        " angles: " + e.what() + "; allowed: 1 to 3 letters of X, Y, Z, adjacent letters "
                                        "different, one angle each");
    }
    if (f.sequence) {
      const double det = at_start(f.chart_determinant);
      if (!(std::abs(det) > kChartLimit)) {
        std::ostringstream os;
        os << "the orientation of " << name << " starts at the singular attitude of its sequence " << o.sequence
           << ": the determinant of the map from the angle rates to the angular velocity is " << det << " (allowed: |det| > "
           << kChartLimit << "); change [initial], or choose a sequence whose singular attitude the motion avoids";
        rd_.sc.fail(key + "sequence", os.str());
      }
    }
    return f;
  }

  Frame axis_frame(const std::string& name, const Frame& parent, const PlacementKeys& o, const std::string& key) {
    if (o.axis.size() != 3)
      rd_.sc.fail(key + "axis", key + "axis has " + std::to_string(o.axis.size()) + " values; allowed: 3, a direction in the parent's axes");
    if (!o.angle) rd_.sc.fail(key + "axis", "the orientation of " + name + " about an axis needs its `angle`");
    const Vec3 axis{o.axis[0], o.axis[1], o.axis[2]};
    const double norm = at_start(kinematics::dot(axis, axis));
    if (!(norm > 1e-24)) rd_.sc.fail(key + "axis", key + "axis is zero (or not a number) at the start; allowed: a nonzero direction");
    return Frame::from_axis_angle(name, parent, axis, *o.angle, s_);
  }

  Frame matrix_frame(const std::string& name, const Frame& parent, const PlacementKeys& o, const std::string& key) {
    const auto& rows = rd_.sc.values.at(key + "matrix").list;
    if (rows.size() != 3 || o.matrix.size() != 9 || rows[0] != 3 || rows[1] != 3)
      rd_.sc.fail(key + "matrix", key + "matrix has " + std::to_string(rows.size()) + " rows and " + std::to_string(o.matrix.size()) +
                                      " entries; allowed: 3 rows of 3 expressions");
    Mat3 M;
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) M[i][j] = o.matrix[3 * i + j];
    double worst = 0;
    const Mat3 MMt = kinematics::mul(M, kinematics::transpose(M));
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) worst = std::max(worst, std::abs(at_start(MMt[i][j]) - (i == j ? 1.0 : 0.0)));
    const double det = at_start(kinematics::determinant(M));
    if (!(worst <= 1e-9) || !(det > 0)) {
      std::ostringstream os;
      os.precision(6);
      os << key << "matrix is not a rotation at the start: largest |M M^T - I| entry " << worst << ", determinant " << det
         << " (allowed: orthonormal to 1e-9, determinant +1)";
      rd_.sc.fail(key + "matrix", os.str());
    }
    return Frame::from_matrix(name, parent, M, s_);
  }

  const Reader& rd_;
  kinematics::Symbols s_;
  GiNaC::exmap start_;
  std::map<std::string, Item> items_;
  std::vector<std::string> order_;
  std::map<std::string, Frame> frames_;
  std::map<std::string, Vec3> positions_;
  std::vector<std::string> frame_chain_, position_chain_;
};

/// Refuses an expression of `key` that is not a constant of the parameters.
void require_constant(const Reader& rd, const symbolic::LagrangeModel& m, const ex& e, const std::string& key, const std::string& what) {
  bool varies = e.has(m.t);
  for (const auto& q : m.q) varies = varies || e.has(q);
  if (varies) rd.sc.fail(key, key + ": " + what + " must be a constant (an expression of the parameters), not of t or the coordinates");
}

/// The friction law of rolling contact `name`: exactly one of friction = "no_slip" and friction_coefficient, and the
/// keys of Coulomb friction only with friction_coefficient.
void check_friction_law(const Reader& rd, const std::string& name) {
  const std::string k = "contacts." + name + ".";
  const bool no_slip = rd.sc.has(k + "friction"), coulomb = rd.has_text(k + "friction_coefficient");
  if (no_slip && coulomb)
    rd.sc.fail(k + "friction_coefficient", "contact " + name + " has both friction = \"no_slip\" (ideal rolling) and "
                                           "friction_coefficient (Coulomb friction, slipping): give one of the two");
  if (!no_slip && !coulomb)
    rd.sc.fail(k + "body", "contact " + name + " needs its friction law: friction = \"no_slip\" (ideal rolling) or "
                           "friction_coefficient = \"mu\" (Coulomb friction: the contact sticks and slides)");
  if (coulomb) return;
  for (const char* leaf : {"static_friction_coefficient", "restitution", "spin_friction_radius"})
    if (rd.has_text(k + leaf))
      rd.sc.fail(k + leaf, k + leaf + " belongs to a rolling contact with Coulomb friction: contact " + name +
                               " rolls without slipping (friction = \"no_slip\"); give friction_coefficient instead "
                               "of friction to let it slip");
}

kinematics::RollingContact read_rolling_contact(const Reader& rd, const symbolic::LagrangeModel& m, Placements& places,
                                                const std::map<std::string, kinematics::RigidBody>& bodies,
                                                const std::string& name, RollingContactKeys& c) {
  const KeyTable& t = keys();
  const std::string k = "contacts." + name + ".";
  check_friction_law(rd, name);
  t.rolling_contacts.read_into(rd, name, c);
  const bool turning = rd.sc.has(k + "surface.plane.rotation_rate");
  (turning ? t.surface_turning : t.surface_at_rest).read_into(rd, name, c);
  t.rolling_friction.read_into(rd, name, c);
  kinematics::RollingContact rc;
  rc.name = name;
  rc.source = k + "body";
  const Item& body = places.item(c.body, k + "body", true);
  rc.body = &bodies.at(body.keys.name);
  const bool disk = c.disk_radius.has_value() || !c.disk_axis.empty(), sphere = c.sphere_radius.has_value();
  if (disk == sphere)
    rd.sc.fail(disk ? k + "shape.sphere.radius" : k + "body",
               "contact " + name + " needs one shape: { disk = { radius, axis } } or { sphere = { radius } }" +
                   std::string(disk ? ", not both" : ""));
  const std::string radius_key = k + (disk ? "shape.disk.radius" : "shape.sphere.radius");
  if (disk && !c.disk_radius) rd.sc.fail(k + "shape.disk.axis", "the disk of contact " + name + " needs its radius (shape.disk.radius)");
  if (disk && c.disk_axis.size() != 3)
    rd.sc.fail(c.disk_axis.empty() ? radius_key : k + "shape.disk.axis",
               "the disk of contact " + name + " needs its axis in the body's axes, 3 values (shape.disk.axis), not " +
                   std::to_string(c.disk_axis.size()));
  rc.shape = disk ? kinematics::RollingContact::Shape::Disk : kinematics::RollingContact::Shape::Sphere;
  rc.radius = disk ? *c.disk_radius : *c.sphere_radius;
  require_constant(rd, m, rc.radius, radius_key, "a radius");
  const double r = places.at_start(rc.radius);
  if (!(r > 0)) {
    std::ostringstream os;
    os << radius_key << " = " << rd.sc.string(radius_key) << " is " << r << "; allowed range (0, inf)";
    rd.sc.fail(radius_key, os.str());
  }
  if (disk) {
    rc.axis = {c.disk_axis[0], c.disk_axis[1], c.disk_axis[2]};
    require_constant(rd, m, kinematics::dot(rc.axis, rc.axis), k + "shape.disk.axis", "a disk's axis");
    if (!(places.at_start(kinematics::dot(rc.axis, rc.axis)) > 1e-24))
      rd.sc.fail(k + "shape.disk.axis", k + "shape.disk.axis is zero; allowed: a nonzero direction in the body's axes");
  }
  if (turning) {
    rc.rotation_rate = *c.rotation_rate;
    for (const auto& q : m.q)
      if (rc.rotation_rate.has(q))
        rd.sc.fail(k + "surface.plane.rotation_rate", "the surface's rotation rate depends on t and the parameters only");
  }
  return rc;
}

/// A rolling contact with Coulomb friction (the cone's engine): its gap, slip and spin, its coefficients checked.
symbolic::LagrangeModel::ConeContact cone_contact(const Reader& rd, const symbolic::LagrangeModel& m, const Placements& places,
                                                  const kinematics::RollingContact& rc, const RollingContactKeys& c,
                                                  const kinematics::Symbols& s, bool embedded) {
  const Scenario& sc = rd.sc;
  const std::string k = "contacts." + rc.name + ".";
  if (embedded)
    sc.fail(k + "body", "contact " + rc.name + " has Coulomb friction, so it may lift off: its gap (the contact point's "
                        "height) must vary with the coordinates, but the coordinates keep body " + rc.body->name +
                        " on the plane; give the body a coordinate of its height (e.g. position = [\"x\", \"y\", \"z + r\"])");
  symbolic::LagrangeModel::ConeContact cc;
  cc.name = rc.name;
  cc.source = k + "friction_coefficient";
  cc.gap = rc.gap();
  const kinematics::Vec3 u = rc.slip(s);
  cc.slip[0] = u[0];
  cc.slip[1] = u[1];
  cc.spin = rc.spin();
  cc.friction_coefficient = *c.friction_coefficient;
  cc.static_friction_coefficient = c.static_friction_coefficient.value_or(cc.friction_coefficient);
  cc.restitution = c.restitution.value_or(0);
  cc.spin_friction = c.spin_friction_radius.has_value();
  cc.spin_radius = c.spin_friction_radius.value_or(0);
  require_constant(rd, m, cc.friction_coefficient, k + "friction_coefficient", "a friction coefficient");
  if (c.static_friction_coefficient)
    require_constant(rd, m, cc.static_friction_coefficient, k + "static_friction_coefficient", "a friction coefficient");
  if (c.restitution) require_constant(rd, m, cc.restitution, k + "restitution", "a restitution");
  if (cc.spin_friction) require_constant(rd, m, cc.spin_radius, k + "spin_friction_radius", "a spin friction radius");
  const double mu = places.at_start(cc.friction_coefficient);
  check_friction_values(sc, k, mu, c.static_friction_coefficient ? std::optional<double>(places.at_start(cc.static_friction_coefficient))
                                                                 : std::nullopt, "");
  std::ostringstream os;
  os.precision(10);
  const double e = places.at_start(cc.restitution);
  if (!(e >= 0 && e <= 1)) {
    os << k << "restitution = " << sc.string(k + "restitution") << " is " << e << "; allowed range [0, 1] (Newton's restitution)";
    sc.fail(k + "restitution", os.str());
  }
  if (cc.spin_friction) {
    const double R = places.at_start(cc.spin_radius);
    if (!(R > 0) || !std::isfinite(R)) {
      os << k << "spin_friction_radius = " << sc.string(k + "spin_friction_radius") << " is " << R
         << "; allowed range (0, inf) (the radius of the contact disk; leave the key out for no spin friction)";
      sc.fail(k + "spin_friction_radius", os.str());
    }
  }
  return cc;
}

/// A body drawn as the shape of its rolling contact rc: a sphere in the body's axes, or a disk whose local z is the
/// disk's axis (the axis, a number, enters the kernels' key c.scene_key).
void add_contact_shape(symbolic::LagrangeModel& m, const Placements& places, const kinematics::RigidBody& body,
                       const kinematics::RollingContact& rc, const std::string& color, Compiled& c) {
  Scene& scene = c.scene;
  const std::string& n = body.name;
  const double r = places.at_start(rc.radius);
  if (rc.shape == kinematics::RollingContact::Shape::Sphere) {
    add_drawable(scene, m, draw::sphere(n, r, color), pose_values(body.position, body.frame.R));
    return;
  }
  const std::array<double, 3> axis{places.at_start(rc.axis[0]), places.at_start(rc.axis[1]), places.at_start(rc.axis[2])};
  const kinematics::Mat3 A = to_local_z(axis);
  std::ostringstream key;
  key.precision(17);
  key << "scene: " << n << " axis " << axis[0] << ' ' << axis[1] << ' ' << axis[2] << '\n';
  c.scene_key += key.str();
  kinematics::Mat3 R;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      R[i][j] = body.frame.R[i][0] * A[0][j] + body.frame.R[i][1] * A[1][j] + body.frame.R[i][2] * A[2][j];
  add_drawable(scene, m, draw::disk(n, r, kDiskThickness * r, color), pose_values(body.position, R));
}

}  // namespace

void read_3d(const Reader& rd, symbolic::LagrangeModel& m, const std::vector<double>& p, const std::vector<double>& q0,
             const std::vector<std::string>& body_indices, const std::vector<std::string>& rolling_contacts, Compiled& c) {
  const KeyTable& t = keys();
  const Scenario& sc = rd.sc;
  Placements places(rd, m, p, q0);
  std::vector<std::string> bodies_3d;
  for (const auto& b : body_indices) {
    const std::string path = "bodies." + b;
    if (!is_3d(sc, path)) continue;
    Item it{path, true, {}, t.bodies_3d.read(rd, b)};
    if (!sc.has(path + ".position") && !sc.has(path + ".position.from"))
      sc.fail(path + ".mass", "body " + it.keys.name + " has an orientation but no position: give its centre of mass, "
                              "position = [x, y, z] or { from, offset }");
    (sc.has(path + ".position.from") ? t.relative_position : t.world_position).read_into(rd, path, it.place);
    t.orientation.read_into(rd, path, it.place);
    require_constant(rd, m, it.keys.mass, path + ".mass", "a 3-D body's mass");
    for (const auto& e : it.keys.inertia) require_constant(rd, m, e, path + ".inertia", "a 3-D body's inertia");
    if (it.keys.inertia.size() != 3 && it.keys.inertia.size() != 6)
      sc.fail(path + ".inertia", path + ".inertia has " + std::to_string(it.keys.inertia.size()) +
                                     " values; allowed: 3 (principal moments in body axes) or 6 (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)");
    bodies_3d.push_back(it.keys.name);
    places.add(std::move(it), path + ".name");
  }
  for (const auto& pt : ordered(sc, "points", "name")) {
    const std::string path = "points." + pt;
    Item it{path, false, t.point.read(rd, pt), {}};
    (sc.has(path + ".position.from") ? t.relative_position : t.world_position).read_into(rd, path, it.place);
    places.add(std::move(it), path + ".name");
  }
  for (const auto& n : places.names()) places.position(n);
  std::map<std::string, kinematics::RigidBody> bodies;
  std::vector<kinematics::RigidBody> list;
  for (const auto& n : bodies_3d) {
    const Item& it = places.item(n, "", true);
    kinematics::RigidBody b{n, it.keys.mass, kinematics::inertia_tensor(it.keys.inertia), places.position(n), places.frame(n)};
    list.push_back(b);
    bodies.emplace(n, std::move(b));
  }
  if (!list.empty()) {
    auto g = rd.names.symbols.find("g");
    if (g == rd.names.symbols.end() || std::find(m.p.begin(), m.p.end(), g->second) == m.p.end())
      sc.fail(places.item(bodies_3d.front(), "", true).path + ".mass",
              "3-D bodies need the gravitational acceleration as parameters.g (gravity along -z; g = 0 for none)");
    kinematics::add_bodies(m, list, g->second);
  }
  const kinematics::Symbols s = kinematics::Symbols::of(m);
  std::map<std::string, kinematics::RollingContact> shapes;  // each body's contact shape, the first given
  for (const auto& name : rolling_contacts) {
    RollingContactKeys keys_read;
    const kinematics::RollingContact rc = read_rolling_contact(rd, m, places, bodies, name, keys_read);
    shapes.emplace(rc.body->name, rc);
    const ex gap = rc.gap();
    const bool embedded = kinematics::vanishes_identically(gap, {rc.body->position[2], rc.radius}, m, p, q0);
    if (keys_read.friction_coefficient) {
      m.cone_contacts.push_back(cone_contact(rd, m, places, rc, keys_read, s, embedded));
      continue;
    }
    for (auto& row : rc.rows(s, embedded)) m.velocity_constraints.push_back(std::move(row));
  }
  if (bodies_3d.empty()) return;
  Scene& scene = c.scene;
  scene.dimension = 3;
  if (!rolling_contacts.empty()) {  // the plane z = 0, 20 times the largest shape's radius each way
    double reach = 0;
    for (const auto& [body, rc] : shapes) reach = std::max(reach, 20 * places.at_start(rc.radius));
    add_drawable(scene, m, draw::ground(draw::plane("ground", {reach, reach}, "#c7c7c7")),
                 pose_values({0, 0, 0}, kinematics::identity()));
  }
  for (const auto& n : bodies_3d) {
    const kinematics::RigidBody& body = bodies.at(n);
    const std::string color = body_color(scene.drawables.size()), path = places.item(n, "", true).path;
    const auto shape = shapes.find(n);
    // The contact shape first, then the drawn shapes; a dot at the centre of mass when there is neither.
    if (shape != shapes.end()) add_contact_shape(m, places, body, shape->second, color, c);
    const std::size_t drawn = add_body_shapes(rd, m, p, scene, path, n, body.position, body.frame.R, 3, color,
                                              shape == shapes.end());
    if (shape == shapes.end() && drawn == 0)
      add_drawable(scene, m, draw::point(n, kBodyDot, color), {body.position[0], body.position[1], body.position[2]});
  }
}

}  // namespace rollsim::lagrangian::detail
