#include "rollsim/kinematics/bodies.hpp"

#include <stdexcept>

namespace rollsim::kinematics {

Vec3 relative_position(const Vec3& origin, const Frame& axes, const Vec3& offset) {
  return add(origin, mul(axes.R, offset));
}

Mat3 inertia_tensor(const std::vector<ex>& v) {
  if (v.size() == 3) return {Vec3{v[0], 0, 0}, Vec3{0, v[1], 0}, Vec3{0, 0, v[2]}};
  if (v.size() == 6) return {Vec3{v[0], v[3], v[4]}, Vec3{v[3], v[1], v[5]}, Vec3{v[4], v[5], v[2]}};
  throw std::invalid_argument("an inertia has 3 values (principal moments) or 6 (Ixx, Iyy, Izz, Ixy, Ixz, Iyz), not " +
                              std::to_string(v.size()));
}

ex RigidBody::kinetic_energy(const Symbols& s) const {
  const Vec3 v = velocity(s);
  return GiNaC::numeric(1, 2) * (mass * dot(v, v) + dot(frame.w_body, mul(inertia, frame.w_body)));
}

void RigidBody::add_inertia_forces(const Symbols& s, std::vector<ex>& F) const {
  const Vec3 v = velocity(s), acc = s.rate(v);
  const Vec3& w = frame.w_body;
  const Vec3 Iw = mul(inertia, w);
  const Vec3 moment = add(mul(inertia, s.rate(w)), cross(w, Iw));
  const Vec3 force = scale(mass, acc);
  for (std::size_t i = 0; i < s.qd.size(); ++i) {
    const ex& x = s.qd[i];
    const Vec3 dv{s.d(v[0], x), s.d(v[1], x), s.d(v[2], x)}, dw{s.d(w[0], x), s.d(w[1], x), s.d(w[2], x)};
    F[i] += dot(dv, force) + dot(dw, moment);
  }
}

void add_bodies(symbolic::LagrangeModel& m, const std::vector<RigidBody>& bodies, const ex& g) {
  if (bodies.empty()) return;
  const Symbols s = Symbols::of(m);
  if (m.inertia_residual.empty()) m.inertia_residual.assign(m.n(), 0);
  for (const auto& b : bodies) {
    const ex T = b.kinetic_energy(s);
    m.kinetic_3d += T;
    m.kinetic += T;
    m.potential += b.potential_energy(g);
    b.add_inertia_forces(s, m.inertia_residual);
    if (b.frame.sequence) m.charts.push_back({b.name, *b.frame.sequence, b.frame.chart_determinant});
  }
}

}  // namespace rollsim::kinematics
