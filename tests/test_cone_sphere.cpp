// The cone engine (hybrid/cone_engine.hpp) on the hand-written sphere of tests/cone_sphere.hpp: the coupled
// Coulomb-Contensou law of a sphere that slides and spins at once, an impact whose friction impulse lies on the
// cone's edge, and the self-audit against a sticking force outside the cone. Each case's closed form is derived in
// its comment.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cone_sphere.hpp"
#include "rollsim/hybrid/cone_engine.hpp"
#include "support.hpp"

namespace {

using namespace rollsim;
using test::cone::first;
using test::cone::options;
using test::cone::Sphere;
using test::cone::SphereParams;
using test::cone::start;

/// The slip u (2) of the sphere's state.
double slip_x(const std::vector<double>& x, double r) { return x[6] - r * x[10]; }
double slip_y(const std::vector<double>& x, double r) { return x[7] + r * x[9]; }

}  // namespace

TEST_CASE("cone sphere: sliding and spinning at once with an isotropic Contensou law, slip and spin stop together at 2|v0|/(7 mu g)") {
  // The ellipsoidal Coulomb-Contensou law (Leine and Glocker 2003): with the generalized slip v = (u, rho w_n),
  // rho = 2R/3, the friction is P = (F_t, tau_n / rho) = -mu N v/|v|, i.e. F_t = -mu N u/|v| and
  // tau_n = -mu N rho^2 w_n/|v|. On the sphere (N = m g, I = 2/5 m r^2):
  //   u' = (1/m + r^2/I) F_t = -(7/2) mu g u/|v|,   (rho w_n)' = rho tau_n / I = -(m rho^2 / I) mu g (rho w_n)/|v|.
  // With m rho^2 / I = 7/2, i.e. rho = sqrt(7/5) r (R = (3/2) sqrt(7/5) r, a radius chosen for the closed form, not
  // a physical patch), both parts share one rate: v' = -(7/2) mu g v/|v|. So v keeps its direction in (u, rho w_n):
  // the ratio of slip to spin is constant, |v| = |v0| - (7/2) mu g t, and slip and spin vanish together at
  //   t* = 2 |v0| / (7 mu g),
  // where the sphere rolls on at the centre velocity v0 - (2/7) u0 without spin. The friction dissipates
  // mu m g |v0| t*/2 = m |v0|^2 / 7 (= the slip's kinetic energy with the mass 2m/7 plus all the spin's, I w0^2/2).
  SphereParams p;
  p.spin_friction = true;
  p.spin_radius = 1.5 * std::sqrt(1.4) * p.r;
  const double rho = 2.0 / 3.0 * p.spin_radius;
  REQUIRE(std::abs(p.m * rho * rho / (0.4 * p.m * p.r * p.r) - 3.5) <= 1e-14);
  const double vx = 1.0, vy = 0.2, ux = 0.3, uy = -0.4, w0 = 0.5 / rho;  // rho w0 = 0.5 m/s
  const double v0 = std::sqrt(ux * ux + uy * uy + rho * w0 * rho * w0);
  const double t_star = 2 * v0 / (7 * p.mu * p.g);
  Sphere sys(p, start(p, vx, vy, ux, uy, w0));
  test::Recorder rec;
  SimulationOptions o = options(0.12);
  o.output_dt = 1e-3;
  const RunResult res = simulate(sys, o, {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  // One stick, where slip and spin reach zero together, and nothing else but reference resets (none expected: the
  // direction of v is constant).
  int sticks = 0;
  for (const auto& e : rec.events) sticks += e.kind == "stick_ground";
  CHECK(sticks == 1);
  const EventRecord* stick = first(rec, "stick_ground");
  REQUIRE(stick != nullptr);
  CHECK(std::abs(stick->t - t_star) <= 1e-12 * t_star);
  // Before it, every component of v is its start times (1 - t/t*): the same ratio of slip to spin throughout.
  double ratio = 0, decay = 0, after = 0;
  for (std::size_t k = 0; k < rec.t.size(); ++k) {
    const auto& x = rec.x[k];
    const double t = rec.t[k], sx = slip_x(x, p.r), sy = slip_y(x, p.r), s = rho * x[11];
    if (t < t_star - 1e-3) {
      const double f = 1 - t / t_star;
      ratio = std::max({ratio, std::abs(sx * (rho * w0) - s * ux), std::abs(sy * (rho * w0) - s * uy)});
      decay = std::max({decay, std::abs(sx - ux * f), std::abs(sy - uy * f), std::abs(s - rho * w0 * f)});
    } else if (t > t_star + 1e-3) {
      after = std::max({after, std::abs(sx), std::abs(sy), std::abs(s)});
    }
  }
  CHECK(ratio <= 1e-12);
  CHECK(decay <= 1e-12);
  CHECK(after <= 1e-11);
  CHECK(ConeEngine::contact_mode(res.final_mode, 0) == ConeEngine::kStick);
  const auto& xe = rec.x.back();
  CHECK(std::abs(xe[6] - (vx - 2.0 / 7.0 * ux)) <= 1e-12);
  CHECK(std::abs(xe[7] - (vy - 2.0 / 7.0 * uy)) <= 1e-12);
  CHECK(std::abs(xe[12] - p.m * v0 * v0 / 7) <= 1e-12 * p.m * v0 * v0);
  CHECK(std::abs(xe[12] - (p.m * (ux * ux + uy * uy) / 7 + 0.5 * sys.inertia() * w0 * w0)) <= 1e-12 * p.m * v0 * v0);
}

TEST_CASE("cone sphere: an impact whose slip cannot be stopped takes the friction impulse mu P_N against the slip") {
  // A sphere falling at v_z onto the plane while its contact slips at u0 (tangential), restitution e. The normal
  // row does not couple to the slip's (G = J M^-1 J^T is diagonal for a sphere), so Newton's law gives
  //   P_N = m (1 + e) v_z,  v_z+ = e v_z.
  // Stopping the slip needs the friction impulse (2/7) m |u0| (effective mass 2m/7: u changes by (7/(2m)) P_t);
  // where (7/2) mu (1 + e) v_z < |u0| that lies outside the cone |P_t| <= mu_s P_N, so the impulse is on the cone's
  // edge against the slip: P_t = -mu P_N u0/|u0|, and after it
  //   u+ = u0 (1 - (7/2) mu (1 + e) v_z / |u0|),  v+ = v0 - mu (1 + e) v_z u0/|u0|  (v the centre's velocity),
  // the spin about the vertical unchanged (no spin friction). The kinetic energy lost: the normal part
  // m v_z^2 (1 - e^2)/2 and the friction's mu P_N (|u0| + |u+|)/2 (the slip changes linearly with the impulse).
  // Here v_z = sqrt(1 + 2 g h) after a fall of h = 1 mm from 1 m/s, mu = 0.1, e = 0.5, |u0| = 1 m/s at -50 degrees:
  // (7/2) mu (1 + e) v_z = 0.526 < 1.
  SphereParams p;
  p.mu = p.mu_s = 0.1;
  p.e = 0.5;
  const double h = 1e-3, angle = -50 * M_PI / 180, us = 1.0, ux = us * std::cos(angle), uy = us * std::sin(angle);
  const double vx = 0.4, vy = 0.1, wz = 5.0;
  std::vector<double> x0 = start(p, vx, vy, ux, uy, wz, p.r + h);
  x0[8] = -1.0;
  const double vz = std::sqrt(1.0 + 2 * p.g * h), PN = p.m * (1 + p.e) * vz;
  const double shrink = 1 - 3.5 * p.mu * (1 + p.e) * vz / us;
  REQUIRE(shrink > 0.4);  // the slip cannot be stopped, by a wide margin
  Sphere sys(p, x0);
  test::Recorder rec;
  // Until the sphere is back in the air well before it lands again (2 e v_z / g = 0.1 s after the impact).
  const RunResult res = simulate(sys, options(0.03), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  const EventRecord* hit = first(rec, "impact_ground");
  REQUIRE(hit != nullptr);
  CHECK(rec.events.size() == 1);
  CHECK(std::abs(hit->t - (vz - 1.0) / p.g) <= 1e-10);  // h = t + g t^2/2 from 1 m/s
  CHECK(std::abs(hit->extra.at("impulse_normal_ground") - PN) <= 1e-10 * PN);
  CHECK(std::abs(hit->extra.at("impulse_x_ground") + p.mu * PN * ux / us) <= 1e-10 * PN);
  CHECK(std::abs(hit->extra.at("impulse_y_ground") + p.mu * PN * uy / us) <= 1e-10 * PN);
  const auto& x = hit->x;
  CHECK(std::abs(x[8] - p.e * vz) <= 1e-10);
  CHECK(std::abs(x[6] - (vx - p.mu * (1 + p.e) * vz * ux / us)) <= 1e-10);
  CHECK(std::abs(x[7] - (vy - p.mu * (1 + p.e) * vz * uy / us)) <= 1e-10);
  CHECK(std::abs(slip_x(x, p.r) - shrink * ux) <= 1e-10);
  CHECK(std::abs(slip_y(x, p.r) - shrink * uy) <= 1e-10);
  CHECK(x[11] == wz);
  const double loss = 0.5 * p.m * vz * vz * (1 - p.e * p.e) + p.mu * PN * (us + shrink * us) / 2;
  CHECK(std::abs(hit->extra.at("kinetic_energy_loss") - loss) <= 1e-10 * loss);
  // In the air after it: open, the slip and the horizontal velocity unchanged to the end of the run.
  CHECK(ConeEngine::contact_mode(res.final_mode, 0) == ConeEngine::kOpen);
  CHECK(std::abs(rec.x.back()[6] - x[6]) <= 1e-12);
  CHECK(std::abs(rec.x.back()[13] - loss) <= 1e-10 * loss);
}

namespace {

/// The sphere of tests/cone_sphere.hpp whose model declares its contact sticking at the start, whatever its forces:
/// pushed beyond what sticking can hold, its sticking force lies outside the cone from the first instant. The
/// engine's start (initial_state) sets the slip reference for the slide it chose; a stick's witness adds the
/// reference's first component (the offset of a stick that began on the cone's edge, zero for any other), so the
/// declared stick starts with the reference of a plain stick, zero.
class ClaimsStick final : public Sphere {
 public:
  using Sphere::Sphere;
  int initial_mode(const double*) const override { return ConeEngine::kStick; }
  void initial_state(double* x0) const override {
    Sphere::initial_state(x0);
    const auto& s = states();
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i].name.rfind("slip_reference_", 0) == 0) x0[i] = 0;
  }
};

}  // namespace

TEST_CASE("cone sphere: the self-audit stops a run whose sticking force lies outside the cone") {
  // Rolling (sticking) under a push F on the centre needs the friction (2/7) |F|; with |F| = 1.5 (7/2) mu_s m g
  // that is 1.5 mu_s N, outside the cone: the stick margin mu_s N - |P| = -0.5 mu_s m g. The engine itself would
  // start the sphere sliding (tests/test_cone_engine.cpp); a model that declares the stick instead is caught by the
  // audit at the first state it checks, naming the stick margin.
  SphereParams p;
  p.mu = p.mu_s = 0.25;
  p.Fx = 1.5 * 3.5 * p.mu_s * p.m * p.g;
  ClaimsStick sys(p, start(p, 0, 0, 0, 0));
  const RunResult res = simulate(sys, options(0.1), {});
  CAPTURE(res.message);
  CHECK(res.status == "audit_failure");
  CHECK(res.message.find("outside its mode's region") != std::string::npos);
  CHECK(res.message.find("stick_margin_ground >= 0") != std::string::npos);
  // The same push declared sticking but held inside the cone (0.9 of the bound) passes.
  SphereParams q = p;
  q.Fx = 0.9 * 3.5 * q.mu_s * q.m * q.g;
  ClaimsStick inside(q, start(q, 0, 0, 0, 0));
  const RunResult ok = simulate(inside, options(0.1), {});
  CAPTURE(ok.message);
  CHECK(ok.status == "ok");
}
