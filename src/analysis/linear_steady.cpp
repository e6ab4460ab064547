// The linearisation about a steady motion: the ignorable states and the states held steady dropped, the rates of
// the others checked to vanish, and holonomic constraints carried as rows eliminated (docs/linear.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <Eigen/Dense>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

namespace {

/// Entries of a Jacobian below this times the largest entry of the block they are compared with are round-off.
constexpr double kRoundOff = 1e-10;
/// Largest |G [A T, B]| / (|G| |[A T, B]|) accepted: A and B keep the tangent space of the state constraints.
constexpr double kInvariance = 1e-8;

std::string g6(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

/// The states named by the list key `key`, as indices; an unknown or repeated name is an InputError at the key.
std::vector<Eigen::Index> state_indices(const std::vector<std::string>& given, const std::vector<std::string>& states,
                                        const std::string& key, const Scenario& sc) {
  std::vector<Eigen::Index> out;
  for (const auto& name : given) {
    const auto it = std::find(states.begin(), states.end(), name);
    if (it == states.end())
      sc.fail(key, key + ": \"" + name + "\" is not a state of the model; allowed: " + join(states));
    const auto k = static_cast<Eigen::Index>(it - states.begin());
    if (std::find(out.begin(), out.end(), k) != out.end()) sc.fail(key, key + ": \"" + name + "\" is listed twice");
    out.push_back(k);
  }
  return out;
}

/// The energy ledger's states, by the roles the model declares them with: the works done on the system and the
/// energies dissipated since the start. They integrate powers; no rate depends on them.
bool is_ledger_state(const Signal& s) {
  return s.role == Role::InputWork || s.role == Role::ConstraintWork || s.role == Role::Dissipation;
}

double max_abs(const Eigen::MatrixXd& m) { return m.size() ? m.cwiseAbs().maxCoeff() : 0.0; }

/// The rows/columns `idx` of m.
Eigen::MatrixXd rows_of(const Eigen::MatrixXd& m, const std::vector<Eigen::Index>& idx) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(idx.size()), m.cols());
  if (m.cols() == 0) return out;  // no data: a row block of it would offset a null pointer (UBSan)
  for (std::size_t i = 0; i < idx.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = m.row(idx[i]);
  return out;
}
Eigen::MatrixXd cols_of(const Eigen::MatrixXd& m, const std::vector<Eigen::Index>& idx) {
  Eigen::MatrixXd out(m.rows(), static_cast<Eigen::Index>(idx.size()));
  if (m.rows() == 0) return out;  // as in rows_of
  for (std::size_t j = 0; j < idx.size(); ++j) out.col(static_cast<Eigen::Index>(j)) = m.col(idx[j]);
  return out;
}

/// Each ignorable state's column, over the rows that stay and over the state constraints, is zero to round-off.
void check_ignorable_columns(const linear::StateSpace& full, const Eigen::MatrixXd& G,
                             const std::vector<Eigen::Index>& ignorable, const std::vector<Eigen::Index>& live,
                             const StateReduction& R, const Scenario& sc) {
  const Eigen::MatrixXd AL = rows_of(full.A, live);
  const double a_tol = kRoundOff * max_abs(AL), g_tol = kRoundOff * max_abs(G);
  for (const Eigen::Index j : ignorable) {
    const std::string& name = R.names[static_cast<std::size_t>(j)];
    Eigen::Index worst = 0;
    const double a = live.empty() ? 0.0 : AL.col(j).cwiseAbs().maxCoeff(&worst);
    if (a > a_tol) {
      const Eigen::Index row = live[static_cast<std::size_t>(worst)];
      sc.fail("linear.ignorable",
              "linear.ignorable: \"" + name + "\" is not ignorable: the rate of \"" +
                  R.names[static_cast<std::size_t>(row)] + "\" depends on it (the largest entry of its column of A, " +
                  "d(" + R.names[static_cast<std::size_t>(row)] + ")'/d(" + name + ") = " + g6(full.A(row, j)) +
                  "; allowed |entry| <= " + g6(kRoundOff) + " x max|A| = " + g6(a_tol) + ", round-off)");
    }
    if (G.rows() > 0) {
      const double g = G.col(j).cwiseAbs().maxCoeff(&worst);
      if (g > g_tol)
        sc.fail("linear.ignorable", "linear.ignorable: \"" + name + "\" is not ignorable: the model's position "
                                    "constraint " + std::to_string(worst + 1) + " of " + std::to_string(G.rows()) +
                                    " depends on it (dg/d(" + name + ") = " + g6(G(worst, j)) + ")");
    }
  }
}

/// The kept states' rates vanish at the point (a steady motion), to equilibrium_tolerance (1 + sum_j |A_ij x0_j|).
void check_rates(const linear::StateSpace& full, const std::vector<Eigen::Index>& live, const LinearOptions& opt,
                 const Scenario& sc, LinearResult& r) {
  const StateReduction& R = r.states;
  double worst = 0, worst_scale = 1;
  Eigen::Index at = -1;
  for (const Eigen::Index i : live) {
    const double scale = 1 + (full.A.row(i).cwiseAbs() * R.x0.cwiseAbs())(0);
    const double q = std::abs(full.f0(i)) / scale;
    if (at < 0 || q > worst) {
      worst = q;
      worst_scale = scale;
      at = i;
    }
  }
  r.equilibrium_residual = worst;
  r.residual_state = at < 0 ? "" : R.names[static_cast<std::size_t>(at)];
  r.residual_rate = at < 0 ? 0.0 : full.f0(at);
  if (worst <= opt.equilibrium_tolerance || opt.allow_non_equilibrium) return;
  const bool steady = !opt.ignorable.empty() || !opt.steady.empty();
  std::ostringstream os;
  os.precision(6);
  os << "the initial state is not " << (steady ? "a steady motion" : "an equilibrium") << ": d(" << r.residual_state
     << ")/dt = " << r.residual_rate << ", beyond linear.equilibrium_tolerance = " << opt.equilibrium_tolerance;
  if (worst_scale > 1)
    os << " x (1 + " << worst_scale - 1 << ", the size of its linear terms at the point sum_j |A_ij x0_j|)";
  if (steady)
    os << "; every state that is neither in linear.ignorable nor in linear.steady must be at rest: choose a steady "
          "motion, hold the state with linear.steady, or pass --allow-non-equilibrium to linearise here anyway";
  else
    os << "; choose an equilibrium, or pass --allow-non-equilibrium to linearise here anyway";
  const std::string key = !opt.steady.empty() ? "linear.steady" : !opt.ignorable.empty() ? "linear.ignorable" : "";
  if (key.empty()) throw InputError(Origin{sc.path, 0, 0}, os.str());
  sc.fail(key, os.str());
}

/// The outputs among `pick`: one that depends on an ignorable state is an error (given) or left out (default).
std::vector<Eigen::Index> usable_outputs(const linear::StateSpace& full, std::vector<Eigen::Index> pick,
                                         bool default_outputs, const std::vector<Eigen::Index>& ignorable,
                                         const Signals& signals, const std::vector<Eigen::Index>& kept,
                                         const Scenario& sc) {
  std::vector<Eigen::Index> out;
  for (const Eigen::Index p : pick) {
    const double tol = kRoundOff * max_abs(full.C.row(p));
    bool depends = false;
    for (const Eigen::Index j : ignorable) {
      if (std::abs(full.C(p, j)) <= tol) continue;
      depends = true;
      if (!default_outputs)
        sc.fail("linear.outputs", "linear.outputs: \"" + signals[static_cast<std::size_t>(p)].name +
                                      "\" depends on the ignorable state \"" + signals[static_cast<std::size_t>(j)].name +
                                      "\" (linear.ignorable), which the linearisation drops; choose outputs of the kept "
                                      "states");
    }
    if (!depends) out.push_back(p);
  }
  if (out.empty() && !kept.empty()) out.push_back(kept.front());
  return out;
}

}  // namespace

const char* to_string(StateTreatment t) {
  switch (t) {
    case StateTreatment::Kept: return "kept";
    case StateTreatment::Ignorable: return "ignorable";
    case StateTreatment::Steady: return "steady";
    case StateTreatment::Eliminated: return "eliminated";
  }
  return "?";
}

void reduce_linearization(const linear::StateSpace& full, const Eigen::MatrixXd& G, const LinearOptions& opt,
                          const Signals& signals, std::vector<Eigen::Index> pick, bool default_outputs,
                          const Scenario& sc, LinearResult& r) {
  StateReduction& R = r.states;
  const Eigen::Index n = full.A.rows();
  R.rate = full.f0;
  R.treatment.assign(static_cast<std::size_t>(n), StateTreatment::Kept);
  auto ign = state_indices(opt.ignorable, R.names, "linear.ignorable", sc);
  const auto std_ = state_indices(opt.steady, R.names, "linear.steady", sc);
  // About a steady motion the ledger's states (a work grows along it) drop out as ignorable ones, listed or not; an
  // equilibrium's linearisation keeps every state (their rows and columns are zero there).
  std::vector<std::string> ledger;
  if (!ign.empty() || !std_.empty())
    for (Eigen::Index j = 0; j < n; ++j) {
      const bool listed = std::find(ign.begin(), ign.end(), j) != ign.end() ||
                          std::find(std_.begin(), std_.end(), j) != std_.end();
      if (!is_ledger_state(signals[static_cast<std::size_t>(j)]) || listed) continue;
      ign.push_back(j);
      ledger.push_back(R.names[static_cast<std::size_t>(j)]);
    }
  for (const Eigen::Index j : std_)
    if (std::find(ign.begin(), ign.end(), j) != ign.end())
      sc.fail("linear.steady", "linear.steady: \"" + R.names[static_cast<std::size_t>(j)] +
                                   "\" is also in linear.ignorable; a state is dropped as one or the other");
  for (const Eigen::Index j : ign) R.treatment[static_cast<std::size_t>(j)] = StateTreatment::Ignorable;
  for (const Eigen::Index j : std_) R.treatment[static_cast<std::size_t>(j)] = StateTreatment::Steady;
  std::vector<Eigen::Index> live;  // neither ignorable nor steady
  for (Eigen::Index i = 0; i < n; ++i)
    if (R.treatment[static_cast<std::size_t>(i)] == StateTreatment::Kept) live.push_back(i);
  if (live.empty())
    sc.fail(std_.empty() ? "linear.ignorable" : "linear.steady",
            "every state of the model is in linear.ignorable or linear.steady: no state is left to linearise");
  if (G.rows() > 0 && G.cols() != n)
    throw std::logic_error("state_constraint_jacobian: " + std::to_string(G.cols()) + " columns for " +
                           std::to_string(n) + " states");

  check_ignorable_columns(full, G, ign, live, R, sc);
  check_rates(full, live, opt, sc, r);

  // The tangent space of the state constraints over the live states: G_L dx_L = 0. Column pivoting picks the
  // rank(G_L) best-conditioned columns as the dependent states; each is expressed in the others, so the reduced
  // state is the independent states themselves, by name: dx_L = T dx_i with T's independent rows the identity.
  const auto nl = static_cast<Eigen::Index>(live.size());
  std::vector<Eigen::Index> dep_local, indep_local;
  Eigen::MatrixXd E(0, nl);
  const Eigen::MatrixXd GL = G.rows() > 0 ? cols_of(G, live) : Eigen::MatrixXd(0, nl);
  R.constraint_rows = static_cast<int>(G.rows());
  if (GL.rows() > 0 && nl > 0) {
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(GL);
    qr.setThreshold(kRoundOff);
    const Eigen::Index rank = qr.rank();
    R.constraint_rank = static_cast<int>(rank);
    for (Eigen::Index k = 0; k < rank; ++k) dep_local.push_back(qr.colsPermutation().indices()(k));
    std::sort(dep_local.begin(), dep_local.end());
  }
  for (Eigen::Index k = 0; k < nl; ++k)
    if (!std::binary_search(dep_local.begin(), dep_local.end(), k)) indep_local.push_back(k);
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(nl, static_cast<Eigen::Index>(indep_local.size()));
  for (std::size_t k = 0; k < indep_local.size(); ++k) T(indep_local[k], static_cast<Eigen::Index>(k)) = 1;
  if (!dep_local.empty()) {
    const Eigen::MatrixXd Gd = cols_of(GL, dep_local), Gi = cols_of(GL, indep_local);
    E = -Gd.colPivHouseholderQr().solve(Gi);
    for (std::size_t k = 0; k < dep_local.size(); ++k) T.row(dep_local[k]) = E.row(static_cast<Eigen::Index>(k));
  }

  const Eigen::MatrixXd AL = cols_of(rows_of(full.A, live), live), BL = rows_of(full.B, live);
  const Eigen::MatrixXd AT = AL * T;
  if (GL.rows() > 0 && nl > 0) {
    Eigen::MatrixXd ATB(nl, AT.cols() + BL.cols());
    ATB << AT, BL;
    const double denom = max_abs(GL) * max_abs(ATB);
    R.invariance_residual = denom > 0 ? max_abs(GL * ATB) / denom : 0.0;
    if (R.invariance_residual > kInvariance)
      throw InputError(Origin{sc.path, 0, 0},
                       "the linearisation does not keep the model's position constraints: max|G [A T, B]| / (|G| "
                       "|[A T, B]|) = " + g6(R.invariance_residual) + " at the initial state, above " + g6(kInvariance) +
                           " (A must map the constraints' tangent space into itself); the initial state may violate "
                           "a constraint, or a state the constraints depend on is held in linear.steady");
  }

  // The reduced state: the independent live states.
  R.kept.clear();
  R.eliminated.clear();
  for (const Eigen::Index k : indep_local) R.kept.push_back(live[static_cast<std::size_t>(k)]);
  for (const Eigen::Index k : dep_local) {
    R.eliminated.push_back(live[static_cast<std::size_t>(k)]);
    R.treatment[static_cast<std::size_t>(live[static_cast<std::size_t>(k)])] = StateTreatment::Eliminated;
  }
  R.elimination = E;
  pick = usable_outputs(full, std::move(pick), default_outputs, ign, signals, R.kept, sc);

  linear::StateSpace& ss = r.ss;
  ss.A = rows_of(AT, indep_local);
  ss.B = rows_of(BL, indep_local);
  ss.C = rows_of(cols_of(full.C, live), pick) * T;
  ss.D = rows_of(full.D, pick);
  ss.f0 = rows_of(full.f0, R.kept);
  ss.y0 = rows_of(full.y0, pick);
  r.state_names.clear();
  r.state_units.clear();
  for (const Eigen::Index k : R.kept) {
    r.state_names.push_back(R.names[static_cast<std::size_t>(k)]);
    r.state_units.push_back(R.units[static_cast<std::size_t>(k)]);
  }
  r.x0 = rows_of(R.x0, R.kept);
  r.output_names.clear();
  r.output_units.clear();
  for (const Eigen::Index p : pick) {
    r.output_names.push_back(signals[static_cast<std::size_t>(p)].name);
    r.output_units.push_back(signals[static_cast<std::size_t>(p)].unit);
  }

  std::ostringstream m;
  const auto names_of = [&](StateTreatment t) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < R.names.size(); ++i)
      if (R.treatment[i] == t) v.push_back(R.names[i]);
    return v;
  };
  m << R.kept.size() << " of " << n << " states kept";
  if (!ign.empty()) m << "; dropped as ignorable (their columns of A zero): " << join(names_of(StateTreatment::Ignorable));
  if (!ledger.empty()) m << " (the energy ledger's " << join(ledger) << " without being listed)";
  if (!std_.empty()) m << "; held steady (rows and columns dropped): " << join(names_of(StateTreatment::Steady));
  if (R.constraint_rows > 0)
    m << "; " << R.eliminated.size() << " eliminated by the " << R.constraint_rows
      << " position constraint row(s) the model carries (rank " << R.constraint_rank
      << "; A restricted to their tangent space, the eliminated states in the kept ones: "
      << (R.eliminated.empty() ? std::string("none") : join(names_of(StateTreatment::Eliminated)))
      << "; invariance residual " << g6(R.invariance_residual) << ")";
  R.method = m.str();
}

void require_full_state(const LinearResult& r, const Scenario& sc, const std::string& what) {
  if (!r.states.reduced()) return;
  bool steady = false, ignorable = false;
  for (const auto t : r.states.treatment) {
    steady = steady || t == StateTreatment::Steady;
    ignorable = ignorable || t == StateTreatment::Ignorable;
  }
  const std::string message = what + " perturbs every state of the model along A's eigenvectors about an "
                              "equilibrium; this linearisation is reduced (" + r.states.method + "), which it cannot "
                              "follow" + (steady || ignorable ? ": run it without linear.ignorable and linear.steady" : "");
  if (steady) sc.fail("linear.steady", message);
  if (ignorable) sc.fail("linear.ignorable", message);
  throw InputError(Origin{sc.path, 0, 0}, message);  // states eliminated by the model's position constraints
}

}  // namespace rollsim
