#pragma once
/// \file Planar multibody systems in body coordinates with holonomic constraints, as an index-1 DAE
/// for IDA. Shared by every constrained model (tipping table, carriage with pendulum).
///
/// Coordinates q (dim nq), velocities v = q' (dim nq), multipliers lambda (dim nc); state
/// x = [q, v, lambda]. With mass matrix M(q), applied generalized forces Q(t, q, v), constraints
/// C(q) = 0 and their Jacobian G = dC/dq, the residual F(t, x, x') is
///
///     q' - v                                          = 0   (nq, differential)
///     M v' - Q - G^T lambda                           = 0   (nq, differential)
///     G v' + G' v + 2 a G v + a^2 C                   = 0   (nc, algebraic: lambda)
///
/// Why this formulation: the last block is the constraint differentiated twice (acceleration level),
/// which makes lambda index 1: IDACalcIC can find consistent values, and lambda is then a smooth function
/// of (q, v), as accurate as the states; the IDA integrator leaves it out of the local error test
/// (IDASetSuppressAlg), since a multiplier passing through zero (lift-off) would otherwise be held to atol.
/// The price of index 1 is drift of C and G v; the Baumgarte terms (rate a [1/s], critically damped)
/// pull both back to zero, and the drift at the usual tolerances is of the order of the local error.
/// The models report C as signals so the drift is visible. Stabilised index 2 (GGL) holds C exactly
/// but needs its multipliers out of the error test and its own consistent initialisation, which
/// IDACalcIC does not provide for index 2.
///
/// A Model provides (templated on the scalar S, every matrix column-major):
///   static constexpr int nq, nc;
///   void mass(const S* q, S* M) const;                              // nq x nq
///   void applied_forces(double t, const S* q, const S* v, S* Q) const;
///   void constraints(const S* q, S* C) const;                       // nc
///   void constraint_jacobian(const S* q, S* G) const;               // nc x nq, G[i + nc k] = dC_i/dq_k
///   void constraint_bias(const S* q, const S* v, S* b) const;       // nc, b = (dG/dt) v
#include <cmath>
#include <stdexcept>
#include <utility>

#include <Eigen/Dense>
#include <unsupported/Eigen/AutoDiff>

#include "rollsim/hybrid/system.hpp"

namespace rollsim::mechanics {

template <class Model>
constexpr int state_size() {
  return 2 * Model::nq + Model::nc;
}

/// The residual F(t, x, x'). \param alpha Baumgarte rate a [1/s] (0: none).
template <class Model, class S>
void residual(const Model& m, double t, double alpha, const S* x, const S* xd, S* r) {
  constexpr int nq = Model::nq, nc = Model::nc;
  const S* q = x;
  const S* v = x + nq;
  const S* lam = x + 2 * nq;
  const S* vd = xd + nq;
  S M[nq * nq], Q[nq], C[nc], G[nc * nq], b[nc];
  m.mass(q, M);
  m.applied_forces(t, q, v, Q);
  m.constraints(q, C);
  m.constraint_jacobian(q, G);
  m.constraint_bias(q, v, b);
  for (int k = 0; k < nq; ++k) r[k] = xd[k] - v[k];
  for (int k = 0; k < nq; ++k) {
    S acc = -Q[k];
    for (int j = 0; j < nq; ++j) acc += M[k + nq * j] * vd[j];
    for (int i = 0; i < nc; ++i) acc -= G[i + nc * k] * lam[i];
    r[nq + k] = acc;
  }
  for (int i = 0; i < nc; ++i) {
    S ga = b[i] + alpha * alpha * C[i];
    for (int k = 0; k < nq; ++k) ga += G[i + nc * k] * (vd[k] + 2.0 * alpha * v[k]);
    r[2 * nq + i] = ga;
  }
}

/// Accelerations and multipliers at (t, q, v) from the saddle-point system
/// [M -G^T; G 0] [a; lambda] = [Q; -G' v - 2 a G v - a^2 C]. \param a out, dim nq; \param lambda out, dim nc.
template <class Model>
void accelerations(const Model& m, double t, double alpha, const double* q, const double* v, double* a,
                   double* lambda) {
  constexpr int nq = Model::nq, nc = Model::nc;
  double M[nq * nq], Q[nq], C[nc], G[nc * nq], b[nc];
  m.mass(q, M);
  m.applied_forces(t, q, v, Q);
  m.constraints(q, C);
  m.constraint_jacobian(q, G);
  m.constraint_bias(q, v, b);
  Eigen::Matrix<double, nq + nc, nq + nc> K = Eigen::Matrix<double, nq + nc, nq + nc>::Zero();
  Eigen::Matrix<double, nq + nc, 1> rhs;
  for (int k = 0; k < nq; ++k) {
    for (int j = 0; j < nq; ++j) K(k, j) = M[k + nq * j];
    for (int i = 0; i < nc; ++i) {
      K(k, nq + i) = -G[i + nc * k];
      K(nq + i, k) = G[i + nc * k];
    }
    rhs(k) = Q[k];
  }
  for (int i = 0; i < nc; ++i) {
    double gv = 0;
    for (int k = 0; k < nq; ++k) gv += G[i + nc * k] * v[k];
    rhs(nq + i) = -b[i] - 2.0 * alpha * gv - alpha * alpha * C[i];
  }
  const Eigen::Matrix<double, nq + nc, 1> sol = K.fullPivLu().solve(rhs);
  for (int k = 0; k < nq; ++k) a[k] = sol(k);
  for (int i = 0; i < nc; ++i) lambda[i] = sol(nq + i);
}

/// x' at x (the multipliers in x are not used; their rates are set to zero).
template <class Model>
void derivative(const Model& m, double t, double alpha, const double* x, double* xd) {
  constexpr int nq = Model::nq, nc = Model::nc;
  double lam[nc];
  for (int k = 0; k < nq; ++k) xd[k] = x[nq + k];
  accelerations(m, t, alpha, x, x + nq, xd + nq, lam);
  for (int i = 0; i < nc; ++i) xd[2 * nq + i] = 0.0;
}

/// Fill the multipliers of x with their consistent values at (q, v).
template <class Model>
void consistent_multipliers(const Model& m, double t, double alpha, double* x) {
  constexpr int nq = Model::nq;
  double a[nq];
  accelerations(m, t, alpha, x, x + nq, a, x + 2 * nq);
}

/// IDA's iteration matrix J = dF/dx + cj dF/dx' (column-major), by forward automatic differentiation:
/// seeding x_k with 1 and x'_k with cj gives column k in one pass.
template <class Model>
void iteration_matrix(const Model& m, double t, double alpha, const double* x, const double* xd, double cj,
                      double* J) {
  constexpr int n = state_size<Model>();
  using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, n, 1>>;
  AD xa[n], xda[n], ra[n];
  for (int k = 0; k < n; ++k) {
    xa[k] = AD(x[k], n, k);
    xda[k] = AD(xd[k], Eigen::Matrix<double, n, 1>::Unit(k) * cj);
  }
  residual(m, t, alpha, xa, xda, ra);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) J[i + n * k] = ra[i].derivatives()(k);
}

/// 1 for q and v (differential), 0 for lambda (algebraic).
template <class Model>
void differential_ids(double* id) {
  for (int k = 0; k < state_size<Model>(); ++k) id[k] = k < 2 * Model::nq ? 1.0 : 0.0;
}

/// The DAE facet every constrained model shares: the residual, the differential components, a consistent
/// derivative and IDA's iteration matrix, all from `Model` through the functions above, with Baumgarte rate
/// `rate` [1/s]. A model derives from it and adds its signals and outputs (and WitnessSystem for its witnesses).
template <class Model>
class ConstrainedSystem : public DaeSystem {
 public:
  ConstrainedSystem(Model model, double rate) : m_(std::move(model)), rate_(rate) {}
  void residual(double t, const double* x, const double* xd, int, double* r) const override {
    mechanics::residual(m_, t, rate_, x, xd, r);
  }
  void differential_ids(double* id) const override { mechanics::differential_ids<Model>(id); }
  void initial_derivative(double t, const double* x, int, double* xd) const override {
    mechanics::derivative(m_, t, rate_, x, xd);
  }
  bool residual_jacobian(double t, const double* x, const double* xd, int, double cj, double* J) const override {
    mechanics::iteration_matrix(m_, t, rate_, x, xd, cj, J);
    return true;
  }

 protected:
  Model m_;
  double rate_;
};

}  // namespace rollsim::mechanics
