// The Coulomb cone at one 3-D point contact (include/rollsim/hybrid/cone.hpp has the law and its sources).
#include "rollsim/hybrid/cone.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>

#include <Eigen/LU>

#include "rollsim/core/crossing.hpp"

namespace rollsim::cone {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kTwoPi = 2 * std::numbers::pi;
constexpr int kSamples = 1024;  // angles sampled on [0, 2 pi); g has at most 4 roots
/// The samples sit at (k + kOffset) 2 pi / kSamples, off the round angles (0, pi/2, ...) where data aligned with
/// the axes put roots exactly: a root between samples is bracketed by a sign change, one on a sample is not.
constexpr double kOffset = 0.3819660112501051;

[[noreturn]] void bad(const std::string& what, double value, const std::string& range) {
  std::ostringstream msg;
  msg.precision(17);
  msg << "Coulomb cone: " << what << " = " << value << " is outside the allowed range " << range;
  throw std::invalid_argument(msg.str());
}

void check(const ConeData& c) {
  if (!(std::isfinite(c.mu) && c.mu >= 0)) bad("friction coefficient mu", c.mu, "[0, inf)");
  if (!(std::isfinite(c.normal_force) && c.normal_force >= 0)) bad("normal force N", c.normal_force, "[0, inf)");
  for (int i = 0; i < 2; ++i) {
    if (!std::isfinite(c.a_free(i))) bad("free slip acceleration component " + std::to_string(i), c.a_free(i), "finite");
    for (int j = 0; j < 2; ++j)
      if (!std::isfinite(c.W(i, j)))
        bad("Delassus entry W(" + std::to_string(i) + "," + std::to_string(j) + ")", c.W(i, j), "finite");
  }
}

Vec2 unit(double angle) { return {std::cos(angle), std::sin(angle)}; }

double cross(const Vec2& a, const Vec2& b) { return a.x() * b.y() - a.y() * b.x(); }

/// |v| without underflow for tiny components (Eigen's norm() squares them).
double length(const Vec2& v) { return std::hypot(v.x(), v.y()); }

/// The size of g's terms: its round-off is a few eps times this.
double scale(const ConeData& c) { return length(c.a_free) + c.limit() * c.W.norm(); }

double wrap(double angle) {
  double r = std::fmod(angle, kTwoPi);
  if (r < 0) r += kTwoPi;
  return r >= kTwoPi ? 0.0 : r;
}

/// The root of g in (lo, hi) where g changes sign between g_lo and g_hi (neither zero), to round-off.
double refine_sign_change(const ConeData& c, double lo, double hi, double g_lo, double g_hi) {
  const double sign = g_hi > 0 ? 1.0 : -1.0;
  return locate_crossing(lo, hi, sign * g_lo, sign * g_hi,
                         [&](double t) { return sign * direction_function(c, t); });
}

/// The minimum of sign * g on [lo, hi] by golden-section search: (angle, sign * g there).
std::pair<double, double> minimise(const ConeData& c, double lo, double hi, double sign) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo);
  double f1 = sign * direction_function(c, x1), f2 = sign * direction_function(c, x2);
  for (int it = 0; it < 200 && hi - lo > 4 * kEps * (std::abs(hi) + 1); ++it) {
    if (f1 < f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - r * (hi - lo), f1 = sign * direction_function(c, x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + r * (hi - lo), f2 = sign * direction_function(c, x2);
    }
  }
  return f1 < f2 ? std::pair{x1, f1} : std::pair{x2, f2};
}

/// Every root of g on [0, 2 pi), sorted, duplicates merged. `identically_zero` when g vanishes to round-off.
std::vector<double> roots_of_g(const ConeData& c, bool& identically_zero) {
  const double h = kTwoPi / kSamples, tol = 64 * kEps * scale(c);
  std::vector<double> g(kSamples);
  double largest = 0;
  for (int k = 0; k < kSamples; ++k) {
    g[k] = direction_function(c, (k + kOffset) * h);
    largest = std::max(largest, std::abs(g[k]));
  }
  identically_zero = largest <= tol;
  std::vector<double> roots;
  if (identically_zero) return roots;
  const auto at = [&](int k) { return g[(k % kSamples + kSamples) % kSamples]; };
  for (int k = 0; k < kSamples; ++k) {
    const double lo = (k + kOffset) * h, hi = lo + h, g_lo = at(k), g_hi = at(k + 1);
    if (g_lo == 0) {
      roots.push_back(lo);
    } else if (g_hi != 0 && (g_lo > 0) != (g_hi > 0)) {
      roots.push_back(refine_sign_change(c, lo, hi, g_lo, g_hi));
    } else if (g_hi != 0) {
      // No sign change at the samples: a sampled minimum of |g| may hide a double root or two close roots.
      const double g_prev = at(k - 1);
      if (!(std::abs(g_lo) <= std::abs(g_prev) && std::abs(g_lo) <= std::abs(g_hi)) || (g_prev > 0) != (g_lo > 0))
        continue;
      const double sign = g_lo > 0 ? 1.0 : -1.0, left = lo - h;
      const auto [angle, value] = minimise(c, left, hi, sign);
      if (value < -tol) {  // two simple roots either side of the minimum
        roots.push_back(refine_sign_change(c, left, angle, g_prev, sign * value));
        roots.push_back(refine_sign_change(c, angle, hi, sign * value, g_hi));
      } else if (value <= tol) {
        roots.push_back(angle);  // a double root (tangency)
      }
    }
  }
  for (double& r : roots) r = wrap(r);
  std::sort(roots.begin(), roots.end());
  std::vector<double> merged;
  const double same = 1e-9;
  for (double r : roots)
    if (merged.empty() || r - merged.back() > same) merged.push_back(r);
  if (merged.size() > 1 && merged.front() + kTwoPi - merged.back() <= same) merged.pop_back();
  return merged;
}

}  // namespace

Vec2 sliding_force(const ConeData& c, const Vec2& u) {
  check(c);
  const double speed = length(u);
  if (!(speed > 0) || !std::isfinite(speed)) bad("slip speed |u|", speed, "(0, inf) for a sliding contact");
  return -c.limit() * u / speed;
}

Vec2 slip_acceleration(const ConeData& c, const Vec2& d) { return c.a_free - c.limit() * (c.W * d); }

StickForce sticking_force(const ConeData& c) {
  check(c);
  const double det = c.W.determinant(), size = c.W.squaredNorm();
  if (!(std::abs(det) > 1e-14 * size)) bad("Delassus determinant det W", det, "|det W| > 1e-14 |W|^2 (W invertible)");
  StickForce f;
  f.force = -c.W.partialPivLu().solve(c.a_free);
  f.demand = length(f.force);
  f.feasible = f.demand <= c.limit();
  return f;
}

double direction_function(const ConeData& c, double angle) {
  const Vec2 d = unit(angle);
  return cross(d, slip_acceleration(c, d));
}

std::vector<SlipDirection> consistent_directions(const ConeData& c) {
  check(c);
  bool identically_zero = false;
  std::vector<double> roots = roots_of_g(c, identically_zero);
  // g = 0 for every angle only for a_free = 0 with W = w I (or mu N = 0): kappa = -w mu N for every direction;
  // a continuum of consistent directions (w < 0) is represented by the angle 0.
  if (identically_zero) roots = {0.0};
  std::vector<SlipDirection> out;
  for (double angle : roots) {
    SlipDirection s;
    s.angle = angle;
    s.d = unit(angle);
    const Vec2 a = slip_acceleration(c, s.d);
    s.kappa = s.d.dot(a);
    s.residual = (a - s.kappa * s.d).norm();
    if (s.kappa > 0) out.push_back(s);
  }
  // By decreasing kappa; kappas within round-off of each other (64 eps times g's scale) are a tie, kept by
  // increasing angle (the roots come in that order).
  std::stable_sort(out.begin(), out.end(),
                   [](const SlipDirection& x, const SlipDirection& y) { return x.kappa > y.kappa; });
  const double tie = 64 * kEps * scale(c);
  for (std::size_t first = 0; first < out.size();) {
    std::size_t last = first + 1;
    while (last < out.size() && out[last - 1].kappa - out[last].kappa <= tie) ++last;
    std::sort(out.begin() + first, out.begin() + last,
              [](const SlipDirection& x, const SlipDirection& y) { return x.angle < y.angle; });
    first = last;
  }
  return out;
}

RestDecision decide_at_rest(const ConeData& c) {
  RestDecision r;
  r.stick = sticking_force(c);
  if (r.stick.feasible) return r;
  r.directions = consistent_directions(c);
  if (r.directions.empty()) {
    r.outcome = RestOutcome::painleve;
    r.unique = false;
    return r;
  }
  r.outcome = RestOutcome::slip;
  r.chosen = r.directions.front();
  r.unique = r.directions.size() == 1;
  return r;
}

Vec2 from_polar(const Polar& p) { return p.s * unit(p.phi); }

Polar to_polar(const Vec2& u, double phi_near) {
  const double s = length(u);
  if (s == 0) return {0.0, phi_near};
  const double phi = std::atan2(u.y(), u.x());
  return {s, phi + kTwoPi * std::round((phi_near - phi) / kTwoPi)};
}

PolarRates polar_rates(const Polar& p, const Vec2& a) {
  const Vec2 d = unit(p.phi), d_perp(-d.y(), d.x());
  PolarRates r;
  r.s_dot = d.dot(a);
  r.cross = d_perp.dot(a);
  r.direction_defined = p.s != 0;
  r.phi_dot = r.direction_defined ? r.cross / p.s : 0.0;
  return r;
}

PolarRates sliding_rates(const ConeData& c, const Polar& p) {
  check(c);
  return polar_rates(p, slip_acceleration(c, unit(p.phi)));
}

}  // namespace rollsim::cone
