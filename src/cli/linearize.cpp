// rollsim linearize SCENARIO: the state space, eigenvalues and EoM-style modal table at the scenario's
// operating point (an equilibrium, or a steady motion with linear.ignorable and linear.steady), the frequency
// response, and the HDF5 /linear group.
#include <cmath>
#include <cstdio>
#include <fstream>

#include "common.hpp"
#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/io/linear_writer.hpp"

namespace rollsim::cli {

namespace {

struct LinArgs {
  std::string scenario, out, iftomm;
  std::vector<std::string> sets;
  bool allow_non_equilibrium = false;
};

/// A table cell: "-" for a value that does not exist (NaN: not oscillatory) or is infinite (the time constant of a
/// root that neither grows nor decays).
std::string num(double v, const char* fmt = "%.10e") {
  if (!std::isfinite(v)) return "-";
  char b[40];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

void print_matrix(const char* name, const Eigen::MatrixXd& m) {
  std::printf("%s (%ld x %ld) =\n", name, static_cast<long>(m.rows()), static_cast<long>(m.cols()));
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    std::printf("   ");
    for (Eigen::Index j = 0; j < m.cols(); ++j) std::printf(" %17.10e", m(i, j));
    std::printf("\n");
  }
}

std::string complex_text(std::complex<double> z) {
  char b[80];
  std::snprintf(b, sizeof b, "%.15e %c %.15ei", z.real(), z.imag() < 0 ? '-' : '+', std::abs(z.imag()));
  return b;
}

void print_result(const LinearResult& r, const std::string& out) {
  const StateReduction& st = r.states;
  std::printf("Operating point: ");
  for (std::size_t i = 0; i < st.names.size(); ++i)
    std::printf("%s%s = %g", i ? ", " : "", st.names[i].c_str(), st.x0(static_cast<Eigen::Index>(i)));
  for (std::size_t i = 0; i < r.input_names.size(); ++i)
    std::printf(", %s = %g", r.input_names[i].c_str(), r.u0(static_cast<Eigen::Index>(i)));
  std::printf("\n");
  if (st.reduced() || st.constraint_rows > 0) {
    std::printf("\nStates about the steady motion: %s\n", st.method.c_str());
    std::printf("  %-20s %-10s %18s %18s\n", "state", "treatment", "value", "rate");
    for (std::size_t i = 0; i < st.names.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(i);
      std::printf("  %-20s %-10s %18.10e %18.10e\n", st.names[i].c_str(), to_string(st.treatment[i]), st.x0(k),
                  st.rate(k));
    }
  }
  std::printf("%sresidual max |x_i'| / (1 + sum_j |A_ij x0_j|) over the kept states = %.3e (%s, x' = %.3e)\n\n",
              st.reduced() ? "Steady-motion " : "Equilibrium ", r.equilibrium_residual, r.residual_state.c_str(),
              r.residual_rate);

  std::printf("Eigenvalues\n");
  std::printf("%3s %18s %18s %18s %18s\n", "No.", "Real [rad/s]", "Imaginary [rad/s]", "Real [Hz]", "Imaginary [Hz]");
  int k = 1;
  for (const auto& row : r.modal.rows)
    std::printf("%3d %18s %18s %18s %18s\n", k++, num(row.real_rad_s).c_str(), num(row.imag_rad_s).c_str(),
                num(row.real_hz).c_str(), num(row.imag_hz).c_str());
  std::printf("\nModal table\n");
  std::printf("%3s %18s %18s %18s %18s  %s\n", "No.", "Frequency [Hz]", "Damping ratio", "Time constant [s]",
              "Wavelength [s]", "Class");
  k = 1;
  for (const auto& row : r.modal.rows)
    std::printf("%3d %18s %18s %18s %18s  %s\n", k++, num(row.natural_frequency_hz).c_str(),
                num(row.damping_ratio).c_str(), num(row.time_constant_s).c_str(), num(row.wavelength_s).c_str(),
                linear::to_string(row.stability));
  std::printf("\n%s.\nRule: %s\n", linear::summary_line(r.modal.counts).c_str(), r.rule.c_str());
  if (!r.reference.empty())
    std::printf("\n%s: l2 error of the computed eigenvalues = %.3e\n", r.reference_label.c_str(), r.reference_error);

  std::printf("\nState space: x = [");
  for (std::size_t i = 0; i < r.state_names.size(); ++i) std::printf("%s%s", i ? ", " : "", r.state_names[i].c_str());
  std::printf("], u = [");
  for (std::size_t i = 0; i < r.input_names.size(); ++i) std::printf("%s%s", i ? ", " : "", r.input_names[i].c_str());
  std::printf("], y = [");
  for (std::size_t i = 0; i < r.output_names.size(); ++i) std::printf("%s%s", i ? ", " : "", r.output_names[i].c_str());
  std::printf("]\n");
  print_matrix("A", r.ss.A);
  print_matrix("B", r.ss.B);
  print_matrix("C", r.ss.C);
  print_matrix("D", r.ss.D);

  std::printf("\nTransfer function\n  poles:");
  for (auto p : r.poles) std::printf("  %s", complex_text(p).c_str());
  std::printf("\n  transmission zeros:");
  if (r.ss.inputs() != r.ss.outputs())
    std::printf(" (not computed: %ld inputs, %ld outputs)", static_cast<long>(r.ss.inputs()),
                static_cast<long>(r.ss.outputs()));
  else if (r.zeros.degenerate)
    std::printf(" every s (degenerate system)");
  else if (r.zeros.zeros.empty())
    std::printf(" none");
  for (auto z : r.zeros.zeros) std::printf("  %s", complex_text(z).c_str());
  std::printf("\n  steady-state gain:");
  const std::string gain_note = linear::steady_state_gain_note(r.gain);
  if (r.gain.gain.size() > 0 && !r.gain.gain.array().isFinite().any()) {
    std::printf(" %s\n", gain_note.c_str());
  } else {
    for (Eigen::Index i = 0; i < r.gain.gain.rows(); ++i)
      for (Eigen::Index j = 0; j < r.gain.gain.cols(); ++j)
        std::printf(" %s", std::isfinite(r.gain.gain(i, j)) ? num(r.gain.gain(i, j)).c_str() : "none");
    std::printf(r.gain.gain.size() > 1 ? " (outputs x inputs, row by row)\n" : "\n");
    if (!gain_note.empty()) std::printf("    %s\n", gain_note.c_str());
  }
  if (!r.response.frequency_hz.empty())
    std::printf("  frequency response: %zu points from %g Hz to %g Hz (%s)\n", r.response.frequency_hz.size(),
                r.response.frequency_hz.front(), r.response.frequency_hz.back(),
                out.empty() ? "written with -o FILE.h5, under /linear/frequency_response"
                            : ("in " + out + ", /linear/frequency_response").c_str());
}

int linearize_command(const LinArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  auto system = build_system(sc);
  linearizable(*system, sc);  // a nonsmooth model or a constrained formulation is an input error (exit 2)
  LinearOptions opt = linear_options(sc);
  opt.allow_non_equilibrium = a.allow_non_equilibrium;
  const std::string out = optional_output_path(sc, a.out);
  const LinearResult r = linearize_system(*system, opt, sc);
  if (r.equilibrium_residual > opt.equilibrium_tolerance)
    std::fprintf(stderr, "rollsim: warning: linearising at a point that is not %s (%s' = %.3e)\n",
                 r.states.reduced() ? "a steady motion" : "an equilibrium", r.residual_state.c_str(), r.residual_rate);
  for (std::size_t i = 0; i < r.states.names.size(); ++i)
    if (r.states.treatment[i] == StateTreatment::Steady &&
        std::abs(r.states.rate(static_cast<Eigen::Index>(i))) > opt.equilibrium_tolerance)
      std::fprintf(stderr,
                   "rollsim: warning: %s is held steady (linear.steady) though its free rate at the point is %.3e: "
                   "the linearisation assumes something holds it (a drive)\n",
                   r.states.names[i].c_str(), r.states.rate(static_cast<Eigen::Index>(i)));
  print_result(r, out);
  if (!a.iftomm.empty()) {
    std::ofstream f(a.iftomm);
    std::vector<std::complex<double>> ev(r.eig.values.data(), r.eig.values.data() + r.eig.values.size());
    f << linear::iftomm_results_text(ev);
    if (!f) throw IoError("cannot write " + a.iftomm);
    std::printf("wrote %s\n", a.iftomm.c_str());
  }
  if (!out.empty()) {
    ResultFile file(out, provenance(sc));
    write_linear(file.root(), r);
    file.close(true, "ok");
    std::printf("wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace

void add_linearize_command(CLI::App& app) {
  auto args = std::make_shared<LinArgs>();
  auto* cmd = app.add_subcommand("linearize", "Eigenvalues, modal table, state space and frequency response at the "
                                              "scenario's operating point (an equilibrium or a steady motion)");
  cmd->add_option("scenario", args->scenario, "scenario file (.toml)")->required();
  cmd->add_option("-o,--output", args->out, "write /linear to this HDF5 file");
  cmd->add_option("--set", args->sets, "override a scenario key (repeatable)");
  cmd->add_option("--iftomm", args->iftomm, "write the eigenvalues as an IFToMM results file");
  cmd->add_flag("--allow-non-equilibrium", args->allow_non_equilibrium,
                "linearise even if the initial state is not an equilibrium or steady motion (with a warning)");
  cmd->callback([args]() { throw CLI::RuntimeError(linearize_command(*args)); });
}

}  // namespace rollsim::cli
