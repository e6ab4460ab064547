// One model in two forms: a double pendulum (two point masses with moments of inertia on massless links)
// written once with [[bodies]] (positions and angles; rollsim forms T and V) and once with kinetic and
// potential energies written out by hand. The two Lagrangians are equal as functions, but GiNaC keeps them in
// different shapes (the bodies' form has l1^2 (cos^2 + sin^2) where the hand form has l1^2), so the compiled
// kernels compute the same numbers along different roundings: the right-hand sides must agree to round-off.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "rollsim/app/registry.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

const std::string kCommon = R"toml(model = "lagrangian"
[parameters]
m1 = 1.3
m2 = 0.7
I1 = 0.02
I2 = 0.05
l1 = 1.1
l2 = 0.8
g = 9.81
[coordinates]
th1 = "rad"
th2 = "rad"
[initial]
th1 = 0.4
th2 = -0.3
[initial_rates]
th2 = 0.5
[simulation]
t_end = 5
output_dt = 0.01
)toml";

const std::string kBodies = kCommon + R"toml(
[[bodies]]
name = "upper"
mass = "m1"
inertia = "I1"
x = "l1*sin(th1)"
y = "-l1*cos(th1)"
angle = "th1"
[[bodies]]
name = "lower"
mass = "m2"
inertia = "I2"
x = "l1*sin(th1) + l2*sin(th2)"
y = "-l1*cos(th1) - l2*cos(th2)"
angle = "th2"
)toml";

const std::string kEnergies = kCommon + R"toml(
[lagrangian]
kinetic = "1/2*(m1*l1^2 + I1 + m2*l1^2)*der(th1)^2 + m2*l1*l2*cos(th1 - th2)*der(th1)*der(th2) + 1/2*(m2*l2^2 + I2)*der(th2)^2"
potential = "-(m1 + m2)*g*l1*cos(th1) - m2*g*l2*cos(th2)"
)toml";

constexpr double kEps = std::numeric_limits<double>::epsilon();

}  // namespace

TEST_CASE("user model: [[bodies]] and kinetic/potential give the same right-hand side to round-off") {
  const auto a = build_system(load_scenario_text(kBodies, "bodies.toml"));
  const auto b = build_system(load_scenario_text(kEnergies, "energies.toml"));
  REQUIRE(a->size() == 4);
  REQUIRE(b->size() == 4);
  // States spread over the circle and over rates up to 10 rad/s. The accelerations are M^-1 f with M's
  // condition number below 20 here; every entry of M and f is a short sum whose two shapes round differently
  // by a few units in the last place of its largest term, so the accelerations agree within a few hundred eps
  // of the scale |f| + |M||a| (the bound 1000 eps leaves room for the 2 x 2 solve, not for an error in a term).
  double worst = 0;
  for (int k = 0; k < 200; ++k) {
    const double x[4] = {std::sin(1.7 * k) * 3.1, std::cos(2.3 * k) * 3.1, 10 * std::sin(0.9 * k + 1), 10 * std::cos(1.3 * k)};
    double fa[4], fb[4];
    facet<OdeSystem>(*a)->rhs(0.0, x, 0, fa);
    facet<OdeSystem>(*b)->rhs(0.0, x, 0, fb);
    const double scale = 1.0 + x[2] * x[2] + x[3] * x[3] + std::abs(fa[2]) + std::abs(fa[3]);
    for (int i = 0; i < 4; ++i) worst = std::max(worst, std::abs(fa[i] - fb[i]) / scale);
  }
  MESSAGE("largest right-hand-side difference: " << worst / kEps << " eps of the scale");
  CHECK(worst < 1000 * kEps);
  CHECK(worst > 0);  // the two forms really are different expressions (not the same code twice)
}

TEST_CASE("user model: [[bodies]] and kinetic/potential give the same trajectory within the integration error") {
  const test::Run a = test::run_text(kBodies);
  const test::Run b = test::run_text(kEnergies);
  REQUIRE(a.result.completed());
  REQUIRE(b.result.completed());
  REQUIRE(a.rec.t.size() == b.rec.t.size());
  // The right-hand sides agree to round-off (the case above), but not the trajectories: CVODE's step-size
  // choices are thresholds on error estimates, so a difference in the last bit moves some steps, and from then on
  // the two runs are two different discretisations of the same exact solution. They agree to the global error of
  // the run (Adams, rtol 1e-10, 5 s): measured 1.3e-9 of max |x|; bound 1e-8 of max |x|.
  double worst = 0, xmax = 0;
  for (std::size_t k = 0; k < a.rec.t.size(); ++k) {
    REQUIRE(a.rec.t[k] == b.rec.t[k]);
    for (std::size_t i = 0; i < 4; ++i) {
      worst = std::max(worst, std::abs(a.rec.x[k][i] - b.rec.x[k][i]));
      xmax = std::max(xmax, std::abs(a.rec.x[k][i]));
    }
  }
  MESSAGE("largest state difference over 5 s: " << worst << " (max |x| = " << xmax << ")");
  CHECK(worst < 1e-8 * xmax);
  // Same for the energy, an output computed from each form's own T and V.
  double de = 0;
  for (std::size_t k = 0; k < a.rec.t.size(); ++k) de = std::max(de, std::abs(a.rec.y[k][2] - b.rec.y[k][2]));
  CHECK(de < 1e-8 * std::max(1.0, std::abs(a.rec.y[0][2])));
}
