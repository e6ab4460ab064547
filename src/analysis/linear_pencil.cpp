// The QZ step of the transmission zeros (linear_zeros.cpp): the finite eigenvalues of a pencil, in a file of its
// own because Eigen's generalized eigensolver is the largest template the linear analysis compiles.
#include "linear_internal.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>

namespace rollsim::linear::internal {

std::vector<cd> finite_pencil_eigenvalues(const Eigen::MatrixXd& M, const Eigen::MatrixXd& N, Eigen::Index k) {
  const Eigen::Index size = M.rows();
  Eigen::GeneralizedEigenSolver<Eigen::MatrixXd> ges(M, N, false);
  if (ges.info() != Eigen::Success)
    throw std::runtime_error("rollsim::linear::transmission_zeros: the QZ iteration did not converge");
  const Eigen::VectorXcd alpha = ges.alphas();
  const Eigen::VectorXd beta = ges.betas();
  std::vector<Eigen::Index> idx(static_cast<std::size_t>(size));
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
  return z;
}

}  // namespace rollsim::linear::internal
