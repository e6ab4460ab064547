/// \file Exact propagator for the Coulomb rolling/sliding disk; see the header for the model.
///
/// Energy (derivation). Physically E = 1/2 m v^2 + 1/2 J Omega^2 + 1/2 k u^2 with Omega = (v - w)/r,
/// so J Omega^2 = j m (v - w)^2. Scaling (docs/equations.md §2): u = U x, v = U Omega0 y, w = W z with
/// W = mu g/(j Omega0) = U Omega0 (because U Omega0^2 = mu g / j), and k = m (1+j) Omega0^2. Hence
///     E_phys / (m U^2 Omega0^2) = 1/2 [(1+j) x^2 + y^2 + j (y - z)^2] =: E(x, y, z).
/// Rate along F+- (s = sign z): y' - z' = s, so
///     dE/dtau = (1+j) x y + y y' + j (y - z) s = y [(1+j) x - (1+j) x - j s] + j s y - j s z = -j |z|,
/// and dE_phys/dt = -mu m g |w| maps to exactly this (mu m g |w| / (m U^2 Omega0^3) = j |z|).
/// In rolling (z = 0, y' = -x): dE/dtau = (1+j)(x y - x y) = 0, and E = (1+j) R^2 / 2.
///
/// Closed forms in sliding mode s (+1 for F+, -1 for F-), omega = sqrt(1+j), u = omega tau,
/// d = x0 + s (distance from the corner where z' = 0), A = x0 + j s / omega^2 (offset from the
/// centre c = -j s/omega^2), B = y0/omega, omc(u) = 1 - cos u, S(u) = u - sin u:
///     x = x0 - A omc + B sin u
///     y = y0 - A omega sin u - y0 omc
///     z = z0 - (s/omega) S(u) - omega d sin u - y0 omc        (from y' - z' = s, A = d - s/omega^2)
///     int_0^tau z = z0 tau - (s/omega^2) C(u) - d omc - (y0/omega) S(u),   C(u) = u^2/2 - omc(u)
/// omc, S and C are evaluated without cancellation (omc = sin^2/(1+cos), Taylor series for S and C
/// when |u| < 1), so that the near-corner slides of the +0-0 cycle (z ~ tau^3) keep full accuracy.
///
/// Sliding event search. g(tau) = s z(tau) starts >= 0 and its derivative is
///     g' = -omc(u) - P cos u - Q sin u,    P = s omega^2 d,  Q = s omega y0,
/// a constant plus a sinusoid. With t = tan(u/2), g' (1 + t^2) = -[(2 - P) t^2 + 2 Q t + P], so the
/// critical points come from a quadratic (solved in the cancellation-free form). With no real root
/// g is strictly decreasing. Otherwise each period 2 pi/omega has one minimum and one maximum of g
/// and g is monotone between them; only a piece that ends at a minimum can contain the first root.
/// The minima are visited in order (starting where the bound g >= a - tau - omega M > 0 allows,
/// a = s (z0 - y0), M the oscillation amplitude): the first minimum with g < -tol brackets the root
/// between the preceding maximum and itself, where a safeguarded Halley iteration (bisection when a
/// step leaves the bracket or does not halve it) converges to machine precision. A minimum with
/// |g| <= tol is a grazing touch (double root): counted, no event. When the segment starts on
/// z = 0 (after a slip or a reversal) the minimum at the start itself (tau <= 1e-9/omega) is skipped.
#include "rollsim/models/rolling_disk_exact.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "rollsim/core/error.hpp"

namespace rollsim::rolling_disk {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kTwoPi = 2.0 * std::numbers::pi;
// A rolling circle with R^2 - 1 <= kUnitCircleTol counts as R <= 1 (permanent): a slip from it would
// start a slide of length ~3 sqrt(R^2 - 1) < 1e-7 whose outcome is decided by round-off alone.
constexpr double kUnitCircleTol = 16.0 * kEps;
// Velocity below which a sliding orbit reaching z = 0 at the corner |x| = 1 counts as at rest there.
constexpr double kCornerVelocityTol = 8.0 * kEps;
// Consecutive events at one and the same time after which the run is declared stuck.
constexpr int kMaxZeroLengthEvents = 8;

// S(u) = u - sin u, accurate for all u.
inline double u_minus_sin(double u, double sn) {
  if (std::fabs(u) >= 1.0) return u - sn;
  // u^3/3! - u^5/5! + ... ; terms up to u^21/21! (< 2e-20 relative at |u| = 1).
  const double u2 = u * u;
  double p = 1.0 / 51090942171709440000.0;  // 1/21!
  p = 1.0 / 121645100408832000.0 - u2 * p;  // 1/19!
  p = 1.0 / 355687428096000.0 - u2 * p;     // 1/17!
  p = 1.0 / 1307674368000.0 - u2 * p;       // 1/15!
  p = 1.0 / 6227020800.0 - u2 * p;          // 1/13!
  p = 1.0 / 39916800.0 - u2 * p;            // 1/11!
  p = 1.0 / 362880.0 - u2 * p;              // 1/9!
  p = 1.0 / 5040.0 - u2 * p;                // 1/7!
  p = 1.0 / 120.0 - u2 * p;                 // 1/5!
  p = 1.0 / 6.0 - u2 * p;                   // 1/3!
  return u * u2 * p;
}

// C(u) = u^2/2 - (1 - cos u), accurate for all u.
inline double half_u2_minus_omc(double u, double omc) {
  if (std::fabs(u) >= 1.0) return 0.5 * u * u - omc;
  const double u2 = u * u;
  double p = 1.0 / 2432902008176640000.0;    // 1/20!
  p = 1.0 / 6402373705728000.0 - u2 * p;     // 1/18!
  p = 1.0 / 20922789888000.0 - u2 * p;       // 1/16!
  p = 1.0 / 87178291200.0 - u2 * p;          // 1/14!
  p = 1.0 / 479001600.0 - u2 * p;            // 1/12!
  p = 1.0 / 3628800.0 - u2 * p;              // 1/10!
  p = 1.0 / 40320.0 - u2 * p;                // 1/8!
  p = 1.0 / 720.0 - u2 * p;                  // 1/6!
  p = 1.0 / 24.0 - u2 * p;                   // 1/4!
  return u2 * u2 * p;
}

// 1 - cos u from sin u and cos u without cancellation.
inline double one_minus_cos(double sn, double cs) { return cs > 0.0 ? sn * sn / (1.0 + cs) : 1.0 - cs; }

// Per-segment constants of a sliding mode.
struct Slide {
  double j, s, w, w2;  // j, sign, omega, omega^2
  double x0, y0, z0;
  double d, A, P, Q;
  Slide(double j_, int s_, const State& st)
      : j(j_), s(s_), w(std::sqrt(1.0 + j_)), w2(1.0 + j_), x0(st.x), y0(st.y), z0(st.z) {
    d = x0 + s;
    A = x0 + j * s / w2;
    P = s * w2 * d;
    Q = s * w * y0;
  }
  State state(double tau) const {
    const double u = w * tau;
    const double sn = std::sin(u), cs = std::cos(u);
    const double omc = one_minus_cos(sn, cs);
    return {x0 - A * omc + (y0 / w) * sn, y0 - A * w * sn - y0 * omc,
            z0 - (s / w) * u_minus_sin(u, sn) - w * d * sn - y0 * omc};
  }
  // g = s z and its first three derivatives at tau, from one sine and cosine.
  void g_and_derivatives(double tau, double& g, double& dg, double& d2g, double& d3g) const {
    const double u = w * tau;
    const double sn = std::sin(u), cs = std::cos(u);
    const double omc = one_minus_cos(sn, cs);
    g = s * z0 - u_minus_sin(u, sn) / w - s * w * d * sn - s * y0 * omc;
    dg = -omc - P * cs - Q * sn;
    d2g = w * (-(1.0 - P) * sn - Q * cs);
    d3g = w2 * (-(1.0 - P) * cs + Q * sn);
  }
  // g at tau, and g'' there when asked.
  double g(double tau, double* d2g = nullptr) const {
    double g_, dg, c2, c3;
    g_and_derivatives(tau, g_, dg, c2, c3);
    if (d2g) *d2g = c2;
    return g_;
  }
  // State and integral of z at tau from one sine/cosine evaluation.
  State state_and_integral(double tau, double& integral) const {
    const double u = w * tau;
    const double sn = std::sin(u), cs = std::cos(u);
    const double omc = one_minus_cos(sn, cs);
    const double S = u_minus_sin(u, sn);
    integral = z0 * tau - (s / w2) * half_u2_minus_omc(u, omc) - d * omc - (y0 / w) * S;
    return {x0 - A * omc + (y0 / w) * sn, y0 - A * w * sn - y0 * omc, z0 - (s / w) * S - w * d * sn - y0 * omc};
  }
  double integral_z(double tau) const {
    const double u = w * tau;
    const double sn = std::sin(u), cs = std::cos(u);
    const double omc = one_minus_cos(sn, cs);
    return z0 * tau - (s / w2) * half_u2_minus_omc(u, omc) - d * omc - (y0 / w) * u_minus_sin(u, sn);
  }
  // Size of the terms of g at tau (for round-off tolerances).
  double scale(double tau) const { return std::fabs(z0) + std::fabs(y0) + w * std::fabs(d) + std::fabs(tau) + 1.0; }
};

// Root of a decreasing g on [lo, hi] with g(lo) > 0 > g(hi), given g''(lo): Halley's iteration (cubic
// convergence, with g'' from the same sine and cosine as g and g') safeguarded by bisection (a step that leaves
// the bracket, or that is not less than half the step before the last, is replaced by a bisection). It ends when
// the step is below 2 eps |tau| (checked before the bracket: a step that small rounds onto the bracket's end), or
// when the error left after a step, |K| step^3 with Halley's constant K = (g''/2g')^2 - g'''/6g', is below
// eps |tau| / 8 (the evaluation that would only confirm it is skipped). The first guess is the root of the
// quadratic Taylor model at lo (lo is normally a maximum of g, where g' = 0 and Newton's method cannot start).
double polish_root(const Slide& sl, double lo, double hi, double glo, double ghi, double curv) {
  double tau;
  if (curv < 0.0)
    tau = lo + std::sqrt(-2.0 * glo / curv);
  else
    tau = lo + (hi - lo) * (glo / (glo - ghi));
  if (!(tau > lo && tau < hi)) tau = 0.5 * (lo + hi);
  double dx_old = hi - lo, dx = dx_old;
  for (int it = 0; it < 200; ++it) {
    double g, dg, d2g, d3g;
    sl.g_and_derivatives(tau, g, dg, d2g, d3g);
    if (g == 0.0) return tau;
    if (g > 0.0)
      lo = tau;
    else
      hi = tau;
    const double denom = 2.0 * dg * dg - g * d2g;
    const bool halley_ok = dg < 0.0 && denom > 0.0;
    const double step = halley_ok ? 2.0 * g * dg / denom : hi - lo;
    if (halley_ok && std::fabs(step) <= 2.0 * kEps * std::fabs(tau)) return tau - step;
    const double halley = tau - step;
    if (!(halley > lo && halley < hi) || std::fabs(2.0 * step) > std::fabs(dx_old)) {
      dx_old = dx;
      dx = 0.5 * (hi - lo);
      tau = lo + dx;
    } else {
      dx_old = dx;
      dx = step;
      tau = halley;
      const double r = d2g / (2.0 * dg);
      const double K = std::fabs(r * r - d3g / (6.0 * dg));
      if (K * std::fabs(step) * step * step <= 0.125 * kEps * std::fabs(tau)) return tau;
    }
    if (std::fabs(dx) <= 2.0 * kEps * std::fabs(tau) || hi - lo <= 2.0 * kEps * std::fabs(hi)) return tau;
  }
  return tau;
}

}  // namespace

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::stick: return "stick";
    case EventKind::slip: return "slip";
    case EventKind::reversal: return "reversal";
  }
  return "?";
}

char mode_symbol(int mode) { return mode > 0 ? '+' : (mode < 0 ? '-' : '0'); }

State mode_state(double j, int mode, const State& start, double tau) {
  if (mode == 0) {
    const double sn = std::sin(tau), cs = std::cos(tau);
    return {start.x * cs + start.y * sn, start.y * cs - start.x * sn, start.z};
  }
  return Slide(j, mode > 0 ? 1 : -1, start).state(tau);
}

State mode_rate(double j, int mode, const State& s) {
  if (mode == 0) return {s.y, -s.x, 0.0};
  const double sg = mode > 0 ? 1.0 : -1.0;
  return {s.y, -(1.0 + j) * s.x - j * sg, -(1.0 + j) * (s.x + sg)};
}

double energy(double j, const State& s) {
  const double v = s.y - s.z;
  return 0.5 * ((1.0 + j) * s.x * s.x + s.y * s.y + j * v * v);
}

double dissipated(double j, int mode, const State& start, double tau) {
  if (mode == 0) return 0.0;
  const Slide sl(j, mode > 0 ? 1 : -1, start);
  return j * sl.s * sl.integral_z(tau);
}

State mode_state(double j, int mode, const State& start, double tau, double& dissipated) {
  if (mode == 0) {
    dissipated = 0.0;
    return mode_state(j, mode, start, tau);
  }
  const Slide sl(j, mode > 0 ? 1 : -1, start);
  double integral;
  const State st = sl.state_and_integral(tau, integral);
  dissipated = j * sl.s * integral;
  return st;
}

int initial_mode(const State& s) {
  if (s.z > 0.0) return 1;
  if (s.z < 0.0) return -1;
  const double ax = std::fabs(s.x);
  if (ax < 1.0 || (ax == 1.0 && s.x * s.y <= 0.0)) return 0;
  return s.x > 0.0 ? -1 : 1;
}

SlidingHit sliding_event_time(double j, int s, const State& start) {
  const Slide sl(j, s > 0 ? 1 : -1, start);
  SlidingHit hit;
  const double w = sl.w;
  const double a = sl.s * (sl.z0 - sl.y0);
  const double M = std::hypot(sl.A, sl.y0 / w);
  const double tau_lo = std::max(0.0, a - w * M);  // g > 0 before tau_lo
  const double g0 = sl.s * sl.z0;
  const double disc = sl.Q * sl.Q - sl.P * (2.0 - sl.P);

  if (!(disc > 0.0)) {
    // g strictly decreasing: one root, between tau_lo and a + omega M.
    double lo = tau_lo, hi = std::max(a + w * M, tau_lo) * (1.0 + 1e-12) + 1e-300;
    double curv;
    double glo = sl.g(lo, &curv), ghi = sl.g(hi);
    if (glo <= 0.0) {
      hit.tau = lo;
      return hit;
    }
    while (ghi >= 0.0) {  // only against round-off in the bound
      hi = 2.0 * hi + 1.0;
      ghi = sl.g(hi);
    }
    hit.tau = polish_root(sl, lo, hi, glo, ghi, curv);
    return hit;
  }

  // Critical points u1, u2 (roots in t = tan(u/2) of (2-P) t^2 + 2Q t + P).
  const double q = -(sl.Q + std::copysign(std::sqrt(disc), sl.Q));
  const double u1 = 2.0 * std::atan2(q, 2.0 - sl.P);
  const double u2 = 2.0 * std::atan2(sl.P, q);
  // g'' / omega = -(1-P) sin u - Q cos u is positive at the minimum. At u1 = 2 atan(a/b) with
  // (a, b) = (q, 2-P), sin u1 = 2ab/(a^2+b^2) and cos u1 = (b^2-a^2)/(a^2+b^2): only the sign matters.
  const double a1 = q, b1 = 2.0 - sl.P;
  const double curv1 = -(1.0 - sl.P) * 2.0 * a1 * b1 - sl.Q * (b1 * b1 - a1 * a1);
  double umin = u1, umax = u2;
  if (!(curv1 > 0.0)) std::swap(umin, umax);
  umin = std::fmod(umin, kTwoPi);
  if (umin < 0.0) umin += kTwoPi;
  double du = std::fmod(umin - umax, kTwoPi);  // from the preceding maximum to the minimum
  if (du <= 0.0) du += kTwoPi;

  const double skip = (g0 == 0.0) ? 1e-9 / w : 0.0;
  double k = std::max(0.0, std::ceil((w * tau_lo - umin) / kTwoPi));
  if (k > 0.0) k -= 1.0;  // one period of margin against round-off in tau_lo
  for (int guard = 0; guard < 100000000; ++guard, k += 1.0) {
    const double umk = umin + kTwoPi * k;
    const double tmin = umk / w;
    if (tmin <= skip) continue;
    const double gmin = sl.g(tmin);
    const double tol = 64.0 * kEps * sl.scale(tmin);
    if (gmin > tol) continue;
    if (gmin >= -tol) {  // tangential touch of z = 0
      ++hit.grazings;
      continue;
    }
    double lo = std::max(0.0, (umk - du) / w);
    double curv;
    double glo = sl.g(lo, &curv);
    if (lo == 0.0) glo = g0;
    if (glo <= 0.0) {  // only by round-off at a start on z = 0
      hit.tau = lo;
      return hit;
    }
    hit.tau = polish_root(sl, lo, tmin, glo, gmin, curv);
    return hit;
  }
  throw SolverError("rolling_disk::sliding_event_time: no return to z = 0 found");
}

double rolling_exit_time(const State& st, int* exit_side) {
  const double ax = std::fabs(st.x);
  const double e = (ax - 1.0) * (ax + 1.0) + st.y * st.y;  // R^2 - 1 without cancellation near R = 1
  if (e <= kUnitCircleTol) return std::numeric_limits<double>::infinity();
  // Exit angle beta with cos(beta) = 1/R, sin(beta) = sqrt(e)/R. Flip to the half plane x >= 0 (the rolling
  // flow is symmetric under (x, y) -> (-x, -y)), where x = R cos(th), y = -R sin(th), th = th0 + tau and
  // th0 = atan2(-y, x) lies in [-pi/2, pi/2]. Only beta + th0 is needed: its sine and cosine times R^2 are
  // (sqrt(e) x - y, x + sqrt(e) y), and it lies in [-pi/2, pi/2) for y > 0 and in [0, pi) otherwise, so one
  // atan2 gives it without a turn of ambiguity.
  const double sg = st.x < 0.0 ? -1.0 : 1.0;
  const double xf = sg * st.x, yf = sg * st.y;
  const double se = std::sqrt(e);
  const double beta_th0 = std::atan2(se * xf - yf, xf + se * yf);
  double d;
  int side;
  if (yf > 0.0) {  // moving outwards on this side: exit at th = -beta
    d = std::max(0.0, -beta_th0);
    side = static_cast<int>(sg);
  } else {  // moving inwards: exit at the opposite side, th = pi - beta
    d = std::numbers::pi - beta_th0;
    side = -static_cast<int>(sg);
  }
  if (exit_side) *exit_side = side;
  return d;
}

ExactResult propagate_exact(double j, double x0, double y0, double z0, double tau_end, const ExactOptions& options) {
  if (!(std::isfinite(j) && j > 0.0)) throw InputError("rolling_disk: inertia ratio j must be finite and > 0");
  if (!(std::isfinite(x0) && std::isfinite(y0) && std::isfinite(z0)))
    throw InputError("rolling_disk: initial state must be finite");
  if (!(std::isfinite(tau_end) && tau_end >= 0.0)) throw InputError("rolling_disk: tau_end must be finite and >= 0");

  ExactResult r;
  r.j = j;
  r.initial = {x0, y0, z0};
  r.initial_mode = initial_mode(r.initial);
  if (options.reserve_events) r.events.reserve(std::min(options.reserve_events, options.max_events));

  State st = r.initial;
  int mode = r.initial_mode;
  double t = 0.0;
  int zero_length = 0;
  if (mode == 0) {
    st.z = 0.0;
    r.last_rolling_radius = std::hypot(st.x, st.y);
  }

  for (;;) {
    const double remaining = tau_end - t;
    if (mode == 0) {
      int side = 0;
      const double d = rolling_exit_time(st, &side);
      if (!(d <= remaining)) {
        r.permanent_rolling = std::isinf(d);
        r.final_state = mode_state(j, 0, st, remaining);
        r.final_tau = tau_end;
        break;
      }
      if (r.events.size() >= options.max_events) {
        r.truncated = true;
        r.final_state = st;
        r.final_tau = t;
        break;
      }
      const double ax = std::fabs(st.x);
      const double e = (ax - 1.0) * (ax + 1.0) + st.y * st.y;
      const double yexit = side * std::sqrt(e);
      t += d;
      st = {static_cast<double>(side), yexit, 0.0};
      r.events.push_back({t, EventKind::slip, 0, -side, st.x, st.y, 0.0});
      ++r.n_slip;
      mode = -side;
      continue;
    }
    const SlidingHit hit = sliding_event_time(j, mode, st);
    r.grazings += hit.grazings;
    if (!(hit.tau <= remaining)) {
      double d;
      r.final_state = mode_state(j, mode, st, remaining, d);
      r.dissipated += d;
      r.final_tau = tau_end;
      break;
    }
    if (r.events.size() >= options.max_events) {
      r.truncated = true;
      r.final_state = st;
      r.final_tau = t;
      break;
    }
    double integral = 0.0;
    State ev = Slide(j, mode, st).state_and_integral(hit.tau, integral);
    r.dissipated += j * mode * integral;
    ev.z = 0.0;
    t += hit.tau;
    const double ax = std::fabs(ev.x);
    const double xtol = 8.0 * kEps;
    bool stick;
    if (ax < 1.0 - xtol)
      stick = true;
    else if (ax > 1.0 + xtol)
      stick = false;
    else
      stick = (mode * ev.y <= kCornerVelocityTol);  // corner x = s: stick when moving inwards or at rest
    if (stick) {
      r.events.push_back({t, EventKind::stick, mode, 0, ev.x, ev.y, 0.0});
      ++r.n_stick;
      r.last_rolling_radius = std::hypot(ev.x, ev.y);
      mode = 0;
    } else {
      r.events.push_back({t, EventKind::reversal, mode, -mode, ev.x, ev.y, 0.0});
      ++r.n_reversal;
      mode = -mode;
    }
    st = ev;
    if (hit.tau == 0.0) {
      if (++zero_length > kMaxZeroLengthEvents)
        throw SolverError("rolling_disk::propagate_exact: no progress at tau = " + std::to_string(t) +
                          " (repeated zero-length segments at x = " + std::to_string(st.x) + ")");
    } else {
      zero_length = 0;
    }
  }
  r.final_mode = mode;
  r.n_segments = r.events.size() + 1;
  r.symbols.reserve(r.n_segments);
  r.symbols.push_back(mode_symbol(r.initial_mode));
  for (const auto& e : r.events) r.symbols.push_back(mode_symbol(e.mode_after));
  r.classification = classify(r, options.cycle_repetitions);
  return r;
}

char classify(const ExactResult& r, int reps) {
  if (r.final_mode == 0 && r.permanent_rolling) return 'A';
  if (!(r.last_rolling_radius > 1.0) || reps < 1) return 'U';
  const std::size_t need = 4 * static_cast<std::size_t>(reps);
  const std::string& s = r.symbols;
  if (s.size() < need) return 'U';
  const std::size_t b = s.size() - need;
  char last_slide = 0;
  for (std::size_t i = b; i < s.size(); ++i) {
    const bool rolling = s[i] == '0';
    if (i > b && rolling == (s[i - 1] == '0')) return 'U';
    if (!rolling) {
      if (last_slide == s[i]) return 'U';
      last_slide = s[i];
    }
  }
  // One more step of the +0-0 return map from the last circle must stick on a circle in (1, R):
  // rejects a tail that is about to fall onto a circle R <= 1 (possible for large j).
  bool stuck = false;
  const double next = slip_return_radius(r.j, r.last_rolling_radius, &stuck);
  if (!(stuck && next > 1.0 && next < r.last_rolling_radius)) return 'U';
  return 'B';
}

namespace {
// Segment index containing tau (the last segment starting at or before tau).
std::size_t segment_of(const ExactResult& r, double tau) {
  const auto it = std::upper_bound(r.events.begin(), r.events.end(), tau,
                                   [](double t, const ExactEvent& e) { return t < e.tau; });
  return static_cast<std::size_t>(it - r.events.begin());
}
State eval_segment(const ExactResult& r, std::size_t k, double tau, int* mode) {
  State start;
  double t0;
  int m;
  if (k == 0) {
    start = r.initial;
    if (r.initial_mode == 0) start.z = 0.0;
    t0 = 0.0;
    m = r.initial_mode;
  } else {
    const ExactEvent& e = r.events[k - 1];
    start = {e.x, e.y, e.z};
    t0 = e.tau;
    m = e.mode_after;
  }
  if (mode) *mode = m;
  return mode_state(r.j, m, start, tau - t0);
}
}  // namespace

State state_at(const ExactResult& r, double tau) {
  if (!(tau >= 0.0 && tau <= r.final_tau)) throw InputError("rolling_disk::state_at: tau outside [0, final_tau]");
  return eval_segment(r, segment_of(r, tau), tau, nullptr);
}

std::vector<State> sample(const ExactResult& r, const std::vector<double>& taus, std::vector<int>* modes) {
  std::vector<State> out(taus.size());
  if (modes) modes->assign(taus.size(), 0);
  std::size_t k = 0;
  double prev = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < taus.size(); ++i) {
    const double tau = taus[i];
    if (!(tau >= 0.0 && tau <= r.final_tau)) throw InputError("rolling_disk::sample: tau outside [0, final_tau]");
    if (tau < prev) {
      k = segment_of(r, tau);
    } else {
      while (k < r.events.size() && r.events[k].tau <= tau) ++k;
    }
    prev = tau;
    out[i] = eval_segment(r, k, tau, modes ? &(*modes)[i] : nullptr);
  }
  return out;
}

std::vector<double> rolling_radii(const ExactResult& r) {
  std::vector<double> radii;
  if (r.initial_mode == 0) radii.push_back(std::hypot(r.initial.x, r.initial.y));
  for (const auto& e : r.events)
    if (e.kind == EventKind::stick) radii.push_back(std::hypot(e.x, e.y));
  return radii;
}

double slip_return_radius(double j, double R, bool* stuck) {
  if (!(R > 1.0)) throw InputError("rolling_disk::slip_return_radius: R must be > 1");
  // Slip at x = +1 (y = +sqrt(R^2 - 1)) into mode -1; the other side is the mirror image.
  const State st{1.0, std::sqrt((R - 1.0) * (R + 1.0)), 0.0};
  const SlidingHit hit = sliding_event_time(j, -1, st);
  const State ev = mode_state(j, -1, st, hit.tau);
  if (stuck) *stuck = std::fabs(ev.x) < 1.0 || (std::fabs(ev.x) == 1.0 && -ev.y <= kCornerVelocityTol);
  return std::hypot(ev.x, ev.y);
}

}  // namespace rollsim::rolling_disk
