#pragma once
// Helpers the command-line commands share: scenario loading with overrides, output paths, printing.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "rollsim/io/result_file.hpp"
#include "rollsim/io/terminal_text.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/observer.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim::cli {

/// The whole command line, for provenance: every argument quoted as a POSIX shell word (shell_quote), so that
/// it can be pasted into a shell and re-run.
std::string& command_line();

/// The result file to write: -o if given, else output.file, else the scenario's stem + suffix + ".h5".
/// Checks that its directory exists and is writable (InputError at the key's origin otherwise).
std::string output_path(const Scenario& sc, const std::string& dash_o, const std::string& suffix = "");
/// The same when -o or output.file names a file; empty when neither does (a command whose file is optional).
std::string optional_output_path(const Scenario& sc, const std::string& dash_o);

Provenance provenance(const Scenario& sc);

/// The values a run writes per sample: /trajectory's (time, the states and the outputs) and, when the run writes
/// its scene (output.scene), /scene's (the drawables that move; a static one is written once).
struct SampleValues {
  std::size_t states_outputs = 0, scene = 0;
  std::size_t total() const { return 1 + states_outputs + scene; }
};
SampleValues sample_values(const HybridSystem& system, bool scene);
/// The projected size of a run's samples before compression (samples x SampleValues::total() x 8 bytes), and a
/// warning on stderr when it exceeds 1 GiB, unless output.warn_size = false.
double projected_result_bytes(const SampleValues& values, const SimulationOptions& opt);
void warn_result_size(const Scenario& sc, const HybridSystem& system, const SimulationOptions& opt);

/// Print a run's summary and solver work to stdout.
void print_summary(const RunResult& res, const std::string& out_path);

/// For a user model (model = "lagrangian"), print to stdout how long its setup took: the derivation, the
/// generated source, and the compilation or the cache. Prints nothing for other models.
void print_model_setup(const HybridSystem& system);

/// The "check" subcommand group: returns the existing one, or creates it. Every `check` command adds itself to it.
CLI::App* check_command(CLI::App& app);

/// Each command registers itself and returns nothing; errors propagate as rollsim exceptions.
void add_run_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_linearize_command(CLI::App& app);
void add_check_growth_command(CLI::App& app);
void add_check_formulations_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_keys_command(CLI::App& app);

}  // namespace rollsim::cli
