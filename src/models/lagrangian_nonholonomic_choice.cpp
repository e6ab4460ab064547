// The user model in independent speeds (docs/nonholonomic.md): which speeds are dependent (a pivoted QR of the rows,
// the best-conditioned choice, the modes that name a choice), and the evaluation at one state with a given choice
// (the dependent rates from the rows, the accelerations and multipliers from the saddle-point system; least squares
// and the minimum-norm multipliers for redundant rows).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "rollsim/core/error.hpp"
#include "lagrangian_nonholonomic.hpp"

namespace rollsim::lagrangian::detail::nh {

namespace {

/// A with every row scaled to unit length (a zero row kept).
MatrixXd row_normalised(const MatrixXd& A) {
  MatrixXd R = A;
  for (Index k = 0; k < R.rows(); ++k) {
    const double norm = R.row(k).norm();
    if (norm > 0) R.row(k) /= norm;
  }
  return R;
}

/// The columns `cols` of A.
MatrixXd columns(const MatrixXd& A, const std::vector<std::size_t>& cols) {
  MatrixXd C(A.rows(), static_cast<Index>(cols.size()));
  for (std::size_t k = 0; k < cols.size(); ++k) C.col(static_cast<Index>(k)) = A.col(static_cast<Index>(cols[k]));
  return C;
}

}  // namespace

std::string singular_message(const Nh& s, const Choice& ch, double t, double rc, double best) {
  std::ostringstream os;
  os.precision(10);
  std::vector<std::size_t> all(s.m());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  os << "at t = " << t << " the dependent speeds no longer follow from the constraint rows " << row_list(s, all)
     << ": their matrix A_D (the columns of " << rate_list(s, ch.dep) << ") is singular (sigma_min of the "
     << "row-normalised A_D = " << rc << ", below " << kSingularDependent << ")";
  if (best > kSingularDependent && s.has_modes())
    os << "; another choice (conditioning " << best << ") would do, but one step passed over the point where they are "
       << "chosen again: tighten solver.rtol or set solver.max_step";
  else if (best > kSingularDependent)
    os << "; the model has more than " << kMaxModeCoordinates << " coordinates, so the dependent speeds chosen at "
       << "the start are kept: give the rate of a different coordinate in [initial_rates]";
  else
    os << "; no other choice of dependent speeds is better (best conditioning " << best
       << "): the rows lose rank here, and the motion through this point does not follow from them";
  return os.str();
}

int mode_of(const Nh& s, const std::vector<std::size_t>& dep) {
  int mode = 0;
  for (const std::size_t d : dep) mode |= 1 << d;
  for (const std::size_t d : s.dep) mode ^= 1 << d;
  return mode;
}

Choice choice_of(const Nh& s, int mode) {
  if (!s.has_modes()) return {s.dep, s.indep};
  for (const std::size_t d : s.dep) mode ^= 1 << d;
  Choice ch;
  for (std::size_t i = 0; i < s.c->n; ++i) ((mode >> i) & 1 ? ch.dep : ch.indep).push_back(i);
  return ch;
}

std::string rate_list(const Nh& s, const std::vector<std::size_t>& dep) {
  std::string t;
  for (std::size_t k = 0; k < dep.size(); ++k) t += std::string(k ? ", " : "") + "der_" + s.c->coordinates[dep[k]];
  return dep.empty() ? "none" : t;  // every row zero (rank 0): no rate follows from them
}

double conditioning(const MatrixXd& A, const std::vector<std::size_t>& dep) {
  if (dep.empty()) return 1.0;
  const MatrixXd AD = columns(row_normalised(A), dep);
  return Eigen::JacobiSVD<MatrixXd>(AD).singularValues()(static_cast<Index>(dep.size()) - 1);
}

std::vector<std::size_t> pivoted_choice(const MatrixXd& A, const std::vector<bool>& prefer_dependent) {
  MatrixXd R = A;  // columns deflated as they are chosen
  const std::size_t n = static_cast<std::size_t>(A.cols()), m = static_cast<std::size_t>(A.rows());
  const double scale = std::max(R.cwiseAbs().maxCoeff(), 1e-300);
  std::vector<std::size_t> dep;
  std::vector<bool> taken(n, false);
  for (std::size_t step = 0; step < m; ++step) {
    std::size_t best = n;
    for (const bool preferred : {true, false}) {
      double norm = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (!taken[j] && prefer_dependent[j] == preferred &&
            R.col(static_cast<Index>(j)).norm() > std::max(norm, 1e-9 * scale)) {
          norm = R.col(static_cast<Index>(j)).norm();
          best = j;
        }
      if (best < n) break;
    }
    if (best == n) break;  // the rank is step
    taken[best] = true;
    dep.push_back(best);
    const VectorXd e = R.col(static_cast<Index>(best)).normalized();
    R -= e * (e.transpose() * R);
  }
  return dep;
}

std::vector<std::size_t> best_choice(const MatrixXd& A, std::size_t rank) {
  const std::size_t n = static_cast<std::size_t>(A.cols());
  std::vector<std::size_t> best = pivoted_choice(row_normalised(A), std::vector<bool>(n, true));
  best.resize(std::min(best.size(), rank));
  std::sort(best.begin(), best.end());
  // Every subset of `rank` of the n columns when there are at most 256 (the binomial coefficient, computed exactly).
  double count = 1;
  for (std::size_t k = 0; k < rank; ++k) count = count * static_cast<double>(n - k) / static_cast<double>(k + 1);
  if (count > 256 || best.size() != rank) return best;
  double best_cond = conditioning(A, best);
  std::vector<std::size_t> pick(rank);
  for (std::size_t k = 0; k < rank; ++k) pick[k] = k;
  while (true) {
    const double c = conditioning(A, pick);
    if (c > best_cond) {
      best_cond = c;
      best = pick;
    }
    // The next subset in lexicographic order.
    std::size_t k = rank;
    while (k > 0 && pick[k - 1] == n - rank + k - 1) --k;
    if (k == 0) break;
    ++pick[k - 1];
    for (std::size_t j = k; j < rank; ++j) pick[j] = pick[j - 1] + 1;
  }
  return best;
}

Work& work(const Nh& s) {
  thread_local Work w;
  const std::size_t n = s.c->n, m = s.m();
  if (w.xq.size() < 2 * n) w.xq.assign(2 * n, 0.0);
  if (w.rows.size() < NonholonomicKernels::rows_size(m, n)) w.rows.assign(NonholonomicKernels::rows_size(m, n), 0.0);
  if (w.jac.size() < NonholonomicKernels::jac_size(m, n)) w.jac.assign(NonholonomicKernels::jac_size(m, n), 0.0);
  return w;
}

std::string row_list(const Nh& s, const std::vector<std::size_t>& which) {
  std::string t;
  for (std::size_t i = 0; i < which.size(); ++i)
    t += (i == 0 ? "" : i + 1 == which.size() ? " and " : ", ") + s.rows[which[i]].name;
  return t;
}

void read_rows(const Nh& s, Work& w, bool with_rates) {
  const std::size_t n = s.c->n, m = s.m();
  s.rows_k(w.in, w.rows.data());
  const auto mi = static_cast<Index>(m), ni = static_cast<Index>(n);
  if (!with_rates) {
    w.A = Eigen::Map<const MatrixXd>(w.rows.data(), mi, ni);
    w.b = Eigen::Map<const VectorXd>(w.rows.data() + m * n, mi);
    return;
  }
  w.c = Eigen::Map<const VectorXd>(w.rows.data() + m * n + m, mi);
  w.g = Eigen::Map<const VectorXd>(w.rows.data() + m * n + 2 * m, mi);
}

void evaluate(const Nh& s, double t, const double* x, Work& w) { evaluate(s, Choice{s.dep, s.indep}, t, x, w); }

void evaluate(const Nh& s, const Choice& ch, double t, const double* x, Work& w) {
  const Compiled& c = *s.c;
  const std::size_t n = c.n, m = s.m(), nd = ch.dep.size(), nI = ch.indep.size();
  std::copy(x, x + n, w.xq.begin());
  std::fill(w.xq.begin() + static_cast<std::ptrdiff_t>(n), w.xq.begin() + static_cast<std::ptrdiff_t>(2 * n), 0.0);
  for (std::size_t k = 0; k < nI; ++k) w.xq[n + ch.indep[k]] = x[n + k];
  Scratch& sc = scratch(c);
  w.in = fill(c, sc, t, w.xq.data(), 0.0);
  read_rows(s, w, false);
  const auto mi = static_cast<Index>(m), ni = static_cast<Index>(n);
  w.AD = columns(w.A, ch.dep);
  w.AI = columns(w.A, ch.indep);
  w.redundant = s.redundant();
  w.cond = conditioning(w.A, ch.dep);
  if (!(w.cond > kSingularDependent)) {
    const std::size_t rank = nd;
    const double best = conditioning(w.A, best_choice(w.A, rank));
    throw SolverError(singular_message(s, ch, t, w.cond, best));
  }
  if (w.redundant) {
    if (nd > 0) w.codD.compute(w.AD);  // (Eigen's pivoted QR of a matrix without columns is not defined)
    w.det = 1.0;
  } else {
    w.luD.compute(w.AD);
    w.det = w.luD.determinant() / std::pow(w.A.norm(), static_cast<double>(m));
  }
  VectorXd u(static_cast<Index>(nI));
  for (std::size_t k = 0; k < nI; ++k) u(static_cast<Index>(k)) = x[n + k];
  const VectorXd rest = w.AI * u + w.b;
  const VectorXd qdD = -w.solve_D(rest);
  w.qd = VectorXd::Zero(ni);
  for (std::size_t k = 0; k < nI; ++k) w.qd(static_cast<Index>(ch.indep[k])) = u(static_cast<Index>(k));
  for (std::size_t k = 0; k < nd; ++k) w.qd(static_cast<Index>(ch.dep[k])) = qdD(static_cast<Index>(k));
  if (w.redundant) {
    // Redundant rows must keep agreeing: the least-squares rates satisfy every row to round-off.
    const VectorXd r = w.A * w.qd + w.b;
    const double scale = 1.0 + (w.A.cwiseAbs() * w.qd.cwiseAbs()).maxCoeff() + w.b.cwiseAbs().maxCoeff();
    Index worst = 0;
    if (r.cwiseAbs().maxCoeff(&worst) > 1e-8 * scale) {
      std::ostringstream os;
      os.precision(10);
      os << "at t = " << t << " the constraint rows, dependent at the start, no longer agree: constraint "
         << s.rows[static_cast<std::size_t>(worst)].name << " has the residual " << r(worst) << " (allowed |r| <= "
         << 1e-8 * scale << ") with the rates the other rows give; the rows are redundant only at the start, and the "
         << "number of independent speeds would change here";
      throw SolverError(os.str());
    }
  }
  for (std::size_t i = 0; i < n; ++i) w.in[1 + n + i] = w.qd(static_cast<Index>(i));
  read_rows(s, w, true);
  c.dyn(w.in, sc.dyn.data());
  w.K.setZero(ni + mi, ni + mi);
  w.K.topLeftCorner(ni, ni) = Eigen::Map<const MatrixXd>(sc.dyn.data(), ni, ni);
  w.K.topRightCorner(ni, mi) = -w.A.transpose();
  w.K.bottomLeftCorner(mi, ni) = w.A;
  w.rhs.resize(ni + mi);
  w.rhs.head(ni) = Eigen::Map<const VectorXd>(sc.dyn.data() + n * n, ni);
  w.rhs.tail(mi) = -w.c;
  // Redundant rows: K is singular; its minimum-norm solution has the unique accelerations and, of the multipliers
  // that give the same constraint force A^T lambda, the one of least |lambda| (a duplicated row: half each).
  if (w.redundant)
    w.codK.compute(w.K);
  else
    w.luK.compute(w.K);
  w.sol = w.solve_K(w.rhs);
  w.a = w.sol.head(ni);
  w.lambda = w.sol.tail(mi);
  for (std::size_t i = 0; i < n; ++i) w.in[c.in_a + i] = w.a(static_cast<Index>(i));
}

}  // namespace rollsim::lagrangian::detail::nh
