// The cone engine (hybrid/cone_engine.hpp) on a model written by hand: a uniform solid sphere on the plane z = 0.
// Coordinates x, y, z (the centre) and three angles whose rates are the angular velocity's world components (for a
// sphere, whose kinetic energy does not depend on its orientation, these are legitimate coordinates): M is
// diag(m, m, m, I, I, I) with I = 2/5 m r^2. The contact point's velocity is v + w x (-r e_z):
// u = (x' - r wy, y' + r wx), the gap z - r, the spin wz. Closed forms (Coulomb friction on a sphere):
// the slip keeps its direction and falls at (7/2) mu g; rolling starts at t* = 2 |u0| / (7 mu g) with the centre's
// velocity v0 - (2/7) u0 (e.g. Routh, Dynamics of a System of Rigid Bodies, 1905, Part II, sec. 243). The model: tests/cone_sphere.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "cone_sphere.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/cone_engine.hpp"
#include "support.hpp"

namespace {

using namespace rollsim;
using test::cone::Sphere;
using test::cone::SphereParams;
using test::cone::first;
using test::cone::options;
using test::cone::start;

}  // namespace

TEST_CASE("cone engine: a sliding sphere starts to roll at t* = 2|u0|/(7 mu g) with v0 - (2/7) u0, for slips at any angle to v0") {
  const SphereParams p;
  // Five angles in a release build, two under a sanitizer (the same paths at a sixth of the cost).
  const std::vector<double> angles = test::sanitized ? std::vector<double>{60.0, 180.0}
                                                     : std::vector<double>{0.0, 60.0, 135.0, 180.0, 270.0};
  for (const double angle_deg : angles) {
    const double a = angle_deg * M_PI / 180, v0x = 1.0, v0y = 0.2, us = 0.8;
    const double ux = us * std::cos(a), uy = us * std::sin(a);
    Sphere sys(p, start(p, v0x, v0y, ux, uy));
    test::Recorder rec;
    const RunResult res = simulate(sys, options(0.5), {&rec});
    CAPTURE(angle_deg);
    CAPTURE(res.message);
    REQUIRE(res.status == "ok");
    const EventRecord* stick = first(rec, "stick_ground");
    REQUIRE(stick != nullptr);
    const double t_star = 2 * us / (7 * p.mu * p.g);
    CHECK(std::abs(stick->t - t_star) <= 1e-12 * t_star);
    CHECK(stick->x[6] == doctest::Approx(v0x - 2.0 / 7.0 * ux).epsilon(1e-12));
    CHECK(stick->x[7] == doctest::Approx(v0y - 2.0 / 7.0 * uy).epsilon(1e-12));
    // Rolling after it: the sphere keeps that velocity to the end, the slip zero.
    CHECK(ContactEngine::contact_mode(res.final_mode, 0) == ConeEngine::kStick);
    CHECK(rec.x.back()[6] == doctest::Approx(v0x - 2.0 / 7.0 * ux).epsilon(1e-10));
    // The energy balance: the kinetic energy lost is the friction's dissipation.
    const double m = p.m, I = sys.inertia();
    auto T = [&](const std::vector<double>& x) {
      return 0.5 * m * (x[6] * x[6] + x[7] * x[7] + x[8] * x[8]) + 0.5 * I * (x[9] * x[9] + x[10] * x[10] + x[11] * x[11]);
    };
    const double lost = T(rec.x.front()) - T(rec.x.back());
    CHECK(lost > 0);
    CHECK(rec.x.back()[12] + rec.x.back()[13] == doctest::Approx(lost).epsilon(1e-9));
    // Only one stick, no chattering and no other event than the reference resets of a slip that keeps its direction.
    int sticks = 0;
    for (const auto& e : rec.events) sticks += e.kind == "stick_ground";
    CHECK(sticks == 1);
  }
}

TEST_CASE("cone engine: a sphere at rest pushed sideways sticks below mu_s N and slides above, in the push's direction") {
  // A push F on the centre of a sphere at rest: sticking at the contact is rolling, which needs the friction force
  // (2/7) F (m a = F - f, I a / r^2 = f r ... with I = 2/5 m r^2: f = (2/7) F). It rolls while (2/7) |F| <= mu_s m g
  // and slides above: the closed-form boundary is |F| = (7/2) mu_s m g, in every direction of the push.
  for (const double dir : test::sanitized ? std::vector<double>{2.0} : std::vector<double>{0.0, 2.0}) {
    for (const double ratio : {0.99, 1.01}) {
      SphereParams p;
      p.mu = 0.2;
      p.mu_s = 0.25;
      const double F = ratio * 3.5 * p.mu_s * p.m * p.g;
      p.Fx = F * std::cos(dir);
      p.Fy = F * std::sin(dir);
      Sphere sys(p, start(p, 0, 0, 0, 0));
      test::Recorder rec;
      const RunResult res = simulate(sys, options(0.2), {&rec});
      CAPTURE(ratio);
      CAPTURE(dir);
      CAPTURE(res.message);
      REQUIRE(res.status == "ok");
      const int cm = ConeEngine::contact_mode(rec.mode.front(), 0);
      if (ratio < 1) {
        CHECK(cm == ConeEngine::kStick);
        // Rolling: a = (5/7) F / m along the push.
        const double a = 5.0 / 7.0 * F / p.m;
        CHECK(rec.x.back()[6] == doctest::Approx(a * std::cos(dir) * rec.t.back()).epsilon(1e-9));
      } else {
        CHECK(cm == ConeEngine::kSlide);
        // Sliding along the push: m a = F - mu m g; the slip along the push grows.
        const double a = (F - p.mu * p.m * p.g) / p.m;
        CHECK(rec.x.back()[6] == doctest::Approx(a * std::cos(dir) * rec.t.back()).epsilon(1e-9));
        CHECK(rec.x.back()[7] == doctest::Approx(a * std::sin(dir) * rec.t.back()).epsilon(1e-9).scale(1));
      }
    }
  }
}

TEST_CASE("cone engine: a sphere dropped onto the plane with spin bounces by Newton's law and then rolls") {
  SphereParams p;
  p.e = 0.5;
  p.mu = 0.3;
  // Falling at 1 m/s onto the plane, sliding forwards at 0.5 m/s: the normal impulse m (1 + e) 1 bounds the
  // friction impulse by mu m 1.5 = 0.45 m; stopping the slip needs (2/7) m 0.5 = 0.143 m: the impulse sticks, so the
  // slip is zero after the impact and the sphere leaves at 0.5 m/s upwards, rolling at v0 - (2/7) u0.
  std::vector<double> x0 = start(p, 0.5, 0, 0.5, 0, 0, p.r + 1e-3);
  x0[8] = -1.0;
  Sphere sys(p, x0);
  test::Recorder rec;
  const RunResult res = simulate(sys, options(0.02), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  const EventRecord* hit = first(rec, "impact_ground");
  REQUIRE(hit != nullptr);
  const double vz = std::sqrt(1.0 + 2 * p.g * 1e-3);
  CHECK(hit->x[8] == doctest::Approx(p.e * vz).epsilon(1e-9));
  CHECK(hit->x[6] == doctest::Approx(0.5 - 2.0 / 7.0 * 0.5).epsilon(1e-9));
  CHECK(hit->extra.at("impulse_normal_ground") == doctest::Approx(p.m * (1 + p.e) * vz).epsilon(1e-9));
  CHECK(hit->extra.at("kinetic_energy_loss") > 0);
}

TEST_CASE("cone engine: Contensou spin friction stops a sphere spinning in place at t = I w0 / (mu m g rho), rho = 2R/3") {
  SphereParams p;
  p.spin_friction = true;
  p.spin_radius = 0.004;  // the contact patch's radius R
  const double w0 = 30;
  Sphere sys(p, start(p, 0, 0, 0, 0, w0));
  test::Recorder rec;
  const RunResult res = simulate(sys, options(5.0), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  // Pure spin: the ellipsoidal law's torque is mu N rho (Leine and Glocker 2003), constant while it spins.
  const double rho = 2.0 / 3.0 * p.spin_radius;
  const double t_stop = sys.inertia() * w0 / (p.mu * p.m * p.g * rho);
  REQUIRE(t_stop < 5.0);
  const EventRecord* stick = first(rec, "stick_ground");
  REQUIRE(stick != nullptr);
  CHECK(std::abs(stick->t - t_stop) <= 1e-12 * t_stop);
  // No slip arises: the centre stays where it was.
  CHECK(std::abs(rec.x.back()[0]) <= 1e-14);
  CHECK(std::abs(rec.x.back()[1]) <= 1e-14);
  // All the kinetic energy of the spin went to friction.
  CHECK(rec.x.back()[12] == doctest::Approx(0.5 * sys.inertia() * w0 * w0).epsilon(1e-10));
}

TEST_CASE("cone engine: with spin friction, a sliding sphere that does not spin slides as without it") {
  SphereParams p;
  p.spin_friction = true;
  p.spin_radius = 0.004;
  const double us = 0.8;
  Sphere sys(p, start(p, 1.0, 0.0, us, 0.0));
  test::Recorder rec;
  const RunResult res = simulate(sys, options(0.5), {&rec});
  REQUIRE(res.status == "ok");
  const EventRecord* stick = first(rec, "stick_ground");
  REQUIRE(stick != nullptr);
  const double t_star = 2 * us / (7 * p.mu * p.g);
  CHECK(std::abs(stick->t - t_star) <= 1e-12 * t_star);
}

TEST_CASE("cone engine: a sphere lifted by a growing force leaves the plane when its normal force m g - k t reaches 0") {
  SphereParams p;
  p.lift_rate = 20.0;  // N/s
  Sphere sys(p, start(p, 1.0, 0, 1.0, 0));  // sliding with slip 1 m/s along x
  test::Recorder rec;
  const RunResult res = simulate(sys, options(0.15), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  const EventRecord* off = first(rec, "lift_off_ground");
  REQUIRE(off != nullptr);
  const double t_off = p.m * p.g / p.lift_rate;
  CHECK(std::abs(off->t - t_off) <= 1e-10 * t_off);
  CHECK(ConeEngine::contact_mode(off->mode_after, 0) == ConeEngine::kOpen);
  // Before it the slip fell at mu N(t) (1/m + r^2/I) = (7/2) mu N(t) / m; the slip lost by t_off is
  // (7/2) mu (m g t - k t^2/2) / m.
  const double lost = 3.5 * p.mu * (p.m * p.g * t_off - 0.5 * p.lift_rate * t_off * t_off) / p.m;
  REQUIRE(lost < 1.0);
  const double u = off->x[6] - p.r * off->x[10];
  CHECK(u == doctest::Approx(1.0 - lost).epsilon(1e-10));
  // In flight the centre rises: z'' = (k t - m g) / m.
  CHECK(rec.x.back()[2] > p.r);
}

TEST_CASE("cone engine: a bouncing sphere's rebounds follow Newton's e until the capture, then it rests on the plane") {
  SphereParams p;
  p.e = 0.5;
  std::vector<double> x0 = start(p, 0, 0, 0, 0, 0, p.r + 0.01);
  Sphere sys(p, x0);
  test::Recorder rec;
  const RunResult res = simulate(sys, options(1.0), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  std::vector<const EventRecord*> hits;
  for (const auto& e : rec.events)
    if (e.kind == "impact_ground") hits.push_back(&e);
  REQUIRE(hits.size() >= 4);
  // The first landing speed sqrt(2 g h), then each rebound e times the last.
  double v = std::sqrt(2 * p.g * 0.01);
  for (std::size_t i = 0; i + 1 < hits.size() && i < 4; ++i) {
    CHECK(hits[i]->x[8] == doctest::Approx(p.e * v).epsilon(1e-7));
    v *= p.e;
  }
  // The accumulation ends: at rest on the plane, closed, long before the geometric series' limit
  // 2 sqrt(2h/g) / (1 - e) (after which it would be at rest anyway).
  CHECK(ConeEngine::contact_mode(res.final_mode, 0) == ConeEngine::kStick);
  CHECK(std::abs(rec.x.back()[2] - p.r) <= 1e-9);
  // The energy lost in the impacts is the drop's potential energy.
  CHECK(rec.x.back()[13] == doctest::Approx(p.m * p.g * 0.01).epsilon(1e-6));
}

namespace {

/// A block (a point mass that cannot turn) standing on feet at the same place: every contact has the gap z and the
/// slip (x', y'), so every mode that closes two of them holds dependent rows. Closed forms of the whole block: it
/// slides at the deceleration mu g along its velocity and stops at |v0| / (mu g); a push F at rest holds while
/// |F| <= mu_s m g.
class Feet : public ConeEngine {
 public:
  Feet(std::vector<std::string> names, double Fx, std::vector<double> x0, std::vector<double> mu,
       std::vector<double> mu_s)
      : Fx_(Fx), mu_(std::move(mu)), mu_s_(std::move(mu_s)) {
    Signals base;
    for (const char* c : {"x", "y", "z"}) base.push_back({c, "1", "coordinate"});
    for (const char* c : {"der_x", "der_y", "der_z"}) base.push_back({c, "1", "rate"});
    std::vector<ConeContactSpec> feet;
    for (auto& n : names) feet.push_back({n, false, false});
    configure(3, feet, base, std::move(x0), {}, {}, ContactSettings{});
  }
  std::string model_name() const override { return "test_feet"; }
  static constexpr double m = 2, g = 9.81, mu = 0.4, mu_s = 0.5;

 protected:
  void mass_and_forces(double, const double*, double* M, double* f) const override {
    std::fill(M, M + 9, 0.0);
    M[0] = M[4] = M[8] = m;
    f[0] = Fx_;
    f[1] = 0;
    f[2] = -m * g;
  }
  void cone_terms(double, const double* x, ConeTerms* c) const override {
    for (std::size_t k = 0; k < mu_.size(); ++k) {
      ConeTerms& t = c[k];
      std::fill(t.Wn.begin(), t.Wn.end(), 0.0);
      std::fill(t.Wt1.begin(), t.Wt1.end(), 0.0);
      std::fill(t.Wt2.begin(), t.Wt2.end(), 0.0);
      std::fill(t.Ws.begin(), t.Ws.end(), 0.0);
      t.gap = x[2];
      t.Wn[2] = 1;
      t.Wt1[0] = 1;
      t.Wt2[1] = 1;
      t.slip[0] = x[3];
      t.slip[1] = x[4];
      t.mu = mu_[k];
      t.mu_static = mu_s_[k];
    }
  }
  void energies(double, const double* x, double& T, double& V, double& h, double& E) const override {
    T = 0.5 * m * (x[3] * x[3] + x[4] * x[4] + x[5] * x[5]);
    V = m * g * x[2] - Fx_ * x[0];
    h = E = T + V;
  }

 private:
  double Fx_;
  std::vector<double> mu_, mu_s_;
};

/// Two feet, "left" and "right".
class TwoFeet final : public Feet {
 public:
  TwoFeet(double Fx, std::vector<double> x0, double mu_left = mu, double mu_right = mu, double mu_s_left = mu_s,
          double mu_s_right = mu_s)
      : Feet({"left", "right"}, Fx, std::move(x0), {mu_left, mu_right}, {mu_s_left, mu_s_right}) {}
};

}  // namespace

TEST_CASE("cone engine: two dependent contacts slide together, stop at |v0|/(mu g) and stick, sharing the load equally") {
  TwoFeet sys(0.0, {0, 0, 0, 0.6, 0.8, 0});
  test::Recorder rec;
  const RunResult res = simulate(sys, options(0.5), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  CHECK(rec.mode.front() == ConeEngine::with_contact_mode(ConeEngine::with_contact_mode(0, 0, ConeEngine::kSlide), 1, ConeEngine::kSlide));
  const double t_stop = 1.0 / (TwoFeet::mu * TwoFeet::g);
  REQUIRE(!rec.events.empty());
  CHECK(rec.events.front().kind.rfind("stick_", 0) == 0);
  CHECK(std::abs(rec.events.front().t - t_stop) <= 1e-12 * t_stop);
  CHECK(rec.events.front().mode_after ==
        ConeEngine::with_contact_mode(ConeEngine::with_contact_mode(0, 0, ConeEngine::kStick), 1, ConeEngine::kStick));
  // The normal forces, each m g / 2 (outputs: normal_force_left and normal_force_right).
  const auto& names = sys.outputs();
  std::size_t nl = 0, nr = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].name == "normal_force_left") nl = i;
    if (names[i].name == "normal_force_right") nr = i;
  }
  CHECK(rec.y.front()[nl] == doctest::Approx(0.5 * TwoFeet::m * TwoFeet::g).epsilon(1e-12));
  CHECK(rec.y.back()[nr] == doctest::Approx(0.5 * TwoFeet::m * TwoFeet::g).epsilon(1e-12));
  CHECK(std::abs(rec.x.back()[3]) <= 1e-9);
}

TEST_CASE("cone engine: two dependent contacts at rest hold a push up to mu_s m g and slide together above it") {
  for (const double ratio : {0.99, 1.01}) {
    const double F = ratio * TwoFeet::mu_s * TwoFeet::m * TwoFeet::g;
    TwoFeet sys(F, {0, 0, 0, 0, 0, 0});
    test::Recorder rec;
    const RunResult res = simulate(sys, options(test::full_or_sanitized(0.1, 0.02)), {&rec});  // 50 s at 0.1 there
    CAPTURE(ratio);
    CAPTURE(res.message);
    REQUIRE(res.status == "ok");
    const int both_stick =
        ConeEngine::with_contact_mode(ConeEngine::with_contact_mode(0, 0, ConeEngine::kStick), 1, ConeEngine::kStick);
    const int both_slide =
        ConeEngine::with_contact_mode(ConeEngine::with_contact_mode(0, 0, ConeEngine::kSlide), 1, ConeEngine::kSlide);
    CHECK(rec.mode.front() == (ratio < 1 ? both_stick : both_slide));
    const double a = ratio < 1 ? 0.0 : (F - TwoFeet::mu * TwoFeet::m * TwoFeet::g) / TwoFeet::m;
    CHECK(std::abs(rec.x.back()[3] - a * rec.t.back()) <= 1e-9 * std::max(1.0, a * rec.t.back()));
  }
}

TEST_CASE("cone engine: a slip that cannot stop reverses at zero exactly once, in the direction the law gives") {
  // A push F = -|F| x on the centre of a sphere slipping forwards at u0: u' = F/m - (7/2) mu g while u > 0, zero at
  // t1 = u0 / (|F|/m + (7/2) mu g). Rolling would need the friction (2/7)|F| > mu_s m g, so it slides on backwards,
  // u' = F/m + (7/2) mu g < 0.
  SphereParams p;
  p.mu = 0.2;
  p.mu_s = 0.2;
  const double F = 1.5 * 3.5 * p.mu_s * p.m * p.g, u0 = 0.5;
  p.Fx = -F;
  Sphere sys(p, start(p, 0.5, 0, u0, 0));
  test::Recorder rec;
  const RunResult res = simulate(sys, options(0.3), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  int turns = 0;
  const EventRecord* restart = nullptr;
  for (const auto& e : rec.events) {
    if (e.kind == "slip_restart_ground") restart = &e;
    turns += e.kind == "slip_restart_ground" || e.kind == "stick_ground";
  }
  CHECK(turns == 1);
  REQUIRE(restart != nullptr);
  const double t1 = u0 / (F / p.m + 3.5 * p.mu * p.g);
  CHECK(std::abs(restart->t - t1) <= 1e-12 * t1);
  CHECK(restart->extra.at("slip_direction_x_ground") == doctest::Approx(-1.0).epsilon(1e-12));
  // After it the slip grows backwards: u = (-F/m + (7/2) mu g)(t - t1), with F = |F|.
  const double rate = -F / p.m + 3.5 * p.mu * p.g;  // < 0
  const auto& x = rec.x.back();
  CHECK(x[6] - p.r * x[10] == doctest::Approx(rate * (rec.t.back() - t1)).epsilon(1e-10));
}

TEST_CASE("cone engine: two dependent contacts with different friction hold a push the least-norm split could not") {
  // mu_s 0.1 at the left foot, 0.9 at the right: the load may rest on either, so sticking holds any push up to
  // 0.9 m g (all of it on the right foot). The least-norm split (m g / 2 each, the push halved) would let the left
  // foot hold only 0.05 m g. At 0.4 m g the block stays at rest; the forces are the split farthest inside both cones.
  const double mg = TwoFeet::m * TwoFeet::g;
  TwoFeet sys(0.4 * mg, {0, 0, 0, 0, 0, 0}, 0.1, 0.9, 0.1, 0.9);
  test::Recorder rec;
  // Every evaluation searches the split (the least-norm one breaks a cone): 0.1 s, 0.005 s under a sanitizer.
  const RunResult res = simulate(sys, options(test::full_or_sanitized(0.1, 0.005)), {&rec});
  CAPTURE(res.message);
  REQUIRE(res.status == "ok");
  const int both_stick =
      ConeEngine::with_contact_mode(ConeEngine::with_contact_mode(0, 0, ConeEngine::kStick), 1, ConeEngine::kStick);
  CHECK(rec.mode.front() == both_stick);
  CHECK(std::abs(rec.x.back()[3]) <= 1e-12);
  // The split: both cones' margins equal and positive, the normal forces summing to m g, the pushes to 0.4 m g.
  const auto& out = sys.outputs();
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i].name == name) return i;
    return out.size();
  };
  const auto& y = rec.y.front();
  const double Nl = y[col("normal_force_left")], Nr = y[col("normal_force_right")];
  const double Pl = std::abs(y[col("friction_x_left")]), Pr = std::abs(y[col("friction_x_right")]);
  CHECK(Nl + Nr == doctest::Approx(mg).epsilon(1e-9));
  CHECK(Pl + Pr == doctest::Approx(0.4 * mg).epsilon(1e-9));
  CHECK(Pl <= 0.1 * Nl);
  CHECK(Pr <= 0.9 * Nr);
  // The rule maximises the smallest margin; it is at least that of one feasible split, Nl = 0.1 mg, Nr = 0.9 mg,
  // Pl = 0, Pr = 0.4 mg: min(0.01 mg, 0.41 mg, 0.1 mg, 0.9 mg) = 0.01 mg.
  const double margin = std::min({0.1 * Nl - Pl, 0.9 * Nr - Pr, Nl, Nr});
  CHECK(margin >= 0.01 * mg);
}

TEST_CASE("cone engine: a coin that starts to slip on the cone's edge slides on, without restarting its slide") {
  // The leaning coin of rolling_coin_slip.toml started on rolling_coin.toml's steady turning at a spin it cannot
  // keep: it sticks and slips again several times, each slip starting on the cone's edge, where the slip rate kappa
  // is 0 and the slip grows as t^2. Every change of mode is one event: none follows another within a microsecond
  // (before the slide from rest started at the zero-speed tolerance, each such slip restarted up to 45 times within
  // a microsecond on the integration error of a slip below its resolution).
  const test::Run r = test::run_text(test::read_file(rollsim::test::source_dir() + "/scenarios/rolling_coin_slip.toml"),
                                     {"initial.theta=0.3", "initial_rates.psi=-3", "initial_rates.phi=20",
                                      "initial_rates.x=0.7112930499816459",
                                      "simulation.t_end=" + std::string(test::sanitized ? "0.5" : "3"),
                                      // Under a sanitizer BDF: its rolling phase is stiff for the default's Adams
                                      // (9,000 steps from t = 0.29 to 0.45, 70 s there; test_cone_physics.cpp).
                                      "solver.method=" + std::string(test::sanitized ? "bdf" : "auto")});
  CAPTURE(r.result.message);
  REQUIRE(r.result.completed());
  std::vector<const EventRecord*> changes;
  int slips = 0;
  for (const auto& e : r.rec.events) {
    if (e.kind.rfind("slip_direction_", 0) == 0) continue;
    changes.push_back(&e);
    slips += e.kind == "slip_ground";
    CHECK(e.kind != "slip_restart_ground");
  }
  CHECK(slips >= (test::sanitized ? 1 : 2));  // 0.5 s under a sanitizer (one slip), 3 s in a release build
  for (std::size_t i = 1; i < changes.size(); ++i) {
    CAPTURE(changes[i]->t);
    CHECK(changes[i]->t - changes[i - 1]->t > 1e-6);
  }
}

TEST_CASE("cone engine: more contacts undecided at once than the enumeration takes stop the run with the count") {
  // Seven contacts at rest at once (3^7 = 2187 combinations, above the 729 the choice enumerates): the start is
  // refused with a SolverError that says how many, rather than an enumeration that would not end.
  std::string message;
  try {
    std::vector<std::string> names;
    for (int k = 0; k < 7; ++k) names.push_back("foot" + std::to_string(k));
    Feet sys(names, 0.0, {0, 0, 0, 0, 0, 0}, std::vector<double>(7, 0.5), std::vector<double>(7, 0.5));
    std::vector<double> x(sys.size());
    sys.initial_state(x.data());
  } catch (const SolverError& e) {
    message = e.what();
  }
  CHECK(message.find("2187 combinations") != std::string::npos);
  CHECK(message.find("at most 729") != std::string::npos);
}
