// rollsim bench: the median wall time of one run of a scenario (with its samples computed and discarded, no
// output file), over as many runs as fit in about two seconds, or -n RUNS. Figures, not a pass/fail test.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/core/lock_wait.hpp"
#include "rollsim/io/progress.hpp"
#include "rollsim/solve/simulate.hpp"
#include "rollsim/sweep/sweep.hpp"

namespace rollsim::cli {

namespace {

struct BenchArgs {
  std::string scenario;
  std::vector<std::string> sets;
  int repeat = 0;  ///< 0: as many runs as take about kBudget in all
  bool sweep = false;  ///< time the scenario's [sweep] points instead of one run
  int threads = 1;
};

constexpr double kBudget = 2.0;    // seconds of runs when -n is not given
constexpr int kMaxAutoRuns = 1000000;

/// --sweep: the scenario's sweep run in memory as `rollsim sweep` runs it (points built from the validated base,
/// each thread's integrators reused), without an output file; the median over repeats of the wall time per point.
int bench_sweep(const BenchArgs& a) {
  const Scenario base = load_scenario(a.scenario, a.sets);
  const sweep::Spec spec = sweep::parse_spec(base, a.sets);
  const std::size_t derived_before = user_models_derived();
  sweep::check_valid_point(base, a.sets, spec);
  std::vector<std::size_t> all(spec.n_points);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<double> times;
  std::size_t failed = 0;
  const auto start = std::chrono::steady_clock::now();
  const long long waited_before = lock_wait_ns().load();
  const int runs = a.repeat > 0 ? a.repeat : kMaxAutoRuns;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sweep::run_points(base, a.sets, spec, all, a.threads, false,
                      [&](std::size_t, sweep::PointResult&& p) { failed += p.status != "ok"; }, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(spec.n_points));
    if (interrupt_flag().load() || (a.repeat == 0 && std::chrono::duration<double>(t1 - start).count() >= kBudget))
      break;
  }
  if (interrupt_flag().load()) {
    std::fprintf(stderr, "rollsim: bench interrupted after %zu sweeps\n", times.size());
    return kExitInterrupted;
  }
  if (failed) {
    std::fprintf(stderr, "rollsim: bench: %zu point runs did not finish with status ok\n", failed);
    return kExitSolver;
  }
  const double waited = static_cast<double>(lock_wait_ns().load() - waited_before) * 1e-9;
  double busy = 0;  // the workers' time: wall time of every sweep times the threads
  for (double t : times) busy += t * static_cast<double>(spec.n_points) * a.threads;
  std::sort(times.begin(), times.end());
  std::printf("scenario          %s\n", a.scenario.c_str());
  std::printf("sweeps            %zu of %zu points on %d thread%s (no output file)\n", times.size(), spec.n_points,
              a.threads, a.threads == 1 ? "" : "s");
  std::printf("wall time/point   median %.2f us, min %.2f us, max %.2f us\n", times[times.size() / 2] * 1e6,
              times.front() * 1e6, times.back() * 1e6);
  if (const std::size_t derived = user_models_derived() - derived_before)
    std::printf("user models       derived in full %zu time%s in all (the other points built from a prototype)\n",
                derived, derived == 1 ? "" : "s");
  std::printf("lock waits        %.3f ms in all, %.3f us per point (%.2f %% of the workers' time)\n", waited * 1e3,
              waited * 1e6 / (static_cast<double>(spec.n_points) * static_cast<double>(times.size())),
              busy > 0 ? 100.0 * waited / busy : 0.0);
  return 0;
}

int bench_command(const BenchArgs& a) {
  if (a.sweep) return bench_sweep(a);
  const Scenario sc = load_scenario(a.scenario, a.sets);
  auto system = build_system(sc);
  const SimulationOptions opt = simulation_options(sc);
  std::vector<double> times;
  RunResult last;
  const bool bar = ProgressBar::enabled();
  const auto start = std::chrono::steady_clock::now();
  // With -n, that many runs; else runs until they have taken kBudget in all (the count follows from the cost of
  // a run), at least one and at most kMaxAutoRuns.
  const int runs = a.repeat > 0 ? a.repeat : kMaxAutoRuns;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last = simulate(*system, opt, {});
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
    if (!last.completed()) {
      if (bar) ProgressBar::clear();
      std::fprintf(stderr, "rollsim: bench run failed: %s\n", last.message.c_str());
      return kExitSolver;
    }
    const double spent = std::chrono::duration<double>(t1 - start).count();
    if (bar)
      ProgressBar::draw(a.repeat > 0 ? static_cast<double>(i + 1) / runs : std::min(1.0, spent / kBudget), "runs",
                        start);
    if (interrupt_flag().load() || (a.repeat == 0 && spent >= kBudget)) break;
  }
  if (bar) ProgressBar::clear();
  if (interrupt_flag().load()) {
    std::fprintf(stderr, "rollsim: bench interrupted after %zu runs\n", times.size());
    return kExitInterrupted;
  }
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("scenario          %s\n", a.scenario.c_str());
  print_model_setup(*system);
  std::printf("runs              %zu (%s; no output file; samples every %g computed and discarded)\n", times.size(),
              a.repeat > 0 ? "-n" : "about 2 s in all", opt.output_dt);
  std::printf("termination       %s at t = %.10g %s\n", last.termination.c_str(), last.t_final,
              last.time_unit == "s" ? "s" : "(dimensionless)");
  std::printf("events/run        %zu\n", last.n_events);
  std::printf("wall time/run     median %.1f us, min %.1f us, max %.1f us\n", median * 1e6, times.front() * 1e6,
              times.back() * 1e6);
  std::printf("wall time, runs   %.4f s in all\n", spent);
  std::printf("solver            %s, rtol %.1e\n", last.stats.method.c_str(), last.stats.rtol);
  std::printf("work/run          steps %ld, rhs evals %ld, jac evals %ld, root evals %ld\n", last.stats.get("n_steps"),
              last.stats.get("n_rhs_evals"), last.stats.get("n_jac_evals"), last.stats.get("n_root_evals"));
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Median wall time of one run of a scenario, without output; as many runs "
                                          "as take about 2 s unless -n is given");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml)")->required();
  cmd->add_option("--set", args->sets, "override a scenario key (repeatable)");
  cmd->add_option("-n,--repeat", args->repeat, "number of runs (default: as many as take about 2 s)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--sweep", args->sweep,
                "time the scenario's [sweep] points as `rollsim sweep` runs them (no output file): wall time per point");
  cmd->add_option("--threads", args->threads, "worker threads for --sweep (default 1)")->check(CLI::Range(1, 4096));
  cmd->callback([args]() { throw CLI::RuntimeError(bench_command(*args)); });
}

}  // namespace rollsim::cli
