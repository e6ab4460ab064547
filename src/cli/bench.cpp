// rollsim bench: median wall time per trajectory, with no output file. Figures, not a pass/fail test.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common.hpp"
#include "rollsim/models/registry.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim::cli {

namespace {

struct BenchArgs {
  std::string scenario;
  std::vector<std::string> sets;
  int repeat = 200;
};

int bench_command(const BenchArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  auto system = build_system(sc);
  const SimulationOptions opt = simulation_options(sc);
  std::vector<double> times;
  RunResult last;
  for (int i = 0; i < a.repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last = simulate(*system, opt, {});
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
    if (!last.completed()) {
      std::fprintf(stderr, "rollsim: bench run failed: %s\n", last.message.c_str());
      return 3;
    }
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("scenario          %s\n", a.scenario.c_str());
  std::printf("runs              %d (no output file; samples every %g s computed and discarded)\n", a.repeat,
              opt.output_dt);
  std::printf("termination       %s at t = %.10g %s\n", last.termination.c_str(), last.t_final,
              last.time_unit == "s" ? "s" : "(dimensionless)");
  std::printf("events/run        %zu\n", last.n_events);
  std::printf("wall time/run     median %.1f us, min %.1f us, max %.1f us\n", median * 1e6, times.front() * 1e6,
              times.back() * 1e6);
  std::printf("solver            %s, rtol %.1e\n", last.stats.method.c_str(), last.stats.rtol);
  std::printf("work/run          steps %ld, rhs evals %ld, jac evals %ld, root evals %ld\n", last.stats.get("n_steps"),
              last.stats.get("n_rhs_evals"), last.stats.get("n_jac_evals"), last.stats.get("n_root_evals"));
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Time repeated runs of a scenario without output (median per trajectory)");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml)")->required();
  cmd->add_option("--set", args->sets, "override a scenario key (repeatable)");
  cmd->add_option("-n,--repeat", args->repeat, "number of runs")->check(CLI::Range(1, 1000000));
  cmd->callback([args]() { throw CLI::RuntimeError(bench_command(*args)); });
}

}  // namespace rollsim::cli
