#pragma once
/// \file Locating a crossing: a time in (lo, hi] at which a function turns positive, given it is not positive
/// at lo and is positive at hi, to round-off, 4 eps (|t| + h). The simulate loop's search of a step on the
/// dense output (docs/audit.md), the dopri5 integrator's root finder and the tipping table's friction-demand
/// tracker share it.
///
/// The Illinois method (regula falsi that halves the value kept at an end the iteration does not move, which
/// makes it converge superlinearly from both sides) with a bisection first and every fourth iteration, so that
/// the bracket at least halves every four iterations whatever the function. (The bisection first: the demand
/// tracker's trials cost in proportion to their distance from the bracket's left end, and over CVODE's long
/// steps a first secant trial beyond the root cost it more than it saved.) The trial time stays half a
/// tolerance inside the bracket, so that the bracket closes once the root is found. The bracket is kept as
/// bisection keeps it: the result is the time on the far side.
#include <algorithm>
#include <cmath>
#include <limits>

namespace rollsim {

/// \param v_lo, v_hi the function at lo (not beyond) and hi (beyond)
/// \param value the function at a time
/// \param zero_beyond whether a value of exactly 0 counts as beyond (else only > 0 does)
/// \param min_width a bracket this narrow is narrow enough (a caller whose values carry a larger error)
/// \return the time on the far side of the crossing, within the tolerance of it
template <class Value>
double locate_crossing(double lo, double hi, double v_lo, double v_hi, Value&& value, bool zero_beyond = false,
                       double min_width = 0) {
  const double span = std::abs(hi - lo);
  int last_side = 0, same_side = 0;
  for (int it = 0; it < 400; ++it) {
    const double tol = std::max(4 * std::numeric_limits<double>::epsilon() * (std::abs(hi) + span), min_width);
    if (hi - lo <= tol) break;
    double t = 0.5 * (lo + hi);
    const bool secant = it % 4 != 0 && std::isfinite(v_lo) && std::isfinite(v_hi) && v_hi > v_lo;
    if (secant) t = std::clamp(hi - v_hi * (hi - lo) / (v_hi - v_lo), lo + 0.5 * tol, hi - 0.5 * tol);
    if (!(t > lo && t < hi)) {
      t = 0.5 * (lo + hi);
      if (!(t > lo && t < hi)) break;
    }
    const double v = value(t);
    const bool beyond = zero_beyond ? v >= 0 : v > 0;
    const int side = beyond ? +1 : -1;
    same_side = side == last_side ? same_side + 1 : 1;
    last_side = side;
    if (beyond) {
      hi = t;
      v_hi = v;
      if (same_side >= 2) v_lo *= 0.5;  // Illinois: the end that stays loses weight
    } else {
      lo = t;
      v_lo = v;
      if (same_side >= 2) v_hi *= 0.5;
    }
  }
  return hi;
}

}  // namespace rollsim
