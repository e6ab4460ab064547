// Accumulating impacts (Zeno) end by default: the derived capture rule (ContactSettings::capture_velocity = 0)
// crosses every accumulation into persistent contact with a `capture` event, against closed forms.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "contact_support.hpp"

namespace rollsim {

namespace {

std::string ball(double e) {
  return "model = \"lagrangian\"\n[parameters]\nm = 0.2\ng = 9.81\ne = " + std::to_string(e) +
         "\n[coordinates]\ny = \"m\"\n[lagrangian]\nkinetic = \"1/2*m*der(y)^2\"\npotential = \"m*g*y\"\n"
         "[contacts.floor]\ngap = \"y\"\nrestitution = \"e\"\n[initial]\ny = 1.0\n[simulation]\nt_end = 8.0\n"
         "[solver]\nrtol = 1e-10\n";
}

}  // namespace

TEST_CASE("zeno: a bouncing ball without capture_velocity is captured at its accumulation point, for several e") {
  // From h = 1 m: t0 = sqrt(2 h/g), impact n at t_n = t0 (1 + 2 e (1 - e^(n-1))/(1 - e)), accumulating at
  // t_inf = t0 (1 + e)/(1 - e). The derived rule captures a rebound slower than v_c = sqrt(2 g 10 r), r the gap's
  // resolution (gap_tolerance + atol at y = 0): the capture lies in [last impact, t_inf] and at most
  // 2 v_c/(g (1 - e)) before t_inf (the rest of the flights after an approach below v_c/e).
  const double g = 9.81, h = 1.0, t0 = std::sqrt(2 * h / g);
  for (const double e : {0.3, 0.5, 0.8}) {
    CAPTURE(e);
    const test::Run r = test::run_text(ball(e));
    REQUIRE_MESSAGE(r.result.completed(), r.result.message);
    const auto impacts = test::events_of(r, "impact");
    const auto captures = test::events_of(r, "capture");
    REQUIRE(captures.size() == 1);
    REQUIRE(impacts.size() >= 5);
    const double resolution = r.scenario.real("nonsmooth.gap_tolerance") + r.scenario.real("solver.atol");
    // Each impact time is found to within the gap's resolution over the approach speed v_k = g t0 e^(k-1) (the
    // root of a gap known to `resolution`), and the errors of the flights before it add up.
    double bound = 0;
    for (std::size_t i = 0; i < impacts.size(); ++i) {
      const double n = static_cast<double>(i + 1);
      bound += resolution / (g * t0 * std::pow(e, n - 1));
      const double tn = t0 * (1 + 2 * e * (1 - std::pow(e, n - 1)) / (1 - e));
      CAPTURE(n);
      CHECK(std::abs(impacts[i]->t - tn) <= 1e-10 * tn + bound);
    }
    const double t_inf = t0 * (1 + e) / (1 - e);
    const double vc = std::sqrt(2 * g * 10 * resolution);
    const double tc = captures.front()->t;
    CHECK(tc >= impacts.back()->t);
    CHECK(tc <= t_inf + 1e-9);
    CHECK(t_inf - tc <= 2 * vc / (g * (1 - e)));
    // Then at rest on the floor, carrying m g.
    const std::size_t last = r.rec.t.size() - 1;
    CHECK(std::abs(r.rec.x[last][0]) <= 1e-9);
    CHECK(std::abs(r.rec.x[last][1]) <= 1e-9);
  }
}

TEST_CASE("zeno: a rimless wheel rocking on flat ground comes to rest by itself, each impact keeping c of its rate") {
  // scenarios/rimless_wheel.toml on flat ground (gamma = 0) without capture_velocity, from theta' = 0.5 rad/s, too
  // slow to pass over the top (theta'^2 < 2 (g/l)(1 - cos alpha)/(1 + eps) = 1.48): it rocks between two spokes.
  // Every impact is at the same height (both spokes on the ground) and stance conserves energy, so the rate
  // before an impact equals the rate after the previous one, and each impact keeps c = (cos 2 alpha + eps)/(1 + eps)
  // of it (angular momentum about the new tip). The rocking accumulates; the trailing spoke's flights become too
  // short to follow and it is captured; the wheel ends at rest on two spokes.
  std::string text = test::read_file(rollsim::test::source_dir() + "/scenarios/rimless_wheel.toml");
  const auto erase_line = [&](const std::string& line) {
    const auto p = text.find(line + "\n");
    REQUIRE(p != std::string::npos);
    text.erase(p, line.size() + 1);
  };
  erase_line("capture_velocity = 1e-6");
  // It comes to rest at t = 2.47 s; 3 s and samples every 0.01 s keep the case short under the sanitizers.
  const test::Run r =
      test::run_text(text, {"parameters.gamma=0", "simulation.t_end=3", "simulation.output_dt=0.01"});
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  const double alpha = std::numbers::pi / 8, eps = 0.01, c = (std::cos(2 * alpha) + eps) / (1 + eps);
  const auto impacts = test::events_of(r, "impact");
  REQUIRE(impacts.size() >= 10);
  const std::size_t theta_dot = 5;  // states x, y, theta, x', y', theta', ...
  for (std::size_t i = 1; i < impacts.size(); ++i) {
    CAPTURE(impacts[i]->t);
    CHECK(std::abs(impacts[i]->x[theta_dot]) ==
          doctest::Approx(c * std::abs(impacts[i - 1]->x[theta_dot])).epsilon(1e-7));
  }
  CHECK(!test::events_of(r, "capture").empty());
  const std::size_t last = r.rec.t.size() - 1;
  for (std::size_t i = 3; i < 6; ++i) CHECK(std::abs(r.rec.x[last][i]) <= 1e-9);
  CHECK(r.rec.t.back() == doctest::Approx(3.0));
}

}  // namespace rollsim
