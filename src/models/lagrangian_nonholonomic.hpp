#pragma once
// The user model in independent speeds (private to lagrangian_nonholonomic*.cpp; docs/nonholonomic.md): the rows as
// the runtime holds them, the evaluation at one state (the dependent rates, the saddle-point solve), and the system.
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

/// The run stops when sigma_min(A_D) / |A| falls below this: the dependent rates' error is then amplified by more
/// than its inverse.
constexpr double kSingularDependent = 1e-6;
/// The witness det(A_D) / |A|^m, terminal (a solver error) where it crosses zero.
constexpr const char* kSingularWitness = "dependent_speeds_singular";

/// A row as the runtime needs it (no GiNaC).
struct Row {
  std::string name, contact, source;
  Kind kind = Kind::Constraint;
  bool position = false;
};

/// What the system shares: the compiled model, the rows and the choice of the independent speeds.
struct Nh {
  std::shared_ptr<const Compiled> c;
  std::vector<Row> rows;
  std::vector<std::size_t> indep, dep;  ///< coordinate indices
  KernelFunction rows_k = nullptr, jac_k = nullptr;
  std::string dependent_text;  ///< "der_y, der_z": the dependent speeds
  /// The integrability test's verdict ("integrable", "nonholonomic", "not checked") and its sentence.
  std::string integrability, integrability_text;
  std::size_t m() const { return rows.size(); }
  std::size_t ni() const { return indep.size(); }
  /// States: q, u, the extra states of rs_extra, W_C.
  std::size_t size() const { return c->n + ni() + c->n_extra + 1; }
};

/// Per-thread evaluation at one (t, x).
struct Work {
  std::vector<double> xq, rows, jac;
  MatrixXd A, AD, AI, K;
  VectorXd b, c, g, rhs, sol, a, lambda, qd;
  Eigen::PartialPivLU<MatrixXd> luD, luK;
  double* in = nullptr;
  double det = 0;  ///< det(A_D) / |A|_F^m: changes sign where A_D is singular
};

/// This thread's evaluation room, sized for s.
Work& work(const Nh& s);
/// "a, b and c": the names of the rows `which`.
std::string row_list(const Nh& s, const std::vector<std::size_t>& which);
/// A and b (and, once the rates are in the inputs, c, g and dg/dq) from rs_nh at the inputs w.in.
void read_rows(const Nh& s, Work& w, bool with_rates);
/// Evaluates at (t, x): the full rates, the accelerations and the multipliers; w.in holds t, q, q', a. A singular
/// A_D (the dependent speeds no longer follow from the rows) is a SolverError naming the time and the rows.
void evaluate(const Nh& s, double t, const double* x, Work& w);
/// The system of the rows s from the state x0 (q, the independent rates, the energy states).
std::unique_ptr<HybridSystem> make_system(Nh s, std::vector<double> x0);

}  // namespace rollsim::lagrangian::detail::nh
