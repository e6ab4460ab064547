#include "rollsim/core/lock_wait.hpp"
#include "rollsim/hybrid/force_distribution.hpp"

#include "contact_detail.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include <glpk.h>

namespace rollsim {

namespace {

/// A singular value below this, relative to the largest, spans the null space (dependent rows).
constexpr double kRankTolerance = 1e-10;
/// G lambda = d is consistent where the least-squares residual is below this, relative to the terms' scale.
constexpr double kConsistency = 1e-8;

using contact_detail::max_abs;

/// GLPK keeps its environment per thread only where it was built so; calls are serialised.
std::mutex glpk_mutex;

/// GLPK's environment (made by its first call in a thread) is freed by glp_free_env in that thread alone: each thread
/// that calls GLPK frees its own when it ends (a sweep's worker threads leaked 5 KiB each before). glp_free_env
/// does nothing where no environment was made. It takes the lock too, for a GLPK built with one shared environment.
struct GlpkEnvironment {
  ~GlpkEnvironment() {
    const std::lock_guard<std::mutex> lock(glpk_mutex);
    glp_free_env();
  }
};

/// max s over z subject to m0 + B z >= s e and s <= cap, by GLPK's simplex method (z free; the cap bounds the
/// programme where a self-equilibrated set of forces would raise every margin without end).
bool max_min_margin(const Eigen::MatrixXd& B, const Eigen::VectorXd& m0, double cap, Eigen::VectorXd& z, double& s) {
  const int p = static_cast<int>(B.rows()), k = static_cast<int>(B.cols());
  const auto lock = timed_lock(glpk_mutex);
  thread_local GlpkEnvironment environment;
  (void)environment;
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, k + 1);
  for (int j = 1; j <= k; ++j) glp_set_col_bnds(lp, j, GLP_FR, 0, 0);
  glp_set_col_bnds(lp, k + 1, GLP_UP, 0, cap);
  glp_set_obj_coef(lp, k + 1, 1.0);
  glp_add_rows(lp, p);
  std::vector<int> idx(static_cast<std::size_t>(k) + 2);
  std::vector<double> val(static_cast<std::size_t>(k) + 2);
  for (int i = 1; i <= p; ++i) {
    for (int j = 1; j <= k; ++j) {
      idx[static_cast<std::size_t>(j)] = j;
      val[static_cast<std::size_t>(j)] = B(i - 1, j - 1);
    }
    idx[static_cast<std::size_t>(k) + 1] = k + 1;
    val[static_cast<std::size_t>(k) + 1] = -1.0;
    glp_set_mat_row(lp, i, k + 1, idx.data(), val.data());
    glp_set_row_bnds(lp, i, GLP_LO, -m0(i - 1), 0);  // B_i z - s >= -m0_i
  }
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;
  const int ret = glp_simplex(lp, &parm);
  const bool ok = ret == 0 && glp_get_status(lp) == GLP_OPT;
  if (ok) {
    z.resize(k);
    for (int j = 1; j <= k; ++j) z(j - 1) = glp_get_col_prim(lp, j);
    s = glp_get_col_prim(lp, k + 1);
  }
  glp_delete_prob(lp);
  return ok;
}

}  // namespace

bool distribute_forces(const ForceDistributionProblem& p, ForceDistribution& d) {
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(p.M);
  const Eigen::MatrixXd MiC = lu.solve(p.C);
  const Eigen::VectorXd Mif = lu.solve(p.f);
  const Eigen::MatrixXd G = p.J * MiC;
  const Eigen::VectorXd rhs = p.b - p.J * Mif;
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(G, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::VectorXd& sv = svd.singularValues();
  const Eigen::Index m = G.cols();
  const double smax = sv.size() ? sv(0) : 0.0;
  Eigen::Index rank = 0;
  while (rank < sv.size() && sv(rank) > kRankTolerance * smax) ++rank;
  // The least-norm solution, and the null space.
  const Eigen::VectorXd Utd = svd.matrixU().leftCols(rank).transpose() * rhs;
  Eigen::VectorXd lambda0 = svd.matrixV().leftCols(rank) * Utd.cwiseQuotient(sv.head(rank));
  const Eigen::MatrixXd N = svd.matrixV().rightCols(m - rank);
  d.null_dimension = static_cast<int>(m - rank);
  const double residual = max_abs(G * lambda0 - rhs);
  const double scale = max_abs(rhs) + smax * max_abs(lambda0);
  d.consistent = residual <= kConsistency * std::max(scale, std::numeric_limits<double>::min());
  d.force_scale = std::max({max_abs(lambda0), max_abs(p.p0), std::numeric_limits<double>::min()});
  d.interior_rule = false;
  d.lambda = lambda0;
  const Eigen::Index np = p.P.rows();
  Eigen::VectorXd m0 = np ? Eigen::VectorXd(p.P * lambda0 + p.p0) : Eigen::VectorXd();
  d.best_margin = np ? m0.minCoeff() : std::numeric_limits<double>::infinity();
  const double F = d.force_scale;
  if (d.consistent && N.cols() > 0 && np > 0 && d.best_margin < kInteriorMargin * F) {
    const Eigen::MatrixXd B = p.P * N;
    Eigen::VectorXd z;
    double s = 0;
    if (!max_min_margin(B, m0, F, z, s)) {
      d.consistent = false;
    } else {
      // The smallest margin of the programme's solution, evaluated (the solver's s within its tolerance).
      d.lambda = lambda0 + N * z;
      d.best_margin = std::min(s, (p.P * d.lambda + p.p0).minCoeff());
      d.interior_rule = true;
    }
  }
  d.a = Mif + MiC * d.lambda;
  d.margins = np ? Eigen::VectorXd(p.P * d.lambda + p.p0) : Eigen::VectorXd();
  return d.consistent;
}

}  // namespace rollsim
