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
#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/linear_writer.hpp"
#include "rollsim/io/progress.hpp"
#include "rollsim/sweep/sweep.hpp"

namespace rollsim::cli {

namespace {

struct LinArgs {
  std::string scenario, out, iftomm;
  std::vector<std::string> sets;
  bool allow_non_equilibrium = false;
  bool sweep = false;
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

/// The linearisation of scenario `sc`, with the options it and the command line give (`opt` receives them).
LinearResult linearize_scenario(const Scenario& sc, const LinArgs& a, LinearOptions& opt) {
  auto system = build_system(sc);
  linearizable(*system, sc);  // a nonsmooth model or a constrained formulation is an input error (exit 2)
  opt = linear_options(sc);
  opt.allow_non_equilibrium = a.allow_non_equilibrium;
  return linearize_system(*system, opt, sc);
}

int linearize_command(const LinArgs& a) {
  const Scenario sc = load_scenario(a.scenario, a.sets);
  const std::string out = optional_output_path(sc, a.out);
  if (sc.raw_tables.count("sweep"))
    std::fprintf(stderr, "rollsim: note: the [sweep] section is ignored without --sweep (which linearises at each "
                         "of its points)\n");
  LinearOptions opt;
  const LinearResult r = linearize_scenario(sc, a, opt);
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

/// The eigenvalues at every point of the scenario's [sweep] section (one numeric key, the grammar of `rollsim
/// sweep`): each point is the file, the --set overrides and the point's value, linearised as a single
/// `rollsim linearize` would. Prints one row per point and the values of the key where the linearisation's
/// stability changes (the largest real part interpolated linearly between the two points around it), and
/// writes /linear_sweep with -o.
int linearize_sweep(const LinArgs& a) {
  const Scenario base = load_scenario(a.scenario, a.sets);
  const sweep::Spec spec = sweep::parse_spec(base, a.sets);
  const sweep::Axis& axis = spec.axes.front();
  if (spec.axes.size() != 1 || !axis.numeric)
    throw InputError(axis.origin, "linearize --sweep: [sweep] must sweep one numeric key (the eigenvalues are drawn "
                                  "against it); it sweeps " + std::to_string(spec.axes.size()) + " key" +
                                      (spec.axes.size() == 1 ? " whose values are not all numbers" : "s") +
                                      ": use rollsim sweep for a grid of runs");
  if (spec.summary)
    std::fprintf(stderr, "rollsim: note: %s: the [sweep] section's summary is ignored by linearize --sweep (it lists the "
                         "items of a run's summary; a linearisation writes the eigenvalues)\n",
                 spec.summary_origins.empty() ? base.path.c_str() : spec.summary_origins.front().str().c_str());
  const std::string out = optional_output_path(base, a.out);
  const std::size_t n = spec.n_points;
  std::vector<double> re, im, max_real, floor;
  std::vector<long long> unstable;
  std::vector<std::string> state_names, off_point;
  Eigen::Index size = -1;
  const auto start = ProgressBar::Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> sets = a.sets;
    for (const auto& o : spec.overrides(i)) sets.push_back(o);
    LinearOptions opt;
    const LinearResult r = linearize_scenario(load_scenario(a.scenario, sets), a, opt);
    const std::string at = axis.key + " = " + axis.values[i];
    if (size < 0) {
      size = r.eig.values.size();
      state_names = r.state_names;
    } else if (r.eig.values.size() != size) {
      throw InputError(axis.origin, "linearize --sweep: the linearisation at " + at + " has " +
                                        std::to_string(r.eig.values.size()) + " eigenvalues, at the first point " +
                                        std::to_string(size) + ": the kept states differ between the points");
    }
    if (r.equilibrium_residual > opt.equilibrium_tolerance) off_point.push_back(at);
    double top = -INFINITY;
    for (Eigen::Index k = 0; k < size; ++k) {
      re.push_back(r.eig.values(k).real());
      im.push_back(r.eig.values(k).imag());
      top = std::max(top, std::abs(r.eig.values(k).real()) <= r.modal.real_floor ? 0.0 : r.eig.values(k).real());
    }
    max_real.push_back(top);
    floor.push_back(r.modal.real_floor);
    unstable.push_back(static_cast<long long>(r.modal.counts.unstable));
    ProgressBar::draw(static_cast<double>(i + 1) / static_cast<double>(n), "linearize", start);
  }
  if (ProgressBar::enabled()) ProgressBar::clear();
  const std::string unit = axis.unit.empty() ? "" : " [" + axis.unit + "]";
  std::printf("Eigenvalues against %s%s (%zu points; real part, imaginary part [rad/s])\n", axis.key.c_str(),
              unit.c_str(), n);
  for (std::size_t i = 0; i < n; ++i) {
    std::printf("%14.6g  %-8s", axis.numbers[i], unstable[i] ? "unstable" : "stable");
    for (Eigen::Index k = 0; k < size; ++k) {
      const std::size_t at = i * static_cast<std::size_t>(size) + static_cast<std::size_t>(k);
      std::printf("  %12.5e %+12.5ei", re[at], im[at]);
    }
    std::printf("\n");
  }
  // Where the count of unstable roots goes to or from zero between two points: the largest real part (a real part
  // within the round-off floor taken as 0) interpolated linearly to zero between them.
  bool any = false;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if ((unstable[i] == 0) == (unstable[i + 1] == 0)) continue;
    const double m0 = max_real[i], m1 = max_real[i + 1], v0 = axis.numbers[i], v1 = axis.numbers[i + 1];
    const double v = m0 != m1 ? v0 + (v1 - v0) * m0 / (m0 - m1) : 0.5 * (v0 + v1);
    if (!any) std::printf("\nStability changes (the largest real part interpolated linearly to zero):\n");
    std::printf("  %s near %s = %.6g (between %.6g and %.6g)\n",
                unstable[i] ? "unstable -> stable" : "stable -> unstable", axis.key.c_str(), v, v0, v1);
    any = true;
  }
  if (!any) std::printf("\nStability: %s at every point\n", unstable.front() ? "unstable" : "stable");
  if (!off_point.empty()) {
    std::fprintf(stderr, "rollsim: warning: %zu point%s not %s (linearised there with --allow-non-equilibrium): %s%s\n",
                 off_point.size(), off_point.size() == 1 ? " is" : "s are", "an equilibrium or a steady motion",
                 off_point.front().c_str(), off_point.size() > 1 ? ", ..." : "");
  }
  if (!out.empty()) {
    ResultFile file(out, provenance(base));
    h5::Handle g = h5::create_group(file.root(), "linear_sweep");
    const hid_t id = g.get();
    h5::write_attr(id, "key", axis.key);
    h5::write_attr(id, "orientation", "eigenvalues_real[i, k]: root k at point i (rows: the points of value)");
    h5::write_vector(id, "value", axis.numbers, axis.unit, axis.description.empty() ? axis.key : axis.description);
    const auto cols = static_cast<std::size_t>(size);
    h5::write_matrix(id, "eigenvalues_real", re, n, cols, "real parts [rad/s], one row per point");
    h5::write_matrix(id, "eigenvalues_imag", im, n, cols, "imaginary parts [rad/s], one row per point");
    h5::write_vector(id, "max_real_part", max_real, "rad/s", "the largest real part (within the floor: 0)");
    h5::write_vector(id, "real_part_floor", floor, "rad/s", "a real part within it is taken as zero");
    h5::write_ints(id, "n_unstable", unstable, "unstable roots of the modal table's rule");
    h5::write_strings(id, "state_names", state_names, "the kept states (those of the first point)");
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
  auto* iftomm = cmd->add_option("--iftomm", args->iftomm, "write the eigenvalues as an IFToMM results file");
  cmd->add_flag("--allow-non-equilibrium", args->allow_non_equilibrium,
                "linearise even if the initial state is not an equilibrium or steady motion (with a warning)");
  cmd->add_flag("--sweep", args->sweep,
                "linearise at every point of the scenario's [sweep] section (one numeric key): the eigenvalues against "
                "it, and where the stability changes; /linear_sweep with -o")
      ->excludes(iftomm);
  cmd->callback([args]() {
    throw CLI::RuntimeError(args->sweep ? linearize_sweep(*args) : linearize_command(*args));
  });
}

}  // namespace rollsim::cli
