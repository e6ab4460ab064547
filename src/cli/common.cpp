#include "common.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim::cli {

std::string& command_line() {
  static std::string s;
  return s;
}

SampleValues sample_values(const HybridSystem& system, bool scene) {
  SampleValues v;
  v.states_outputs = system.states().size() + system.outputs().size();
  if (const auto* drawn = facet<SceneSystem>(system); scene && drawn)
    for (const Drawable& d : drawn->scene().drawables)
      if (!d.fixed) v.scene += d.size();
  return v;
}

double projected_result_bytes(const SampleValues& values, const SimulationOptions& opt) {
  const double samples = std::floor((opt.t_end - opt.t0) / opt.output_dt) + 1;
  return samples * static_cast<double>(values.total()) * 8.0;
}

void warn_result_size(const Scenario& sc, const HybridSystem& system, const SimulationOptions& opt) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const SampleValues v = sample_values(system, output_options(sc).scene);
  const double bytes = projected_result_bytes(v, opt);
  if (bytes <= kGiB || !output_options(sc).warn_size) return;
  std::string parts = "time, " + std::to_string(v.states_outputs) + " states and outputs";
  if (v.scene > 0) parts += ", " + std::to_string(v.scene) + " of /scene";
  std::fprintf(stderr,
               "rollsim: warning: the result will hold about %.1f GiB before compression (%.4g samples of %zu "
               "values: %s); raise simulation.output_dt to write less%s, or set output.warn_size = false to "
               "silence this\n",
               bytes / kGiB, std::floor((opt.t_end - opt.t0) / opt.output_dt) + 1, v.total(), parts.c_str(),
               v.scene > 0 ? " or set output.scene = false" : "");
}

std::string output_path(const Scenario& sc, const std::string& dash_o, const std::string& suffix) {
  namespace fs = std::filesystem;
  std::string path = dash_o;
  Origin where{"-o " + dash_o, 0, 0};
  const std::string file = output_options(sc).file;
  if (path.empty() && !file.empty()) {
    path = file;
    where = sc.origin("output.file");
    // A relative path in a scenario file is taken relative to the working directory, like -o.
  }
  if (path.empty()) {
    path = fs::path(sc.path).stem().string() + suffix + ".h5";
    where = Origin{sc.path, 0, 0};
  }
  fs::path p(path);
  fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw InputError(where, "the output path '" + path + "' is a directory");
  if (!fs::is_directory(dir, ec))
    throw InputError(where, "the output directory '" + dir.string() + "' does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw InputError(where, "the output directory '" + dir.string() + "' is not writable");
  return path;
}

std::string optional_output_path(const Scenario& sc, const std::string& dash_o) {
  return dash_o.empty() && output_options(sc).file.empty() ? std::string() : output_path(sc, dash_o);
}

Provenance provenance(const Scenario& sc) {
  Provenance p;
  p.command_line = command_line();
  p.scenario_text = sc.text;
  p.scenario_resolved = sc.resolved_text();
  p.scenario_path = sc.path;
  p.model = sc.model;
  p.title = output_options(sc).title;  // derived from the file name when not given
  return p;
}

void print_summary(const RunResult& res, const std::string& out_path) {
  // A failure is reported at the last state the run reached and kept; the message names where the failing
  // step or evaluation was, which can be later (inside the step that failed).
  const char* where = res.status == "solver_failure" || res.status == "audit_failure"
                          ? " (the last state reached; the message says where it failed)"
                          : "";
  if (res.time_unit == "s")
    std::printf("termination      %s at t = %.10g s%s\n", res.termination.c_str(), res.t_final, where);
  else
    std::printf("termination      %s at tau = %.10g (dimensionless time)%s\n", res.termination.c_str(), res.t_final,
                where);
  if (!res.message.empty()) std::printf("message          %s\n", res.message.c_str());
  for (const auto& it : res.summary) {
    const std::string label = it.label.empty() ? it.key : it.label;
    if (!it.text.empty())
      std::printf("%-40s %s\n", label.c_str(), shorten(it.text, 30, it.key == "symbols" ? "symbols" : "characters").c_str());
    else if (it.is_integer)
      std::printf("%-40s %lld\n", label.c_str(), static_cast<long long>(std::llround(it.number)));
    else if (std::isnan(it.number))
      std::printf("%-40s -\n", label.c_str());
    else
      std::printf("%-40s %.6e%s%s\n", label.c_str(), it.number, it.unit.empty() || it.unit == "1" ? "" : " ",
                  it.unit == "1" ? "" : it.unit.c_str());
  }
  std::printf("solver           %s, rtol %.1e, atol %.1e\n", res.stats.method.c_str(), res.stats.rtol, res.stats.atol);
  std::printf("solver work     ");
  for (const auto& [k, v] : res.stats.counts) std::printf(" %s %ld", k.c_str(), v);
  std::printf("\nsamples %zu, events %zu\n", res.n_samples, res.n_events);
  if (!out_path.empty())
    std::printf("%s %s\n", res.completed() ? "wrote" : "kept partial results (completed = 0) in", out_path.c_str());
}

void print_model_setup(const HybridSystem& system) {
  const std::string text = model_setup_text(system);
  if (!text.empty()) std::printf("model setup      %s\n", text.c_str());
}

CLI::App* check_command(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App* a) { return a->get_name() == "check"; })) return sub;
  CLI::App* check = app.add_subcommand("check", "Consistency checks of the models and solvers");
  check->require_subcommand(1);
  return check;
}

}  // namespace rollsim::cli
