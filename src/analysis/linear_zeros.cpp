// Transmission zeros and the steady-state gain: one part of the linear analysis (rollsim/analysis/linear.hpp),
// in a file of its own so that its solvers (SVD, QR, LU) compile beside the modal analysis's, not after them; the
// QZ step of the zeros is linear_pencil.cpp.
#include "rollsim/analysis/linear.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "linear_internal.hpp"

namespace rollsim::linear {

using namespace internal;

ZerosResult transmission_zeros(const StateSpace& sys) {
  sys.check();
  if (sys.inputs() != sys.outputs())
    throw std::invalid_argument("rollsim::linear::transmission_zeros: the system is not square (inputs != outputs)");
  if (sys.inputs() == 0) throw std::invalid_argument("rollsim::linear::transmission_zeros: the system has no inputs");

  Eigen::MatrixXd A = sys.A, B = sys.B, C = sys.C, D = sys.D;
  const double tol = rank_tolerance(sys);

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
      std::vector<cd> z = finite_pencil_eigenvalues(M, N, k);
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

double rank_tolerance(const StateSpace& sys) {
  const double norm = std::sqrt(sys.A.squaredNorm() + sys.B.squaredNorm() + sys.C.squaredNorm() + sys.D.squaredNorm());
  return 1e3 * kEps * std::max(norm, std::numeric_limits<double>::min());
}

namespace {

/// The smallest over the largest singular value of a square matrix (1 for an empty one).
double reciprocal_condition(const Eigen::MatrixXd& M) {
  if (M.size() == 0) return 1.0;
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(M).singularValues();
  return sv(0) > 0 ? sv(sv.size() - 1) / sv(0) : 0.0;
}

bool regular(double rcond, Eigen::Index n) { return rcond > static_cast<double>(n) * kEps; }

/// An orthonormal basis (columns) of the smallest A-invariant subspace that holds the columns of B (the subspace
/// the input reaches), by orthogonal steps: each step's new directions are A times the last step's, less their
/// part in the basis so far; a direction below `tol` is not new.
Eigen::MatrixXd invariant_span(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double tol) {
  const Eigen::Index n = A.rows();
  Eigen::MatrixXd Q(n, 0), R = B;
  while (Q.cols() < n && R.cols() > 0) {
    for (int pass = 0; pass < 2; ++pass) R -= Q * (Q.transpose() * R);  // twice: orthogonal to round-off
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(R, Eigen::ComputeThinU);
    Eigen::Index r = 0;
    while (r < svd.singularValues().size() && r < n - Q.cols() && svd.singularValues()(r) > tol) ++r;
    if (r == 0) break;
    Q.conservativeResize(Eigen::NoChange, Q.cols() + r);
    Q.rightCols(r) = svd.matrixU().leftCols(r);
    R = A * Q.rightCols(r);
  }
  return Q;
}

/// The gain of one channel (input column b, output row c, feedthrough d) from its minimal realization: the
/// subspace b reaches, then within it the part c sees (the span of c's rows under A transposed, whose complement
/// is what c does not see). NaN if A is singular there too: a pole at s = 0.
double channel_gain(const Eigen::MatrixXd& A, const Eigen::MatrixXd& b, const Eigen::MatrixXd& c, double d,
                    double tol) {
  const Eigen::MatrixXd Qc = invariant_span(A, b, tol);
  const Eigen::MatrixXd Ac = Qc.transpose() * A * Qc, bc = Qc.transpose() * b, cc = c * Qc;
  const Eigen::MatrixXd Qo = invariant_span(Ac.transpose(), cc.transpose(), tol);
  if (Qo.cols() == 0) return d;  // the input reaches nothing the output sees
  const Eigen::MatrixXd Am = Qo.transpose() * Ac * Qo, bm = Qo.transpose() * bc, cm = cc * Qo;
  if (!regular(reciprocal_condition(Am), Am.rows())) return kNaN;
  return d - (cm * Am.fullPivLu().solve(bm))(0, 0);
}

}  // namespace

bool SteadyStateGain::exists() const { return gain.allFinite(); }

SteadyStateGain steady_state_gain(const StateSpace& sys) {
  sys.check();
  SteadyStateGain g;
  const Eigen::Index n = sys.states();
  g.a_rcond = reciprocal_condition(sys.A);
  if (n == 0 || sys.inputs() == 0 || sys.outputs() == 0) {  // no columns: Eigen's solve would offset a null pointer
    g.a_singular = n > 0 && !regular(g.a_rcond, n);
    g.gain = sys.D;
    return g;
  }
  if (regular(g.a_rcond, n)) {
    g.gain = sys.D - sys.C * sys.A.partialPivLu().solve(sys.B);
    return g;
  }
  g.a_singular = true;
  const double tol = rank_tolerance(sys);
  g.gain.resize(sys.outputs(), sys.inputs());
  for (Eigen::Index i = 0; i < sys.outputs(); ++i)
    for (Eigen::Index j = 0; j < sys.inputs(); ++j)
      g.gain(i, j) = channel_gain(sys.A, sys.B.col(j), sys.C.row(i), sys.D(i, j), tol);
  return g;
}

std::string steady_state_gain_note(const SteadyStateGain& g) {
  if (!g.a_singular || g.gain.size() == 0) return "";
  const Eigen::Index none = g.gain.size() - static_cast<Eigen::Index>(g.gain.array().isFinite().count());
  const std::string pole =
      "a root at s = 0 of A (a rigid-body mode or an integrator) that the input reaches and the output sees is a pole "
      "at 0: a constant input drives the output without bound, so there is no steady state";
  const std::string cancels =
      "the root is one the input does not reach or the output does not see (such as an energy ledger's state), so it "
      "cancels: the gain is that of the states the input reaches and the output sees";
  if (none == 0) return "A is singular (a root at s = 0), but " + cancels;
  if (none == g.gain.size()) return "none: " + pole;
  return "none (NaN in the file) in " + std::to_string(none) + " of " + std::to_string(g.gain.size()) +
         " channels: " + pole + "; in the others " + cancels;
}

}  // namespace rollsim::linear
