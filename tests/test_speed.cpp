// Model, state and run kept apart, for sweeps at full speed: a run from an explicit initial state, a scenario key
// set to a typed value without parsing again, integrators rebound between runs, and no heap allocation in a
// right-hand side, a witness or an integration step (a counting operator new, this binary's only one).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "rollsim/scenario/scenario_set.hpp"
#include "rollsim/solve/integrator.hpp"
#include "support.hpp"

namespace {

std::atomic<long> g_allocations{0};
std::atomic<bool> g_counting{false};

}  // namespace

// Every allocation of the test binary goes through here; only those while g_counting is set are counted.
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
// The nothrow forms too, so that every new of the binary pairs with the deletes below (std::stable_sort's
// temporary buffer uses new(nothrow); AddressSanitizer checks that allocation and deallocation match).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace rollsim;

namespace {

/// Allocations made by f().
template <class F>
long allocations_in(F&& f) {
  g_allocations = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_allocations.load();
}

std::string scenario(const std::string& name) {
  return test::read_file(rollsim::test::source_dir() + "/scenarios/" + name);
}

const std::vector<std::string> kToEdge{"events.lift_off=record"};

}  // namespace

TEST_CASE("speed: a run from an explicit initial state equals the run of a system built with that start") {
  // The second formulation: the scenario with initial.theta1 set, built into its own system.
  const std::string text = scenario("tipping_table.toml");
  const Scenario base = load_scenario_text(text, "t.toml", kToEdge);
  const Scenario moved = load_scenario_text(text, "t.toml", {"events.lift_off=record", "initial.theta1=0.02"});
  auto sys = build_system(base);
  auto sys_moved = build_system(moved);
  const SimulationOptions opt = simulation_options(base);
  std::vector<double> x0(sys->size());
  sys_moved->initial_state(x0.data());
  REQUIRE(x0[0] == 0.02);
  const RunResult a = simulate(*sys, x0, opt, {});
  const RunResult b = simulate(*sys_moved, opt, {});
  REQUIRE(a.completed());
  CHECK(a.termination == "table_edge");
  CHECK(a.t_final == b.t_final);
  CHECK(a.x_final == b.x_final);
  CHECK(a.n_events == b.n_events);
  // The start differs from the base system's own: a different answer (the edge comes sooner from a larger tilt).
  const RunResult c = simulate(*sys, opt, {});
  CHECK(c.t_final > a.t_final);
  // A start of the wrong size is a caller's defect.
  std::vector<double> short_state(sys->size() - 1);
  CHECK_THROWS_AS(simulate(*sys, short_state, opt, {}), std::invalid_argument);
}

TEST_CASE("speed: set_value gives the scenario --set gives, with the same messages and derived defaults") {
  const std::string text = scenario("tipping_table.toml");
  const Scenario base = load_scenario_text(text, "t.toml", {});
  // A plain number, and a key other keys' derived defaults depend on (the wheel inertia from mass and radius).
  for (const auto& [key, value] : std::vector<std::pair<std::string, Value>>{
           {"initial.theta1", 0.03}, {"parameters.wheel_radius", 0.3}, {"parameters.wheel_mass", 2.5},
           {"solver.max_steps", 5000LL}, {"solver.method", std::string("bdf")}, {"output.warn_size", false}}) {
    Scenario typed = base;
    set_value(typed, key, value);
    const Scenario parsed = load_scenario_text(text, "t.toml", {key + "=" + value_text(value)});
    CHECK(typed.resolved_text() == parsed.resolved_text());
    CHECK(typed.overrides == parsed.overrides);
    CHECK(typed.origin(key).str() == parsed.origin(key).str());
  }
  // The derived wheel inertia follows the new radius when the file does not give it.
  const Scenario no_inertia = load_scenario_text("model = \"tipping_table\"\n", "t.toml", {});
  REQUIRE(no_inertia.is_default("parameters.wheel_inertia"));
  Scenario r = no_inertia;
  set_value(r, "parameters.wheel_radius", 0.5);
  CHECK(r.real("parameters.wheel_inertia") ==
        doctest::Approx(0.5 * r.real("parameters.wheel_mass") * 0.25).epsilon(1e-15));
  CHECK(r.real("parameters.wheel_inertia") != no_inertia.real("parameters.wheel_inertia"));
  // Bad values: the same message as --set, and the scenario unchanged.
  for (const auto& [key, value] : std::vector<std::pair<std::string, Value>>{
           {"parameters.wheel_mass", -1.0}, {"solver.max_steps", 0LL}, {"solver.method", std::string("rk4")},
           {"solver.max_steps", 2.5}, {"initial.theta1", std::string("x")}}) {
    std::string typed_error = "(none)", parsed_error = "(none)";
    Scenario typed = base;
    try {
      set_value(typed, key, value);
    } catch (const InputError& e) {
      typed_error = e.what();
    }
    try {
      load_scenario_text(text, "t.toml", {key + "=" + value_text(value)});
    } catch (const InputError& e) {
      parsed_error = e.what();
    }
    CHECK(typed_error != "(none)");
    CHECK(typed_error == parsed_error);
    CHECK(typed.resolved_text() == base.resolved_text());
  }
  // A top-level key may choose the schema: not settable.
  CHECK_FALSE(settable(base, "title"));
  CHECK(settable(base, "initial.theta1"));
  CHECK_FALSE(settable(base, "initial.nonsense"));
}

TEST_CASE("speed: an integrator rebound from a workspace gives the fresh integrator's run, bit for bit") {
  struct Case {
    std::string file;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases{
      {"tipping_table.toml", {"events.lift_off=record"}},
      {"tipping_table.toml", {"events.lift_off=record", "solver.method=bdf"}},
      {"tipping_table.toml", {"events.lift_off=record", "solver.method=erk"}},
      {"tipping_table.toml", {"events.lift_off=record", "solver.method=dopri5"}},
      {"tipping_table_dae.toml", {}},
      {"disk_type_b.toml", {"simulation.t_end=20"}},
      {"disk_type_b.toml", {"simulation.t_end=20", "solver.method=exact"}},
      {"disk_type_b.toml", {"simulation.t_end=20", "solver.method=dopri5"}},
  };
  for (const auto& c : cases) {
    const std::string label = c.file + (c.sets.empty() ? std::string() : " " + c.sets.back());
    CAPTURE(label);
    SolverWorkspace ws;
    const Scenario first = load_scenario_text(scenario(c.file), c.file, c.sets);
    auto sets2 = c.sets;
    sets2.push_back(first.model == "rolling_disk" ? "initial.z=1.3" : "initial.theta1=0.02");
    const Scenario second = load_scenario_text(scenario(c.file), c.file, sets2);
    auto sys1 = build_system(first);
    auto sys2 = build_system(second);
    const SimulationOptions o1 = simulation_options(first), o2 = simulation_options(second);
    std::vector<double> x1(sys1->size()), x2(sys2->size());
    sys1->initial_state(x1.data());
    sys2->initial_state(x2.data());
    const RunResult warm1 = simulate(*sys1, x1, o1, {}, &ws);
    sys1.reset();  // the kept integrator must not need the system it ran last
    const RunResult warm2 = simulate(*sys2, x2, o2, {}, &ws);
    const RunResult fresh2 = simulate(*sys2, o2, {});
    REQUIRE(warm1.completed());
    REQUIRE(fresh2.completed());
    CHECK(warm2.t_final == fresh2.t_final);
    CHECK(warm2.x_final == fresh2.x_final);
    CHECK(warm2.n_events == fresh2.n_events);
    std::string warm_counts, fresh_counts;
    for (const auto& [name, value] : warm2.stats.counts) warm_counts += name + " " + std::to_string(value) + "; ";
    for (const auto& [name, value] : fresh2.stats.counts) fresh_counts += name + " " + std::to_string(value) + "; ";
    CHECK(warm_counts == fresh_counts);
  }
}

TEST_CASE("speed: no heap allocation in a right-hand side or a witness, nor per integration step") {
  struct Case {
    std::string file;
    std::vector<std::string> sets;
  };
  for (const Case& c : std::vector<Case>{{"tipping_table.toml", {}},
                                         {"disk_type_b.toml", {}},
                                         {"relay_feedback.toml", {}},
                                         {"carriage_pendulum.toml", {}},
                                         {"user_tipping_table.toml", {}},
                                         {"user_rolling_disk.toml", {}},
                                         {"user_carriage_pendulum.toml", {}},
                                         {"user_pendulum_constrained.toml", {}}}) {
    CAPTURE(c.file);
    const Scenario sc = load_scenario_text(scenario(c.file), c.file, c.sets);
    auto sys = build_system(sc);
    const std::size_t n = sys->size();
    std::vector<double> x(n), f(n), g(8), gd(8);
    sys->initial_state(x.data());
    // Every mode the system has (the Filippov modes -1, 0, +1; the others only 0).
    for (int mode : sys->has_modes() ? std::vector<int>{-1, 0, 1} : std::vector<int>{0}) {
      CAPTURE(mode);
      const auto* ev = facet<WitnessSystem>(*sys);
      const std::size_t m = ev ? ev->witnesses(mode).size() : 0;
      REQUIRE(m <= g.size());
      // The right-hand side, or a DAE's residual (at x' = 0).
      const auto* dae = facet<DaeSystem>(*sys);
      const auto* ode = facet<OdeSystem>(*sys);
      REQUIRE((dae || ode));
      std::vector<double> zero(n, 0.0);
      auto field = [&] {
        if (dae) dae->residual(0.0, x.data(), zero.data(), mode, f.data());
        else ode->rhs(0.0, x.data(), mode, f.data());
      };
      auto witness = [&] {
        if (!ev) return;
        ev->witness_values(0.0, x.data(), mode, g.data());
        ev->witness_rates(0.0, x.data(), f.data(), mode, gd.data());
      };
      field();  // first calls may size per-thread scratch once
      witness();
      const long count = allocations_in([&] {
        for (int k = 0; k < 100; ++k) {
          field();
          witness();
        }
      });
      CHECK(count == 0);
    }
  }
  // A whole run: the allocations do not grow with the number of steps (no samples, no events before 1.5 s).
  for (const char* method : {"adams", "dopri5"}) {
    CAPTURE(method);
    const Scenario sc = load_scenario_text(scenario("tipping_table.toml"), "t.toml",
                                           {"events.lift_off=record", "simulation.output_dt=100",
                                            std::string("solver.method=") + method});
    auto sys = build_system(sc);
    SimulationOptions shorter = simulation_options(sc), longer = shorter;
    shorter.t_end = 0.5;
    longer.t_end = 1.5;
    RunResult rs, rl;
    simulate(*sys, shorter, {});  // the first run of each sizes the per-thread scratch
    const long a = allocations_in([&] { rs = simulate(*sys, shorter, {}); });
    const long b = allocations_in([&] { rl = simulate(*sys, longer, {}); });
    REQUIRE(rs.completed());
    REQUIRE(rl.completed());
    CHECK(rl.stats.get("n_steps") > rs.stats.get("n_steps") + 50);
    CHECK(a == b);
  }
}

TEST_CASE("speed: no heap allocation per event") {
  // The disk's type B orbit, without samples, to tau = 60 (38 events) and to tau = 600 (some 380): the allocations
  // may differ by the amortized growth of the summary's texts (the symbol string doubles its capacity a few times),
  // never by one or more per event. With each method that runs it: the exact one, DOP853 and CVODE.
  for (const char* method : {"exact", "dop853", "adams"}) {
    CAPTURE(method);
    const Scenario sc = load_scenario_text(scenario("disk_type_b.toml"), "b.toml",
                                           {"simulation.output_dt=1000", std::string("solver.method=") + method});
    auto sys = build_system(sc);
    SimulationOptions shorter = simulation_options(sc), longer = shorter;
    shorter.t_end = 60;
    longer.t_end = 600;
    RunResult rs, rl;
    simulate(*sys, shorter, {});  // the first run sizes the per-thread scratch
    const long a = allocations_in([&] { rs = simulate(*sys, shorter, {}); });
    const long b = allocations_in([&] { rl = simulate(*sys, longer, {}); });
    REQUIRE(rs.completed());
    REQUIRE(rl.completed());
    const long more_events = static_cast<long>(rl.n_events) - static_cast<long>(rs.n_events);
    CAPTURE(a);
    CAPTURE(b);
    CHECK(more_events > 300);
    CHECK(b - a <= 16);
  }
}
