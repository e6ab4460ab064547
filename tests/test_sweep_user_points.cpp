// A smooth user model's sweep points: the process builds the model's first point in full (GiNaC, under its lock),
// each worker thread takes its own copy of that prototype, and every later point is built from it, with the point's
// parameters and start, without GiNaC or a lock. The rows must be those of single runs built in full, on any number
// of threads.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rollsim/app/registry.hpp"
#include "rollsim/models/lagrangian.hpp"
#include "rollsim/sweep/sweep.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

const std::string& base_text() {
  static const std::string text = test::read_file(rollsim::test::source_dir() + "/scenarios/user_tipping_table.toml");
  return text;
}

const lagrangian::SetupTimes& setup_of(const HybridSystem& sys) {
  const auto* u = dynamic_cast<const lagrangian::UserModel*>(&sys);
  REQUIRE(u != nullptr);
  return u->setup_times();
}

}  // namespace

TEST_CASE("sweep threads: a smooth user model's points come from its prototype, without GiNaC's lock, and equal single runs") {
  const std::vector<std::string> sets = {"simulation.t_end=2"};
  const std::string sweep_text = "\n[sweep]\nmode = \"grid\"\n\"initial.theta1\" = [\"0.004\", \"0.01\", \"0.02\", \"0.035\"]\n"
                                 "\"parameters.Jw\" = [0.02, 0.03125]\n";
  const Scenario base = load_scenario_text(base_text() + sweep_text, "test.toml", sets);
  const auto spec = sweep::parse_spec(base, sets);
  REQUIRE(spec.n_points == 8);
  std::vector<std::size_t> all(spec.n_points);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto table = [&](int threads) {
    std::vector<sweep::PointResult> rows(spec.n_points);
    sweep::run_points(base, sets, spec, all, threads, false,
                      [&](std::size_t k, sweep::PointResult&& r) { rows[k] = std::move(r); }, nullptr);
    return std::make_pair(rows, sweep::build_table(spec, rows));
  };
  // The model is derived once for the sweep on 4 threads (the prototypes forgotten before it), never again on 1.
  lagrangian::forget_prototypes();
  const std::size_t derived_before = lagrangian::full_builds();
  const auto [rows4, t4] = table(4);
  CHECK(lagrangian::full_builds() - derived_before == 1);
  const auto [rows1, t1] = table(1);
  const auto [rows2, t2] = table(2);
  CHECK(lagrangian::full_builds() - derived_before == 1);
  for (const auto* t : {&t2, &t4}) {
    REQUIRE(t1.size() == t->size());
    for (std::size_t c = 0; c < t1.size(); ++c) {
      const std::string name = t1[c].name;
      CAPTURE(name);
      REQUIRE(t1[c].numbers.size() == (*t)[c].numbers.size());
      if (!t1[c].numbers.empty())
        CHECK(std::memcmp(t1[c].numbers.data(), (*t)[c].numbers.data(), t1[c].numbers.size() * sizeof(double)) == 0);
      CHECK(t1[c].strings == (*t)[c].strings);
    }
  }
  // Each row against a single run built in full: in a thread of its own, with the prototypes forgotten.
  for (std::size_t i = 0; i < spec.n_points; ++i) {
    const auto idx = spec.indices(i);
    const std::string th = spec.axes[0].labels[idx[0]];
    char j[64];
    std::snprintf(j, sizeof j, "parameters.Jw=%.17g", spec.axes[1].numbers[idx[1]]);
    test::Run run;
    bool full = false;
    std::thread([&] {
      std::vector<std::string> o = sets;
      o.push_back("initial.theta1=" + th);
      o.push_back(j);
      run.scenario = load_scenario_text(base_text(), "test.toml", o);
      lagrangian::forget_prototypes();
      const auto sys = build_system(run.scenario);
      full = !setup_of(*sys).from_prototype;
      run.result = simulate(*sys, simulation_options(run.scenario), {&run.rec});
    }).join();
    CAPTURE(i);
    CHECK(full);
    REQUIRE(rows1[i].status == "ok");
    CHECK(rows1[i].termination == run.result.termination);
    CHECK(rows1[i].t_final == run.result.t_final);
    CHECK(rows1[i].x_final == run.result.x_final);
  }
}

TEST_CASE("sweep threads: a thread's second build of a smooth user model comes from its prototype, and only where the full build would give the same") {
  std::thread([] {
    auto build = [](const std::vector<std::string>& o) {
      const Scenario sc = load_scenario_text(base_text(), "test.toml", o);
      return build_system(sc);
    };
    lagrangian::forget_prototypes();
    const auto first = build({"initial.theta1=0.01"});
    CHECK(!setup_of(*first).from_prototype);
    const auto second = build({"initial.theta1=0.02", "parameters.m=1.5"});
    CHECK(setup_of(*second).from_prototype);
    // The same state as the full build of that point (in a thread without the prototype).
    std::vector<double> x_fast(second->size()), x_full(second->size());
    second->initial_state(x_fast.data());
    std::thread([&] {
      lagrangian::forget_prototypes();  // the process's (this thread has none)
      const auto full = build({"initial.theta1=0.02", "parameters.m=1.5"});
      CHECK(!setup_of(*full).from_prototype);
      full->initial_state(x_full.data());
    }).join();
    CHECK(x_fast == x_full);
    // A start written as an expression of the parameters is read by the full build.
    CHECK(!setup_of(*build({"initial.theta1=0.01*l"})).from_prototype);
    // Another scenario text (another end time) is another prototype: its first build is in full.
    CHECK(!setup_of(*build({"initial.theta1=0.01", "simulation.t_end=1"})).from_prototype);
    // A point the full build refuses is refused, with its message, not built from the prototype.
    CHECK_THROWS_WITH_AS(build({"initial.theta1=0.01", "parameters.m=0", "parameters.Jw=0", "parameters.It=0"}),
                         doctest::Contains("the mass matrix d2T/dder(q)2 is singular at the initial state"), InputError);
  }).join();
}

}  // namespace rollsim
