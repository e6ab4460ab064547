// Sweeps on several threads through the code that serialises itself with a mutex or keeps per-thread room: the
// LCP solver (Siconos Numerics, src/hybrid/lcp.cpp), the force distribution rule (GLPK, src/hybrid/
// force_distribution.cpp), the contact engine's per-thread solves and a user model's derivation and compiled kernel
// (src/models/lagrangian.cpp). The rows of two threads equal the rows of one, bit for bit. tools/test-sanitize runs
// these under ThreadSanitizer (their names match its selection, "sweep").
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rollsim/sweep/sweep.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

/// Runs every point of `text` (a scenario with a [sweep] section) on `threads` threads.
std::vector<sweep::PointResult> rows_of(const std::string& text, const std::vector<std::string>& sets, int threads) {
  const Scenario base = load_scenario_text(text, "sweep.toml", sets);
  const auto spec = sweep::parse_spec(base, sets);
  std::vector<std::size_t> all(spec.n_points);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<sweep::PointResult> rows(spec.n_points);
  sweep::run_points(base, sets, spec, all, threads, false,
                    [&](std::size_t k, sweep::PointResult&& r) { rows[k] = std::move(r); }, nullptr);
  return rows;
}

/// The rows of one thread and of two are the same, every point ran, and each point's summary is the same.
void check_same_rows(const std::string& text, const std::vector<std::string>& sets, std::size_t points) {
  const auto one = rows_of(text, sets, 1), two = rows_of(text, sets, 2);
  REQUIRE(one.size() == points);
  REQUIRE(two.size() == points);
  for (std::size_t i = 0; i < points; ++i) {
    CAPTURE(i);
    CHECK_MESSAGE(one[i].status == "ok", one[i].message);
    CHECK(two[i].status == one[i].status);
    CHECK(two[i].termination == one[i].termination);
    CHECK(two[i].n_events == one[i].n_events);
    CHECK(two[i].t_final == one[i].t_final);
    REQUIRE(two[i].x_final.size() == one[i].x_final.size());
    CHECK(std::memcmp(two[i].x_final.data(), one[i].x_final.data(), one[i].x_final.size() * sizeof(double)) == 0);
    REQUIRE(two[i].summary.size() == one[i].summary.size());
    for (std::size_t k = 0; k < one[i].summary.size(); ++k) {
      CAPTURE(one[i].summary[k].key);
      CHECK(two[i].summary[k].key == one[i].summary[k].key);
      const double a = one[i].summary[k].number, b = two[i].summary[k].number;
      CHECK((std::isnan(a) ? std::isnan(b) : a == b));
    }
  }
}

}  // namespace

TEST_CASE("sweep threads: the wheel dropped on the table, its modes chosen through the LCP, on two threads as on one") {
  // scenarios/tipping_table_contact.toml to 1 s: impacts, slip, a capture and a lift-off, the LCP narrowing the
  // modes (nonsmooth.mode_selection = "lcp"; Siconos Numerics is called under its mutex). First, one run shows that
  // the LCP is used at all. Size: 1 s in a release run; 0.3 s in a sanitizer tree (the LCP chooses the modes 12
  // times by then, 13 by 1 s), where the nine runs to 1 s took 65 s under TSan.
  const std::string text = test::read_file(rollsim::test::source_dir() + "/scenarios/tipping_table_contact.toml");
  const std::vector<std::string> sets{std::string("simulation.t_end=") + (test::sanitized ? "0.3" : "1"),
                                      "nonsmooth.mode_selection=lcp"};
  const test::Run r = test::run_text(text, sets);
  REQUIRE_MESSAGE(r.result.completed(), r.result.message);
  bool used = false;
  for (const EventRecord& e : r.rec.events)
    for (const char* name : {"lcp_candidates", "lcp_impulse_candidates"})
      if (const auto it = e.extra.find(name); it != e.extra.end() && !std::isnan(it->second)) used = true;
  CHECK(used);
  check_same_rows(text + "\n[sweep]\n\"initial.omega2\" = [-8.0, -6.0, -4.0, -2.0]\n", sets, 4);
}

TEST_CASE("sweep threads: the ladder (a user model) at rest and sliding, its forces by the distribution rule, on two "
          "threads as on one") {
  // scenarios/ladder.toml with equal coefficients at both ends: at rest from mu_c = 0.268 up, its four contact
  // forces on three freedoms chosen by the force distribution rule (GLPK's simplex method, under its mutex);
  // sliding below. The derivation and the compiled kernel are shared by the threads.
  const std::string text = test::read_file(rollsim::test::source_dir() + "/scenarios/ladder.toml");
  const std::vector<std::string> sets{"simulation.t_end=0.5"};
  check_same_rows(text + "\n[sweep]\nmode = \"zip\"\n\"parameters.mu_f\" = [0.3, 0.1, 0.5, 0.2]\n"
                         "\"parameters.mu_w\" = [0.3, 0.1, 0.5, 0.2]\n",
                  sets, 4);
}
