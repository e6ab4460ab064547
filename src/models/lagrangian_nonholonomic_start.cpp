// The start of a user model in independent speeds (docs/nonholonomic.md): which speeds are dependent (a pivoted QR
// of the rows preferring the rates the scenario does not give), the given rates checked against the rows, the
// position-level rows at the start, and the integrability of the rows (Frobenius).
#include <cmath>
#include <random>
#include <sstream>
#include <tuple>

#include "lagrangian_nonholonomic.hpp"

namespace rollsim::lagrangian::detail {

namespace {

using namespace nh;

/// The key a row's message points at: its own, where the scenario has it.
std::string row_key(const Scenario& sc, const Row& r) { return sc.values.count(r.source) ? r.source : "model"; }

/// Integrability of scleronomic rows A(q) q' = 0: ker A is involutive iff N^T W_k N = 0 for every row k, with
/// W_k(i, j) = dA_kj/dq_i - dA_ki/dq_j and N a basis of ker A, tested at random points near the start.
std::pair<std::string, std::string> integrability(const Nh& s, const std::vector<double>& q0) {
  const Compiled& c = *s.c;
  const std::size_t n = c.n, m = s.m();
  std::vector<std::size_t> velocity_rows;
  for (std::size_t k = 0; k < m; ++k)
    if (!s.rows[k].position) velocity_rows.push_back(k);
  if (velocity_rows.empty()) return {"integrable", "every constraint row is the rate of a position-level constraint"};
  const std::string names = "constraint rows " + row_list(s, velocity_rows);
  std::mt19937 rng(20251126u);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Work& w = work(s);
  std::vector<double> xq(2 * n, 0.0);
  bool any = false;
  for (int point = 0; point < 6; ++point) {
    for (std::size_t i = 0; i < n; ++i) xq[i] = q0[i] + U(rng);
    Scratch& sc = scratch(c);
    std::vector<std::vector<double>> at_times;
    for (const double t : {0.0, 0.7}) {
      w.in = fill(c, sc, t, xq.data(), 0.0);
      read_rows(s, w, false);
      at_times.emplace_back(w.rows.begin(), w.rows.begin() + static_cast<std::ptrdiff_t>(m * n + m));
    }
    const double Ascale = std::max(1.0, w.A.cwiseAbs().maxCoeff());
    bool rheonomic = w.b.cwiseAbs().maxCoeff() > 1e-12 * Ascale;
    for (std::size_t i = 0; i < m * n; ++i) rheonomic = rheonomic || std::abs(at_times[0][i] - at_times[1][i]) > 1e-12 * Ascale;
    if (rheonomic) return {"not checked", names + " depend on time or have a rate-free part; integrability:"};
    if (!w.A.allFinite()) continue;
    s.jac_k(w.in, w.jac.data());
    Eigen::JacobiSVD<MatrixXd> svd(w.A, Eigen::ComputeFullV);
    const MatrixXd N = svd.matrixV().rightCols(static_cast<Index>(n - s.rank));
    double worst = 0, wscale = Ascale;
    for (std::size_t k = 0; k < m; ++k) {
      MatrixXd W(static_cast<Index>(n), static_cast<Index>(n));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          const double dAkj_dqi = w.jac[4 * m * n + m * n * i + k + m * j];
          const double dAki_dqj = w.jac[4 * m * n + m * n * j + k + m * i];
          W(static_cast<Index>(i), static_cast<Index>(j)) = dAkj_dqi - dAki_dqj;
          wscale = std::max(wscale, std::abs(dAkj_dqi));
        }
      worst = std::max(worst, (N.transpose() * W * N).cwiseAbs().maxCoeff());
    }
    if (!std::isfinite(worst)) continue;
    any = true;
    if (worst > 1e-8 * wscale) return {"nonholonomic", names + ", by the Frobenius test at random points:"};
  }
  if (!any) return {"not checked", names + " are not finite near the start; integrability:"};
  return {"integrable", names + " (holonomic in disguise: a position-level constraint would do), by the Frobenius test:"};
}

}  // namespace

std::unique_ptr<HybridSystem> nonholonomic_system(std::shared_ptr<const Compiled> c, const symbolic::LagrangeModel& model,
                                                  const Scenario& sc, const std::vector<double>& x0,
                                                  const std::vector<bool>& rate_given) {
  Nh s;
  s.c = c;
  for (const auto& r : model.velocity_constraints)
    s.rows.push_back({r.name, r.contact, r.source, r.kind, r.position.has_value()});
  s.rows_k = c->lib->get(NonholonomicKernels::rows);
  s.jac_k = c->lib->get(NonholonomicKernels::jac);
  const std::size_t n = c->n, m = s.m();
  // A, b at the start (they do not depend on the rates).
  Work& w = work(s);
  w.in = fill(*c, scratch(*c), 0.0, x0.data(), 0.0);
  read_rows(s, w, false);
  if (!w.A.allFinite() || !w.b.allFinite())
    sc.fail(row_key(sc, s.rows.front()), "the constraint rows are not finite at the initial state");
  // The dependent coordinates: a pivoted QR taking first the coordinates whose rate the scenario does not give, as
  // many as A's rank (redundant rows that agree are kept: the multipliers are then the minimum-norm ones).
  std::vector<bool> prefer_dependent(n);
  for (std::size_t i = 0; i < n; ++i) prefer_dependent[i] = !rate_given[i];
  s.dep = pivoted_choice(w.A, prefer_dependent);
  s.rank = s.dep.size();
  if (s.rank >= n)
    sc.fail(row_key(sc, s.rows.back()), "the model has " + std::to_string(s.rank) + " independent constraint rows and " +
                                            std::to_string(n) + " coordinates: at least one coordinate must stay free");
  if (s.rank < m) {
    // Redundant rows must agree: some rate satisfies every row (the least-squares residual of A q' = -b is zero).
    const VectorXd qd = w.A.completeOrthogonalDecomposition().solve(VectorXd(-w.b));
    const VectorXd r = w.A * qd + w.b;
    const double rscale = 1.0 + (w.A.cwiseAbs() * qd.cwiseAbs()).maxCoeff() + w.b.cwiseAbs().maxCoeff();
    Index worst = 0;
    if (r.cwiseAbs().maxCoeff(&worst) > 1e-9 * rscale) {
      std::ostringstream os;
      os.precision(10);
      os << "the constraint rows contradict each other at the initial state: " << m << " rows of rank " << s.rank
         << ", and no rate satisfies them all (constraint " << s.rows[static_cast<std::size_t>(worst)].name
         << " keeps the residual " << r(worst) << " with the rates closest to satisfying every row; allowed |r| <= "
         << 1e-9 * rscale << "); remove or correct one of them";
      sc.fail(row_key(sc, s.rows[static_cast<std::size_t>(worst)]), os.str());
    }
  }
  std::vector<bool> is_dep(n, false);
  for (const std::size_t d : s.dep) is_dep[d] = true;
  for (std::size_t i = 0; i < n; ++i)
    if (!is_dep[i]) s.indep.push_back(i);
  s.dependent_text = rate_list(s, s.dep);
  // The dependent rates from the independent ones; a given dependent rate must agree.
  std::vector<double> x(n + s.ni() + c->n_extra + 1, 0.0);
  std::copy(x0.begin(), x0.begin() + static_cast<std::ptrdiff_t>(n), x.begin());
  for (std::size_t k = 0; k < s.ni(); ++k) x[n + k] = x0[n + s.indep[k]];
  // The re-choice threshold: a tenth of the start's conditioning (1 for a single row's own column).
  s.tau = kRechoose * conditioning(w.A, s.dep);
  evaluate(s, 0.0, x.data(), w);
  if (!w.qd.allFinite() || !w.a.allFinite() || !w.lambda.allFinite()) {
    // Rates or parameters whose products leave the doubles' range (a given rate of 1e308 times another): refused at
    // the given rate largest in magnitude, else at the first row.
    std::size_t big = n;  // the given rate largest in magnitude; n: none given
    for (std::size_t i = 0; i < n; ++i)
      if (rate_given[i] && (big == n || std::abs(x0[n + i]) > std::abs(x0[n + big]))) big = i;
    const std::string key = big < n ? "initial_rates." + c->coordinates[big] : row_key(sc, s.rows.front());
    std::ostringstream os;
    os.precision(10);
    std::string what = "a constraint multiplier is " + std::to_string(w.lambda.sum());
    for (const auto& [v, name] : {std::pair{&w.qd, "rate"}, std::pair{&w.a, "acceleration"}})
      for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite((*v)(static_cast<Index>(i))))
          what = std::string("the ") + name + " of " + c->coordinates[i] + " is " + std::to_string((*v)(static_cast<Index>(i)));
    os << "the equations of motion are not finite at the initial state (" << what << ")";
    if (big < n) os << " (" << key << " = " << x0[n + big] << ")";
    os << ": the rates, the parameters and the constraint "
       << "rows' terms must stay within the doubles' range (about 1e-300 to 1e300 in magnitude, their products too); "
       << "give smaller [initial_rates] or change the parameters";
    sc.fail(key, os.str());
  }
  VectorXd given(static_cast<Index>(n));
  for (std::size_t i = 0; i < n; ++i) given(static_cast<Index>(i)) = rate_given[i] ? x0[n + i] : w.qd(static_cast<Index>(i));
  const VectorXd r = w.A * given + w.b;
  const double rscale = 1.0 + (w.A.cwiseAbs() * given.cwiseAbs()).maxCoeff() + w.b.cwiseAbs().maxCoeff();
  Index worst = 0;
  if (m && r.cwiseAbs().maxCoeff(&worst) > 1e-9 * rscale) {
    std::ostringstream os;
    os.precision(10);
    std::string coords;
    for (const std::size_t d : s.dep)
      if (rate_given[d]) {
        std::ostringstream one;
        one.precision(10);
        one << (coords.empty() ? "" : ", ") << "initial_rates." << c->coordinates[d] << " = " << x0[n + d]
            << " (the rows give " << w.qd(static_cast<Index>(d)) + 0.0 << ")";
        coords += one.str();
      }
    os << "the initial rates disagree with constraint " << s.rows[static_cast<std::size_t>(worst)].name << " ("
       << s.rows[static_cast<std::size_t>(worst)].source << "): its residual A der(q) + b is " << r(worst)
       << " (allowed |r| <= " << 1e-9 * rscale << "). The dependent rates " << s.dependent_text
       << " follow from the constraints; given: " << coords << ". Leave them out of [initial_rates] or give values that satisfy the constraints";
    std::string key = "model";
    for (const std::size_t d : s.dep)
      if (rate_given[d]) key = "initial_rates." + c->coordinates[d];
    sc.fail(key, os.str());
  }
  // Position-level rows must hold at the start.
  double qscale = 1.0;
  for (std::size_t i = 0; i < n; ++i) qscale = std::max(qscale, std::abs(x0[i]));
  for (std::size_t k = 0; k < m; ++k)
    if (s.rows[k].position && std::abs(w.g(static_cast<Index>(k))) > 1e-9 * qscale) {
      std::ostringstream os;
      os.precision(10);
      os << (s.rows[k].kind == Kind::Normal ? "the gap of contact " + s.rows[k].contact : "constraint " + s.rows[k].name)
         << " is " << w.g(static_cast<Index>(k)) << " at the initial state (allowed: |g| <= " << 1e-9 * qscale
         << "); give [initial] values that satisfy it";
      sc.fail(row_key(sc, s.rows[k]), os.str());
    }
  std::tie(s.integrability, s.integrability_text) = integrability(s, std::vector<double>(x0.begin(), x0.begin() + static_cast<std::ptrdiff_t>(n)));
  return make_system(std::move(s), std::move(x));
}

}  // namespace rollsim::lagrangian::detail
