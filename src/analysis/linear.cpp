#include "rollsim/analysis/linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>

namespace rollsim::linear {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTwoPi = 2.0 * kPi;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = std::numeric_limits<double>::epsilon();

using cd = std::complex<double>;

/// abs + rel |lambda|: the size below which imag and real parts count as zero.
double threshold(cd lambda, const Tolerances& tol) { return tol.abs + tol.rel * std::abs(lambda); }

bool is_rigid(cd lambda, const Tolerances& tol) { return std::abs(lambda) <= tol.abs; }

Stability classify(cd lambda, const Tolerances& tol) {
  if (is_rigid(lambda, tol)) return Stability::RigidBody;
  const double thr = threshold(lambda, tol);
  if (lambda.real() < -thr) return Stability::Damped;
  if (lambda.real() > thr) return Stability::Unstable;
  return Stability::Undamped;
}

/// The permutation that puts `roots` into the documented order: result[k] = index of the k-th root.
std::vector<std::size_t> sort_order(const std::vector<cd>& roots, const Tolerances& tol) {
  std::vector<std::size_t> pos, neg, rest;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (!is_oscillatory(roots[i], tol))
      rest.push_back(i);
    else if (roots[i].imag() > 0)
      pos.push_back(i);
    else
      neg.push_back(i);
  }
  if (pos.size() != neg.size())
    throw std::invalid_argument("rollsim::linear: oscillatory roots do not come in conjugate pairs");
  std::stable_sort(pos.begin(), pos.end(), [&](std::size_t a, std::size_t b) {
    const cd x = roots[a], y = roots[b];
    if (std::abs(x) != std::abs(y)) return std::abs(x) < std::abs(y);
    if (x.real() != y.real()) return x.real() > y.real();
    return x.imag() > y.imag();
  });
  std::stable_sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) {
    const cd x = roots[a], y = roots[b];
    if (x.real() != y.real()) return x.real() > y.real();
    return x.imag() > y.imag();
  });
  std::vector<std::size_t> order;
  order.reserve(roots.size());
  std::vector<bool> used(neg.size(), false);
  for (std::size_t p : pos) {
    // Partner: the unused -imag root nearest to the conjugate (first such in input order on ties).
    std::size_t best = neg.size();
    double best_d = kInf;
    for (std::size_t j = 0; j < neg.size(); ++j) {
      if (used[j]) continue;
      const double d = std::abs(roots[neg[j]] - std::conj(roots[p]));
      if (d < best_d || best == neg.size()) {
        best = j;
        best_d = d;
      }
    }
    used[best] = true;
    order.push_back(p);
    order.push_back(neg[best]);
  }
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

void StateSpace::check() const {
  const auto n = A.rows(), m = B.cols(), p = C.rows();
  if (A.cols() != n || B.rows() != n || C.cols() != n || D.rows() != p || D.cols() != m)
    throw std::invalid_argument("rollsim::linear::StateSpace: A, B, C, D dimensions do not match");
}

// ---------------------------------------------------------------------------------------------

bool is_oscillatory(std::complex<double> lambda, const Tolerances& tol) {
  return !is_rigid(lambda, tol) && std::abs(lambda.imag()) > threshold(lambda, tol);
}

std::vector<std::complex<double>> sort_eigenvalues(std::vector<std::complex<double>> roots, const Tolerances& tol) {
  const auto order = sort_order(roots, tol);
  std::vector<cd> out;
  out.reserve(roots.size());
  for (std::size_t i : order) out.push_back(roots[i]);
  return out;
}

EigenResult eigen_analysis(const Eigen::MatrixXd& A, const Tolerances& tol) {
  if (A.rows() != A.cols()) throw std::invalid_argument("rollsim::linear::eigen_analysis: A is not square");
  const Eigen::Index n = A.rows();
  EigenResult res;
  res.values.resize(n);
  res.vectors.resize(n, n);
  if (n == 0) return res;
  Eigen::EigenSolver<Eigen::MatrixXd> es(A, true);
  if (es.info() != Eigen::Success)
    throw std::runtime_error("rollsim::linear::eigen_analysis: the eigenvalue iteration did not converge");
  const Eigen::VectorXcd vals = es.eigenvalues();
  const Eigen::MatrixXcd vecs = es.eigenvectors();
  std::vector<cd> roots(vals.data(), vals.data() + n);
  const auto order = sort_order(roots, tol);
  for (Eigen::Index k = 0; k < n; ++k) {
    const auto i = static_cast<Eigen::Index>(order[static_cast<std::size_t>(k)]);
    res.values(k) = vals(i);
    Eigen::VectorXcd v = vecs.col(i);
    const double nrm = v.norm();
    if (nrm > 0) v /= nrm;
    const double vmax = v.cwiseAbs().maxCoeff();
    Eigen::Index j = 0;
    while (std::abs(v(j)) < vmax * (1.0 - 1e-10)) ++j;
    if (std::abs(v(j)) > 0) v *= std::conj(v(j)) / std::abs(v(j));
    v(j) = cd(v(j).real(), 0.0);  // exactly real (the rotation leaves O(eps) behind)
    res.vectors.col(k) = v;
  }
  return res;
}

ModalTable modal_table(const Eigen::VectorXcd& roots, const Tolerances& tol) {
  ModalTable t;
  t.counts.degrees_of_freedom = static_cast<int>(roots.size() / 2);
  for (Eigen::Index k = 0; k < roots.size(); ++k) {
    const cd l = roots(k);
    ModalRow r;
    r.lambda = l;
    r.real_rad_s = l.real();
    r.imag_rad_s = l.imag();
    r.real_hz = l.real() / kTwoPi;
    r.imag_hz = l.imag() / kTwoPi;
    r.oscillatory = is_oscillatory(l, tol);
    r.stability = classify(l, tol);
    r.natural_frequency_hz = r.oscillatory ? std::abs(l) / kTwoPi : kNaN;
    r.damping_ratio = r.oscillatory ? -l.real() / std::abs(l) : kNaN;
    r.time_constant_s = l.real() == 0.0 ? kInf : -1.0 / l.real();
    r.wavelength_s = r.oscillatory ? kTwoPi / std::abs(l.imag()) : kNaN;
    t.rows.push_back(r);

    // Count modes: an oscillatory pair once, by its +imag member.
    if (r.oscillatory && l.imag() < 0) continue;
    ++t.counts.modes;
    if (r.oscillatory) ++t.counts.oscillatory;
    switch (r.stability) {
      case Stability::Damped: ++t.counts.damped; break;
      case Stability::Undamped: ++t.counts.undamped; break;
      case Stability::Unstable: ++t.counts.unstable; break;
      case Stability::RigidBody: ++t.counts.rigid_body; break;
    }
  }
  return t;
}

std::string classification_rule(const Tolerances& tol) {
  std::ostringstream s;
  s << "Root classification, lambda = sigma + i*omega [rad/s], with tol_abs = " << fmt("%.3g", tol.abs)
    << " rad/s, tol_rel = " << fmt("%.3g", tol.rel) << " and thr = tol_abs + tol_rel*|lambda|: "
    << "rigid body if |lambda| <= tol_abs; otherwise oscillatory if |omega| > thr; "
    << "damped if sigma < -thr, unstable if sigma > thr, undamped if |sigma| <= thr "
    << "(the real part is then taken as zero). "
    << "An oscillatory conjugate pair is one mode, every other root is one mode; "
    << "degrees of freedom = number of states / 2. "
    << "Damping ratio, time constant and frequencies are computed from the unrounded root.";
  return s.str();
}

std::string summary_line(const ModalCounts& c) {
  std::ostringstream s;
  s << c.degrees_of_freedom << " degrees of freedom; " << c.oscillatory << " oscillatory, " << c.damped
    << " damped, " << c.undamped << " undamped, " << c.unstable << " unstable, " << c.rigid_body
    << " rigid body modes";
  return s.str();
}

const char* to_string(Stability s) {
  switch (s) {
    case Stability::Damped: return "damped";
    case Stability::Undamped: return "undamped";
    case Stability::Unstable: return "unstable";
    case Stability::RigidBody: return "rigid body";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------

std::vector<std::complex<double>> poles(const StateSpace& sys, const Tolerances& tol) {
  sys.check();
  const Eigen::VectorXcd v = eigen_analysis(sys.A, tol).values;
  return std::vector<cd>(v.data(), v.data() + v.size());
}

ZerosResult transmission_zeros(const StateSpace& sys) {
  sys.check();
  if (sys.inputs() != sys.outputs())
    throw std::invalid_argument("rollsim::linear::transmission_zeros: the system is not square (inputs != outputs)");
  if (sys.inputs() == 0) throw std::invalid_argument("rollsim::linear::transmission_zeros: the system has no inputs");

  Eigen::MatrixXd A = sys.A, B = sys.B, C = sys.C, D = sys.D;
  const Eigen::Index n0 = A.rows(), m0 = B.cols();
  Eigen::MatrixXd S(n0 + m0, n0 + m0);
  S << A, B, C, D;
  const double tol = 1e3 * kEps * std::max(S.norm(), std::numeric_limits<double>::min());

  ZerosResult res;
  for (;;) {
    const Eigen::Index n = A.rows(), k = D.rows();
    // Rank of D.
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(D, Eigen::ComputeFullU | Eigen::ComputeFullV);
    const Eigen::VectorXd sv = svd.singularValues();
    Eigen::Index rho = 0;
    while (rho < sv.size() && sv(rho) > tol) ++rho;

    if (rho == k) {
      // D invertible: n finite eigenvalues and k (semisimple) infinite ones.
      if (n == 0) return res;
      Eigen::MatrixXd M(n + k, n + k), N = Eigen::MatrixXd::Zero(n + k, n + k);
      M << A, B, C, D;
      N.topLeftCorner(n, n).setIdentity();
      Eigen::GeneralizedEigenSolver<Eigen::MatrixXd> ges(M, N, false);
      if (ges.info() != Eigen::Success)
        throw std::runtime_error("rollsim::linear::transmission_zeros: the QZ iteration did not converge");
      const Eigen::VectorXcd alpha = ges.alphas();
      const Eigen::VectorXd beta = ges.betas();
      std::vector<Eigen::Index> idx(static_cast<std::size_t>(n + k));
      std::iota(idx.begin(), idx.end(), Eigen::Index{0});
      auto ratio = [&](Eigen::Index i) {
        const double a = std::abs(alpha(i)), b = std::abs(beta(i));
        return a == 0.0 ? kInf : b / a;
      };
      std::stable_sort(idx.begin(), idx.end(), [&](Eigen::Index a, Eigen::Index b) { return ratio(a) < ratio(b); });
      std::vector<cd> z;
      for (std::size_t j = static_cast<std::size_t>(k); j < idx.size(); ++j) {
        const Eigen::Index i = idx[j];
        z.push_back(alpha(i) / beta(i));
      }
      try {
        res.zeros = sort_eigenvalues(z);
      } catch (const std::invalid_argument&) {  // unpaired complex zeros: plain order instead
        std::stable_sort(z.begin(), z.end(), [](cd a, cd b) {
          return a.real() != b.real() ? a.real() > b.real() : a.imag() > b.imag();
        });
        res.zeros = z;
      }
      return res;
    }
    if (n == 0) {  // the pencil is the constant, singular D
      res.degenerate = true;
      return res;
    }
    if (rho > 0) {
      // D = U diag(S1, 0) V^T: eliminate the invertible part S1 by a Schur complement.
      const Eigen::MatrixXd Bt = B * svd.matrixV();
      const Eigen::MatrixXd Ct = svd.matrixU().transpose() * C;
      const Eigen::VectorXd s1inv = sv.head(rho).cwiseInverse();
      A -= Bt.leftCols(rho) * s1inv.asDiagonal() * Ct.topRows(rho);
      B = Bt.rightCols(k - rho);
      C = Ct.bottomRows(k - rho);
    }
    const Eigen::Index q = k - rho;  // D is now the q x q zero matrix
    // Compress B: Q^T B = [R; 0]. R singular means the pencil is singular for every s.
    if (q > n) {
      res.degenerate = true;
      return res;
    }
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(B);
    const Eigen::MatrixXd R = qr.matrixQR().topRows(q).triangularView<Eigen::Upper>();
    Eigen::JacobiSVD<Eigen::MatrixXd> rsvd(R);
    if (rsvd.singularValues()(q - 1) <= tol) {
      res.degenerate = true;
      return res;
    }
    const Eigen::MatrixXd Q = qr.householderQ();
    const Eigen::MatrixXd Ap = Q.transpose() * A * Q;
    const Eigen::MatrixXd Cp = C * Q;
    // det[A - sI, B; C, 0] = +-det(R) det[A22 - sI, A21; C2, C1]: the same problem, q states fewer.
    const Eigen::Index nn = n - q;
    A = Ap.bottomRightCorner(nn, nn);
    B = Ap.bottomLeftCorner(nn, q);
    D = Cp.leftCols(q);
    C = Cp.rightCols(nn);
  }
}

SteadyStateGain steady_state_gain(const StateSpace& sys) {
  sys.check();
  SteadyStateGain g;
  const Eigen::Index n = sys.states();
  if (n == 0) {
    g.gain = sys.D;
    g.a_rcond = kInf;
    return g;
  }
  Eigen::PartialPivLU<Eigen::MatrixXd> lu(sys.A);
  g.a_rcond = lu.rcond();
  if (!(g.a_rcond >= static_cast<double>(n) * kEps)) {
    g.a_singular = true;
    g.gain = Eigen::MatrixXd::Constant(sys.outputs(), sys.inputs(), kNaN);
    return g;
  }
  g.gain = sys.D - sys.C * lu.solve(sys.B);
  return g;
}

// ---------------------------------------------------------------------------------------------

std::vector<double> log_grid(double f_min, double f_max, std::size_t n) {
  if (!(f_min > 0.0) || !(f_max >= f_min) || !std::isfinite(f_max) || n < 1)
    throw std::invalid_argument("rollsim::linear::log_grid: need 0 < f_min <= f_max < inf and n >= 1");
  std::vector<double> f(n);
  if (n == 1) {
    f[0] = f_min;
    return f;
  }
  const double a = std::log10(f_min), b = std::log10(f_max);
  for (std::size_t k = 0; k < n; ++k)
    f[k] = std::pow(10.0, a + (b - a) * static_cast<double>(k) / static_cast<double>(n - 1));
  f.front() = f_min;
  f.back() = f_max;
  return f;
}

FrequencyResponse frequency_response(const StateSpace& sys, const std::vector<double>& frequency_hz) {
  sys.check();
  const Eigen::Index n = sys.states(), m = sys.inputs(), p = sys.outputs();
  const std::size_t nf = frequency_hz.size();
  FrequencyResponse fr;
  fr.frequency_hz = frequency_hz;
  fr.channels.resize(static_cast<std::size_t>(p * m));
  for (Eigen::Index o = 0; o < p; ++o)
    for (Eigen::Index i = 0; i < m; ++i) {
      auto& ch = fr.channels[static_cast<std::size_t>(o * m + i)];
      ch.output = static_cast<int>(o);
      ch.input = static_cast<int>(i);
      ch.h.resize(nf);
      ch.magnitude_db.resize(nf);
      ch.phase_deg.resize(nf);
    }
  const Eigen::MatrixXcd Ac = sys.A.cast<cd>(), Bc = sys.B.cast<cd>(), Cc = sys.C.cast<cd>(), Dc = sys.D.cast<cd>();
  for (std::size_t k = 0; k < nf; ++k) {
    const cd s(0.0, kTwoPi * frequency_hz[k]);
    Eigen::MatrixXcd H = Dc;
    if (n > 0) {
      const Eigen::MatrixXcd Ms = s * Eigen::MatrixXcd::Identity(n, n) - Ac;
      H += Cc * Ms.partialPivLu().solve(Bc);
    }
    for (Eigen::Index o = 0; o < p; ++o)
      for (Eigen::Index i = 0; i < m; ++i) fr.channels[static_cast<std::size_t>(o * m + i)].h[k] = H(o, i);
  }
  for (auto& ch : fr.channels) {
    double prev = kNaN;
    for (std::size_t k = 0; k < nf; ++k) {
      const cd h = ch.h[k];
      ch.magnitude_db[k] = 20.0 * std::log10(std::abs(h));
      double ph = std::atan2(h.imag(), h.real()) * (180.0 / kPi);
      if (ph == -180.0) ph = 180.0;
      if (std::isfinite(ph) && std::isfinite(prev)) ph -= 360.0 * std::round((ph - prev) / 360.0);
      ch.phase_deg[k] = ph;
      if (std::isfinite(ph)) prev = ph;  // NaN points are skipped by the unwrapping
    }
  }
  return fr;
}

// ---------------------------------------------------------------------------------------------

std::vector<std::complex<double>> iftomm_eigenvalues(double g, double r, double l) {
  if (!(g > 0.0) || !(r > 0.0) || !(l > 0.0))
    throw std::invalid_argument("rollsim::linear::iftomm_eigenvalues: need g, r, l > 0");
  const double q = std::sqrt(2.0 * l * l + 9.0 * r * r);
  // s^2 = -2 g (3 r + q) / l^2 < 0 and s^2 = -2 g (3 r - q) / l^2 = 4 g / (q + 3 r) > 0; the second
  // form avoids the cancellation in q - 3 r.
  const double w = std::sqrt(2.0 * g * (3.0 * r + q)) / l;
  const double a = 2.0 * std::sqrt(g / (q + 3.0 * r));
  return {cd(0.0, w), cd(0.0, -w), cd(a, 0.0), cd(-a, 0.0)};
}

std::vector<std::complex<double>> iftomm_benchmark_eigenvalues() {
  return {cd(0.0, 6.791341869219082), cd(0.0, -6.791341869219082), cd(4.085624112006405, 0.0),
          cd(-4.085624112006405, 0.0)};
}

double iftomm_error(const std::vector<std::complex<double>>& computed,
                    const std::vector<std::complex<double>>& benchmark, const Tolerances& tol) {
  if (computed.size() != benchmark.size()) return kInf;
  const auto a = sort_eigenvalues(computed, tol), b = sort_eigenvalues(benchmark, tol);
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::norm(a[i] - b[i]);
  return std::sqrt(sum);
}

std::string iftomm_results_text(const std::vector<std::complex<double>>& eigenvalues, bool header) {
  std::string out;
  if (header) out += "# IFToMM wheel on tipping table: eigenvalues [rad/s], one per line: real imag\n";
  for (const cd& e : eigenvalues) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.16e %.16e\n", e.real(), e.imag());
    out += buf;
  }
  return out;
}

}  // namespace rollsim::linear
