#include "rollsim/io/linear_writer.hpp"

#include "rollsim/io/hdf5.hpp"

namespace rollsim {

namespace {

std::vector<double> row_major(const Eigen::MatrixXd& m) {
  std::vector<double> v(static_cast<std::size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) v[static_cast<std::size_t>(i * m.cols() + j)] = m(i, j);
  return v;
}

void matrix(hid_t g, const std::string& name, const Eigen::MatrixXd& m, const std::string& desc) {
  h5::write_matrix(g, name, row_major(m), static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols()), desc);
}

void complex_list(hid_t g, const std::string& name, const std::vector<std::complex<double>>& z, const std::string& desc) {
  std::vector<double> re, im;
  for (auto c : z) {
    re.push_back(c.real());
    im.push_back(c.imag());
  }
  h5::write_vector(g, name + "_real", re, "rad/s", desc + ", real part");
  h5::write_vector(g, name + "_imag", im, "rad/s", desc + ", imaginary part");
}

}  // namespace

void write_linear(hid_t root, const LinearResult& r) {
  h5::Handle g = h5::create_group(root, "linear");
  const hid_t id = g.get();
  h5::write_attr(id, "orientation",
                 "2-D datasets are row-major: [i, j] is element (i, j); MATLAB's h5read returns the transpose");
  h5::write_attr(id, "classification_rule", r.rule);
  h5::write_attr(id, "summary", linear::summary_line(r.modal.counts));
  h5::write_attr(id, "degrees_of_freedom", static_cast<long long>(r.modal.counts.degrees_of_freedom));
  h5::write_attr(id, "n_oscillatory", static_cast<long long>(r.modal.counts.oscillatory));
  h5::write_attr(id, "n_damped", static_cast<long long>(r.modal.counts.damped));
  h5::write_attr(id, "n_undamped", static_cast<long long>(r.modal.counts.undamped));
  h5::write_attr(id, "n_unstable", static_cast<long long>(r.modal.counts.unstable));
  h5::write_attr(id, "n_rigid_body", static_cast<long long>(r.modal.counts.rigid_body));
  h5::write_attr(id, "equilibrium_residual", r.equilibrium_residual);
  h5::write_attr(id, "real_part_floor", r.modal.real_floor);
  if (!r.reference.empty()) {
    h5::write_attr(id, "reference", r.reference_label);
    h5::write_attr(id, "reference_error", r.reference_error);
  }
  h5::write_strings(id, "state_names", r.state_names, "state order of A, B, C and the eigenvectors (the kept states)");
  // Every state of the model and what the linearisation did with it: kept (a state of A), ignorable, steady or
  // eliminated by a position constraint.
  const StateReduction& st = r.states;
  std::vector<std::string> treatment;
  for (const auto t : st.treatment) treatment.push_back(to_string(t));
  h5::write_attr(id, "state_reduction", st.method);
  h5::write_attr(id, "n_states_model", static_cast<long long>(st.names.size()));
  h5::write_attr(id, "n_kept", static_cast<long long>(st.kept.size()));
  h5::write_attr(id, "n_eliminated", static_cast<long long>(st.eliminated.size()));
  h5::write_attr(id, "constraint_rows", static_cast<long long>(st.constraint_rows));
  h5::write_attr(id, "constraint_rank", static_cast<long long>(st.constraint_rank));
  h5::write_attr(id, "invariance_residual", st.invariance_residual);
  h5::write_attr(id, "equilibrium_measure",
                 "max over the kept states of |x_i'| / (1 + sum_j |A_ij x0_j|) (A the full Jacobian)");
  h5::write_attr(id, "residual_state", r.residual_state);
  h5::write_strings(id, "model_state_names", st.names, "every state of the model, in its order");
  h5::write_strings(id, "model_state_treatment", treatment,
                    "per model state: kept (a state of A), ignorable (linear.ignorable: dropped with its row), steady "
                    "(linear.steady: dropped with its row and column) or eliminated (a position constraint)");
  h5::write_vector(id, "model_x0", std::vector<double>(st.x0.data(), st.x0.data() + st.x0.size()), "",
                   "operating point, every model state");
  h5::write_vector(id, "model_rate", std::vector<double>(st.rate.data(), st.rate.data() + st.rate.size()), "",
                   "x' at the operating point, every model state");
  if (!st.eliminated.empty()) {
    std::vector<std::string> names;
    for (const auto k : st.eliminated) names.push_back(st.names[static_cast<std::size_t>(k)]);
    h5::write_strings(id, "eliminated_names", names, "the eliminated states, rows of elimination");
    matrix(id, "elimination", st.elimination,
           "dx_eliminated = elimination dx_kept: [i, j] for eliminated state i and kept state j (from G dx = 0)");
  }
  h5::write_strings(id, "input_names", r.input_names, "input order of B and D");
  h5::write_strings(id, "output_names", r.output_names, "output order of C and D");
  h5::write_vector(id, "x0", std::vector<double>(r.x0.data(), r.x0.data() + r.x0.size()), "", "operating point, the kept states (A's order)");
  h5::write_vector(id, "u0", std::vector<double>(r.u0.data(), r.u0.data() + r.u0.size()), "", "operating inputs");
  matrix(id, "A", r.ss.A, "x' = A x + B u");
  matrix(id, "B", r.ss.B, "x' = A x + B u");
  matrix(id, "C", r.ss.C, "y = C x + D u");
  matrix(id, "D", r.ss.D, "y = C x + D u");

  std::vector<double> re, im, fn, zeta, tau, wl, rehz, imhz;
  std::vector<std::string> stab;
  for (const auto& row : r.modal.rows) {
    re.push_back(row.real_rad_s);
    im.push_back(row.imag_rad_s);
    rehz.push_back(row.real_hz);
    imhz.push_back(row.imag_hz);
    fn.push_back(row.natural_frequency_hz);
    zeta.push_back(row.damping_ratio);
    tau.push_back(row.time_constant_s);
    wl.push_back(row.wavelength_s);
    stab.push_back(linear::to_string(row.stability));
  }
  h5::write_vector(id, "eigenvalues_real", re, "rad/s", "eigenvalue real parts");
  h5::write_vector(id, "eigenvalues_imag", im, "rad/s", "eigenvalue imaginary parts");
  h5::write_vector(id, "eigenvalues_real_hz", rehz, "Hz", "eigenvalue real parts / 2 pi");
  h5::write_vector(id, "eigenvalues_imag_hz", imhz, "Hz", "eigenvalue imaginary parts / 2 pi");
  h5::write_vector(id, "frequency_hz", fn, "Hz", "natural frequency |lambda| / 2 pi (NaN: not oscillatory)");
  h5::write_vector(id, "damping_ratio", zeta, "1",
                   "-Re(lambda) / |lambda| (NaN: not oscillatory; 0 where |Re(lambda)| <= real_part_floor)");
  h5::write_vector(id, "time_constant", tau, "s",
                   "-1 / Re(lambda) (negative: unstable; +inf where |Re(lambda)| <= real_part_floor)");
  h5::write_vector(id, "wavelength", wl, "s", "2 pi / |Im(lambda)| (NaN: not oscillatory)");
  h5::write_strings(id, "stability", stab, "damped, undamped, unstable or rigid body");
  const auto n = static_cast<std::size_t>(r.eig.vectors.rows());
  matrix(id, "eigenvectors_real", r.eig.vectors.real(), "[i, k]: component i of eigenvector k, real part");
  matrix(id, "eigenvectors_imag", r.eig.vectors.imag(), "[i, k]: component i of eigenvector k, imaginary part");
  (void)n;
  complex_list(id, "poles", r.poles, "transfer-function poles");
  complex_list(id, "zeros", r.zeros.zeros, "transmission zeros");
  // The gain: absent when no channel has one; the note says why (or why A's root at 0 cancels).
  const std::string gain_note = linear::steady_state_gain_note(r.gain);
  if (!gain_note.empty()) h5::write_attr(id, "steady_state_gain_note", gain_note);
  if (r.gain.gain.size() == 0 || r.gain.gain.array().isFinite().any())
    matrix(id, "steady_state_gain", r.gain.gain,
           std::string("D - C A^-1 B, [output, input]") +
               (!r.gain.a_singular ? ""
                : r.gain.exists()  ? " of each channel's minimal realization (A is singular: steady_state_gain_note)"
                                   : "; NaN where a pole at s = 0 leaves no steady state (steady_state_gain_note)"));

  if (!r.response.channels.empty()) {
    h5::Handle fr = h5::create_group(id, "frequency_response");
    h5::write_vector(fr.get(), "frequency_hz", r.response.frequency_hz, "Hz", "frequency grid");
    const auto nf = r.response.frequency_hz.size();
    const bool siso = r.response.channels.size() == 1;
    h5::write_attr(fr.get(), "orientation",
                   siso ? "one channel: 1-D over frequency"
                        : "[channel, frequency]; channel = output * n_inputs + input");
    std::vector<double> mag, ph, hre, him;
    for (const auto& c : r.response.channels) {
      mag.insert(mag.end(), c.magnitude_db.begin(), c.magnitude_db.end());
      ph.insert(ph.end(), c.phase_deg.begin(), c.phase_deg.end());
      for (auto z : c.h) {
        hre.push_back(z.real());
        him.push_back(z.imag());
      }
    }
    if (siso) {
      h5::write_vector(fr.get(), "magnitude_db", mag, "dB", "20 log10 |H(i 2 pi f)|");
      h5::write_vector(fr.get(), "phase_deg", ph, "deg", "arg H, unwrapped along the grid");
      h5::write_vector(fr.get(), "h_real", hre, "", "H(i 2 pi f), real part");
      h5::write_vector(fr.get(), "h_imag", him, "", "H(i 2 pi f), imaginary part");
    } else {
      const auto nc = r.response.channels.size();
      h5::write_matrix(fr.get(), "magnitude_db", mag, nc, nf, "20 log10 |H|, [channel, frequency]");
      h5::write_matrix(fr.get(), "phase_deg", ph, nc, nf, "arg H [deg], [channel, frequency]");
      h5::write_matrix(fr.get(), "h_real", hre, nc, nf, "H, real part, [channel, frequency]");
      h5::write_matrix(fr.get(), "h_imag", him, nc, nf, "H, imaginary part, [channel, frequency]");
    }
  }
}

}  // namespace rollsim
