// The cone engine's contact problem (src/hybrid/cone_detail.hpp: the modes of several contacts at rest chosen
// together, each open, sticking or starting to slide in the direction the law gives) against a second solver of
// the same law: Siconos Numerics' 3-D friction-contact problem (fc3d, nonsmooth Gauss-Seidel with the exact local
// solver), on random problems u = W r + q with W symmetric positive definite. Both solve Coulomb's law with the
// normal complementarity: r_N >= 0, u_N >= 0, r_N u_N = 0; sticking u_T = 0, |r_T| <= mu r_N; sliding
// r_T = -mu r_N u_T/|u_T|. For friction coefficients small enough the solution is unique, so the two must agree.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>

#include "../src/hybrid/cone_detail.hpp"
#include "support.hpp"

namespace {

using namespace rollsim;
using namespace rollsim::cone_detail;

/// Siconos's solution of u = W r + q (rows per contact: normal, then two tangential), or false if it did not
/// converge.
bool siconos_solve(const Eigen::MatrixXd& W, const Eigen::VectorXd& q, const std::vector<double>& mu, Eigen::VectorXd& r) {
  const int m = static_cast<int>(W.rows()), nc = m / 3;
  NumericsMatrix* M = NM_create(NM_DENSE, m, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) M->matrix0[i + m * j] = W(i, j);
  auto* qv = static_cast<double*>(std::malloc(sizeof(double) * static_cast<std::size_t>(m)));
  auto* muv = static_cast<double*>(std::malloc(sizeof(double) * static_cast<std::size_t>(nc)));
  for (int i = 0; i < m; ++i) qv[i] = q(i);
  for (int k = 0; k < nc; ++k) muv[k] = mu[static_cast<std::size_t>(k)];
  FrictionContactProblem* p = frictionContactProblem_new_with_data(3, nc, M, qv, muv);
  ::SolverOptions* opt = solver_options_create(SICONOS_FRICTION_3D_NSGS);
  opt->dparam[SICONOS_DPARAM_TOL] = 1e-14;
  opt->iparam[SICONOS_IPARAM_MAX_ITER] = 100000;
  std::vector<double> reaction(static_cast<std::size_t>(m), 0.0), velocity(static_cast<std::size_t>(m), 0.0);
  const int info = fc3d_driver(p, reaction.data(), velocity.data(), opt);
  solver_options_delete(opt);
  frictionContactProblem_free(p);
  r = Eigen::Map<Eigen::VectorXd>(reaction.data(), m);
  return info == 0;
}

}  // namespace

TEST_CASE("cone engine: the modes and forces of contacts at rest agree with Siconos Numerics' fc3d solver") {
  std::mt19937 rng(20261127);
  std::uniform_real_distribution<double> u(-1, 1);
  int compared = 0, sliding = 0, sticking = 0, open = 0;
  // 80 problems in a release build, 9 under a sanitizer (three of each count of contacts; 24 took 160 s there).
  const int trials = test::full_or_sanitized(80, 9);
  for (int trial = 0; trial < trials; ++trial) {
    const std::size_t nc = 1 + static_cast<std::size_t>(trial % 3);
    const auto m = static_cast<Eigen::Index>(3 * nc);
    // W = J M^-1 J^T of a random body: J random, M^-1 SPD with a spread of 10 in its eigenvalues.
    Eigen::MatrixXd J(m, 6);
    for (Eigen::Index i = 0; i < J.size(); ++i) J.data()[i] = u(rng);
    Eigen::VectorXd minv(6);
    for (int i = 0; i < 6; ++i) minv(i) = 0.1 + 0.9 * (u(rng) + 1) / 2;
    // Every fourth problem weakly coupled (its contacts' rows nearly independent), with no drive along the slips
    // (below): those contacts mostly stick.
    Eigen::MatrixXd W = J * minv.asDiagonal() * J.transpose() +
                        (trial % 4 == 0 ? 10.0 : 0.05) * Eigen::MatrixXd::Identity(m, m);
    Eigen::VectorXd q(m);
    for (Eigen::Index i = 0; i < m; ++i) q(i) = u(rng);
    for (std::size_t k = 0; k < nc; ++k) {
      const auto o = static_cast<Eigen::Index>(3 * k);
      q(o) -= 0.5;  // most contacts pressed
      // Every other problem drives the contacts' slips gently, every fourth not at all, so that some stick.
      if (trial % 2 == 0) q.segment(o + 1, 2) *= trial % 4 == 0 ? 0.0 : 0.02;
    }
    std::vector<double> mu(nc);
    for (auto& x : mu) x = 0.1 + 0.3 * (u(rng) + 1) / 2;

    Eigen::VectorXd rs;
    if (!siconos_solve(W, q, mu, rs)) continue;

    Problem p;
    p.nc = nc;
    for (std::size_t k = 0; k < nc; ++k) {
      p.off.push_back(3 * k);
      p.dim.push_back(2);
    }
    p.G = W;
    p.b = q;
    p.target = Eigen::VectorXd::Zero(m);
    p.mu = mu;
    p.mu_s = mu;
    std::vector<std::vector<int>> cands(nc, {ConeEngine::kOpen, ConeEngine::kStick, ConeEngine::kSlide});
    std::vector<int> current(nc, ConeEngine::kOpen);
    std::vector<bool> at_rest(nc, true), from_rest(nc, true);
    std::vector<Eigen::Vector3d> dirs(nc, Eigen::Vector3d::UnitX());
    Combination chosen;
    ChoiceReport report;
    CAPTURE(trial);
    const bool ok = choose(p, cands, current, at_rest, from_rest, dirs, chosen, report);
    CAPTURE(report.why);
    REQUIRE(ok);
    const double scale = std::max(1.0, rs.cwiseAbs().maxCoeff());
    CHECK((chosen.P - rs).cwiseAbs().maxCoeff() <= 1e-7 * scale);
    ++compared;
    for (int cm : chosen.modes) {
      sliding += cm == ConeEngine::kSlide;
      sticking += cm == ConeEngine::kStick;
      open += cm == ConeEngine::kOpen;
    }
  }
  // The random problems cover every mode, and Siconos converged on most of them.
  CHECK(compared >= trials - trials / 8);
  const int each = test::full_or_sanitized(5, 1);
  CHECK(sliding >= each);
  CHECK(sticking >= each);
  CHECK(open >= each);
}
