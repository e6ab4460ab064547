#pragma once
/// \file What the contact engine's files share (contacts.cpp: the engine, its signals and events;
/// contact_modes.cpp: choosing the modes; contact_impact.cpp: the impact law): the per-thread room of the solves,
/// a mode's solution, the verdict on a candidate, and the LCP that narrows the candidates. Internal to the hybrid
/// layer: not installed, not included from outside src/hybrid.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/hybrid/force_distribution.hpp"
#include "rollsim/hybrid/lcp.hpp"

namespace rollsim {

namespace contact_detail {

inline constexpr const char* kModeNames[4] = {"open", "stick", "slide+", "slide-"};
/// Consistency is decided on values relative to their scale: below -kWeak a condition fails; above kStrict it
/// holds with a margin (two modes holding with a margin: forward motion is not unique).
inline constexpr double kWeak = 1e-8, kStrict = 1e-6;
/// A KKT matrix whose smallest pivot is below this, relative to the largest, has dependent rows: its forces are
/// chosen by the force distribution rule (force_distribution.hpp).
inline constexpr double kDependentPivot = 1e-10;

/// A number in messages (10 significant digits).
std::string num(double v);

inline double dot(const std::vector<double>& a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// The sliding sign of a contact mode (+1, -1; 0 for open and stick).
inline double slide_sign(int cm) { return cm == kSlidePlus ? 1.0 : cm == kSlideMinus ? -1.0 : 0.0; }
/// Whether a contact in mode cm presses on its surface (a contact without a gap always does).
inline bool is_closed(const ContactSpec& spec, int cm) { return !spec.unilateral || cm != kOpen; }
/// The bound of the friction force while sticking: the static coefficient (never below the kinetic one).
inline double stick_mu(const ContactTerms& c) { return std::max(c.mu, c.mu_static); }
/// A contact with friction whose coefficients are both zero here is frictionless: closed, it is in the one mode
/// kStick with no friction force (slide +, slide - and stick are one motion), and its stick witnesses never fire.
inline bool frictionless_here(const ContactSpec& spec, const ContactTerms& c) {
  return !spec.friction || (c.mu == 0 && c.mu_static <= 0);
}

/// Per-thread room for the solves: no heap allocation once the sizes are reached.
struct Work {
  std::size_t n = 0, nc = 0, nk = 0;
  Eigen::MatrixXd M, A;
  Eigen::VectorXd f, rhs, sol;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  std::vector<ContactTerms> terms;
  std::vector<ConstraintTerms> cterms;
  ForceDistributionProblem dp;
  ForceDistribution dist;
  void ensure(std::size_t n_, std::size_t nc_, std::size_t nk_) {
    if (n == n_ && nc == nc_ && nk == nk_) return;
    n = n_;
    nc = nc_;
    nk = nk_;
    cterms.assign(nk, ConstraintTerms{});
    for (auto& c : cterms) c.G.assign(n, 0.0);
    const auto N = static_cast<Eigen::Index>(n + 2 * nc + nk);
    M.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    A.resize(N, N);
    f.resize(static_cast<Eigen::Index>(n));
    rhs.resize(N);
    sol.resize(N);
    lu = Eigen::PartialPivLU<Eigen::MatrixXd>(N);
    terms.assign(nc, ContactTerms{});
    for (auto& t : terms) {
      t.Wn.assign(n, 0.0);
      t.Wt.assign(n, 0.0);
    }
  }
};

/// This thread's room, sized for n coordinates, nc contacts and nk constraints. ContactEngine::solve leaves the
/// model's M, f and terms of its (t, x) in it.
Work& work(std::size_t n, std::size_t nc, std::size_t nk);

/// A candidate's worst condition, relative to its scale, and what it is (for messages).
struct Verdict {
  double margin = std::numeric_limits<double>::infinity();
  std::string worst;
  bool singular = false;
  void check(double value, double scale, const std::string& what) {
    const double m = value / std::max(scale, std::numeric_limits<double>::min());
    if (m < margin) {
      margin = m;
      worst = what + " = " + num(value);
    }
  }
  bool weak() const { return !singular && margin >= -kWeak; }
  bool strict() const { return !singular && margin > kStrict; }
};

/// Odometer over per-contact candidate lists.
inline bool next(std::vector<std::size_t>& idx, const std::vector<std::vector<int>>& options) {
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (++idx[k] < options[k].size()) return true;
    idx[k] = 0;
  }
  return false;
}

/// The number of combinations of the per-contact candidate lists.
double combinations(const std::vector<std::vector<int>>& options);
/// The enumeration's size: the product of each contact's choices. Above kMaxCombinations (4^8: eight contacts
/// undecided at once) the exact enumeration is refused rather than run for minutes.
void check_combinations(const std::vector<std::vector<int>>& options, double t, const char* what);
/// Whether the LCP narrows the combinations first.
bool narrow_first(const ContactSettings& s, const std::vector<std::vector<int>>& options);

inline double max_abs(const Eigen::VectorXd& v) { return v.size() ? v.cwiseAbs().maxCoeff() : 0.0; }

/// One contact in the LCP: its normal row (or -1: a given normal force) and its tangential row (or -1: no
/// friction unknown, the friction being absent or sliding in a known direction).
struct LcpContact {
  std::size_t contact = 0;
  int normal = -1, tangential = -1;
};

/// M^-1 on the motions that keep the holonomic constraints held with the contacts (G q'' = b_c):
/// solve(X) = M^-1 X - M^-1 G^T S^+ G M^-1 X (S = G M^-1 G^T, S^+ its least-squares inverse, so that dependent
/// constraints do no harm), and the part of the motion that the constraints' own right side b_c causes,
/// particular(b_c) = M^-1 G^T S^+ b_c. Without constraints, M^-1 and 0.
class ConstrainedInverse {
 public:
  ConstrainedInverse(const Eigen::MatrixXd& M, const std::vector<ConstraintTerms>& constraints) : lu_(M) {
    const auto n = M.rows(), nk = static_cast<Eigen::Index>(constraints.size());
    G_.resize(nk, n);
    for (Eigen::Index j = 0; j < nk; ++j)
      G_.row(j) = Eigen::Map<const Eigen::RowVectorXd>(constraints[static_cast<std::size_t>(j)].G.data(), n);
    if (nk) {
      MiGt_ = lu_.solve(G_.transpose());
      S_.compute(G_ * MiGt_);
    }
  }
  Eigen::MatrixXd solve(const Eigen::MatrixXd& X) const {
    Eigen::MatrixXd Y = lu_.solve(X);
    if (G_.rows()) Y -= MiGt_ * S_.solve(G_ * Y);
    return Y;
  }
  Eigen::VectorXd particular(const Eigen::VectorXd& bc) const {
    return G_.rows() ? Eigen::VectorXd(MiGt_ * S_.solve(bc)) : Eigen::VectorXd::Zero(lu_.rows());
  }

 private:
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Eigen::MatrixXd G_, MiGt_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> S_;
};

/// G = R P C (P: M^-1 on the constrained motions), rows R and columns C given as n-vectors.
Eigen::MatrixXd delassus(const ConstrainedInverse& lu, const std::vector<Eigen::VectorXd>& rows,
                         const std::vector<Eigen::VectorXd>& cols);

/// Narrows each contact's options to those the LCP's solution allows (a contact whose options the solution
/// allows none of keeps all of them). Where that still leaves more than kNarrowedBudget combinations (many
/// contacts with a zero force and a zero rate at once, such as the unloaded feet of a statically indeterminate
/// support), each such contact but `keep_all` (the one whose event this is) takes one reading: with
/// `prefer_closed`, sticking (or closed) where the solution allows it, so that every touching contact shares the
/// load by the force distribution rule; else the solution's own, open (no impulse) where its force is zero.
/// Returns whether that reading was taken. Throws if the LCP solver finds no solution.
bool narrow_options(const PlanarContactProblem& p, const std::vector<LcpContact>& lc,
                    const std::vector<ContactSpec>& specs, const std::vector<int>& closed_slide,
                    std::vector<std::vector<int>>& options, int keep_all, const char* what,
                    const std::string& where, bool prefer_closed = false);

}  // namespace contact_detail

/// The accelerations, the contact forces and the contacts' kinematics in a mode.
struct ContactEngine::Solution {
  std::vector<double> a, lam_n, lam_t, gdot, gddot, wdot, lam_c;
  double rcond = 1;
  /// Dependent rows: the forces come from the distribution rule; best_margin is its s* (force_distribution.hpp).
  bool dependent = false;
  double best_margin = 0;
  void size(std::size_t n, std::size_t nc, std::size_t nk) {
    a.resize(n);
    lam_c.resize(nk);
    for (auto* v : {&lam_n, &lam_t, &gdot, &gddot, &wdot}) v->resize(nc);
  }
};

/// A candidate mode at an event: its verdict and how many contacts it changes.
struct ContactEngine::Choice {
  int mode = 0;
  contact_detail::Verdict verdict;
  int changes = 0;
};

}  // namespace rollsim
