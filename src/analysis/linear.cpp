// The linear analysis's modal part: the root classification and order, the eigen-decomposition, the modal table
// and its text, the poles. The zeros and the gain (linear_zeros.cpp), the frequency response
// (linear_frequency.cpp) and the IFToMM helpers (linear_iftomm.cpp) are in files of their own, so that the
// solvers' templates compile in parallel.
#include "rollsim/analysis/linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>

#include "linear_internal.hpp"

namespace rollsim::linear {

using namespace internal;

namespace {

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

double real_part_floor(const Eigen::MatrixXd& A) { return kRealPartFloorUlps * kEps * A.norm(); }

ModalTable modal_table(const Eigen::VectorXcd& roots, const Tolerances& tol, double real_floor) {
  ModalTable t;
  t.real_floor = real_floor;
  t.counts.degrees_of_freedom = static_cast<int>(roots.size() / 2);
  for (Eigen::Index k = 0; k < roots.size(); ++k) {
    const cd computed = roots(k);
    // A real part within the round-off floor is zero: its sign is not the computation's to decide.
    const cd l = std::abs(computed.real()) <= real_floor ? cd(0.0, computed.imag()) : computed;
    ModalRow r;
    r.lambda = computed;
    r.real_rad_s = computed.real();
    r.imag_rad_s = computed.imag();
    r.real_hz = computed.real() / kTwoPi;
    r.imag_hz = computed.imag() / kTwoPi;
    r.oscillatory = is_oscillatory(l, tol);
    r.stability = classify(l, tol);
    r.natural_frequency_hz = r.oscillatory ? std::abs(l) / kTwoPi : kNaN;
    r.damping_ratio = !r.oscillatory ? kNaN : l.real() == 0.0 ? 0.0 : -l.real() / std::abs(l);  // +0, never -0
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

std::string classification_rule(const Tolerances& tol, double real_floor) {
  std::ostringstream s;
  s << "Root classification, lambda = sigma + i*omega [rad/s], with tol_abs = " << fmt("%.3g", tol.abs)
    << " rad/s, tol_rel = " << fmt("%.3g", tol.rel) << " and thr = tol_abs + tol_rel*|lambda|: "
    << "rigid body if |lambda| <= tol_abs; otherwise oscillatory if |omega| > thr; "
    << "damped if sigma < -thr, unstable if sigma > thr, undamped if |sigma| <= thr "
    << "(the real part is then taken as zero). "
    << "An oscillatory conjugate pair is one mode, every other root is one mode; "
    << "degrees of freedom = number of states / 2. "
    << "A real part within the round-off floor |sigma| <= " << fmt("%.0f", kRealPartFloorUlps)
    << " eps ||A||_F = " << fmt("%.3g", real_floor)
    << " rad/s is zero: damping ratio 0 and time constant infinite (printed \"-\"); above it the damping ratio, "
    << "time constant and frequencies are computed from the root as computed (the eigenvalue columns).";
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

}  // namespace rollsim::linear
