/// \file The cone engine's contact problem in Delassus form (docs in cone_engine.hpp): a combination of modes solved
/// with its forces, the slip directions of contacts that start to slide from rest, the consistency of a combination,
/// and the choice among the candidates.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "cone_detail.hpp"

namespace rollsim::cone_detail {

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

namespace {

constexpr double kPi = 3.14159265358979323846;

/// The unknowns of a combination: per closed contact its normal force, per sticking one its tangential forces too.
/// P = E z + 0, with E mapping the unknowns to the stacked forces (a sliding contact's column (1, -mu d)).
void build_map(const Problem& p, const Combination& c, Eigen::MatrixXd& E, std::vector<Eigen::Index>& held) {
  const auto m = static_cast<Eigen::Index>(p.rows());
  held.clear();
  Eigen::Index u = 0;
  for (std::size_t k = 0; k < p.nc; ++k)
    if (c.modes[k] != ConeEngine::kOpen) u += 1 + (c.modes[k] == ConeEngine::kStick ? static_cast<Eigen::Index>(p.dim[k]) : 0);
  E.setZero(m, u);
  Eigen::Index j = 0;
  for (std::size_t k = 0; k < p.nc; ++k) {
    const int cm = c.modes[k];
    if (cm == ConeEngine::kOpen) continue;
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    const auto dk = static_cast<Eigen::Index>(p.dim[k]);
    E(o, j) = 1;
    if (cm == ConeEngine::kSlide)
      for (Eigen::Index i = 0; i < dk; ++i) E(o + 1 + i, j) = -p.mu[k] * c.d[k](i);
    held.push_back(o);
    ++j;
    if (cm == ConeEngine::kStick)
      for (Eigen::Index i = 0; i < dk; ++i) {
        E(o + 1 + i, j++) = 1;
        held.push_back(o + 1 + i);
      }
  }
}

/// The smallest cone margin of the forces P = E z of combination c: N_k of every closed contact and mu_s N_k - |P_t|
/// of every sticking one.
double split_margin(const Problem& p, const Combination& c, const Eigen::MatrixXd& E, const Eigen::VectorXd& z) {
  const Eigen::VectorXd P = E * z;
  double worst = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < p.nc; ++k) {
    if (c.modes[k] == ConeEngine::kOpen) continue;
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    worst = std::min(worst, P(o));
    if (c.modes[k] == ConeEngine::kStick)
      worst = std::min(worst, p.mu_s[k] * P(o) - P.segment(o + 1, static_cast<Eigen::Index>(p.dim[k])).norm());
  }
  return worst;
}

/// The forces z0 + Z alpha of largest split_margin (a concave function of alpha): Nelder and Mead's simplex search
/// from alpha = 0 (the least-norm split), its first steps of the forces' size.
Eigen::VectorXd best_split(const Problem& p, const Combination& c, const Eigen::MatrixXd& E, const Eigen::VectorXd& z0,
                           const Eigen::MatrixXd& Z) {
  const auto dim = Z.cols();
  auto f = [&](const Eigen::VectorXd& a) { return -split_margin(p, c, E, z0 + Z * a); };
  const double step = std::max(z0.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  std::vector<Eigen::VectorXd> x(static_cast<std::size_t>(dim + 1), Eigen::VectorXd::Zero(dim));
  for (Eigen::Index i = 0; i < dim; ++i) x[static_cast<std::size_t>(i + 1)](i) = step;
  std::vector<double> fx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) fx[i] = f(x[i]);
  for (int it = 0; it < 200 * static_cast<int>(dim + 1); ++it) {
    std::vector<std::size_t> order(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fx[a] < fx[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[order.size() - 2];
    if (std::abs(fx[worst] - fx[best]) <= 1e-15 * (std::abs(fx[best]) + step)) break;
    Eigen::VectorXd centre = Eigen::VectorXd::Zero(dim);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (i != worst) centre += x[i];
    centre /= static_cast<double>(dim);
    const Eigen::VectorXd xr = centre + (centre - x[worst]);
    const double fr = f(xr);
    if (fr < fx[best]) {
      const Eigen::VectorXd xe = centre + 2 * (centre - x[worst]);
      const double fe = f(xe);
      x[worst] = fe < fr ? xe : xr;
      fx[worst] = std::min(fe, fr);
    } else if (fr < fx[second]) {
      x[worst] = xr;
      fx[worst] = fr;
    } else {
      const Eigen::VectorXd xc = centre + 0.5 * (x[worst] - centre);
      const double fc = f(xc);
      if (fc < fx[worst]) {
        x[worst] = xc;
        fx[worst] = fc;
      } else {
        for (std::size_t i = 0; i < x.size(); ++i)
          if (i != best) {
            x[i] = x[best] + 0.5 * (x[i] - x[best]);
            fx[i] = f(x[i]);
          }
      }
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (fx[i] < fx[best]) best = i;
  // Only a better split than the least-norm one replaces it.
  return fx[best] < f(Eigen::VectorXd::Zero(dim)) ? Eigen::VectorXd(z0 + Z * x[best]) : z0;
}

}  // namespace

bool solve_combination(const Problem& p, Combination& c) {
  Eigen::MatrixXd E;
  std::vector<Eigen::Index> held;
  build_map(p, c, E, held);
  const auto u = static_cast<Eigen::Index>(held.size());
  c.solved = false;
  c.dependent = false;
  if (u == 0) {
    c.P = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(p.rows()));
    c.y = p.b;
    c.solved = true;
    return true;
  }
  const Eigen::MatrixXd GE = p.G * E;
  Eigen::MatrixXd A(u, u);
  Eigen::VectorXd r(u);
  for (Eigen::Index i = 0; i < u; ++i) {
    A.row(i) = GE.row(held[static_cast<std::size_t>(i)]);
    r(i) = p.target(held[static_cast<std::size_t>(i)]) - p.b(held[static_cast<std::size_t>(i)]);
  }
  Eigen::PartialPivLU<Eigen::MatrixXd> lu(A);
  const auto piv = lu.matrixLU().diagonal().cwiseAbs();
  Eigen::VectorXd z;
  if (piv.minCoeff() > 1e-10 * std::max(piv.maxCoeff(), std::numeric_limits<double>::min())) {
    z = lu.solve(r);
  } else {
    // Dependent rows (a rigid body held at two or more points is statically indeterminate): the forces are one of
    // many, z0 + Z alpha (Z spanning the null space of A), all giving the same motion. The combination exists only
    // where the rows held are consistent (their residual at rounding level). The rule: the least-norm split
    // (Moore-Penrose) where it keeps every cone; else the split that keeps the contacts farthest inside their cones
    // (the largest of the smallest margins N and mu_s N - |P_t|, the planar engine's force distribution rule in the
    // cone's terms), so that a combination is consistent where some split keeps every cone.
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(A);
    z = cod.solve(r);
    const double scale = r.cwiseAbs().maxCoeff() + A.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff();
    if (!((A * z - r).cwiseAbs().maxCoeff() <= 1e-9 * std::max(scale, std::numeric_limits<double>::min()))) return false;
    c.dependent = true;
    if (c.search_split && !(split_margin(p, c, E, z) > 0)) {
      const Eigen::FullPivLU<Eigen::MatrixXd> kernel_lu(A);
      const Eigen::MatrixXd Z = kernel_lu.kernel();
      if (Z.cols() > 0 && Z.norm() > 0) z = best_split(p, c, E, z, Z);
    }
  }
  if (!z.allFinite()) return false;
  c.P = E * z;
  c.y = p.G * c.P + p.b;
  c.solved = true;
  return true;
}

double combination_margin(const Problem& p, const Combination& c, const std::vector<bool>& at_rest,
                          const std::vector<bool>& from_rest, std::string* why) {
  // Scales: forces by the largest force of the combination or what the free rates would need; rates by the
  // largest free or resulting rate.
  double fs = std::numeric_limits<double>::min(), as = std::numeric_limits<double>::min();
  for (Eigen::Index i = 0; i < c.P.size(); ++i) fs = std::max(fs, std::abs(c.P(i)));
  for (Eigen::Index i = 0; i < p.b.size(); ++i) as = std::max({as, std::abs(p.b(i)), std::abs(c.y(i))});
  const double gmax = std::max(p.G.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  fs = std::max(fs, as / gmax);
  as = std::max(as, fs * gmax);
  double worst = std::numeric_limits<double>::infinity();
  auto cond = [&](double value, double scale, const std::string& what) {
    const double m = value / scale;
    if (m < worst) {
      worst = m;
      if (why) *why = what + " = " + num(value);
    }
  };
  for (std::size_t k = 0; k < p.nc; ++k) {
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    const auto dk = static_cast<Eigen::Index>(p.dim[k]);
    const int cm = c.modes[k];
    if (cm == ConeEngine::kOpen) {
      if (at_rest[k]) cond(c.y(o), as, "contact " + std::to_string(k) + ": the gap's acceleration g''");
      continue;
    }
    const double N = c.P(o);
    cond(N, fs, "contact " + std::to_string(k) + ": the normal force N");
    if (cm == ConeEngine::kStick) {
      const double Pt = c.P.segment(o + 1, dk).norm();
      cond(p.mu_s[k] * N - Pt, fs, "contact " + std::to_string(k) + ": mu_s N - |P|");
    } else if (from_rest[k] && p.mu[k] > 0) {
      const Eigen::VectorXd yt = c.y.segment(o + 1, dk);
      const Eigen::VectorXd d = c.d[k].head(dk);
      const double kappa = d.dot(yt);
      cond(kappa, as, "contact " + std::to_string(k) + ": the slip's rate along its direction kappa");
      // The direction must be the slip's: its rate has no part across it (a check, not a margin: it is zero when
      // it holds).
      const double across = (yt - kappa * d).norm();
      if (across > kWeak * as) cond(-across, as, "contact " + std::to_string(k) + ": the slip rate across the direction");
    }
  }
  return worst;
}

namespace {

/// The unit direction of generalized slip from coordinates: 2-D by the angle th; 3-D by (th, ph) on the sphere.
Eigen::Vector3d direction(std::size_t dim, double th, double ph) {
  if (dim == 2) return {std::cos(th), std::sin(th), 0};
  return {std::cos(ph) * std::cos(th), std::cos(ph) * std::sin(th), std::sin(ph)};
}

/// The slip rate's part across d and along d for contact k with direction d (others as in c).
bool residual(const Problem& p, Combination& c, std::size_t k, const Eigen::Vector3d& d, Eigen::Vector3d& across,
              double& kappa) {
  c.d[k] = d;
  if (!solve_combination(p, c)) return false;
  const auto o = static_cast<Eigen::Index>(p.off[k]);
  const auto dk = static_cast<Eigen::Index>(p.dim[k]);
  Eigen::Vector3d yt = Eigen::Vector3d::Zero();
  yt.head(dk) = c.y.segment(o + 1, dk);
  kappa = d.dot(yt);
  across = yt - kappa * d;
  return true;
}

/// The consistent directions of contact k (others fixed), by decreasing kappa. 2-D: the sign changes of
/// cross(d, y_t) over 256 angles, each refined by bisection; 3-D: the best of a Fibonacci sphere of 600
/// directions, refined by Gauss-Newton on the sphere.
std::vector<std::pair<double, Eigen::Vector3d>> directions_of(const Problem& p, Combination& c, std::size_t k) {
  std::vector<std::pair<double, Eigen::Vector3d>> found;
  Eigen::Vector3d across;
  double kappa = 0;
  if (p.dim[k] == 2) {
    constexpr int kSamples = 256;
    auto g = [&](double th, double& kap) {
      const Eigen::Vector3d d = direction(2, th, 0);
      if (!residual(p, c, k, d, across, kap)) return std::numeric_limits<double>::quiet_NaN();
      return d.x() * across.y() - d.y() * across.x();  // cross(d, y_t) = cross(d, across)
    };
    // The samples go round the circle once, the last interval closing on the first sample's value: a root at the
    // angle 0 (the slip along the first tangent, the planar case) is then found whichever side of 0 rounding puts
    // it, since g(0) and g(2 pi) need not agree in sign when both are at rounding level.
    std::vector<double> vals(kSamples);
    for (int i = 0; i < kSamples; ++i) {
      double kap = 0;
      vals[static_cast<std::size_t>(i)] = g(2 * kPi * i / kSamples, kap);
    }
    for (int i = 0; i < kSamples; ++i) {
      const double th0 = 2 * kPi * i / kSamples, th1 = 2 * kPi * (i + 1) / kSamples;
      const double g0 = vals[static_cast<std::size_t>(i)], g1 = vals[static_cast<std::size_t>((i + 1) % kSamples)];
      if (!std::isfinite(g0) || !std::isfinite(g1) || !((g0 <= 0 && g1 > 0) || (g0 >= 0 && g1 < 0) || g0 == 0)) continue;
      double a = th0, b = th1, ga = g0;
      if (g0 != 0)
        for (int it = 0; it < 200 && b - a > 4e-16 * (1 + std::abs(a)); ++it) {
          const double mid = 0.5 * (a + b);
          double km = 0;
          const double gm = g(mid, km);
          if (!std::isfinite(gm)) break;
          if ((ga <= 0) == (gm <= 0)) {
            a = mid;
            ga = gm;
          } else {
            b = mid;
          }
        }
      const double th = g0 == 0 ? th0 : 0.5 * (a + b);
      double kr = 0;
      // Every root is kept, kappa of either sign: at the cone's edge (the instant sticking stops holding) the
      // consistent direction has kappa = 0 up to rounding; combination_margin judges the sign.
      if (residual(p, c, k, direction(2, th, 0), across, kr)) {
        bool dup = false;
        for (const auto& f : found) dup = dup || (f.second - direction(2, th, 0)).norm() < 1e-9;
        if (!dup) found.emplace_back(kr, direction(2, th, 0));
      }
    }
  } else {
    constexpr int kSamples = 600;
    const double yscale = std::max(p.b.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
    std::vector<std::pair<double, Eigen::Vector3d>> best;
    const double golden = kPi * (3 - std::sqrt(5.0));
    for (int i = 0; i < kSamples; ++i) {
      const double z = 1 - 2 * (i + 0.5) / kSamples, rr = std::sqrt(1 - z * z), th = golden * i;
      const Eigen::Vector3d d(rr * std::cos(th), rr * std::sin(th), z);
      if (!residual(p, c, k, d, across, kappa)) continue;
      best.emplace_back(std::atan2(across.norm(), kappa), d);  // the angle between d and its slip rate
    }
    std::sort(best.begin(), best.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t s = 0; s < std::min<std::size_t>(best.size(), 8); ++s) {
      Eigen::Vector3d d = best[s].second;
      for (int it = 0; it < 60; ++it) {
        if (!residual(p, c, k, d, across, kappa)) break;
        if (across.norm() <= 1e-14 * std::max(std::abs(kappa), 1e-300)) break;
        // Gauss-Newton on the tangent plane of the sphere at d, by differences.
        Eigen::Vector3d e1 = d.unitOrthogonal(), e2 = d.cross(e1);
        const double h = 1e-7;
        Eigen::Vector3d a1, a2;
        double k1, k2;
        if (!residual(p, c, k, (d + h * e1).normalized(), a1, k1) || !residual(p, c, k, (d + h * e2).normalized(), a2, k2))
          break;
        Eigen::Matrix<double, 3, 2> J;
        J.col(0) = (a1 - across) / h;
        J.col(1) = (a2 - across) / h;
        const Eigen::Vector2d step = J.colPivHouseholderQr().solve(-across);
        if (!step.allFinite()) break;
        d = (d + step(0) * e1 + step(1) * e2).normalized();
      }
      if (residual(p, c, k, d, across, kappa) && across.norm() <= 1e-9 * std::max(std::abs(kappa), yscale)) {
        bool dup = false;
        for (const auto& f : found) dup = dup || (f.second - d).norm() < 1e-6;
        if (!dup) found.emplace_back(kappa, d);
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  return found;
}

}  // namespace

namespace {

/// The tangent basis of the sphere of directions at d: one vector for a 2-D slip, two for a 3-D one.
std::vector<Eigen::Vector3d> tangents(std::size_t dim, const Eigen::Vector3d& d) {
  if (dim == 2) return {Eigen::Vector3d(-d.y(), d.x(), 0)};
  const Eigen::Vector3d e1 = d.unitOrthogonal();
  return {e1, d.cross(e1)};
}

/// The joint residual of the directions of the contacts ks: each slip rate's parts across its direction. false
/// where the combination is singular. `kappa`: the rates along the directions.
bool joint_residual(const Problem& p, Combination& c, const std::vector<std::size_t>& ks, Eigen::VectorXd& r,
                    std::vector<double>& kappa) {
  if (!solve_combination(p, c)) return false;
  std::vector<double> parts;
  kappa.clear();
  for (std::size_t k : ks) {
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    Eigen::Vector3d yt = Eigen::Vector3d::Zero();
    yt.head(static_cast<Eigen::Index>(p.dim[k])) = c.y.segment(o + 1, static_cast<Eigen::Index>(p.dim[k]));
    kappa.push_back(c.d[k].dot(yt));
    // The angles between the direction and the slip rate, in each tangent direction: scale-free, so that a contact
    // whose slip rate is small weighs as much as the others, and zero only where kappa > 0.
    const Eigen::Vector3d across = yt - kappa.back() * c.d[k];
    for (const auto& e : tangents(p.dim[k], c.d[k])) parts.push_back(std::atan2(e.dot(across), kappa.back()));
  }
  r = Eigen::Map<Eigen::VectorXd>(parts.data(), static_cast<Eigen::Index>(parts.size()));
  return r.allFinite();
}

/// Newton's method on the directions of several contacts at once (a difference Jacobian in their tangent planes,
/// the step halved until the residual falls), from the directions in c. Returns whether it converged.
bool joint_newton(const Problem& p, Combination& c, const std::vector<std::size_t>& ks) {
  Eigen::VectorXd r, r1;
  std::vector<double> kappa;
  if (!joint_residual(p, c, ks, r, kappa)) return false;
  for (int it = 0; it < 60; ++it) {
    if (r.norm() <= 1e-13) return true;
    std::vector<std::pair<std::size_t, Eigen::Vector3d>> params;
    for (std::size_t k : ks)
      for (const auto& e : tangents(p.dim[k], c.d[k])) params.emplace_back(k, e);
    Eigen::MatrixXd J(r.size(), static_cast<Eigen::Index>(params.size()));
    const double h = 1e-7;
    const Combination base = c;
    for (std::size_t j = 0; j < params.size(); ++j) {
      Combination probe = base;
      probe.d[params[j].first] = (base.d[params[j].first] + h * params[j].second).normalized();
      if (!solve_combination(p, probe)) return false;
      Eigen::Index row = 0;
      for (std::size_t k : ks) {
        const auto o = static_cast<Eigen::Index>(p.off[k]);
        Eigen::Vector3d yt = Eigen::Vector3d::Zero();
        yt.head(static_cast<Eigen::Index>(p.dim[k])) = probe.y.segment(o + 1, static_cast<Eigen::Index>(p.dim[k]));
        // The probe's own direction against its slip rate (the part across it), in the base's tangent basis.
        const Eigen::Vector3d& d = probe.d[k];
        const Eigen::Vector3d across = yt - d.dot(yt) * d;
        for (const auto& e : tangents(p.dim[k], base.d[k])) {
          J(row, static_cast<Eigen::Index>(j)) = (std::atan2(e.dot(across), d.dot(yt)) - r(row)) / h;
          ++row;
        }
      }
    }
    const Eigen::VectorXd step = J.colPivHouseholderQr().solve(-r);
    if (!step.allFinite()) return false;
    double t = 1;
    bool better = false;
    for (int half = 0; half < 30 && !better; ++half, t *= 0.5) {
      c = base;
      for (std::size_t j = 0; j < params.size(); ++j)
        c.d[params[j].first] = (c.d[params[j].first] + t * step(static_cast<Eigen::Index>(j)) * params[j].second).normalized();
      better = joint_residual(p, c, ks, r1, kappa) && r1.norm() < r.norm();
    }
    if (!better) {
      c = base;
      return joint_residual(p, c, ks, r, kappa) && r.norm() <= 1e-9;
    }
    r = r1;
  }
  return r.norm() <= 1e-9;
}

}  // namespace

bool find_directions(const Problem& p, Combination& c, const std::vector<bool>& from_rest, bool& unique) {
  std::vector<std::size_t> ks;
  for (std::size_t k = 0; k < p.nc; ++k)
    if (from_rest[k] && c.modes[k] == ConeEngine::kSlide) ks.push_back(k);
  if (ks.empty()) return solve_combination(p, c);
  // The search iterates on the least-norm split; the final solve searches it (Combination::search_split).
  struct SplitAtEnd {  // on again however the search ends
    Combination& c;
    ~SplitAtEnd() { c.search_split = true; }
  } at_end{c};
  c.search_split = false;
  if (ks.size() == 1) {
    // One contact: every consistent direction, found by a search over all of them.
    const auto found = directions_of(p, c, ks.front());
    if (found.empty()) return false;
    if (std::count_if(found.begin(), found.end(), [](const auto& f) { return f.first > 0; }) > 1) unique = false;
    c.d[ks.front()] = found.front().second;
    c.search_split = true;
    return solve_combination(p, c);
  }
  // Several contacts start to slide together: their directions are coupled. Newton's method on all of them at once,
  // from the directions of their free slip rates (no friction at those contacts), then from a few more starts, up
  // to the first root where every contact's slip grows along its direction (kappa > 0).
  std::vector<std::vector<Eigen::Vector3d>> starts;
  {
    Combination free = c;
    Problem q = p;
    for (std::size_t k : ks) q.mu[k] = 0;
    std::vector<Eigen::Vector3d> d = c.d;
    if (solve_combination(q, free))
      for (std::size_t k : ks) {
        const auto o = static_cast<Eigen::Index>(p.off[k]);
        Eigen::Vector3d yt = Eigen::Vector3d::Zero();
        yt.head(static_cast<Eigen::Index>(p.dim[k])) = free.y.segment(o + 1, static_cast<Eigen::Index>(p.dim[k]));
        d[k] = yt.norm() > 0 ? Eigen::Vector3d(yt.normalized()) : Eigen::Vector3d::UnitX();
      }
    starts.push_back(d);
    // Further starts: a grid of directions turned from the free ones, contact by contact: 8 angles each for two
    // contacts, 4 for three, 2 beyond (at most 64 starts in all for up to six contacts).
    const int per = ks.size() == 2 ? 8 : ks.size() == 3 ? 4 : 2;
    long total = 1;
    for (std::size_t i = 0; i < ks.size() && total <= 64; ++i) total *= per;
    total = std::min<long>(total, 64);
    for (long s = 1; s < total; ++s) {
      std::vector<Eigen::Vector3d> e = d;
      long code = s;
      for (std::size_t k : ks) {
        const double a = 2 * kPi / per * static_cast<double>(code % per);
        code /= per;
        const Eigen::Vector3d t = tangents(p.dim[k], d[k]).front();
        e[k] = (std::cos(a) * d[k] + std::sin(a) * t).normalized();
      }
      starts.push_back(e);
    }
  }
  std::vector<Combination> roots;
  for (const auto& d : starts) {
    Combination trial = c;
    trial.d = d;
    if (!joint_newton(p, trial, ks)) continue;
    Eigen::VectorXd r;
    std::vector<double> kappa;
    if (!joint_residual(p, trial, ks, r, kappa)) continue;
    // kappa of either sign is kept (at the cone's edge it is 0 up to rounding): combination_margin judges it.
    bool dup = false;
    for (const auto& root : roots) {
      double diff = 0;
      for (std::size_t k : ks) diff = std::max(diff, (root.d[k] - trial.d[k]).norm());
      dup = dup || diff < 1e-6;
    }
    if (!dup) roots.push_back(trial);
    // The first root whose slips all grow is taken (the starts in their order, the free directions first): whether
    // it is the only one is not checked, which would cost every start at every combination of every event.
    if (std::all_of(kappa.begin(), kappa.end(), [](double k) { return k > 0; })) break;
  }
  if (roots.empty()) return false;
  if (roots.size() > 1) unique = false;
  c = roots.front();
  c.search_split = true;
  return solve_combination(p, c);
}

bool choose(const Problem& p, const std::vector<std::vector<int>>& cands, const std::vector<int>& current,
            const std::vector<bool>& at_rest, const std::vector<bool>& from_rest_if_slide,
            const std::vector<Eigen::Vector3d>& known_dirs, Combination& chosen, ChoiceReport& report) {
  double combinations = 1;
  for (const auto& c : cands) combinations *= static_cast<double>(c.size());
  if (combinations > kMaxCombinations) {
    report.why = num(combinations) + " combinations of the undecided contacts' modes: the enumeration takes at most " +
                 num(kMaxCombinations) + " (six contacts at rest at once); let fewer contacts touch at once";
    return false;
  }
  std::vector<std::size_t> idx(p.nc, 0);
  struct Entry {
    Combination c;
    double margin;
    int changes;
    int static_sticks;
  };
  std::vector<Entry> strict, weak;
  Entry nearest{{}, -std::numeric_limits<double>::infinity(), 0, 0};
  std::string nearest_why;
  for (;;) {
    Combination c;
    c.modes.resize(p.nc);
    c.d = known_dirs;
    std::vector<bool> from_rest(p.nc, false);
    int changes = 0, static_sticks = 0;
    for (std::size_t k = 0; k < p.nc; ++k) {
      c.modes[k] = cands[k][idx[k]];
      changes += c.modes[k] != current[k];
      from_rest[k] = c.modes[k] == ConeEngine::kSlide && from_rest_if_slide[k];
      static_sticks += c.modes[k] == ConeEngine::kStick && p.mu_s[k] > p.mu[k];
    }
    ++report.candidates;
    bool unique = true;
    const bool fd = find_directions(p, c, from_rest, unique);
    if (fd) {
      std::string why;
      const double m = combination_margin(p, c, at_rest, from_rest, &why);
      if (m >= -kWeak) {
        ++report.consistent;
        if (!unique) report.directions_unique = false;
        (m >= kStrict ? strict : weak).push_back({c, m, changes, static_sticks});
      }
      if (m > nearest.margin) {
        nearest = {c, m, changes, static_sticks};
        nearest_why = why;
      }
    }
    std::size_t k = 0;
    while (k < p.nc && ++idx[k] == cands[k].size()) idx[k++] = 0;
    if (k == p.nc) break;
  }
  report.strict = strict.size();
  if (strict.size() > 1) {
    // Coulomb's law with static friction: at rest below mu_s N, a contact sticks.
    int most = 0;
    for (const auto& e : strict) most = std::max(most, e.static_sticks);
    strict.erase(std::remove_if(strict.begin(), strict.end(), [&](const Entry& e) { return e.static_sticks < most; }),
                 strict.end());
  }
  if (strict.size() > 1) {
    report.why = "more than one strictly consistent combination of modes: forward motion is not unique (the "
                 "Painleve paradox)";
    return false;
  }
  if (strict.size() == 1) {
    chosen = strict.front().c;
    return true;
  }
  if (!weak.empty()) {
    std::sort(weak.begin(), weak.end(), [](const Entry& a, const Entry& b) {
      return a.changes != b.changes ? a.changes < b.changes : a.margin > b.margin;
    });
    chosen = weak.front().c;
    return true;
  }
  report.why = "no combination of modes is consistent (the Painleve paradox: no contact force can stop a contact "
               "from entering the surface); the nearest breaks " + nearest_why;
  return false;
}

}  // namespace rollsim::cone_detail
