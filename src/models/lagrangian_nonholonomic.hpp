#pragma once
// The user model in independent speeds (private to lagrangian_nonholonomic*.cpp; docs/nonholonomic.md): the rows as
// the runtime holds them, the evaluation at one state (the dependent rates, the saddle-point solve), and the system.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/symbolic/nonholonomic.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian::detail::nh {

using symbolic::NonholonomicKernels;
using Kind = symbolic::LagrangeModel::VelocityConstraint::Kind;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

/// The run stops when sigma_min of the row-normalised A_D falls below this (the dependent rates' error is then
/// amplified by more than its inverse): only where no choice of dependent speeds is better (the rows lose rank).
constexpr double kSingularDependent = 1e-6;
/// The dependent speeds are chosen again when sigma_min of the row-normalised A_D falls below this fraction of its
/// value at the start (the witness kRechooseWitness); the new choice is the best-conditioned one.
constexpr double kRechoose = 0.1;
/// The witness det(A_D) / |A|^m, terminal (a solver error) where it crosses zero: reached only when no other
/// choice of dependent speeds is better conditioned (the rows lose rank).
constexpr const char* kSingularWitness = "dependent_speeds_singular";
/// The witness cond(A_D) - tau (falling): the event re-chooses the dependent speeds, a mode change.
constexpr const char* kRechooseWitness = "dependent_speeds_changed";
/// Modes are choices of dependent speeds as bit sets over the coordinates (mode_of), for up to this many
/// coordinates; a model with more keeps its start's choice throughout.
constexpr std::size_t kMaxModeCoordinates = 30;

/// A row as the runtime needs it (no GiNaC).
struct Row {
  std::string name, contact, source;
  Kind kind = Kind::Constraint;
  bool position = false;
};

/// A choice of dependent speeds: the dependent and the independent coordinates (indices, increasing).
struct Choice {
  std::vector<std::size_t> dep, indep;
};

/// What the system shares: the compiled model, the rows and the start's choice of the independent speeds.
struct Nh {
  std::shared_ptr<const Compiled> c;
  std::vector<Row> rows;
  std::vector<std::size_t> indep, dep;  ///< coordinate indices: the start's choice
  std::size_t rank = 0;                 ///< rank of A at the start (< m: redundant, consistent rows)
  double tau = 0;                       ///< the re-choice threshold: kRechoose times the start's conditioning
  KernelFunction rows_k = nullptr, jac_k = nullptr;
  std::uint64_t id = 0;        ///< unique per system (make_system): the key of per-thread caches
  std::string dependent_text;  ///< "der_y, der_z": the start's dependent speeds
  /// The integrability test's verdict ("integrable", "nonholonomic", "not checked") and its sentence.
  std::string integrability, integrability_text;
  std::size_t m() const { return rows.size(); }
  std::size_t ni() const { return indep.size(); }
  bool redundant() const { return rank < m(); }
  bool has_modes() const { return c->n <= kMaxModeCoordinates; }
  /// States: q, u, the extra states of rs_extra, W_C.
  std::size_t size() const { return c->n + ni() + c->n_extra + 1; }
};

/// The mode of a choice: the coordinates whose role differs from the start's choice, as a bit set (bit i: coordinate
/// i; mode 0 is the start's choice), and the choice of a mode.
int mode_of(const Nh& s, const std::vector<std::size_t>& dep);
Choice choice_of(const Nh& s, int mode);
/// "der_y, der_z": the rates of the coordinates `dep`.
std::string rate_list(const Nh& s, const std::vector<std::size_t>& dep);
/// sigma_min of the columns `dep` of A with every row scaled to unit length (1: orthonormal rows; 0: singular).
double conditioning(const MatrixXd& A, const std::vector<std::size_t>& dep);
/// The dependent coordinates by a column-pivoted QR (Gram-Schmidt) of A, in the order chosen: the columns of
/// coordinates with prefer_dependent[i] first, then the others; as many as A's rank (a column counts while its
/// deflated norm exceeds 1e-9 of A's largest entry).
std::vector<std::size_t> pivoted_choice(const MatrixXd& A, const std::vector<bool>& prefer_dependent);
/// The best-conditioned choice of `rank` dependent coordinates at A (increasing): the pivoted QR's of the
/// row-normalised A, or, where there are at most 256 choices, the one of largest conditioning().
std::vector<std::size_t> best_choice(const MatrixXd& A, std::size_t rank);

/// Per-thread evaluation at one (t, x).
struct Work {
  std::vector<double> xq, rows, jac;
  MatrixXd A, AD, AI, K;
  VectorXd b, c, g, rhs, sol, a, lambda, qd;
  Eigen::PartialPivLU<MatrixXd> luD, luK;
  /// For redundant rows (rank A < m): least squares for the dependent rates, the minimum-norm saddle-point solution.
  Eigen::CompleteOrthogonalDecomposition<MatrixXd> codD, codK;
  bool redundant = false;
  double* in = nullptr;
  double det = 0;   ///< det(A_D) / |A|_F^m: changes sign where A_D is singular (square A_D only)
  double cond = 0;  ///< conditioning() of the evaluated choice
  /// A_D^-1 r (least squares for redundant rows); with no dependent rate (every row zero at the start: rank 0), the
  /// empty block: A_D has no columns and no decomposition is made of it.
  MatrixXd solve_D(const MatrixXd& r) const {
    if (AD.cols() == 0) return MatrixXd(0, r.cols());
    return redundant ? MatrixXd(codD.solve(r)) : MatrixXd(luD.solve(r));
  }
  MatrixXd solve_K(const MatrixXd& r) const { return redundant ? MatrixXd(codK.solve(r)) : MatrixXd(luK.solve(r)); }
};

/// This thread's evaluation room, sized for s.
Work& work(const Nh& s);
/// "a, b and c": the names of the rows `which`.
std::string row_list(const Nh& s, const std::vector<std::size_t>& which);
/// A and b (and, once the rates are in the inputs, c, g and dg/dq) from rs_nh at the inputs w.in.
void read_rows(const Nh& s, Work& w, bool with_rates);
/// Evaluates at (t, x) with the dependent speeds of `ch`: the full rates, the accelerations and the multipliers;
/// w.in holds t, q, q', a. A singular A_D (conditioning below kSingularDependent) is a SolverError naming the time
/// and the rows; so are redundant rows that stop agreeing.
void evaluate(const Nh& s, const Choice& ch, double t, const double* x, Work& w);
/// The same with the start's choice.
void evaluate(const Nh& s, double t, const double* x, Work& w);
/// The message of dependent speeds `ch` that no longer follow from the rows at t (rc: their conditioning; best: the
/// best choice's, which tells a step that passed over the re-choice from rows that lose rank).
std::string singular_message(const Nh& s, const Choice& ch, double t, double rc, double best);
/// The system of the rows s from the state x0 (q, the independent rates, the energy states).
std::unique_ptr<HybridSystem> make_system(Nh s, std::vector<double> x0);

}  // namespace rollsim::lagrangian::detail::nh
