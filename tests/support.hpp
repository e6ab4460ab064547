#pragma once
// Test support: run scenarios in memory and record what the simulate loop reports.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "rollsim/app/registry.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim::test {

/// The source tree and the program under test, defined in tests/main.cpp: the one file compiled with their paths
/// (tests/CMakeLists.txt). A path among every file's flags would make each compile differ between two checkouts,
/// and the compiler cache would then miss on all of them.
const std::string& source_dir();
const std::string& binary();

/// True in a sanitizer tree (tools/test-sanitize; tests/CMakeLists.txt defines ROLLSIM_SANITIZED there), false in
/// a release or plain build. The long physics cases run a smaller size where it is true (a shorter horizon, fewer
/// starts), through the same code paths; each says which size runs where.
#ifdef ROLLSIM_SANITIZED
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

/// `full` in a release or plain build, `small` in a sanitizer tree (see `sanitized`).
template <class T>
constexpr T full_or_sanitized(T full, T small) {
  return sanitized ? small : full;
}

/// The eigenvalues of a square matrix (Eigen::EigenSolver), in Eigen's order. Defined in tests/support.cpp, so
/// that the solver's templates are compiled once, not in every unity group that includes a helper using them.
std::vector<std::complex<double>> roots(const Eigen::MatrixXd& A);

/// Records every sample and event of a run.
class Recorder final : public Observer {
 public:
  std::vector<double> t;
  std::vector<std::vector<double>> x, y;
  std::vector<int> mode;
  std::vector<EventRecord> events;
  void on_sample(double tt, const double* xx, const double* yy, int m) override {
    t.push_back(tt);
    x.emplace_back(xx, xx + nx);
    y.emplace_back(yy, yy + ny);
    mode.push_back(m);
  }
  void on_start(const RunInfo& info) override {
    nx = info.system->states().size();
    ny = info.system->outputs().size();
  }
  void on_event(const EventRecord& e) override { events.push_back(e); }
  std::size_t nx = 0, ny = 0;
};

/// The smooth reference: the harmonic oscillator x' = v, v' = -x from (amplitude, 0), so x = amplitude cos t.
class Oscillator final : public OdeSystem {
 public:
  explicit Oscillator(double amplitude = 1.0) : a_(amplitude) {}
  std::string model_name() const override { return "oscillator"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x0) const override {
    x0[0] = a_;
    x0[1] = 0;
  }
  void rhs(double, const double* x, int, double* f) const override {
    f[0] = x[1];
    f[1] = -x[0];
  }
  void compute_outputs(double, const double*, int, double*) const override {}

 private:
  double a_;
  Signals s_{{"x", "1", "position"}, {"v", "1", "velocity"}}, o_;
};

struct Run {
  RunResult result;
  Recorder rec;
  Scenario scenario;
  /// The system's signal names, in the order of rec.x and rec.y (a lookup without building the system again).
  std::vector<std::string> state_names, output_names;
  /// The value of the state or output `name` at sample k.
  double value(std::size_t k, const std::string& name) const {
    for (std::size_t i = 0; i < state_names.size(); ++i)
      if (state_names[i] == name) return rec.x[k][i];
    for (std::size_t i = 0; i < output_names.size(); ++i)
      if (output_names[i] == name) return rec.y[k][i];
    throw std::out_of_range("the run has no signal " + name);
  }
  const SummaryItem* item(const std::string& key) const {
    for (const auto& i : result.summary)
      if (i.key == key) return &i;
    return nullptr;
  }
  double summary(const std::string& key) const {
    auto* i = item(key);
    return i ? i->number : NAN;
  }
};

/// Load a scenario from text plus overrides, build its system and simulate it without writing files.
inline Run run_text(const std::string& text, const std::vector<std::string>& overrides = {}) {
  Run r;
  r.scenario = load_scenario_text(text, "test.toml", overrides);
  auto sys = build_system(r.scenario);
  for (const auto& s : sys->states()) r.state_names.push_back(s.name);
  for (const auto& o : sys->outputs()) r.output_names.push_back(o.name);
  const SimulationOptions opt = simulation_options(r.scenario);
  r.result = simulate(*sys, opt, {&r.rec});
  return r;
}

/// A user model's start value ([initial], [initial_rates]) that the scenario gives as a number: such a key is an
/// expression, which holds the number as the shortest text that reads back as the same double.
/// The largest minus the smallest of v (v not empty).
inline double spread(const std::vector<double>& v) {
  const auto mm = std::minmax_element(v.begin(), v.end());
  return *mm.second - *mm.first;
}

inline double start_number(const rollsim::Scenario& sc, const std::string& key) { return std::stod(sc.string(key)); }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The text of a shipped scenario, scenarios/NAME.
inline std::string scenario_text(const std::string& name) { return read_file(rollsim::test::source_dir() + "/scenarios/" + name); }

/// run_text of a shipped scenario.
inline Run run_scenario(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return run_text(scenario_text(name), overrides);
}

/// A scratch directory, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/rollsim-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    const auto p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

/// Run the rollsim binary; returns the exit code, with stdout+stderr in `output`. `env`, if given, is put
/// before the binary on the command line ("env NAME=VALUE").
inline int run_binary(const std::string& args, std::string& output, const std::string& env = "") {
  const std::string cmd = (env.empty() ? "" : env + " ") + rollsim::test::binary() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  output.clear();
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) output += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace rollsim::test
