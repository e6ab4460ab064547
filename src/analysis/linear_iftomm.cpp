// The IFToMM wheel-on-tipping-table helpers (the closed-form eigenvalues, the benchmark's, the error): one part of
// the linear analysis (rollsim/analysis/linear.hpp), apart from its solvers.
#include "rollsim/analysis/linear.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "linear_internal.hpp"

namespace rollsim::linear {

using namespace internal;

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
