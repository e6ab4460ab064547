#pragma once
// The cone engine's test model written by hand (tests/test_cone_engine.cpp, tests/test_cone_sphere.cpp): a uniform
// solid sphere on the plane z = 0. Coordinates x, y, z (the centre) and three angles whose rates are the angular
// velocity's world components (for a sphere, whose kinetic energy does not depend on its orientation, these are
// legitimate coordinates): M is diag(m, m, m, I, I, I) with I = 2/5 m r^2. The contact point's velocity is
// v + w x (-r e_z): u = (x' - r wy, y' + r wx), the gap z - r, the spin wz. The state: x, y, z, three angles, their
// six rates, a lift's work where there is one, then D_friction, D_impact (x[12], x[13] without a lift) and the slip
// reference.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "rollsim/hybrid/cone_engine.hpp"
#include "support.hpp"

namespace rollsim::test::cone {

struct SphereParams {
  double m = 0.2, r = 0.05, g = 9.81, mu = 0.3, mu_s = 0.3, e = 0, spin_radius = 0;
  bool spin_friction = false;
  /// A constant force on the centre (a push, or gravity's part along a tilted plane): (Fx, Fy).
  double Fx = 0, Fy = 0;
  /// An upward force on the centre growing at this rate [N/s] (a lift).
  double lift_rate = 0;
};

class Sphere : public ConeEngine {
 public:
  Sphere(const SphereParams& p, std::vector<double> x0) : p_(p) {
    Signals base;
    for (const char* c : {"x", "y", "z", "ax", "ay", "az"}) base.push_back({c, "1", "coordinate"});
    for (const char* c : {"der_x", "der_y", "der_z", "wx", "wy", "wz"}) base.push_back({c, "1", "rate"});
    if (p.lift_rate != 0) {
      base.push_back(Signal{"work_lift", "J", "work of the lift"}.as(Role::InputWork));
      x0.push_back(0.0);
    }
    ContactSettings s;
    s.rtol = 1e-12;
    s.atol = 1e-14;
    configure(6, {{"ground", p.spin_friction, false}}, base, std::move(x0), {}, {}, s);
  }
  std::string model_name() const override { return "test_sphere"; }
  double inertia() const { return 0.4 * p_.m * p_.r * p_.r; }

 protected:
  void mass_and_forces(double t, const double*, double* M, double* f) const override {
    std::fill(M, M + 36, 0.0);
    for (int i = 0; i < 3; ++i) M[i * 7] = p_.m;
    for (int i = 3; i < 6; ++i) M[i * 7] = inertia();
    std::fill(f, f + 6, 0.0);
    f[0] = p_.Fx;
    f[1] = p_.Fy;
    f[2] = -p_.m * p_.g + p_.lift_rate * t;
  }
  void cone_terms(double, const double* x, ConeTerms* c) const override {
    const double* v = x + 6;
    ConeTerms& t = c[0];
    std::fill(t.Wn.begin(), t.Wn.end(), 0.0);
    std::fill(t.Wt1.begin(), t.Wt1.end(), 0.0);
    std::fill(t.Wt2.begin(), t.Wt2.end(), 0.0);
    std::fill(t.Ws.begin(), t.Ws.end(), 0.0);
    t.gap = x[2] - p_.r;
    t.Wn[2] = 1;
    t.Wt1[0] = 1;
    t.Wt1[4] = -p_.r;
    t.Wt2[1] = 1;
    t.Wt2[3] = p_.r;
    t.Ws[5] = 1;
    t.slip[0] = v[0] - p_.r * v[4];
    t.slip[1] = v[1] + p_.r * v[3];
    t.spin = v[5];
    t.mu = p_.mu;
    t.mu_static = p_.mu_s;
    t.restitution = p_.e;
    t.spin_radius = p_.spin_radius;
  }
  void extra_rates(double t, const double* x, const double*, double* r) const override {
    if (p_.lift_rate != 0) r[0] = p_.lift_rate * t * x[8];
  }
  void energies(double, const double* x, double& T, double& V, double& h, double& E) const override {
    const double* v = x + 6;
    T = 0.5 * p_.m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * inertia() * (v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    V = p_.m * p_.g * x[2] - p_.Fx * x[0] - p_.Fy * x[1];
    h = T + V;
    // The lift's work is in the balance through the state work_lift (x[12], the model's extra).
    E = h - (p_.lift_rate != 0 ? x[12] : 0.0);
  }

 private:
  SphereParams p_;
};

/// A start on the plane with centre velocity (vx, vy) and slip u0 = (ux, uy): the angular velocity from
/// u = (x' - r wy, y' + r wx).
inline std::vector<double> start(const SphereParams& p, double vx, double vy, double ux, double uy, double wz = 0, double z = -1) {
  return {0, 0, z < 0 ? p.r : z, 0, 0, 0, vx, vy, 0, (uy - vy) / p.r, (vx - ux) / p.r, wz};
}

inline SimulationOptions options(double t_end, double rtol = 1e-12) {
  SimulationOptions o;
  o.t_end = t_end;
  o.output_dt = t_end / 50;
  o.solver.rtol = rtol;
  o.solver.atol = 1e-14;
  return o;
}

inline const EventRecord* first(const test::Recorder& rec, const std::string& kind) {
  for (const auto& e : rec.events)
    if (e.kind == kind) return &e;
  return nullptr;
}


}  // namespace rollsim::test::cone
