#include "rollsim/hybrid/contacts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <Eigen/Dense>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/force_distribution.hpp"
#include "rollsim/hybrid/lcp.hpp"

namespace rollsim {

namespace {

constexpr const char* kModeNames[4] = {"open", "stick", "slide+", "slide-"};
/// Consistency is decided on values relative to their scale: below -kWeak a condition fails; above kStrict it
/// holds with a margin (two modes holding with a margin: forward motion is not unique).
constexpr double kWeak = 1e-8, kStrict = 1e-6;

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

double dot(const std::vector<double>& a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// The sliding sign of a contact mode (+1, -1; 0 for open and stick).
double slide_sign(int cm) { return cm == kSlidePlus ? 1.0 : cm == kSlideMinus ? -1.0 : 0.0; }
/// Whether a contact in mode cm presses on its surface (a contact without a gap always does).
bool is_closed(const ContactSpec& spec, int cm) { return !spec.unilateral || cm != kOpen; }
/// The bound of the friction force while sticking: the static coefficient (never below the kinetic one).
double stick_mu(const ContactTerms& c) { return std::max(c.mu, c.mu_static); }
/// A contact with friction whose coefficients are both zero here is frictionless: closed, it is in the one mode
/// kStick with no friction force (slide +, slide - and stick are one motion), and its stick witnesses never fire.
bool frictionless_here(const ContactSpec& spec, const ContactTerms& c) {
  return !spec.friction || (c.mu == 0 && c.mu_static <= 0);
}
/// A KKT matrix whose smallest pivot is below this, relative to the largest, has dependent rows: its forces are
/// chosen by the force distribution rule (force_distribution.hpp).
constexpr double kDependentPivot = 1e-10;

/// Per-thread room for the solves: no heap allocation once the sizes are reached.
struct Work {
  std::size_t n = 0, nc = 0, nk = 0;
  Eigen::MatrixXd M, A;
  Eigen::VectorXd f, rhs, sol;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  std::vector<ContactTerms> terms;
  std::vector<ConstraintTerms> cterms;
  ForceDistributionProblem dp;
  ForceDistribution dist;
  void ensure(std::size_t n_, std::size_t nc_, std::size_t nk_) {
    if (n == n_ && nc == nc_ && nk == nk_) return;
    n = n_;
    nc = nc_;
    nk = nk_;
    cterms.assign(nk, ConstraintTerms{});
    for (auto& c : cterms) c.G.assign(n, 0.0);
    const auto N = static_cast<Eigen::Index>(n + 2 * nc + nk);
    M.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    A.resize(N, N);
    f.resize(static_cast<Eigen::Index>(n));
    rhs.resize(N);
    sol.resize(N);
    lu = Eigen::PartialPivLU<Eigen::MatrixXd>(N);
    terms.assign(nc, ContactTerms{});
    for (auto& t : terms) {
      t.Wn.assign(n, 0.0);
      t.Wt.assign(n, 0.0);
    }
  }
};

/// The scalars of every contact's terms set to 0 before the model fills them: the per-thread room outlives a run,
/// and a term the model leaves alone (a built-in model's mu_static, which then means "as mu") must not keep the
/// value of an earlier run's model.
void clear_scalars(std::vector<ContactTerms>& terms) {
  for (auto& c : terms) c.gap = c.gap_bias = c.slip = c.slip_bias = c.mu = c.mu_static = c.restitution = c.given_normal = 0;
}

Work& work(std::size_t n, std::size_t nc, std::size_t nk) {
  thread_local Work w;
  w.ensure(n, nc, nk);
  return w;
}

}  // namespace

/// The accelerations, the contact forces and the contacts' kinematics in a mode.
struct ContactEngine::Solution {
  std::vector<double> a, lam_n, lam_t, gdot, gddot, wdot, lam_c;
  double rcond = 1;
  /// Dependent rows: the forces come from the distribution rule; best_margin is its s* (force_distribution.hpp).
  bool dependent = false;
  double best_margin = 0;
  void size(std::size_t n, std::size_t nc, std::size_t nk) {
    a.resize(n);
    lam_c.resize(nk);
    for (auto* v : {&lam_n, &lam_t, &gdot, &gddot, &wdot}) v->resize(nc);
  }
};

void ContactEngine::configure(std::size_t n, std::vector<ContactSpec> contacts, Signals base_states,
                              std::vector<double> x0, Signals user_outputs, std::vector<Witness> user_witnesses,
                              ContactSettings settings, std::vector<std::string> constraint_names) {
  constraint_names_ = std::move(constraint_names);
  n_ = n;
  contacts_ = std::move(contacts);
  n_base_ = base_states.size();
  states_ = std::move(base_states);
  moving_surfaces_ = false;
  for (const auto& c : contacts_) moving_surfaces_ = moving_surfaces_ || (c.friction && c.moving_surface);
  for (auto& st : engine_states(!constraint_names_.empty(), moving_surfaces_)) states_.push_back(std::move(st));
  x0_ = std::move(x0);
  x0_.resize(surface_work_state() + (moving_surfaces_ ? 1 : 0), 0.0);
  outputs_ = engine_outputs(contacts_, constraint_names_);
  n_user_outputs_ = user_outputs.size();
  for (auto& o : user_outputs) outputs_.push_back(std::move(o));
  user_witnesses_ = std::move(user_witnesses);
  settings_ = settings;
}

Signals ContactEngine::engine_states(bool constraints, bool moving_surfaces) {
  Signals v{{"dissipated_friction", "J", "energy taken by Coulomb friction since the start"},
            {"dissipated_impact", "J", "energy lost in impacts since the start"}};
  if (constraints)
    v.push_back({"work_constraints", "J",
                 "work done by the holonomic constraints' forces G^T lambda since the start (by a constraint that "
                 "moves in time)"});
  if (moving_surfaces)
    v.push_back({"work_surfaces", "J",
                 "work done on the system by the friction of moving surfaces (the slip's part w0 that does not vanish "
                 "with the rates) since the start"});
  return v;
}

Signals ContactEngine::engine_outputs(const std::vector<ContactSpec>& contacts,
                                      const std::vector<std::string>& constraint_names) {
  Signals out{{"kinetic_energy", "J", "kinetic energy T"},
              {"potential_energy", "J", "potential energy V"},
              {"energy", "J", "Jacobi energy h = q'.dL/dq' - L (T + V for a natural system)"},
              {"energy_balance", "J",
               std::string("h - work_forces + work_explicit_time + dissipated_friction + dissipated_impact") +
                   (constraint_names.empty() ? "" : " - work_constraints") +
                   (std::any_of(contacts.begin(), contacts.end(),
                                [](const ContactSpec& c) { return c.friction && c.moving_surface; })
                        ? " - work_surfaces"
                        : "") +
                   ": constant"}};
  for (const auto& c : contacts) {
    if (c.unilateral) {
      out.push_back({"gap_" + c.name, "m", "gap g of contact " + c.name});
      out.push_back({"gap_rate_" + c.name, "m/s", "g' of contact " + c.name});
    }
    out.push_back({"normal_force_" + c.name, "N", "normal force of contact " + c.name + " (its multiplier)"});
    if (c.friction) {
      out.push_back({"tangential_force_" + c.name, "N",
                     "friction force of contact " + c.name + " along dw/dq' (opposes w when sliding)"});
      out.push_back({"slip_velocity_" + c.name, "m/s", "slip velocity w of contact " + c.name});
    }
  }
  for (const auto& name : constraint_names) {
    out.push_back({"lambda_" + name, "", "multiplier of constraint " + name + " (its generalized force is G^T lambda)"});
    out.push_back({"constraint_" + name, "", "residual of constraint " + name});
  }
  return out;
}

namespace {
constexpr const char* kWitnessPrefixes[5] = {"gap_", "normal_force_", "stick_margin_plus_", "stick_margin_minus_",
                                             "slip_velocity_"};
}

std::vector<std::string> ContactEngine::witness_names(const ContactSpec& c) {
  std::vector<std::string> v;
  for (const char* p : kWitnessPrefixes) v.push_back(p + c.name);
  return v;
}

void ContactEngine::initial_state(double* x0) const { std::copy(x0_.begin(), x0_.end(), x0); }

std::string ContactEngine::mode_name(int mode) const {
  std::string s;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const int cm = contact_mode(mode, k);
    s += (k ? "," : "") + contacts_[k].name + ":" +
         (cm == kStick && !contacts_[k].friction ? "closed" : kModeNames[cm]);
  }
  return s;
}

void ContactEngine::fill_terms(double t, const double* x, std::vector<ContactTerms>& terms) const {
  clear_scalars(terms);
  contact_terms(t, x, terms.data());
}

bool ContactEngine::solve(double t, const double* x, int mode, Solution& s) const {
  const std::size_t n = n_, nc = contacts_.size(), nk = constraint_names_.size();
  Work& w = work(n, nc, nk);
  s.size(n, nc, nk);
  mass_and_forces(t, x, w.M.data(), w.f.data());
  fill_terms(t, x, w.terms);
  if (nk) constraint_terms(t, x, w.cterms.data());
  const auto ni = static_cast<Eigen::Index>(n);
  w.A.setZero();
  w.A.topLeftCorner(ni, ni) = w.M;
  w.rhs.setZero();
  w.rhs.head(ni) = w.f;
  const double alpha = settings_.stabilization_rate;
  const double* v = x + n;
  for (std::size_t k = 0; k < nc; ++k) {
    const ContactTerms& c = w.terms[k];
    const ContactSpec& spec = contacts_[k];
    const int cm = contact_mode(mode, k);
    const auto rn = static_cast<Eigen::Index>(n + 2 * k), rt = rn + 1;
    const double sgn = slide_sign(cm);
    const bool closed = is_closed(spec, cm);
    s.gdot[k] = spec.unilateral ? dot(c.Wn, v, n) : 0.0;
    if (spec.unilateral && closed) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        w.A(ii, rn) = -(c.Wn[i] - (spec.friction ? sgn * c.mu * c.Wt[i] : 0.0));
        w.A(rn, ii) = c.Wn[i];
      }
      w.rhs(rn) = -(c.gap_bias + 2 * alpha * s.gdot[k] + alpha * alpha * c.gap);
    } else {
      w.A(rn, rn) = 1;
    }
    if (!spec.unilateral && spec.friction && sgn != 0)
      for (std::size_t i = 0; i < n; ++i) w.rhs(static_cast<Eigen::Index>(i)) -= sgn * c.mu * c.given_normal * c.Wt[i];
    if (spec.friction && closed && cm == kStick && !frictionless_here(spec, c)) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        w.A(ii, rt) = -c.Wt[i];
        w.A(rt, ii) = c.Wt[i];
      }
      w.rhs(rt) = -(c.slip_bias + alpha * c.slip);
    } else {
      w.A(rt, rt) = 1;
    }
  }
  for (std::size_t j = 0; j < nk; ++j) {
    const ConstraintTerms& c = w.cterms[j];
    const auto r = static_cast<Eigen::Index>(n + 2 * nc + j);
    for (std::size_t i = 0; i < n; ++i) {
      const auto ii = static_cast<Eigen::Index>(i);
      w.A(ii, r) = -c.G[i];
      w.A(r, ii) = c.G[i];
    }
    w.rhs(r) = -(c.bias + 2 * alpha * c.rate + alpha * alpha * c.value);
  }
  w.lu.compute(w.A);
  // Eigen's LU goes on past a zero pivot (dependent constraints, e.g. more closed contacts than freedoms) and its
  // rcond estimate can miss it; the smallest pivot relative to the largest does not.
  {
    const auto piv = w.lu.matrixLU().diagonal().cwiseAbs();
    s.rcond = std::min(w.lu.rcond(), piv.minCoeff() / std::max(piv.maxCoeff(), std::numeric_limits<double>::min()));
  }
  s.dependent = !(s.rcond >= kDependentPivot);  // a zero pivot can make the estimate NaN
  bool ok = true;
  if (!s.dependent) {
    w.sol = w.lu.solve(w.rhs);
  } else {
    // Dependent rows (a statically indeterminate support): the rows held and the cone conditions go to the force
    // distribution rule, which picks one of the many force distributions (force_distribution.hpp).
    std::vector<Eigen::Index> held;
    for (Eigen::Index r = ni; r < w.A.rows(); ++r)
      if (w.A(r, r) != 1 || w.A.row(r).head(ni).any()) held.push_back(r);
    const auto m = static_cast<Eigen::Index>(held.size());
    ForceDistributionProblem& p = w.dp;
    p.M = w.M;
    p.J.resize(m, ni);
    p.C.resize(ni, m);
    p.b.resize(m);
    for (Eigen::Index r = 0; r < m; ++r) {
      const Eigen::Index row = held[static_cast<std::size_t>(r)];
      p.J.row(r) = w.A.row(row).head(ni);
      p.C.col(r) = -w.A.col(row).head(ni);
      p.b(r) = w.rhs(row);
    }
    p.f = w.rhs.head(ni);
    auto index_of = [&](Eigen::Index row) -> Eigen::Index {
      const auto it = std::find(held.begin(), held.end(), row);
      return it == held.end() ? -1 : static_cast<Eigen::Index>(it - held.begin());
    };
    std::vector<Eigen::RowVectorXd> prow;
    std::vector<double> p0;
    for (std::size_t k = 0; k < nc; ++k) {
      const ContactSpec& spec = contacts_[k];
      const int cm = contact_mode(mode, k);
      if (!is_closed(spec, cm)) continue;
      const Eigen::Index in = index_of(static_cast<Eigen::Index>(n + 2 * k));
      const Eigen::Index it = index_of(static_cast<Eigen::Index>(n + 2 * k + 1));
      if (in >= 0) {
        prow.push_back(Eigen::RowVectorXd::Unit(m, in));
        p0.push_back(0.0);
      }
      if (it >= 0) {
        const double mu = stick_mu(w.terms[k]);
        for (const double side : {-1.0, 1.0}) {
          Eigen::RowVectorXd r = Eigen::RowVectorXd::Zero(m);
          r(it) = side;
          double c0 = 0;
          if (in >= 0) r(in) = mu;
          else c0 = mu * w.terms[k].given_normal;
          prow.push_back(r);
          p0.push_back(c0);
        }
      }
    }
    p.P.resize(static_cast<Eigen::Index>(prow.size()), m);
    p.p0.resize(static_cast<Eigen::Index>(prow.size()));
    for (std::size_t r = 0; r < prow.size(); ++r) {
      p.P.row(static_cast<Eigen::Index>(r)) = prow[r];
      p.p0(static_cast<Eigen::Index>(r)) = p0[r];
    }
    ok = distribute_forces(p, w.dist);
    s.best_margin = w.dist.best_margin;
    w.sol.setZero();
    w.sol.head(ni) = w.dist.a;
    for (Eigen::Index r = 0; r < m; ++r) w.sol(held[static_cast<std::size_t>(r)]) = w.dist.lambda(r);
  }
  for (std::size_t i = 0; i < n; ++i) {
    s.a[i] = w.sol(static_cast<Eigen::Index>(i));
    ok = ok && std::isfinite(s.a[i]);
  }
  for (std::size_t k = 0; k < nc; ++k) {
    const ContactTerms& c = w.terms[k];
    const ContactSpec& spec = contacts_[k];
    const int cm = contact_mode(mode, k);
    const auto rn = static_cast<Eigen::Index>(n + 2 * k), rt = rn + 1;
    const double sgn = slide_sign(cm);
    const bool closed = is_closed(spec, cm);
    s.lam_n[k] = !spec.unilateral ? c.given_normal : closed ? w.sol(rn) : 0.0;
    s.lam_t[k] = !spec.friction || !closed       ? 0.0
                 : cm == kStick                 ? (frictionless_here(spec, c) ? 0.0 : w.sol(rt))
                                                : -sgn * c.mu * s.lam_n[k];
    s.gddot[k] = spec.unilateral ? dot(c.Wn, s.a.data(), n) + c.gap_bias : 0.0;
    s.wdot[k] = spec.friction ? dot(c.Wt, s.a.data(), n) + c.slip_bias : 0.0;
  }
  for (std::size_t j = 0; j < nk; ++j) s.lam_c[j] = w.sol(static_cast<Eigen::Index>(n + 2 * nc + j));
  return ok;
}

void ContactEngine::rhs(double t, const double* x, int mode, double* xdot) const {
  thread_local Solution s;
  solve(t, x, mode, s);
  const std::size_t n = n_;
  std::copy(x + n, x + 2 * n, xdot);
  std::copy(s.a.begin(), s.a.end(), xdot + n);
  extra_rates(t, x, s.a.data(), xdot + 2 * n);
  // The friction force lambda_T acts along W_t, so its power on the system is lambda_T W_t.q' = lambda_T (w - w0),
  // w0 = w - W_t.q' the part of the slip that does not vanish with the rates (a moving surface). It splits into
  // the dissipation D' = -lambda_T w >= 0 while sliding, and the moving surface's work W_S' = -lambda_T w0. A
  // sticking contact dissipates nothing (w = 0; what its force does against the slip's drift is the constraint's
  // error, like the normal force's against the gap's, and the energy balance carries it).
  const Work& w = work(n, contacts_.size(), constraint_names_.size());
  double pf = 0, ps = 0;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const int cm = contact_mode(mode, k);
    if (!contacts_[k].friction || !is_closed(contacts_[k], cm)) continue;
    const double wq = dot(w.terms[k].Wt, x + n, n);
    if (cm == kSlidePlus || cm == kSlideMinus) pf -= s.lam_t[k] * (contacts_[k].moving_surface ? w.terms[k].slip : wq);
    if (contacts_[k].moving_surface) ps -= s.lam_t[k] * (w.terms[k].slip - wq);
  }
  xdot[n_base_] = pf;
  if (moving_surfaces_) xdot[surface_work_state()] = ps;
  xdot[n_base_ + 1] = 0;
  // The constraints' work: the power of G^T lambda_C on q' (nonzero for a constraint that moves in time).
  if (!constraint_names_.empty()) {
    double pc = 0;
    for (std::size_t j = 0; j < constraint_names_.size(); ++j) pc += s.lam_c[j] * dot(w.cterms[j].G, x + n, n);
    xdot[n_base_ + 2] = pc;
  }
}

std::vector<Witness> ContactEngine::witnesses(int mode) const {
  std::vector<Witness> v;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const ContactSpec& c = contacts_[k];
    const int cm = contact_mode(mode, k);
    if (c.unilateral) {
      if (cm == kOpen)
        v.push_back({kWitnessPrefixes[0] + c.name, -1, false, true});
      else
        v.push_back({kWitnessPrefixes[1] + c.name, -1, false, true});
    }
    if (c.friction && (cm != kOpen || !c.unilateral)) {
      if (cm == kStick) {
        v.push_back({kWitnessPrefixes[2] + c.name, -1, false, true});
        v.push_back({kWitnessPrefixes[3] + c.name, -1, false, true});
      } else {
        v.push_back({kWitnessPrefixes[4] + c.name, cm == kSlidePlus ? -1 : 1, false, true});
      }
    }
  }
  for (const auto& u : user_witnesses_) v.push_back(u);
  return v;
}

std::size_t ContactEngine::witness_count(int mode) const {
  std::size_t count = user_witnesses_.size();
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const ContactSpec& c = contacts_[k];
    const int cm = contact_mode(mode, k);
    if (c.unilateral) ++count;
    if (c.friction && (cm != kOpen || !c.unilateral)) count += cm == kStick ? 2 : 1;
  }
  return count;
}

void ContactEngine::witness_values(double t, const double* x, int mode, double* g) const {
  thread_local Solution s;
  solve(t, x, mode, s);
  const Work& w = work(n_, contacts_.size(), constraint_names_.size());
  std::size_t j = 0;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const ContactSpec& c = contacts_[k];
    const int cm = contact_mode(mode, k);
    const ContactTerms& ct = w.terms[k];
    if (c.unilateral) g[j++] = cm == kOpen ? ct.gap : s.lam_n[k];
    if (c.friction && (cm != kOpen || !c.unilateral)) {
      if (cm == kStick && frictionless_here(c, ct)) {
        g[j++] = 1;  // no friction force, no slip event: the contact is frictionless here
        g[j++] = 1;
      } else if (cm == kStick) {
        g[j++] = stick_mu(ct) * s.lam_n[k] - s.lam_t[k];
        g[j++] = stick_mu(ct) * s.lam_n[k] + s.lam_t[k];
      } else {
        g[j++] = ct.slip;
      }
    }
  }
  if (!user_witnesses_.empty()) user_witness_values(t, x, s.a.data(), g + j);
}

bool ContactEngine::energy_ledger(double t, const double* x, int /*mode*/, EnergyLedger& e) const {
  // The audit asks at every step and event: a friction coefficient that an expression turned negative, or a static
  // one below the kinetic one, ends the run with the time.
  Work& w = work(n_, contacts_.size(), constraint_names_.size());
  fill_terms(t, x, w.terms);
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const ContactTerms& ct = w.terms[k];
    if (contacts_[k].friction && (!(ct.mu >= 0) || ct.mu_static < 0 || (ct.mu_static > 0 && ct.mu_static < ct.mu)))
      throw SolverError("contact " + contacts_[k].name + ": the friction coefficient is mu = " + num(ct.mu) +
                        (ct.mu_static > 0 ? " (static " + num(ct.mu_static) + ")" : std::string()) + " at t = " +
                        num(t) + "; Coulomb's law needs 0 <= mu <= mu_s: check the expressions of "
                        "friction_coefficient and static_friction_coefficient");
  }
  double T, V, h, E;
  energies(t, x, T, V, h, E);
  e.energy = E - constraint_work(x) - surface_work(x);
  e.dissipated = x[n_base_] + x[n_base_ + 1];
  e.dissipated_state = static_cast<int>(n_base_);
  // The sum of the parts' magnitudes (docs/audit.md): the energies, the model's works E - h (W_Q, P, a torque's
  // work), the constraints' and the moving surfaces' works, and both dissipated energies.
  e.scale = std::max(std::abs(h), std::abs(T) + std::abs(V)) + std::abs(E - h) + std::abs(constraint_work(x)) +
            std::abs(surface_work(x)) + std::abs(x[n_base_]) + std::abs(x[n_base_ + 1]);
  return true;
}

void ContactEngine::compute_outputs(double t, const double* x, int mode, double* y) const {
  thread_local Solution s;
  solve(t, x, mode, s);
  const Work& w = work(n_, contacts_.size(), constraint_names_.size());
  double T, V, h, E;
  energies(t, x, T, V, h, E);
  y[0] = T;
  y[1] = V;
  y[2] = h;
  y[3] = E - constraint_work(x) - surface_work(x) + x[n_base_] + x[n_base_ + 1];
  std::size_t j = 4;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const ContactSpec& c = contacts_[k];
    if (c.unilateral) {
      y[j++] = w.terms[k].gap;
      y[j++] = s.gdot[k];
    }
    y[j++] = s.lam_n[k];
    if (c.friction) {
      y[j++] = s.lam_t[k];
      y[j++] = w.terms[k].slip;
    }
  }
  for (std::size_t c = 0; c < constraint_names_.size(); ++c) {
    y[j++] = s.lam_c[c];
    y[j++] = w.cterms[c].value;
  }
  if (n_user_outputs_) user_output_values(t, x, s.a.data(), y + j);
}

std::vector<std::string> ContactEngine::event_extras() const {
  std::vector<std::string> v;
  bool friction = false;
  for (const auto& c : contacts_)
    if (c.unilateral) {
      v.push_back("impulse_normal_" + c.name);
      if (c.friction) v.push_back("impulse_tangential_" + c.name);
      friction = friction || c.friction;
    }
  v.push_back("kinetic_energy_loss");
  if (friction) v.push_back("tangential_restitution");
  v.push_back("lcp_candidates");
  v.push_back("lcp_impulse_candidates");
  return v;
}

// ---- choosing modes ----------------------------------------------------------------------------------------

namespace {

/// A candidate's worst condition, relative to its scale, and what it is (for messages).
struct Verdict {
  double margin = std::numeric_limits<double>::infinity();
  std::string worst;
  bool singular = false;
  void check(double value, double scale, const std::string& what) {
    const double m = value / std::max(scale, std::numeric_limits<double>::min());
    if (m < margin) {
      margin = m;
      worst = what + " = " + num(value);
    }
  }
  bool weak() const { return !singular && margin >= -kWeak; }
  bool strict() const { return !singular && margin > kStrict; }
};

/// Odometer over per-contact candidate lists.
bool next(std::vector<std::size_t>& idx, const std::vector<std::vector<int>>& options) {
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (++idx[k] < options[k].size()) return true;
    idx[k] = 0;
  }
  return false;
}

}  // namespace

struct ContactEngine::Choice {
  int mode = 0;
  Verdict verdict;
  int changes = 0;
};


namespace {

double combinations(const std::vector<std::vector<int>>& options) {
  double n = 1;
  for (const auto& o : options) n *= static_cast<double>(o.size());
  return n;
}

/// The enumeration's size: the product of each contact's choices. Above kMaxCombinations (4^8: eight contacts
/// undecided at once) the exact enumeration is refused rather than run for minutes.
void check_combinations(const std::vector<std::vector<int>>& options, double t, const char* what) {
  const double n = combinations(options);
  std::size_t undecided = 0;
  for (const auto& o : options) undecided += o.size() > 1;
  if (n > ContactSettings::kMaxCombinations)
    throw SolverError(std::string(what) + " at t = " + num(t) + ": " + std::to_string(undecided) +
                      " contacts are undecided at once (" + num(n) + " combinations of their modes); the exact "
                      "enumeration takes at most " + num(ContactSettings::kMaxCombinations) +
                      ": set nonsmooth.mode_selection = \"auto\" or \"lcp\" to narrow them by the LCP first, or "
                      "let fewer contacts touch at once");
}

/// Whether the LCP narrows the combinations first.
bool narrow_first(const ContactSettings& s, const std::vector<std::vector<int>>& options) {
  const double n = combinations(options);
  return (s.mode_selection == ModeSelection::Lcp && n > 1) ||
         (s.mode_selection == ModeSelection::Auto && n > ContactSettings::kAutoCombinations);
}

double max_abs(const Eigen::VectorXd& v) { return v.size() ? v.cwiseAbs().maxCoeff() : 0.0; }

/// One contact in the LCP: its normal row (or -1: a given normal force) and its tangential row (or -1: no
/// friction unknown, the friction being absent or sliding in a known direction).
struct LcpContact {
  std::size_t contact = 0;
  int normal = -1, tangential = -1;
};

/// M^-1 on the motions that keep the holonomic constraints held with the contacts (G q'' = b_c):
/// solve(X) = M^-1 X - M^-1 G^T S^+ G M^-1 X (S = G M^-1 G^T, S^+ its least-squares inverse, so that dependent
/// constraints do no harm), and the part of the motion that the constraints' own right side b_c causes,
/// particular(b_c) = M^-1 G^T S^+ b_c. Without constraints, M^-1 and 0.
class ConstrainedInverse {
 public:
  ConstrainedInverse(const Eigen::MatrixXd& M, const std::vector<ConstraintTerms>& constraints) : lu_(M) {
    const auto n = M.rows(), nk = static_cast<Eigen::Index>(constraints.size());
    G_.resize(nk, n);
    for (Eigen::Index j = 0; j < nk; ++j)
      G_.row(j) = Eigen::Map<const Eigen::RowVectorXd>(constraints[static_cast<std::size_t>(j)].G.data(), n);
    if (nk) {
      MiGt_ = lu_.solve(G_.transpose());
      S_.compute(G_ * MiGt_);
    }
  }
  Eigen::MatrixXd solve(const Eigen::MatrixXd& X) const {
    Eigen::MatrixXd Y = lu_.solve(X);
    if (G_.rows()) Y -= MiGt_ * S_.solve(G_ * Y);
    return Y;
  }
  Eigen::VectorXd particular(const Eigen::VectorXd& bc) const {
    return G_.rows() ? Eigen::VectorXd(MiGt_ * S_.solve(bc)) : Eigen::VectorXd::Zero(lu_.rows());
  }

 private:
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Eigen::MatrixXd G_, MiGt_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> S_;
};

/// G = R P C (P: M^-1 on the constrained motions), rows R and columns C given as n-vectors.
Eigen::MatrixXd delassus(const ConstrainedInverse& lu, const std::vector<Eigen::VectorXd>& rows,
                         const std::vector<Eigen::VectorXd>& cols) {
  const auto m = static_cast<Eigen::Index>(rows.size());
  const Eigen::Index n = rows.empty() ? 0 : rows.front().size();
  Eigen::MatrixXd R(m, n), C(n, m);
  for (Eigen::Index r = 0; r < m; ++r) {
    R.row(r) = rows[static_cast<std::size_t>(r)].transpose();
    C.col(r) = cols[static_cast<std::size_t>(r)];
  }
  return R * lu.solve(C);
}

/// The modes (open/no impulse 0, stick 1, slide + 2, slide - 3) that a solution of the LCP allows a contact:
/// one where the solution decides, both sides where a force and its rate are both zero. `closed_slide`: the
/// only closed mode of a contact sliding in a known direction (0: none such).
std::vector<int> modes_allowed(const PlanarContactSolution& s, const LcpContact& c, std::size_t n_normal,
                               bool friction, int closed_slide, double fzero, double yzero) {
  bool open_ok = false, closed_ok = true;
  if (c.normal >= 0) {
    open_ok = s.lambda(c.normal) <= fzero;
    closed_ok = s.y(c.normal) <= yzero;
  }
  std::vector<int> v;
  if (open_ok) v.push_back(kOpen);
  if (!closed_ok) return v;
  if (!friction) {
    v.push_back(kStick);
  } else if (c.tangential < 0) {
    v.push_back(closed_slide);
  } else {
    const auto i = static_cast<Eigen::Index>(n_normal) + c.tangential;
    const double yt = s.y(i);
    const bool rest = std::abs(yt) <= yzero;
    if (rest) v.push_back(kStick);
    if (yt > yzero || (rest && s.edge_plus(c.tangential) <= fzero)) v.push_back(kSlidePlus);
    if (yt < -yzero || (rest && s.edge_minus(c.tangential) <= fzero)) v.push_back(kSlideMinus);
  }
  return v;
}

/// Above this many combinations left by the LCP, the contacts it leaves undecided take its own reading alone.
constexpr double kNarrowedBudget = 256;

/// Narrows each contact's options to those the LCP's solution allows (a contact whose options the solution
/// allows none of keeps all of them). Where that still leaves more than kNarrowedBudget combinations (many
/// contacts with a zero force and a zero rate at once, such as the unloaded feet of a statically indeterminate
/// support), each such contact but `keep_all` (the one whose event this is) takes one reading: with
/// `prefer_closed`, sticking (or closed) where the solution allows it, so that every touching contact shares the
/// load by the force distribution rule; else the solution's own, open (no impulse) where its force is zero.
/// Returns whether that reading was taken. Throws if the LCP solver finds no solution.
bool narrow_options(const PlanarContactProblem& p, const std::vector<LcpContact>& lc,
                    const std::vector<ContactSpec>& specs, const std::vector<int>& closed_slide,
                    std::vector<std::vector<int>>& options, int keep_all, const char* what,
                    const std::string& where, bool prefer_closed = false) {
  PlanarContactSolution s;
  if (!solve_planar_contacts(p, s))
    throw SolverError(std::string(what) + ": the LCP solver (Lemke) found no solution" + where +
                      ": no consistent set of contact forces was found (the Painlevé paradox, or contact constraints "
                      "that contradict each other); nonsmooth.mode_selection = \"enumerate\" checks every combination "
                      "of fewer contacts");
  const double fzero = kStrict * std::max(max_abs(s.lambda), std::numeric_limits<double>::min());
  const double yzero = kStrict * std::max({max_abs(s.y), max_abs(p.d), std::numeric_limits<double>::min()});
  for (std::size_t j = 0; j < lc.size(); ++j) {
    if (options[j].size() <= 1) continue;
    const std::size_t k = lc[j].contact;
    const std::vector<int> allowed =
        modes_allowed(s, lc[j], p.n_normal, specs[k].friction, closed_slide[j], fzero, yzero);
    std::vector<int> kept;
    for (const int m : options[j])
      if (std::find(allowed.begin(), allowed.end(), m) != allowed.end()) kept.push_back(m);
    if (!kept.empty()) options[j] = kept;
  }
  if (combinations(options) <= kNarrowedBudget) return false;
  for (std::size_t j = 0; j < options.size(); ++j) {
    auto& o = options[j];
    if (o.size() <= 1 || static_cast<int>(j) == keep_all) continue;
    const bool open = std::find(o.begin(), o.end(), kOpen) != o.end();
    const bool stick = std::find(o.begin(), o.end(), kStick) != o.end();
    o = {prefer_closed ? (stick ? kStick : open ? kOpen : o.front()) : (open ? kOpen : stick ? kStick : o.front())};
  }
  return true;
}

}  // namespace

bool ContactEngine::narrow_modes(double t, const double* x, int current, int fired,
                                 std::vector<std::vector<int>>& options, const std::string& where,
                                 bool prefer_closed) const {
  const std::size_t n = n_, nc = contacts_.size();
  Solution probe;
  solve(t, x, current, probe);
  const Work& w = work(n, nc, constraint_names_.size());
  const auto ni = static_cast<Eigen::Index>(n);
  const ConstrainedInverse lu(w.M, w.cterms);
  const double alpha = settings_.stabilization_rate;
  auto has = [&](std::size_t k, int m) { return std::find(options[k].begin(), options[k].end(), m) != options[k].end(); };
  // The smooth forces and the friction of contacts sliding in a known direction with a given normal force.
  Eigen::VectorXd f = w.f;
  std::vector<LcpContact> lc(nc);
  std::vector<int> closed_slide(nc, 0);
  std::vector<Eigen::VectorXd> nrows, ncols, trows;
  for (std::size_t k = 0; k < nc; ++k) {
    const ContactSpec& c = contacts_[k];
    const ContactTerms& ct = w.terms[k];
    lc[k].contact = k;
    const Eigen::Map<const Eigen::VectorXd> Wn(ct.Wn.data(), ni), Wt(ct.Wt.data(), ni);
    const bool closable = !c.unilateral || has(k, kStick) || has(k, kSlidePlus) || has(k, kSlideMinus);
    if (!closable) continue;
    const bool at_rest = c.friction && (has(k, kStick) || (has(k, kSlidePlus) && has(k, kSlideMinus)));
    if (c.friction && !at_rest) closed_slide[k] = has(k, kSlidePlus) ? kSlidePlus : kSlideMinus;
    const double sgn = slide_sign(closed_slide[k]);
    if (c.unilateral) {
      lc[k].normal = static_cast<int>(nrows.size());
      nrows.push_back(Wn);
      ncols.push_back(Wn - sgn * ct.mu * Wt);
    } else if (sgn != 0) {
      f -= sgn * ct.mu * ct.given_normal * Wt;
    }
    if (at_rest) {
      lc[k].tangential = static_cast<int>(trows.size());
      trows.push_back(Wt);
    }
  }
  PlanarContactProblem p;
  p.n_normal = nrows.size();
  std::vector<Eigen::VectorXd> rows = nrows, cols = ncols;
  rows.insert(rows.end(), trows.begin(), trows.end());
  cols.insert(cols.end(), trows.begin(), trows.end());
  p.G = delassus(lu, rows, cols);
  Eigen::VectorXd bc(static_cast<Eigen::Index>(w.cterms.size()));
  for (std::size_t j = 0; j < w.cterms.size(); ++j) {
    const ConstraintTerms& c = w.cterms[j];
    bc(static_cast<Eigen::Index>(j)) = -(c.bias + 2 * alpha * c.rate + alpha * alpha * c.value);
  }
  const Eigen::VectorXd a0 = lu.solve(f) + lu.particular(bc);
  p.d.resize(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t k = 0; k < nc; ++k) {
    const ContactTerms& ct = w.terms[k];
    if (lc[k].normal >= 0)
      p.d(lc[k].normal) = rows[static_cast<std::size_t>(lc[k].normal)].dot(a0) + ct.gap_bias +
                          2 * alpha * probe.gdot[k] + alpha * alpha * ct.gap;
    if (lc[k].tangential >= 0) {
      const auto i = static_cast<Eigen::Index>(p.n_normal) + lc[k].tangential;
      p.d(i) = rows[static_cast<std::size_t>(i)].dot(a0) + ct.slip_bias + alpha * ct.slip;
      p.normal_of.push_back(lc[k].normal);
      p.mu.push_back(ct.mu);
      p.bound.push_back(contacts_[k].unilateral ? 0.0 : ct.given_normal);
    }
  }
  return narrow_options(p, lc, contacts_, closed_slide, options, fired, "contact modes", where, prefer_closed);
}

int ContactEngine::select_mode(double t, const double* x, int current, int fired, int left, const char* when,
                               double* lcp_candidates) const {
  const std::size_t n = n_, nc = contacts_.size();
  const double gtol = settings_.gap_tolerance;
  const double* v = x + n;
  // A gap rate or a slip counts as zero below vtol: far below the capture velocity (so that a rebound, however
  // slow, opens the contact) and relative to the rates, for the rounding of a closed or sticking contact.
  double vscale = 0;
  for (std::size_t i = 0; i < n; ++i) vscale = std::max(vscale, std::abs(v[i]));
  const double vtol = 1e-9 * vscale + 1e-3 * settings_.rest_speed();
  std::vector<std::vector<int>> options(nc);
  {
    const Work& w0 = work(n, nc, constraint_names_.size());
    Solution probe;
    solve(t, x, current, probe);  // fills the terms
    for (std::size_t k = 0; k < nc; ++k) {
      const ContactSpec& c = contacts_[k];
      const ContactTerms& ct = w0.terms[k];
      std::vector<int> closed;
      if (c.friction && frictionless_here(c, ct)) {
        closed = {kStick};  // mu = 0: stick, slide + and slide - are one frictionless motion
      } else if (c.friction) {
        if (std::abs(ct.slip) > vtol)
          closed = {ct.slip > 0 ? kSlidePlus : kSlideMinus};
        else
          closed = {kStick, kSlidePlus, kSlideMinus};
      } else {
        closed = {kStick};
      }
      auto& o = options[k];
      if (c.unilateral) {
        const double gd = dot(ct.Wn, v, n);
        o.push_back(kOpen);
        if (ct.gap <= gtol && gd <= vtol) o.insert(o.end(), closed.begin(), closed.end());
      } else {
        o = closed;
      }
      if (static_cast<int>(k) == fired && o.size() > 1) o.erase(std::remove(o.begin(), o.end(), left), o.end());
    }
  }
  auto where = [&] { return std::string(" at t = ") + num(t) + " (" + when + ", from mode " + mode_name(current) + ")"; };
  // Many contacts at rest at once: the closed reading first (every touching contact shares the load), the LCP
  // solution's own reading where no mode of the closed one is consistent.
  const std::vector<std::vector<int>> unnarrowed = options;
  bool closed_reading = false;
  if (narrow_first(settings_, options)) {
    closed_reading = narrow_modes(t, x, current, fired, options, where(), true);
    if (lcp_candidates) *lcp_candidates = combinations(options);
  }
  // The accelerations' scale: those of the mode, and those the smooth forces would cause with every contact open,
  // so that a body held at rest (accelerations of rounding size) is not judged on its rounding.
  double free_scale = 0;
  {
    Solution probe;
    solve(t, x, current, probe);
    const Work& w0 = work(n, nc, constraint_names_.size());
    const Eigen::VectorXd a_free = w0.M.partialPivLu().solve(w0.f);
    free_scale = max_abs(a_free);
    for (std::size_t k = 0; k < nc; ++k)
      free_scale = std::max({free_scale, std::abs(dot(w0.terms[k].Wn, a_free.data(), n)),
                             std::abs(dot(w0.terms[k].Wt, a_free.data(), n))});
  }
  std::vector<Choice> strict, weak;
  Choice nearest;
  auto enumerate = [&] {
    strict.clear();
    weak.clear();
    nearest = Choice{};
    nearest.verdict.margin = -std::numeric_limits<double>::infinity();
    check_combinations(options, t, "contact modes");
    std::vector<std::size_t> idx(nc, 0);
    Solution s;
    do {
      int mode = 0;
      for (std::size_t k = 0; k < nc; ++k) mode = with_contact_mode(mode, k, options[k][idx[k]]);
      Choice ch;
      ch.mode = mode;
      for (std::size_t k = 0; k < nc; ++k) ch.changes += contact_mode(mode, k) != contact_mode(current, k);
      const bool ok = solve(t, x, mode, s);
      const Work& w = work(n, nc, constraint_names_.size());
      if (!ok) {
        ch.verdict.singular = true;
        ch.verdict.worst = s.dependent ? "the contact constraints are dependent and contradict each other"
                                       : "the contact constraints are dependent (singular matrix)";
      } else {
        double fscale = 0, ascale = free_scale;
        for (std::size_t i = 0; i < n; ++i) ascale = std::max(ascale, std::abs(s.a[i]));
        for (std::size_t k = 0; k < nc; ++k) {
          fscale = std::max({fscale, std::abs(s.lam_n[k]), std::abs(s.lam_t[k])});
          ascale = std::max({ascale, std::abs(s.gddot[k]), std::abs(s.wdot[k]), std::abs(w.terms[k].gap_bias),
                             std::abs(w.terms[k].slip_bias)});
        }
        for (std::size_t k = 0; k < nc; ++k) {
          const ContactSpec& c = contacts_[k];
          const ContactTerms& ct = w.terms[k];
          const int cm = contact_mode(mode, k);
          const bool closed = is_closed(c, cm);
          if (c.unilateral && !closed && ct.gap <= gtol && std::abs(s.gdot[k]) <= vtol)
            ch.verdict.check(s.gddot[k], ascale, c.name + ": open at zero gap needs g'' >= 0; g''");
          if (c.unilateral && closed) ch.verdict.check(s.lam_n[k], fscale, c.name + ": closed needs lambda_N >= 0; lambda_N");
          if (c.friction && closed && cm == kStick && !frictionless_here(c, ct))
            ch.verdict.check(stick_mu(ct) * s.lam_n[k] - std::abs(s.lam_t[k]), fscale,
                             c.name + ": sticking needs |lambda_T| <= mu_s lambda_N; mu_s lambda_N - |lambda_T|");
          if (c.friction && closed && cm != kStick && std::abs(ct.slip) <= vtol)
            ch.verdict.check((cm == kSlidePlus ? 1 : -1) * s.wdot[k], ascale,
                             c.name + ": " + kModeNames[cm] + " from w = 0 needs s w' >= 0; s w'");
        }
      }
      if (ch.verdict.strict()) strict.push_back(ch);
      if (ch.verdict.weak()) weak.push_back(ch);
      if (!ch.verdict.singular && ch.verdict.margin > nearest.verdict.margin) nearest = ch;
    } while (next(idx, options));
  };
  enumerate();
  if (closed_reading && strict.empty() && weak.empty()) {
    options = unnarrowed;
    narrow_modes(t, x, current, fired, options, where(), false);
    if (lcp_candidates) *lcp_candidates = combinations(options);
    enumerate();
  }

  if (strict.size() > 1) prefer_static_sticking(t, x, strict);
  if (strict.size() > 1) {
    std::string modes;
    for (const auto& c : strict) modes += "\n  " + mode_name(c.mode);
    throw SolverError("contact modes: more than one consistent mode" + where() +
                      ": forward motion is not unique (the Painlevé paradox for a sliding contact whose friction "
                      "pushes it into the surface); consistent:" + modes);
  }
  if (strict.size() == 1) return strict.front().mode;
  if (!weak.empty()) {
    std::sort(weak.begin(), weak.end(), [](const Choice& a, const Choice& b) {
      return a.changes != b.changes ? a.changes < b.changes : a.verdict.margin > b.verdict.margin;
    });
    return weak.front().mode;
  }
  throw SolverError("contact modes: no consistent mode" + where() + ": every combination of the contacts' modes breaks "
                    "a complementarity condition (the Painlevé paradox: no contact force can stop a sliding contact "
                    "from entering the surface); the nearest, " + mode_name(nearest.mode) + ", breaks " +
                    nearest.verdict.worst);
}

void ContactEngine::prefer_static_sticking(double t, const double* x, std::vector<Choice>& strict) const {
  // A contact at rest whose static coefficient exceeds its kinetic one may both stick (|lambda_T| <= mu_s N) and
  // start to slide (the kinetic friction mu_k N being below the force that drives it): Coulomb's law with static
  // friction says it sticks. Among the strictly consistent modes, keep those that stick at the most such contacts.
  Solution probe;
  solve(t, x, strict.front().mode, probe);
  const Work& w = work(n_, contacts_.size(), constraint_names_.size());
  std::vector<bool> static_contact(contacts_.size());
  bool any = false;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    static_contact[k] = contacts_[k].friction && w.terms[k].mu_static > w.terms[k].mu;
    any = any || static_contact[k];
  }
  if (!any) return;
  auto sticking = [&](const Choice& c) {
    int count = 0;
    for (std::size_t k = 0; k < contacts_.size(); ++k) count += static_contact[k] && contact_mode(c.mode, k) == kStick;
    return count;
  };
  int most = 0;
  for (const auto& c : strict) most = std::max(most, sticking(c));
  strict.erase(std::remove_if(strict.begin(), strict.end(), [&](const Choice& c) { return sticking(c) < most; }),
               strict.end());
}

int ContactEngine::initial_mode(const double* x0) const {
  std::vector<double> x(x0, x0 + size());
  // Start from the contacts' kinematic state, then choose consistently.
  int current = 0;
  {
    Solution s;
    solve(0.0, x.data(), 0, s);
    const Work& w = work(n_, contacts_.size(), constraint_names_.size());
    for (std::size_t k = 0; k < contacts_.size(); ++k) {
      const ContactTerms& ct = w.terms[k];
      const bool touching = !contacts_[k].unilateral || ct.gap <= settings_.gap_tolerance;
      int cm = kOpen;
      if (touching) cm = frictionless_here(contacts_[k], ct) ? kStick : ct.slip > settings_.rest_speed() ? kSlidePlus
                         : ct.slip < -settings_.rest_speed() ? kSlideMinus : kStick;
      current = with_contact_mode(current, k, cm);
    }
  }
  return select_mode(0.0, x.data(), current, -1, -1, "the initial state");
}

double ContactEngine::capture_speed(const double* x, const ContactTerms& c, double free_gap_acceleration) const {
  if (settings_.capture_velocity > 0) return settings_.capture_velocity;
  // The rebound whose flight rises kResolvedApex times the gap's resolution under the gap's free acceleration; no
  // capture where nothing pulls the contact back (its flight goes on).
  const double pull = -free_gap_acceleration;
  if (!(pull > 0)) return 0;
  double resolution = settings_.gap_tolerance;
  for (std::size_t i = 0; i < n_; ++i) resolution += std::abs(c.Wn[i]) * (settings_.rtol * std::abs(x[i]) + settings_.atol);
  return std::sqrt(2 * pull * ContactSettings::kResolvedApex * resolution);
}

void ContactEngine::impact(double t, double* x, int mode, std::size_t fired, EventOutcome& out) const {
  const std::size_t n = n_, nc = contacts_.size();
  const double gtol = settings_.gap_tolerance;
  Solution pre;
  solve(t, x, mode, pre);
  Work& w = work(n, nc, constraint_names_.size());
  const Eigen::MatrixXd M = w.M;
  const std::vector<ContactTerms> terms = w.terms;
  // The rates before the impact (x is overwritten by each trial of the impulses below).
  const std::vector<double> v0(x + n, x + 2 * n);
  const double* v = v0.data();
  // The contacts at zero gap take part; an approach slower than the capture velocity is plastic.
  std::vector<std::size_t> part;
  std::vector<double> gd(nc, 0.0), e(nc, 0.0);
  bool captured = false;
  for (std::size_t k = 0; k < nc; ++k) {
    if (!contacts_[k].unilateral) continue;
    gd[k] = dot(terms[k].Wn, v, n);
    if (!(terms[k].gap <= gtol || k == fired)) continue;
    part.push_back(k);
    const double r = terms[k].restitution;
    if (!(r >= 0 && r <= 1))
      throw SolverError("contact " + contacts_[k].name + ": restitution e = " + num(r) + " at t = " + num(t) +
                        " is outside [0, 1]");
    // The capture rule: a rebound slower than the capture velocity is not taken (e = 0, the contact closes).
    // (Named a capture where the rule decides: a restitution it sets to 0, or an approach slower than it.)
    const double approach = std::max(0.0, -gd[k]);
    const double vc = capture_speed(x, terms[k], pre.gddot[k]);
    const bool capture = r * approach < vc;
    e[k] = capture ? 0.0 : r;
    if (k == fired && capture && (r > 0 || approach < vc)) captured = true;
  }
  // Per taking-part contact: 0 no impulse, 1 sticking impulse, 2 sliding +, 3 sliding - (frictionless: 0, 1).
  std::vector<std::vector<int>> options(part.size());
  for (std::size_t j = 0; j < part.size(); ++j)
    options[j] = !frictionless_here(contacts_[part[j]], terms[part[j]]) ? std::vector<int>{0, 1, 2, 3}
                                                                        : std::vector<int>{0, 1};
  const auto ni = static_cast<Eigen::Index>(n);
  // The constraints held with the contacts keep their rate: G dq' = -C' (C' = 0 after the impact).
  const std::size_t nk = constraint_names_.size();
  const std::vector<ConstraintTerms> cterms = w.cterms;
  const auto N = static_cast<Eigen::Index>(n + 2 * part.size() + nk);
  struct Candidate {
    Verdict verdict;
    Eigen::VectorXd sol;
    std::vector<int> pick;
  };
  double vscale = 0;
  for (std::size_t i = 0; i < n; ++i) vscale = std::max(vscale, std::abs(v[i]));
  for (std::size_t k = 0; k < nc; ++k) vscale = std::max({vscale, std::abs(gd[k]), std::abs(terms[k].slip)});
  auto picks = [&](const Candidate& cd) {
    static const char* names[4] = {"no impulse", "sticking impulse", "sliding impulse +", "sliding impulse -"};
    std::string s;
    for (std::size_t j = 0; j < part.size(); ++j) s += (j ? ", " : "") + contacts_[part[j]].name + ": " + names[cd.pick[j]];
    return s;
  };
  const std::string where = " at t = " + num(t) + " (impact of contact " + contacts_[fired].name + ", approach g' = " +
                            num(gd[fired]) + ")";
  // The impulses' LCP (where the combinations are many): P_N against g'+ + e g'-, P_T against xi_T (below).
  double lcp_left = NAN;
  auto narrow = [&](double tangential, std::vector<std::vector<int>>& opts, bool prefer_closed) {
    const ConstrainedInverse lu(M, cterms);
    std::vector<LcpContact> lc(part.size());
    std::vector<Eigen::VectorXd> rows;
    for (std::size_t j = 0; j < part.size(); ++j) {
      lc[j].contact = part[j];
      lc[j].normal = static_cast<int>(j);
      rows.push_back(Eigen::Map<const Eigen::VectorXd>(terms[part[j]].Wn.data(), ni));
    }
    PlanarContactProblem p;
    p.n_normal = part.size();
    for (std::size_t j = 0; j < part.size(); ++j)
      if (contacts_[part[j]].friction) {
        lc[j].tangential = static_cast<int>(rows.size() - part.size());
        rows.push_back(Eigen::Map<const Eigen::VectorXd>(terms[part[j]].Wt.data(), ni));
        p.normal_of.push_back(static_cast<int>(j));
        p.mu.push_back(terms[part[j]].mu);
        p.bound.push_back(0.0);
      }
    p.G = delassus(lu, rows, rows);
    p.d.resize(static_cast<Eigen::Index>(rows.size()));
    // The change of the rates that restores the constraints' rate (C' = 0 after the impact).
    Eigen::VectorXd bc(static_cast<Eigen::Index>(nk));
    for (std::size_t j = 0; j < nk; ++j) bc(static_cast<Eigen::Index>(j)) = -cterms[j].rate;
    const Eigen::VectorXd dv0 = lu.particular(bc);
    for (std::size_t j = 0; j < part.size(); ++j) {
      const std::size_t k = part[j];
      p.d(static_cast<Eigen::Index>(j)) = gd[k] - e[k] * std::max(0.0, -gd[k]) + rows[j].dot(dv0);
      if (lc[j].tangential >= 0) {
        const auto i = static_cast<Eigen::Index>(part.size()) + lc[j].tangential;
        p.d(i) = (1 + tangential * e[k]) * terms[k].slip + rows[static_cast<std::size_t>(i)].dot(dv0);
      }
    }
    const auto fired_part = std::find(part.begin(), part.end(), fired) - part.begin();
    const bool reading = narrow_options(p, lc, contacts_, std::vector<int>(part.size(), 0), opts,
                                        static_cast<int>(fired_part), "impact", where, prefer_closed);
    lcp_left = combinations(opts);
    return reading;
  };
  // The impulses under the tangential law on xi_T = w+ + et w- (et = tangential * e of the contact): a sticking
  // impulse makes xi_T = 0, a sliding one has s xi_T >= 0. tangential = 0: the sticking impulse stops the slip.
  // With many contacts at once, the closed reading first (every contact at zero gap takes a share of the impulse by
  // the force distribution rule), the LCP solution's own reading where the closed one finds no consistent impulse.
  auto enumerate = [&](auto& self, double tangential, bool prefer_closed) -> Candidate {
    std::vector<Candidate> strict, weak;
    Candidate nearest;
    nearest.verdict.margin = -std::numeric_limits<double>::infinity();
    std::vector<std::vector<int>> opts = options;
    const bool closed_reading = narrow_first(settings_, opts) && narrow(tangential, opts, prefer_closed);
    check_combinations(opts, t, "impact");
    std::vector<std::size_t> idx(part.size(), 0);
    do {
      Candidate cd;
      for (std::size_t j = 0; j < part.size(); ++j) cd.pick.push_back(opts[j][idx[j]]);
      Eigen::MatrixXd A = Eigen::MatrixXd::Zero(N, N);
      Eigen::VectorXd b = Eigen::VectorXd::Zero(N);
      A.topLeftCorner(ni, ni) = M;
      for (std::size_t j = 0; j < part.size(); ++j) {
        const std::size_t k = part[j];
        const ContactTerms& c = terms[k];
        const auto rn = static_cast<Eigen::Index>(n + 2 * j), rt = rn + 1;
        const int p = cd.pick[j];
        const double sgn = p == 2 ? 1.0 : p == 3 ? -1.0 : 0.0;
        if (p != 0) {
          for (std::size_t i = 0; i < n; ++i) {
            const auto ii = static_cast<Eigen::Index>(i);
            A(ii, rn) = -(c.Wn[i] - sgn * c.mu * c.Wt[i]);
            A(rn, ii) = c.Wn[i];
          }
          b(rn) = -gd[k] + e[k] * std::max(0.0, -gd[k]);  // g'+ = -e g'- (0 for a contact at rest)
        } else {
          A(rn, rn) = 1;
        }
        if (p == 1 && !frictionless_here(contacts_[k], c)) {
          for (std::size_t i = 0; i < n; ++i) {
            const auto ii = static_cast<Eigen::Index>(i);
            A(ii, rt) = -c.Wt[i];
            A(rt, ii) = c.Wt[i];
          }
          b(rt) = -c.slip - tangential * e[k] * c.slip;  // w+ = -et w-
        } else {
          A(rt, rt) = 1;
        }
      }
      for (std::size_t j = 0; j < nk; ++j) {
        const auto r = static_cast<Eigen::Index>(n + 2 * part.size() + j);
        for (std::size_t i = 0; i < n; ++i) {
          const auto ii = static_cast<Eigen::Index>(i);
          A(ii, r) = -cterms[j].G[i];
          A(r, ii) = cterms[j].G[i];
        }
        b(r) = -cterms[j].rate;
      }
      Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
      bool solved = lu.isInvertible() && lu.rcond() >= kDependentPivot;
      if (solved) {
        cd.sol = lu.solve(b);
      } else {
        // Dependent impulse conditions (a flat landing on several contacts): the force distribution rule picks
        // one impulse distribution inside the cones (force_distribution.hpp).
        std::vector<Eigen::Index> held;
        for (Eigen::Index r = ni; r < N; ++r)
          if (A(r, r) != 1 || A.row(r).head(ni).any()) held.push_back(r);
        const auto m = static_cast<Eigen::Index>(held.size());
        auto index_of = [&](Eigen::Index row) -> Eigen::Index {
          const auto it = std::find(held.begin(), held.end(), row);
          return it == held.end() ? -1 : static_cast<Eigen::Index>(it - held.begin());
        };
        ForceDistributionProblem dp;
        dp.M = M;
        dp.f = Eigen::VectorXd::Zero(ni);
        dp.J.resize(m, ni);
        dp.C.resize(ni, m);
        dp.b.resize(m);
        for (Eigen::Index r = 0; r < m; ++r) {
          const Eigen::Index row = held[static_cast<std::size_t>(r)];
          dp.J.row(r) = A.row(row).head(ni);
          dp.C.col(r) = -A.col(row).head(ni);
          dp.b(r) = b(row);
        }
        std::vector<Eigen::RowVectorXd> prow;
        for (std::size_t j = 0; j < part.size(); ++j) {
          const Eigen::Index in = index_of(static_cast<Eigen::Index>(n + 2 * j));
          const Eigen::Index it = index_of(static_cast<Eigen::Index>(n + 2 * j + 1));
          if (in < 0) continue;
          prow.push_back(Eigen::RowVectorXd::Unit(m, in));
          if (it >= 0)
            for (const double side : {-1.0, 1.0}) {
              Eigen::RowVectorXd r = Eigen::RowVectorXd::Zero(m);
              r(it) = side;
              r(in) = stick_mu(terms[part[j]]);
              prow.push_back(r);
            }
        }
        dp.P.resize(static_cast<Eigen::Index>(prow.size()), m);
        for (std::size_t r = 0; r < prow.size(); ++r) dp.P.row(static_cast<Eigen::Index>(r)) = prow[r];
        dp.p0 = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(prow.size()));
        ForceDistribution dist;
        if (distribute_forces(dp, dist)) {
          cd.sol = Eigen::VectorXd::Zero(N);
          cd.sol.head(ni) = dist.a;
          for (Eigen::Index r = 0; r < m; ++r) cd.sol(held[static_cast<std::size_t>(r)]) = dist.lambda(r);
          solved = true;
        }
      }
      if (!solved) {
        cd.verdict.singular = true;
        cd.verdict.worst = "the impulse conditions are dependent and contradict each other";
      } else {
        Eigen::VectorXd vplus = Eigen::Map<const Eigen::VectorXd>(v, ni) + cd.sol.head(ni);
        double pscale = 0;
        for (Eigen::Index i = ni; i < N; ++i) pscale = std::max(pscale, std::abs(cd.sol(i)));
        for (std::size_t j = 0; j < part.size(); ++j) {
          const std::size_t k = part[j];
          const ContactTerms& c = terms[k];
          const auto rn = static_cast<Eigen::Index>(n + 2 * j);
          const int p = cd.pick[j];
          const double gplus = dot(c.Wn, vplus.data(), n);
          const std::string& nm = contacts_[k].name;
          if (p == 0) {
            cd.verdict.check(gplus - e[k] * std::max(0.0, -gd[k]), vscale, nm + ": no impulse needs g'+ >= -e g'-; g'+ + e g'-");
          } else {
            const double Pn = cd.sol(rn);
            cd.verdict.check(Pn, pscale, nm + ": the normal impulse must be >= 0; P_N");
            if (!frictionless_here(contacts_[k], c)) {
              const double wplus = dot(c.Wt, vplus.data(), n) + (c.slip - dot(c.Wt, v, n));
              const double xi = wplus + tangential * e[k] * c.slip;
              if (p == 1)
                cd.verdict.check(stick_mu(c) * Pn - std::abs(cd.sol(rn + 1)), pscale, nm + ": a sticking impulse needs |P_T| <= mu_s P_N; mu_s P_N - |P_T|");
              else
                cd.verdict.check((p == 2 ? 1 : -1) * xi, vscale, nm + ": a sliding impulse needs s (w+ + et w-) >= 0; s xi_T");
            }
          }
        }
      }
      if (cd.verdict.strict()) strict.push_back(cd);
      if (cd.verdict.weak()) weak.push_back(cd);
      if (!cd.verdict.singular && cd.verdict.margin > nearest.verdict.margin) nearest = cd;
    } while (next(idx, opts));

    if (strict.size() > 1) {
      // As for the modes (prefer_static_sticking): a contact whose static coefficient exceeds the kinetic one may
      // take a sticking impulse (|P_T| <= mu_s P_N) or a sliding one (mu_k P_N); Coulomb's law with static
      // friction says it sticks. Keep the impulses that stick at the most such contacts.
      auto sticking = [&](const Candidate& c) {
        int count = 0;
        for (std::size_t j = 0; j < part.size(); ++j)
          count += c.pick[j] == 1 && terms[part[j]].mu_static > terms[part[j]].mu;
        return count;
      };
      int most = 0;
      for (const auto& c : strict) most = std::max(most, sticking(c));
      strict.erase(std::remove_if(strict.begin(), strict.end(), [&](const Candidate& c) { return sticking(c) < most; }),
                   strict.end());
    }
    if (strict.size() > 1) {
      std::string list;
      for (const auto& c : strict) list += "\n  " + picks(c);
      throw SolverError("impact: more than one consistent impulse" + where + ": the impact law has no unique answer here;"
                        " consistent:" + list);
    }
    if (strict.size() == 1) return strict.front();
    if (!weak.empty()) {
      std::sort(weak.begin(), weak.end(), [](const Candidate& a, const Candidate& b) { return a.verdict.margin > b.verdict.margin; });
      return weak.front();
    }
    if (closed_reading) return self(self, tangential, false);
    throw SolverError("impact: no consistent impulse" + where + "; the nearest (" + picks(nearest) + ") breaks " +
                      nearest.verdict.worst);
  };
  // Newton's law with a sticking impulse that stops the slip is not energy-consistent in general (coupled normal
  // and tangential directions can gain energy, as in Kane's example). Where it would gain, the tangential law takes
  // the same restitution as the normal one, xi = v+ + e v- in both directions: then the change of kinetic energy is
  // P.xi / (1 + e) - (1 - e) / (2 (1 + e)) P.G P <= 0 (G = W M^-1 W^T), for every configuration (Glocker, 2013).
  double T0, V0, h0, E0;
  energies(t, x, T0, V0, h0, E0);
  auto apply = [&](const Candidate& cd) {
    for (std::size_t i = 0; i < n; ++i) x[n + i] = v0[i] + cd.sol(static_cast<Eigen::Index>(i));
    double T1, V1, h1, E1;
    energies(t, x, T1, V1, h1, E1);
    return E0 - E1;
  };
  const double gain_tolerance = 1e-9 * std::max(std::abs(T0), std::numeric_limits<double>::min());
  bool any_friction = false;
  for (const std::size_t k : part) any_friction = any_friction || (contacts_[k].friction && e[k] > 0);
  double tangential = 0;
  Candidate chosen_cd = enumerate(enumerate, tangential, true);
  double loss = apply(chosen_cd);
  if (loss < -gain_tolerance && any_friction) {
    tangential = 1;
    chosen_cd = enumerate(enumerate, tangential, true);
    loss = apply(chosen_cd);
  }
  const Candidate* chosen = &chosen_cd;
  if (loss < -gain_tolerance)
    throw SolverError("impact: the impulses" + where + " (" + picks(*chosen) + ") would raise the kinetic energy by " +
                      num(-loss) + " J: with contacts of different restitutions the impact law is not energy-consistent "
                      "here; give the contacts that meet at once the same restitution, or use e = 0");
  x[n_base_ + 1] += std::max(loss, 0.0);

  for (std::size_t k = 0; k < nc; ++k)
    if (contacts_[k].unilateral) {
      out.extra["impulse_normal_" + contacts_[k].name] = 0.0;
      if (contacts_[k].friction) out.extra["impulse_tangential_" + contacts_[k].name] = 0.0;
    }
  for (std::size_t j = 0; j < part.size(); ++j) {
    const std::size_t k = part[j];
    const int p = chosen->pick[j];
    if (p == 0) continue;
    const auto rn = static_cast<Eigen::Index>(n + 2 * j);
    const double Pn = chosen->sol(rn);
    out.extra["impulse_normal_" + contacts_[k].name] = Pn;
    if (contacts_[k].friction)
      out.extra["impulse_tangential_" + contacts_[k].name] =
          p == 1 ? (frictionless_here(contacts_[k], terms[k]) ? 0.0 : chosen->sol(rn + 1))
                 : -(p == 2 ? 1.0 : -1.0) * terms[k].mu * Pn;
  }
  out.extra["kinetic_energy_loss"] = loss;
  if (!std::isnan(lcp_left)) out.extra["lcp_impulse_candidates"] = lcp_left;
  for (const auto& c : contacts_)
    if (c.unilateral && c.friction) out.extra["tangential_restitution"] = tangential * e[fired];
  out.kind = captured ? "capture" : "impact";
  out.state_changed = true;
}

void ContactEngine::land_unresolved(double t, double* x, int mode, std::size_t fired, double rate,
                                    EventOutcome& out) const {
  const std::size_t n = n_, nc = contacts_.size();
  Solution s;
  solve(t, x, mode, s);
  const Work& w = work(n, nc, constraint_names_.size());
  const auto ni = static_cast<Eigen::Index>(n);
  // The rows held: the landing contact's gap rate (to zero), every other closed contact's gap rate and every
  // sticking slip (kept), and the constraints (kept).
  std::vector<Eigen::VectorXd> rows;
  std::vector<double> targets;
  auto row = [&](const std::vector<double>& r, double target) {
    rows.push_back(Eigen::Map<const Eigen::VectorXd>(r.data(), ni));
    targets.push_back(target);
  };
  row(w.terms[fired].Wn, -rate);
  for (std::size_t k = 0; k < nc; ++k) {
    const int cm = contact_mode(mode, k);
    if (k == fired || !is_closed(contacts_[k], cm)) continue;
    if (contacts_[k].unilateral) row(w.terms[k].Wn, 0.0);
    if (cm == kStick && !frictionless_here(contacts_[k], w.terms[k])) row(w.terms[k].Wt, 0.0);
  }
  for (const auto& c : w.cterms) row(c.G, 0.0);
  const auto m = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd W(m, ni);
  Eigen::VectorXd b(m);
  for (Eigen::Index r = 0; r < m; ++r) {
    W.row(r) = rows[static_cast<std::size_t>(r)].transpose();
    b(r) = targets[static_cast<std::size_t>(r)];
  }
  const Eigen::MatrixXd MiWt = w.M.partialPivLu().solve(W.transpose());
  const Eigen::VectorXd y = (W * MiWt).completeOrthogonalDecomposition().solve(b);
  double T0, V0, h0, E0, T1, V1, h1, E1;
  energies(t, x, T0, V0, h0, E0);
  const Eigen::VectorXd dv = MiWt * y;
  for (std::size_t i = 0; i < n; ++i) x[n + i] += dv(static_cast<Eigen::Index>(i));
  energies(t, x, T1, V1, h1, E1);
  const double loss = E0 - E1;  // >= 0: the projection in the M-metric takes kinetic energy only
  x[n_base_ + 1] += std::max(loss, 0.0);
  for (std::size_t k = 0; k < nc; ++k)
    if (contacts_[k].unilateral) {
      out.extra["impulse_normal_" + contacts_[k].name] = 0.0;
      if (contacts_[k].friction) out.extra["impulse_tangential_" + contacts_[k].name] = 0.0;
    }
  // The landing's impulse: that of a plastic landing at the rate it left with.
  out.extra["impulse_normal_" + contacts_[fired].name] = -y(0);
  out.extra["kinetic_energy_loss"] = loss;
  out.kind = "capture";
  out.state_changed = true;
}

bool ContactEngine::settle_rates(double t, double* x, int mode, int lifted) const {
  const std::size_t n = n_, nc = contacts_.size();
  Solution s;
  solve(t, x, mode, s);
  const Work& w = work(n, nc, constraint_names_.size());
  const Eigen::MatrixXd M = w.M;
  // The rows to hold at zero: W_n for closed contacts, W_t for sticking or sliding-from-rest contacts.
  std::vector<const std::vector<double>*> rows;
  std::vector<double> targets;
  double vscale = 0;
  for (std::size_t i = 0; i < n; ++i) vscale = std::max(vscale, std::abs(x[n + i]));
  const double vtol = 1e-9 * vscale + 1e-3 * settings_.rest_speed();
  std::vector<ContactTerms> terms = w.terms;
  // A lift-off (the contact `lifted` opens where lambda_N fell to 0), at zero gap and zero rate: there g'' = 0
  // too, so the gap grows only at third order in time, and for a while less than the integration resolves of it,
  // which would close it again at once, again and again. It starts 0.1 of the gap tolerance clear of the surface
  // and opening at the zero-speed tolerance (a zero speed as good as the one it had; the energy changes by about
  // the normal force's scale times 0.1 gap_tolerance, and by the tolerance squared), so that the gap grows clear
  // of the integration's rounding.
  auto lifting_off = [&](std::size_t k) {
    return static_cast<int>(k) == lifted && std::abs(terms[k].gap) <= settings_.gap_tolerance &&
           std::abs(s.gdot[k]) <= vtol;
  };
  // Positions first: a gap a rounding error below zero (a closed contact held by the stabilization, or the far
  // side of a root) is put back on the surface by a Newton step along dg/dq, so that an opening contact starts in
  // its region g >= 0.
  bool moved = false;
  for (std::size_t k = 0; k < nc; ++k) {
    const ContactTerms& c = terms[k];
    const double nn = dot(c.Wn, c.Wn.data(), n);
    if (!contacts_[k].unilateral || !(nn > 0)) continue;
    // A lift-off (below) starts a rounding clear of the surface: 1e-3 of the gap tolerance.
    const double target = lifting_off(k) ? 0.1 * settings_.gap_tolerance : 0.0;
    if (c.gap < target && c.gap >= -settings_.gap_tolerance) {
      for (std::size_t i = 0; i < n; ++i) x[i] += (target - c.gap) * c.Wn[i] / nn;
      moved = true;
    }
  }
  for (std::size_t k = 0; k < nc; ++k) {
    const ContactSpec& c = contacts_[k];
    const int cm = contact_mode(mode, k);
    const bool closed = is_closed(c, cm);
    if (c.unilateral && closed && std::abs(s.gdot[k]) <= vtol && s.gdot[k] != 0) {
      rows.push_back(&terms[k].Wn);
      targets.push_back(-s.gdot[k]);
    }
    if (lifting_off(k) && s.gdot[k] < vtol) {
      rows.push_back(&terms[k].Wn);
      targets.push_back(vtol - s.gdot[k]);
    }
    if (c.friction && closed && std::abs(terms[k].slip) <= vtol && terms[k].slip != 0) {
      rows.push_back(&terms[k].Wt);
      targets.push_back(-terms[k].slip);
    }
  }
  // The constraints held with the contacts: C' = 0.
  // The constraints held with the contacts: C' = 0, held through any change of the rates made here.
  std::vector<ConstraintTerms> cterms = w.cterms;
  bool constraint_drift = false;
  for (const auto& c : cterms) constraint_drift = constraint_drift || (c.rate != 0 && std::abs(c.rate) <= vtol);
  if (!rows.empty() || constraint_drift)
    for (auto& c : cterms) {
      rows.push_back(&c.G);
      targets.push_back(std::abs(c.rate) <= vtol ? -c.rate : 0.0);
    }
  if (rows.empty()) return moved;
  // dv = M^-1 W^T y with (W M^-1 W^T) y = target.
  const auto ni = static_cast<Eigen::Index>(n), m = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd W(m, ni);
  Eigen::VectorXd b(m);
  for (Eigen::Index r = 0; r < m; ++r) {
    for (Eigen::Index i = 0; i < ni; ++i) W(r, i) = (*rows[static_cast<std::size_t>(r)])[static_cast<std::size_t>(i)];
    b(r) = targets[static_cast<std::size_t>(r)];
  }
  const Eigen::MatrixXd MiWt = M.partialPivLu().solve(W.transpose());
  const Eigen::VectorXd y = (W * MiWt).completeOrthogonalDecomposition().solve(b);
  const Eigen::VectorXd dv = MiWt * y;
  for (std::size_t i = 0; i < n; ++i) x[n + i] += dv(static_cast<Eigen::Index>(i));
  return true;
}

EventOutcome ContactEngine::on_event(double t, double* x, int mode, const std::string& witness, int dir) const {
  for (const auto& u : user_witnesses_)
    if (u.name == witness) return HybridSystem::on_event(t, x, mode, witness, dir);
  EventOutcome out;
  // Which contact, and which of its witnesses.
  std::size_t fired = contacts_.size();
  bool touchdown = false;
  for (std::size_t k = 0; k < contacts_.size() && fired == contacts_.size(); ++k) {
    const std::string& nm = contacts_[k].name;
    for (const char* prefix : kWitnessPrefixes)
      if (witness == prefix + nm) {
        fired = k;
        touchdown = prefix == kWitnessPrefixes[0];
      }
  }
  if (fired == contacts_.size()) return HybridSystem::on_event(t, x, mode, witness, dir);
  const int left = contact_mode(mode, fired);
  if (touchdown) {
    {
      Solution s;
      solve(t, x, mode, s);
      double vscale = 0;
      for (std::size_t i = 0; i < n_; ++i) vscale = std::max(vscale, std::abs(x[n_ + i]));
      if (s.gdot[fired] > 1e-9 * vscale + 1e-3 * settings_.rest_speed()) {
        const Work& w = work(n_, contacts_.size(), constraint_names_.size());
        const double vc = capture_speed(x, w.terms[fired], s.gddot[fired]);
        if (s.gdot[fired] > vc)
          throw SolverError("contact " + contacts_[fired].name + ": the gap reached zero at t = " + num(t) +
                            " while opening (g' = " + num(s.gdot[fired]) + ", above the capture velocity " + num(vc) +
                            "): a flight this short is below what the integration resolves of the positions (about "
                            "rtol |q| + atol); raise nonsmooth.capture_velocity above the rebound speeds that cannot "
                            "be followed, or tighten solver.rtol and solver.atol");
        // A contact that left the surface slower than the capture velocity (lifted by an impact elsewhere, as the
        // trailing spoke of a rocking rimless wheel) and is back at zero gap: its flight was too short to follow.
        // It lands plastically (capture): its rate is taken to zero by the least change of kinetic energy.
        land_unresolved(t, x, mode, fired, s.gdot[fired], out);
        out.new_mode = select_mode(t, x, mode, -1, -1, "after a capture");
        settle_rates(t, x, out.new_mode);
        return out;
      }
    }
    impact(t, x, mode, fired, out);
    double candidates = NAN;
    out.new_mode = select_mode(t, x, mode, -1, -1, "after the impact", &candidates);
    if (!std::isnan(candidates)) out.extra["lcp_candidates"] = candidates;
    settle_rates(t, x, out.new_mode);
    return out;
  }
  double candidates = NAN;
  out.new_mode = select_mode(t, x, mode, static_cast<int>(fired), left, witness.c_str(), &candidates);
  if (!std::isnan(candidates)) out.extra["lcp_candidates"] = candidates;
  const int now = contact_mode(out.new_mode, fired);
  const bool was_closed = is_closed(contacts_[fired], left);
  const bool now_closed = is_closed(contacts_[fired], now);
  if (settle_rates(t, x, out.new_mode, was_closed && !now_closed ? static_cast<int>(fired) : -1))
    out.state_changed = true;
  if (was_closed && !now_closed) out.kind = "lift_off";
  else if (!was_closed && now_closed) out.kind = "touchdown";
  else if (now == kStick && left != kStick) out.kind = "stick";
  else if (left == kStick && now != kStick) out.kind = "slip";
  else if (now != left) out.kind = "reversal";
  else out.kind = "graze";
  return out;
}

// ---- the summary -----------------------------------------------------------------------------------------

namespace {

class ContactSummarizer final : public Summarizer {
 public:
  explicit ContactSummarizer(const ContactEngine& sys) : sys_(sys), symbols_(sys.contacts().size()) {
    const Signals& st = sys.states();
    for (std::size_t i = 0; i < st.size(); ++i) {
      if (st[i].name == "dissipated_friction") d_friction_ = i;
      if (st[i].name == "dissipated_impact") d_impact_ = i;
      if (st[i].name == "work_constraints") w_constraints_ = static_cast<int>(i);
      if (st[i].name == "work_surfaces") w_surfaces_ = static_cast<int>(i);
    }
  }
  void on_point(double, const double* x, const double* y, int mode) override {
    if (!have_) {
      e0_ = y[3];
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(y[3] - e0_));
    // The ledger's scale (ContactEngine::energy_ledger) from the outputs T, V, h, the balance
    // E - W_C - W_S + D, and the engine's states: the dissipated energies and the works of the constraints and of
    // the moving surfaces. The model's works E - h are what the balance holds beyond them.
    const double d_friction = x[d_friction_], d_impact = x[d_impact_];
    const double w_c = w_constraints_ >= 0 ? x[static_cast<std::size_t>(w_constraints_)] : 0.0;
    const double w_s = w_surfaces_ >= 0 ? x[static_cast<std::size_t>(w_surfaces_)] : 0.0;
    const double works = y[3] - d_friction - d_impact + w_c + w_s - y[2];
    scale_ = std::max(scale_, std::max(std::abs(y[2]), std::abs(y[0]) + std::abs(y[1])) + std::abs(works) +
                                  std::abs(w_c) + std::abs(w_s) + std::abs(d_friction) + std::abs(d_impact));
    note(mode);
  }
  void on_event(double, const std::string& kind, int, int after, const double*) override {
    ++counts_[kind];
    note(after);
  }
  std::vector<SummaryItem> items() const override {
    std::vector<SummaryItem> v;
    for (std::size_t k = 0; k < symbols_.size(); ++k)
      v.push_back({"symbols_" + sys_.contacts()[k].name, 0, symbols_[k], "",
                   "modes of contact " + sys_.contacts()[k].name + " in order (o open, 0 stick or closed, + -, slide)",
                   false});
    for (const char* kind : {"impact", "capture", "touchdown", "lift_off", "stick", "slip", "reversal"}) {
      auto it = counts_.find(kind);
      v.push_back({std::string("n_") + kind, it == counts_.end() ? 0.0 : static_cast<double>(it->second), "", "",
                   std::string("events of kind ") + kind, true});
    }
    v.push_back({"energy_initial", e0_, "", "J", "initial energy balance", false});
    v.push_back({"energy_drift_abs", drift_, "", "J", "largest drift of the energy balance", false});
    // Relative to the largest energy scale, never to |h| alone (0 for a start at rest at zero potential); the
    // balance is within the scale at every point, so the drift is 0 when the scale stays 0.
    v.push_back({"energy_drift_rel", scale_ > 0 ? drift_ / scale_ : 0.0, "", "1",
                 "largest drift, relative to the largest max(|h|, |T| + |V|) + |works| + |D|", false});
    return v;
  }

 private:
  void note(int mode) {
    for (std::size_t k = 0; k < symbols_.size(); ++k) {
      static const char sym[4] = {'o', '0', '+', '-'};
      const char c = sym[ContactEngine::contact_mode(mode, k)];
      std::string& s = symbols_[k];
      if (s.size() < kMaxSymbols && (s.empty() || s.back() != c)) s.push_back(c);
      else if (s.size() == kMaxSymbols && s.back() != c) s += "...";
    }
  }
  static constexpr std::size_t kMaxSymbols = 200;
  const ContactEngine& sys_;
  std::vector<std::string> symbols_;
  std::map<std::string, long> counts_;
  bool have_ = false;
  double e0_ = 0, drift_ = 0, scale_ = 0;
  std::size_t d_friction_ = 0, d_impact_ = 0;  ///< where the engine's dissipation states are in x
  int w_constraints_ = -1, w_surfaces_ = -1;   ///< and its work states, -1 where it has none
};

}  // namespace

std::unique_ptr<Summarizer> ContactEngine::make_summarizer() const { return std::make_unique<ContactSummarizer>(*this); }

}  // namespace rollsim
