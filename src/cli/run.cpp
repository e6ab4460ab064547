// rollsim run SCENARIO: one simulation to one HDF5 file.
#include <cstdio>

#include "common.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/io/progress.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim::cli {

namespace {

struct RunArgs {
  std::string scenario, out;
  std::vector<std::string> sets;
  bool quiet = false;
};

/// What a failure before the first sample adds to its message.
const std::string kNoResultFile = "; no result file written";

/// The words for a failed run's status on the terminal.
const char* failure_label(const std::string& status) {
  return status == "audit_failure" ? "self-audit failed (docs/audit.md)" : "solver failure";
}

int run_command(const RunArgs& a) {
  // Every input check (the scenario, the system with its initial state and mode, the options, the output
  // path) comes before the result file is created.
  const Scenario sc = load_scenario(a.scenario, a.sets);
  std::unique_ptr<HybridSystem> system;
  try {
    system = build_system(sc);
  } catch (const SolverError& e) {  // a start the model refuses (the Painleve rod: no consistent contact mode)
    throw SolverError(e.what() + kNoResultFile);
  }
  const SimulationOptions opt = simulation_options(sc);
  const std::string out = output_path(sc, a.out);
  if (sc.raw_tables.count("sweep"))
    std::fprintf(stderr, "rollsim: note: the [sweep] section is ignored by `run`; run the sweep with `rollsim sweep %s`\n",
                 a.scenario.c_str());
  warn_result_size(sc, *system, opt);

  ResultFile file(out, provenance(sc));
  TrajectoryWriter writer(file, output_options(sc).scene);
  ProgressBar bar(a.quiet);
  RunResult res;
  try {
    res = simulate(*system, opt, {&writer, &bar});
    if (!file.has_data()) {
      // Stopped before the first sample: nothing to keep, and an existing file of the same name stays.
      file.discard();
      if (res.status == "interrupted") {
        std::fprintf(stderr, "rollsim: interrupted before the first sample%s\n", kNoResultFile.c_str());
        return kExitInterrupted;
      }
      if (res.status == "solver_failure" || res.status == "audit_failure") {
        std::fprintf(stderr, "rollsim: %s: %s%s\n", failure_label(res.status), res.message.c_str(),
                     kNoResultFile.c_str());
        return kExitSolver;
      }
      throw std::logic_error("the run ended with status " + res.status + " before its first sample");
    }
    file.close(res.completed(), res.status);
  } catch (const IoError& e) {
    // A write failed during the run (disk full, file-size limit, ...): keep what can be kept, marked incomplete.
    if (ProgressBar::enabled() && !a.quiet) ProgressBar::clear();
    writer.release();  // no dataset may stay open once the file is closed
    std::string kept = kNoResultFile + (" (an earlier " + out + ", if any, is unchanged)");
    try {
      if (file.has_data()) {
        file.close(false, "io_error");
        kept = "; partial results kept in " + out + " (completed = 0)";
      } else {
        file.discard();
      }
    } catch (const IoError&) {
      file.discard();
    }
    throw IoError("writing " + out + ": " + e.what() + kept);
  }
  if (!a.quiet) {
    print_model_setup(*system);
    print_summary(res, out);
  }
  if (res.status == "solver_failure" || res.status == "audit_failure") {
    std::fprintf(stderr, "rollsim: %s: %s; partial results kept in %s (completed = 0)\n", failure_label(res.status),
                 res.message.c_str(), out.c_str());
    return kExitSolver;
  }
  if (res.status == "interrupted") {
    std::fprintf(stderr, "rollsim: interrupted at t = %.10g s; partial results kept in %s (completed = 0)\n",
                 res.t_final, out.c_str());
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Simulate a scenario and write an HDF5 result file");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml)")->required();
  cmd->add_option("-o,--output", args->out, "result file (default: output.file, or SCENARIO.h5)");
  cmd->add_option("--set", args->sets, "override a scenario key: --set initial.theta1=0.02 (repeatable)");
  cmd->add_flag("-q,--quiet", args->quiet, "print nothing on success");
  cmd->callback([args]() { throw CLI::RuntimeError(run_command(*args)); });
}

}  // namespace rollsim::cli
