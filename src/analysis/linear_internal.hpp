#pragma once
/// \file The constants and the complex type shared by the files of the linear analysis (src/analysis/linear*.cpp),
/// which is split by its parts: the modal analysis (linear.cpp), the zeros and the gain (linear_zeros.cpp, with the
/// QZ step in linear_pencil.cpp), the frequency response (linear_frequency.cpp) and the IFToMM helpers
/// (linear_iftomm.cpp).
#include <complex>
#include <limits>
#include <numbers>
#include <vector>

#include <Eigen/Core>

namespace rollsim::linear::internal {

using cd = std::complex<double>;

constexpr double kPi = std::numbers::pi;
constexpr double kTwoPi = 2.0 * kPi;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = std::numeric_limits<double>::epsilon();

/// The finite eigenvalues of the pencil (M, N) (M - s N singular) that has k semisimple infinite ones, by Eigen's
/// QZ: the k eigenvalues of smallest |beta / alpha| are dropped, the others returned as alpha / beta, in the
/// order of that ratio. Throws std::runtime_error if the QZ iteration does not converge.
std::vector<cd> finite_pencil_eigenvalues(const Eigen::MatrixXd& M, const Eigen::MatrixXd& N, Eigen::Index k);

}  // namespace rollsim::linear::internal
