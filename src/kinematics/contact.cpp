#include "rollsim/kinematics/contact.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace rollsim::kinematics {

Vec3 RollingContact::point() const {
  const Vec3& c = body->position;
  if (shape == Shape::Sphere) return {c[0], c[1], c[2] - radius};
  const Vec3 n = mul(body->frame.R, scale(1 / GiNaC::sqrt(dot(axis, axis)), axis));
  // e_z - n_z n, of length sqrt(1 - n_z^2) for a unit n.
  const Vec3 up = sub(unit(2), scale(n[2], n));
  const ex k_scale = radius / GiNaC::sqrt(1 - n[2] * n[2]);
  return sub(c, scale(k_scale, up));
}

Vec3 RollingContact::slip(const Symbols& s) const {
  const Vec3 p = point();
  const Vec3 material = add(body->velocity(s), cross(body->frame.w, sub(p, body->position)));
  const Vec3 surface{-rotation_rate * p[1], rotation_rate * p[0], 0};
  return sub(material, surface);
}

std::vector<symbolic::LagrangeModel::VelocityConstraint> RollingContact::rows(const Symbols& s, bool embedded) const {
  using Row = symbolic::LagrangeModel::VelocityConstraint;
  const Vec3 u = slip(s);
  std::vector<Row> out;
  out.push_back({name + "_x", u[0], std::nullopt, Row::Kind::Tangential, name, source});
  out.push_back({name + "_y", u[1], std::nullopt, Row::Kind::Tangential, name, source});
  if (!embedded) out.push_back({name + "_normal", u[2], gap(), Row::Kind::Normal, name, source});
  return out;
}

bool vanishes_identically(const ex& e, const std::vector<ex>& scale_terms, const symbolic::LagrangeModel& m,
                          const std::vector<double>& p, const std::vector<double>& q0, int samples) {
  std::mt19937 rng(20260525);
  std::uniform_real_distribution<double> unit_interval(-1.0, 1.0);
  for (int k = 0; k < samples; ++k) {
    GiNaC::exmap at{{m.t, GiNaC::numeric(0.5 * (1 + unit_interval(rng)))}};
    for (std::size_t i = 0; i < m.p.size() && i < p.size(); ++i) at[m.p[i]] = GiNaC::numeric(p[i]);
    for (std::size_t i = 0; i < m.q.size(); ++i) {
      const double q = i < q0.size() ? q0[i] : 0.0;
      at[m.q[i]] = GiNaC::numeric(q + 0.2 * std::max(1.0, std::abs(q)) * unit_interval(rng));
    }
    auto value = [&](const ex& x) {
      const ex v = x.subs(at).evalf();
      if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real()) return std::nan("");
      return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
    };
    double scale = 1;
    for (const auto& t : scale_terms) scale = std::max(scale, 1 + std::abs(value(t)));
    const double v = value(e);
    if (!(std::abs(v) <= 1e-10 * scale)) return false;
  }
  return true;
}

}  // namespace rollsim::kinematics
