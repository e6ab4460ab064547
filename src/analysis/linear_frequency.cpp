// The frequency response on a logarithmic grid: one part of the linear analysis (rollsim/analysis/linear.hpp),
// in a file of its own so that its complex LU compiles beside the modal analysis's solvers, not after them.
#include "rollsim/analysis/linear.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Dense>

#include "linear_internal.hpp"

namespace rollsim::linear {

using namespace internal;

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

}  // namespace rollsim::linear
