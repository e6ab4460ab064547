// Test support compiled once (tests/support.hpp declares it): no TEST_CASE here.
#include "support.hpp"

#include <Eigen/Eigenvalues>

namespace rollsim::test {

std::vector<std::complex<double>> roots(const Eigen::MatrixXd& A) {
  const Eigen::VectorXcd e = Eigen::EigenSolver<Eigen::MatrixXd>(A).eigenvalues();
  return {e.data(), e.data() + e.size()};
}

}  // namespace rollsim::test
