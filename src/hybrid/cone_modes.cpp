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
  std::vector<Eigen::VectorXd> cols;
  held.clear();
  for (std::size_t k = 0; k < p.nc; ++k) {
    const int cm = c.modes[k];
    if (cm == ConeEngine::kOpen) continue;
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    const auto dk = static_cast<Eigen::Index>(p.dim[k]);
    Eigen::VectorXd col = Eigen::VectorXd::Zero(m);
    col(o) = 1;
    if (cm == ConeEngine::kSlide)
      for (Eigen::Index i = 0; i < dk; ++i) col(o + 1 + i) = -p.mu[k] * c.d[k](i);
    cols.push_back(col);
    held.push_back(o);
    if (cm == ConeEngine::kStick)
      for (Eigen::Index i = 0; i < dk; ++i) {
        Eigen::VectorXd e = Eigen::VectorXd::Zero(m);
        e(o + 1 + i) = 1;
        cols.push_back(e);
        held.push_back(o + 1 + i);
      }
  }
  E.resize(m, static_cast<Eigen::Index>(cols.size()));
  for (std::size_t j = 0; j < cols.size(); ++j) E.col(static_cast<Eigen::Index>(j)) = cols[j];
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
    // many; the rule takes the least-squares one of least norm (Moore-Penrose), and the combination exists only
    // where the rows held are consistent (their residual at rounding level).
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(A);
    z = cod.solve(r);
    const double scale = r.cwiseAbs().maxCoeff() + A.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff();
    if (!((A * z - r).cwiseAbs().maxCoeff() <= 1e-9 * std::max(scale, std::numeric_limits<double>::min()))) return false;
    c.dependent = true;
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
/// cross(d, y_t) over 720 angles, each refined by bisection; 3-D: the best of a Fibonacci sphere of 2000
/// directions, refined by Gauss-Newton on the sphere.
std::vector<std::pair<double, Eigen::Vector3d>> directions_of(const Problem& p, Combination& c, std::size_t k) {
  std::vector<std::pair<double, Eigen::Vector3d>> found;
  Eigen::Vector3d across;
  double kappa = 0;
  if (p.dim[k] == 2) {
    constexpr int kSamples = 720;
    auto g = [&](double th, double& kap) {
      const Eigen::Vector3d d = direction(2, th, 0);
      if (!residual(p, c, k, d, across, kap)) return std::numeric_limits<double>::quiet_NaN();
      return d.x() * across.y() - d.y() * across.x();  // cross(d, y_t) = cross(d, across)
    };
    double th0 = 0, k0 = 0;
    double g0 = g(th0, k0);
    for (int i = 1; i <= kSamples; ++i) {
      const double th1 = 2 * kPi * i / kSamples;
      double k1 = 0;
      const double g1 = g(th1, k1);
      if (std::isfinite(g0) && std::isfinite(g1) && ((g0 <= 0 && g1 > 0) || (g0 >= 0 && g1 < 0) || g0 == 0)) {
        double a = th0, b = th1, ga = g0;
        if (g0 != 0)
          for (int it = 0; it < 200 && b - a > 1e-15; ++it) {
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
        if (residual(p, c, k, direction(2, th, 0), across, kr) && kr > 0) {
          bool dup = false;
          for (const auto& f : found) dup = dup || (f.second - direction(2, th, 0)).norm() < 1e-9;
          if (!dup) found.emplace_back(kr, direction(2, th, 0));
        }
      }
      th0 = th1;
      g0 = g1;
    }
  } else {
    constexpr int kSamples = 2000;
    std::vector<std::pair<double, Eigen::Vector3d>> best;
    const double golden = kPi * (3 - std::sqrt(5.0));
    for (int i = 0; i < kSamples; ++i) {
      const double z = 1 - 2 * (i + 0.5) / kSamples, rr = std::sqrt(1 - z * z), th = golden * i;
      const Eigen::Vector3d d(rr * std::cos(th), rr * std::sin(th), z);
      if (!residual(p, c, k, d, across, kappa) || !(kappa > 0)) continue;
      best.emplace_back(across.norm() / kappa, d);
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
      if (residual(p, c, k, d, across, kappa) && kappa > 0 && across.norm() <= 1e-9 * kappa) {
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

bool find_directions(const Problem& p, Combination& c, const std::vector<bool>& from_rest, bool& unique) {
  std::vector<std::size_t> ks;
  for (std::size_t k = 0; k < p.nc; ++k)
    if (from_rest[k] && c.modes[k] == ConeEngine::kSlide) ks.push_back(k);
  if (ks.empty()) return solve_combination(p, c);
  // The start: each direction along its free slip rate (no friction at those contacts).
  {
    Combination free = c;
    std::vector<double> mu0 = p.mu;
    Problem q = p;
    for (std::size_t k : ks) q.mu[k] = 0;
    if (solve_combination(q, free))
      for (std::size_t k : ks) {
        const auto o = static_cast<Eigen::Index>(p.off[k]);
        Eigen::Vector3d yt = Eigen::Vector3d::Zero();
        yt.head(static_cast<Eigen::Index>(p.dim[k])) = free.y.segment(o + 1, static_cast<Eigen::Index>(p.dim[k]));
        c.d[k] = yt.norm() > 0 ? Eigen::Vector3d(yt.normalized()) : Eigen::Vector3d::UnitX();
      }
  }
  for (int sweep = 0; sweep < (ks.size() == 1 ? 1 : 50); ++sweep) {
    double change = 0;
    for (std::size_t k : ks) {
      const auto found = directions_of(p, c, k);
      if (found.empty()) return false;
      if (found.size() > 1) unique = false;
      change = std::max(change, (found.front().second - c.d[k]).norm());
      c.d[k] = found.front().second;
    }
    if (!solve_combination(p, c)) return false;
    if (change < 1e-12) break;
  }
  return solve_combination(p, c);
}

bool choose(const Problem& p, const std::vector<std::vector<int>>& cands, const std::vector<int>& current,
            const std::vector<bool>& at_rest, const std::vector<bool>& from_rest_if_slide,
            const std::vector<Eigen::Vector3d>& known_dirs, Combination& chosen, ChoiceReport& report) {
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
    if (find_directions(p, c, from_rest, unique)) {
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
