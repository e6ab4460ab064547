#pragma once
/// \file The forces (or impulses) of a set of contact and constraint rows that may be dependent: statically
/// indeterminate supports (a ladder between a floor and a wall with friction at both, a plank on many feet, a rod
/// landing flat), where the motion is unique but the forces are not.
///
/// The problem: accelerations a and multipliers lambda with
///
///   M a = f + C lambda,   J a = b,   margins P lambda + p0 >= 0,
///
/// M (n x n) invertible, J (m x n) the rows held, C (n x m) the directions their multipliers act in (J^T, but for a
/// sliding contact W_n - s mu W_t), and P, p0 the cone conditions (lambda_N >= 0 for a closed contact,
/// mu lambda_N -+ lambda_T >= 0 for a sticking one). Eliminating a: G lambda = d with G = J M^-1 C,
/// d = b - J M^-1 f. Where G is singular the solutions form lambda0 + N z (lambda0 the least-norm solution, N a basis
/// of G's null space), and the rule that picks one is:
///
///   lambda0, where every margin of it is at least kInteriorMargin F (F: the force scale): the least-norm
///            distribution, strictly inside every cone, so that rounding cannot leave the mode;
///   else the distribution that maximises the smallest margin (a linear programme, GLPK's simplex method; where
///            several do, the one the simplex method ends on). Its smallest margin s* is the largest any
///            distribution reaches (capped at F: a self-equilibrated set of forces, such as a block wedged between
///            two walls, could raise every margin without end): positive, the mode holds with every force strictly
///            inside its cone; zero, only on the cones' edges (consistent at the limit); negative, no distribution
///            lies inside the cones (the caller refuses the mode).
///
/// The smallest margin of the chosen distribution is thus at least min(s*, kInteriorMargin F) and crosses zero
/// exactly where s* does, where the cones stop admitting a distribution: a witness of the mode's region. The
/// distribution is one of many; the accelerations are the same for all where C = J^T (no sliding contact among
/// the dependent rows). Where G is regular the solution is the unique one and no programme is solved.
#include <Eigen/Dense>

namespace rollsim {

struct ForceDistributionProblem {
  Eigen::MatrixXd M, J, C, P;
  Eigen::VectorXd f, b, p0;
};

struct ForceDistribution {
  Eigen::VectorXd a, lambda, margins;
  /// s*: the largest smallest margin any solution reaches (+infinity without cone rows; that of the unique
  /// solution where G is regular).
  double best_margin = 0;
  /// F: the scale the margins are measured against (the largest of |lambda0|, |p0|).
  double force_scale = 0;
  int null_dimension = 0;  ///< the dimension of G's null space (0: the forces are unique)
  bool consistent = true;  ///< false: no lambda solves G lambda = d (the rows contradict each other)
  bool interior_rule = false;  ///< true: the least-norm solution lay too near a cone's edge and the rule moved it
};

/// How far inside the cones the rule puts a distribution, relative to the force scale.
inline constexpr double kInteriorMargin = 1e-3;

/// Solves the problem above. Returns d.consistent (false also if the programmes' solver failed, which for these
/// feasible, bounded programmes does not happen).
bool distribute_forces(const ForceDistributionProblem& p, ForceDistribution& d);

}  // namespace rollsim
