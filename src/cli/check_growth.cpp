// rollsim check growth SCENARIO: the linear model's eigenvalues against short nonlinear runs.
#include <cmath>
#include <cstdio>

#include "common.hpp"
#include "rollsim/analysis/growth.hpp"
#include "rollsim/io/hdf5.hpp"
#include "rollsim/models/registry.hpp"

namespace rollsim::cli {

namespace {

struct GrowthArgs {
  std::string scenario, out;
  std::vector<std::string> sets;
};

void write_growth(hid_t root, const GrowthResult& g) {
  std::vector<std::string> labels, status;
  std::vector<double> eps, pr, pi, mr, mi, err, win, pred, meas;
  std::vector<long long> mode;
  for (const auto& r : g.rows) {
    labels.push_back(r.label);
    status.push_back(r.status);
    mode.push_back(r.mode);
    eps.push_back(r.epsilon);
    pr.push_back(r.predicted.real());
    pi.push_back(r.predicted.imag());
    mr.push_back(r.measured.real());
    mi.push_back(r.measured.imag());
    const bool osc = r.predicted.imag() != 0;
    pred.push_back(osc ? r.predicted.imag() : r.predicted.real());
    meas.push_back(osc ? r.measured.imag() : r.measured.real());
    err.push_back(r.rel_error);
    win.push_back(r.window);
  }
  h5::Handle gr = h5::create_group(root, "growth");
  const hid_t id = gr.get();
  h5::write_attr(id, "passed", g.passed ? 1LL : 0LL);
  h5::write_strings(id, "mode", labels, "mode (modal-table number) and kind");
  h5::write_ints(id, "mode_number", mode, "row of the modal table");
  h5::write_vector(id, "epsilon", eps, "1", "perturbation along the unit mode shape");
  h5::write_vector(id, "predicted", pred, "rad/s", "eigenvalue: growth rate (real root) or frequency (pair)");
  h5::write_vector(id, "measured", meas, "rad/s", "fitted on the nonlinear run, as `predicted`");
  h5::write_vector(id, "predicted_real", pr, "rad/s", "eigenvalue, real part");
  h5::write_vector(id, "predicted_imag", pi, "rad/s", "eigenvalue, imaginary part");
  h5::write_vector(id, "measured_real", mr, "rad/s", "fitted rate of the modal coordinate, real part");
  h5::write_vector(id, "measured_imag", mi, "rad/s", "fitted rate of the modal coordinate, imaginary part");
  h5::write_vector(id, "rel_error", err, "1", "|measured - predicted| / |predicted| (complex)");
  h5::write_vector(id, "window", win, "s", "length of the fitted window");
  h5::write_strings(id, "status", status, "ok, or why the run fell short");
  std::vector<std::string> ol;
  std::vector<double> ov;
  for (const auto& o : g.orders) {
    ol.push_back(o.label);
    ov.push_back(o.order);
  }
  h5::write_strings(id, "order_mode", ol, "mode");
  h5::write_vector(id, "order", ov, "1", "observed order of the error in epsilon");
}

int growth_command(const GrowthArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  auto system = build_system(sc);
  const LinearOptions lopt = linear_options(sc);
  const GrowthOptions gopt = growth_options(sc);
  const std::string out = (!a.out.empty() || (sc.has("output.file") && !sc.string("output.file").empty()))
                              ? output_path(sc, a.out)
                              : std::string();
  const LinearResult lin = linearize_system(*system, lopt, Origin{sc.path, 0, 0});
  const GrowthResult g = check_growth(sc, lin, gopt);
  std::printf("Short-time growth check: nonlinear runs from the equilibrium plus epsilon x mode shape\n");
  std::printf("%-20s %9s %24s %24s %11s  %s\n", "mode", "epsilon", "eigenvalue [rad/s]", "measured [rad/s]",
              "rel. error", "status");
  for (const auto& r : g.rows) {
    char p[64], m[64];
    std::snprintf(p, sizeof p, "%.9f%+.9fi", r.predicted.real(), r.predicted.imag());
    std::snprintf(m, sizeof m, "%.9f%+.9fi", r.measured.real(), r.measured.imag());
    std::printf("%-20s %9.1e %24s %24s %11.3e  %s\n", r.label.c_str(), r.epsilon, p, m, r.rel_error, r.status.c_str());
  }
  std::printf("\nObserved order of the error in epsilon (where it exceeds the integration error):\n");
  for (const auto& o : g.orders)
    std::printf("  %-20s %s\n", o.label.c_str(), std::isnan(o.order) ? "-" : std::to_string(o.order).c_str());
  std::printf("\nSmall-epsilon check (epsilon <= %g, relative error <= %g): %s\n", gopt.small_epsilon, gopt.tolerance,
              g.passed ? "PASS" : "FAIL");
  if (!out.empty()) {
    ResultFile file(out, provenance(sc));
    write_growth(file.root(), g);
    file.close(true, "ok");
    std::printf("wrote %s\n", out.c_str());
  }
  return g.passed ? 0 : 1;
}

}  // namespace

void add_check_growth_command(CLI::App& app) {
  auto args = std::make_shared<GrowthArgs>();
  auto* cmd = check_command(app)->add_subcommand(
      "growth", "Eigenvalues against growth rates and frequencies fitted on short nonlinear runs");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml) at an equilibrium")->required();
  cmd->add_option("-o,--output", args->out, "write the /growth table to this HDF5 file");
  cmd->add_option("--set", args->sets, "override a scenario key (repeatable)");
  cmd->callback([args]() { throw CLI::RuntimeError(growth_command(*args)); });
}

}  // namespace rollsim::cli
