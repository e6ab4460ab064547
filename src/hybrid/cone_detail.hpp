#pragma once
/// \file What the cone engine's files share (cone_engine.cpp: the engine, its signals, witnesses and events;
/// cone_modes.cpp: the contact problem in Delassus form, the choice of modes and the impacts). Internal to the
/// hybrid layer.
#include <algorithm>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/hybrid/cone_engine.hpp"

namespace rollsim::cone_detail {

/// Conditions hold strictly above kStrict and fail below -kWeak, relative to their scales (as the planar engine).
inline constexpr double kWeak = 1e-8, kStrict = 1e-6;
inline constexpr const char* kModeNames[3] = {"open", "stick", "slide"};
/// The most combinations of modes the choice enumerates (3^6: six contacts at rest at once); above, a SolverError.
/// Each combination with contacts that start to slide from rest searches their directions, so the enumeration's
/// cost grows fast; the planar engine's LCP narrowing has no counterpart here yet.
inline constexpr double kMaxCombinations = 729;

/// The contact problem in Delassus form at one instant: stacked rows per contact (1 normal, then dim tangential),
/// y = G P + b, with P the stacked contact forces (or impulses). Each contact in a mode holds some rows at targets:
/// closed (stick or slide): y_n = target_n; stick: y_t = target_t.
struct Problem {
  std::size_t nc = 0;
  std::vector<std::size_t> off, dim;  ///< the first row of contact k, and its tangential dimension (2 or 3)
  Eigen::MatrixXd G;
  Eigen::VectorXd b, target;
  std::vector<double> mu, mu_s;
  std::size_t rows() const { return off.empty() ? 0 : off.back() + 1 + dim.back(); }
};

/// One combination of modes with its forces: modes[k] in {open, stick, slide}; d[k] the slide direction (unit,
/// dim[k] components used); P and y the stacked forces and rates.
struct Combination {
  std::vector<int> modes;
  std::vector<Eigen::Vector3d> d;
  Eigen::VectorXd P, y;
  bool solved = false;
  bool dependent = false;  ///< its rows were dependent: the forces are one split of many
  /// Whether dependent rows search the split farthest inside the cones (solve_combination); the direction search
  /// turns it off while it iterates (the rates it solves for do not depend on the split where the sliding contacts
  /// that share dependent rows have one friction coefficient) and on for its final solve.
  bool search_split = true;
};

/// Solves the combination's linear problem with its directions fixed. Returns false where it is singular.
bool solve_combination(const Problem& p, Combination& c);

/// The margins of a solved combination: the smallest scaled margin of its conditions (>= kStrict: strictly
/// consistent; >= -kWeak: consistent), given which contacts start to slide from rest (from_rest[k]) and which are
/// at rest and may open (at_rest[k]: an open contact must then not approach).
double combination_margin(const Problem& p, const Combination& c, const std::vector<bool>& at_rest,
                          const std::vector<bool>& from_rest, std::string* why = nullptr);

/// Finds the directions of the contacts that start to slide from rest (from_rest[k]) so that each one's slip rate
/// is kappa d with kappa >= 0, the others' directions fixed; Gauss-Seidel over those contacts, each by a search over
/// its directions (2-D: the angle sampled and refined; 3-D: a sphere of directions sampled and refined by Newton).
/// Returns false where no consistent direction was found. `unique` is cleared where a contact had several.
bool find_directions(const Problem& p, Combination& c, const std::vector<bool>& from_rest, bool& unique);

/// The best combination among the candidates (cands[k]: the modes allowed for contact k), by the engine's rules.
/// Returns false (with `why`) where none is consistent or several are strictly; `chosen` the combination.
struct ChoiceReport {
  std::size_t candidates = 0, consistent = 0, strict = 0;
  bool directions_unique = true;
  std::string why;
};
bool choose(const Problem& p, const std::vector<std::vector<int>>& cands, const std::vector<int>& current,
            const std::vector<bool>& at_rest, const std::vector<bool>& from_rest_if_slide,
            const std::vector<Eigen::Vector3d>& known_dirs, Combination& chosen, ChoiceReport& report);

std::string num(double v);

/// rho = 2R/3: the generalized slip's spin component is rho w_n, the force's tau_n / rho (cone_engine.hpp).
inline constexpr double kSpinLever = 2.0 / 3.0;
inline bool frictionless(const ConeTerms& c) { return c.mu == 0 && c.mu_static <= 0; }
inline double stick_bound(const ConeTerms& c) { return std::max(c.mu, c.mu_static); }

/// Per-thread room of the solves: the model's M, f and terms, the contact rows J, M^-1 J^T, M^-1 f and the problem.
struct ConeWork {
  std::size_t n = 0, nc = 0;
  Eigen::MatrixXd M, J, MiJt;
  Eigen::VectorXd f, Mif;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  std::vector<ConeTerms> terms;
  Problem p;
  void ensure(std::size_t n_, std::size_t nc_) {
    if (n == n_ && nc == nc_) return;
    n = n_;
    nc = nc_;
    M.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    f.resize(static_cast<Eigen::Index>(n));
    terms.assign(nc, ConeTerms{});
    for (auto& t : terms) {
      t.Wn.assign(n, 0.0);
      t.Wt1.assign(n, 0.0);
      t.Wt2.assign(n, 0.0);
      t.Ws.assign(n, 0.0);
    }
  }
};
ConeWork& cone_work(std::size_t n, std::size_t nc);

/// Fills w's Delassus problem at (t, x) from the model's M, f and terms already in w: the rows J (per contact W_n,
/// then the generalized tangential rows), G = J M^-1 J^T, b = J M^-1 f + the biases, and the targets of the held
/// rows (g'' = -2 a g' - a^2 g, v' = -a v).
void build_problem(ConeWork& w, const std::vector<ConeContactSpec>& specs, const double* x, std::size_t n, double alpha);

}  // namespace rollsim::cone_detail
