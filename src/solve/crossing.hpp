#pragma once
/// \file Locating a crossing on an integrator's dense output: the first time in (lo, hi] at which a condition
/// holds, given that it does not hold at lo and holds at hi, by bisection to round-off, 4 eps (|t| + h). The
/// simulate loop's search of a step (docs/audit.md) and the dopri5 integrator's root finder share it.
#include <cmath>
#include <limits>

namespace rollsim {

/// \param beyond true at a time on the far side of the crossing
/// \return the time on the far side, within the tolerance of the first time `beyond` holds
template <class Beyond>
double bisect_crossing(double lo, double hi, Beyond&& beyond) {
  const double span = std::abs(hi - lo);
  for (int it = 0; it < 200; ++it) {
    const double tol = 4 * std::numeric_limits<double>::epsilon() * (std::abs(hi) + span);
    if (hi - lo <= tol) break;
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (beyond(mid))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

}  // namespace rollsim
