#pragma once
/// \file The linear complementarity problem w = A z + q, z >= 0, w >= 0, z.w = 0, solved by Siconos Numerics'
/// lexicographic Lemke method (Debian's libsiconos-numerics-dev), and the planar contact problem that the
/// contact engine poses as one (Pfeiffer and Glocker, Multibody Dynamics with Unilateral Contacts, 1996, ch. 7).
#include <vector>

#include <Eigen/Dense>

namespace rollsim {

/// Solves w = A z + q, 0 <= z complementary to w >= 0. Returns false if the solver found no solution (Lemke's
/// method ends on a ray; for the copositive-plus matrices of frictionless contact that proves there is none).
/// z and w are sized by the call; w is recomputed as A z + q. Thread-safe (calls are serialised).
bool solve_lcp(const Eigen::MatrixXd& A, const Eigen::VectorXd& q, Eigen::VectorXd& z, Eigen::VectorXd& w);

/// The planar contact problem. Unknowns: normal forces (or impulses) lambda_N >= 0, one per normal row, and
/// tangential ones lambda_T, one per tangential row, bounded by |lambda_T| <= mu lambda_N of their normal row
/// (normal_of[j] >= 0) or by mu times a given normal force (normal_of[j] = -1, bound[j]). The rates they act on
/// are y = G lambda + d, lambda = [lambda_N; lambda_T]. The conditions:
///   lambda_N >= 0, y_N >= 0, lambda_N y_N = 0;
///   y_T = 0 with |lambda_T| <= mu lambda_N (sticking), or y_T > 0 with lambda_T = -mu lambda_N, or y_T < 0 with
///   lambda_T = +mu lambda_N (sliding against the friction).
/// As an LCP of size nN + 2 nT with y_T = y+ - y-, lambda_0R = mu lambda_N + lambda_T >= 0 complementary to y+ >= 0
/// and lambda_0L = mu lambda_N - lambda_T >= 0 complementary to y- >= 0.
struct PlanarContactProblem {
  Eigen::MatrixXd G;  ///< (nN + nT) x (nN + nT), normal rows first
  Eigen::VectorXd d;
  std::size_t n_normal = 0;
  std::vector<int> normal_of;  ///< per tangential row: its normal row, or -1 for a given normal force
  std::vector<double> mu, bound;  ///< per tangential row
};

/// A solution: lambda and y as above, and lambda_0R, lambda_0L per tangential row (the distances to the cone's
/// edges: zero where the tangential force is saturated in that direction).
struct PlanarContactSolution {
  Eigen::VectorXd lambda, y, edge_plus, edge_minus;
};

/// False if the LCP solver found no solution.
bool solve_planar_contacts(const PlanarContactProblem& p, PlanarContactSolution& s);

}  // namespace rollsim
