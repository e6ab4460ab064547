// solver.method = "exact" for the rolling disk: closed-form segments behind the Integrator interface. Checked
// against the standalone closed-form propagator (same formulas, separate orchestration and event logic) and
// against CVODE at tight tolerance (an independent numerical method).
#include <doctest/doctest.h>

#include <cmath>

#include "rollsim/models/rolling_disk_exact.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

std::string disk(double j, double x, double y, double z, double tau_end, const char* method, double rtol = 1e-10) {
  char b[600];
  std::snprintf(b, sizeof b, R"(model = "rolling_disk"
units = "dimensionless"
[parameters]
inertia_ratio = %.17g
[initial]
x = %.17g
y = %.17g
z = %.17g
[simulation]
t_end = %.17g
output_dt = 0.05
[solver]
method = "%s"
rtol = %.17g
atol = 1e-14
)",
                j, x, y, z, tau_end, method, rtol);
  return b;
}

std::string symbols(const test::Run& r) {
  auto* s = r.item("symbols");
  return s ? s->text : "";
}

}  // namespace

TEST_CASE("exact method: events equal the standalone closed-form propagator") {
  struct Start { double j, x, y, z, tau; };
  for (const Start& s : {Start{0.5, 3.0, 0.0, 1.0, 300.0}, Start{0.4, 10.0, 0.0, 5.0, 200.0}, Start{0.4, 0.5, 0.3, 2.0, 30.0},
                         Start{3.0, 3.0, 0.0, 0.0, 40.0}, Start{1.0, -4.0, 1.0, -2.0, 100.0}}) {
    auto run = test::run_text(disk(s.j, s.x, s.y, s.z, s.tau, "exact"));
    const auto ref = rolling_disk::propagate_exact(s.j, s.x, s.y, s.z, s.tau);
    INFO("j " << s.j << " start " << s.x << " " << s.y << " " << s.z);
    REQUIRE(run.result.completed());
    REQUIRE(run.rec.events.size() == ref.events.size());
    for (std::size_t k = 0; k < ref.events.size(); ++k) {
      CHECK(run.rec.events[k].kind == rolling_disk::to_string(ref.events[k].kind));
      CHECK(run.rec.events[k].mode_after == ref.events[k].mode_after);
      CHECK(std::abs(run.rec.events[k].t - ref.events[k].tau) <= 1e-12 * (1 + ref.events[k].tau));
    }
    CHECK(symbols(run) == ref.symbols);
    // The energy balance closes to round-off.
    CHECK(run.summary("energy_balance_error_rel") < 1e-13);
  }
}

TEST_CASE("exact method: CVODE at tight tolerance converges to it") {
  const auto exact = test::run_text(disk(0.5, 3.0, 0.0, 1.0, 60.0, "exact"));
  double prev = INFINITY;
  for (double rtol : {1e-8, 1e-10, 1e-12}) {
    const auto cv = test::run_text(disk(0.5, 3.0, 0.0, 1.0, 60.0, "adams", rtol));
    REQUIRE(cv.rec.events.size() == exact.rec.events.size());
    CHECK(symbols(cv) == symbols(exact));
    double worst = 0;
    for (std::size_t k = 0; k < exact.rec.events.size(); ++k)
      worst = std::max(worst, std::abs(cv.rec.events[k].t - exact.rec.events[k].t));
    INFO("rtol " << rtol << " worst event-time difference " << worst);
    CHECK(worst < prev);
    CHECK(worst < 1e4 * rtol);
    prev = worst;
  }
}

TEST_CASE("exact method: samples lie on the closed form between events") {
  const auto r = test::run_text(disk(0.4, 0.5, 0.3, 2.0, 30.0, "exact"));
  const auto ref = rolling_disk::propagate_exact(0.4, 0.5, 0.3, 2.0, 30.0);
  double worst = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k) {
    const auto s = rolling_disk::state_at(ref, r.rec.t[k]);
    worst = std::max({worst, std::abs(s.x - r.rec.x[k][0]), std::abs(s.y - r.rec.x[k][1]), std::abs(s.z - r.rec.x[k][2])});
  }
  CHECK(worst < 1e-12);
}

TEST_CASE("exact method: physical units, and refusal for a model without closed forms") {
  const std::string phys = test::read_file(rollsim::test::source_dir() + "/scenarios/disk_physical.toml");
  const auto a = test::run_text(phys, {"solver.method=\"exact\""});
  const auto b = test::run_text(phys, {"solver.method=\"adams\"", "solver.rtol=1e-12"});
  REQUIRE(a.result.completed());
  CHECK(symbols(a) == symbols(b));
  REQUIRE(a.rec.events.size() == b.rec.events.size());
  for (std::size_t k = 0; k < a.rec.events.size(); ++k) CHECK(a.rec.events[k].t == doctest::Approx(b.rec.events[k].t).epsilon(1e-8));
  const std::string table = "model = \"tipping_table\"\n[initial]\ntheta1 = 0.01\n";
  CHECK_THROWS_AS(test::run_text(table, {"solver.method=\"exact\""}), InputError);
}
