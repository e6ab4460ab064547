// Transmission zeros and the steady-state gain: one part of the linear analysis (rollsim/analysis/linear.hpp),
// in a file of its own so that its solvers (SVD, QR, LU) compile beside the modal analysis's, not after them; the
// QZ step of the zeros is linear_pencil.cpp.
#include "rollsim/analysis/linear.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
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
  if (sys.inputs() == 0) {  // no columns: Eigen's solve would offset a null pointer (UBSan)
    g.gain = sys.D;
    return g;
  }
  g.gain = sys.D - sys.C * lu.solve(sys.B);
  return g;
}

}  // namespace rollsim::linear
