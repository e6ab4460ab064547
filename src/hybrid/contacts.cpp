#include "rollsim/hybrid/contacts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include <Eigen/Dense>

#include "contact_detail.hpp"
#include "contact_summary.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

using namespace contact_detail;

namespace contact_detail {

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

Work& work(std::size_t n, std::size_t nc, std::size_t nk) {
  thread_local Work w;
  w.ensure(n, nc, nk);
  return w;
}

}  // namespace contact_detail

namespace {

/// The scalars of every contact's terms set to 0 before the model fills them: the per-thread room outlives a run,
/// and a term the model leaves alone (a built-in model's mu_static, which then means "as mu") must not keep the
/// value of an earlier run's model.
void clear_scalars(std::vector<ContactTerms>& terms) {
  for (auto& c : terms) c.gap = c.gap_bias = c.slip = c.slip_bias = c.mu = c.mu_static = c.restitution = c.given_normal = 0;
}

/// The forces of a mode whose rows are dependent (a statically indeterminate support), into w.sol: the rows held and
/// the cone conditions of the closed contacts go to the force distribution rule, which picks one of the many force
/// distributions (force_distribution.hpp). Returns whether it found one; best_margin: its s*.
bool distribute_dependent(Work& w, const std::vector<ContactSpec>& contacts, int mode, std::size_t n,
                          double& best_margin) {
  const std::size_t nc = contacts.size();
  const auto ni = static_cast<Eigen::Index>(n);
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
    const ContactSpec& spec = contacts[k];
    const int cm = ContactEngine::contact_mode(mode, k);
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
  const bool ok = distribute_forces(p, w.dist);
  best_margin = w.dist.best_margin;
  w.sol.setZero();
  w.sol.head(ni) = w.dist.a;
  for (Eigen::Index r = 0; r < m; ++r) w.sol(held[static_cast<std::size_t>(r)]) = w.dist.lambda(r);
  return ok;
}

}  // namespace

/// What the outputs are computed from at (t, x, mode): the mode's solution, the model's terms, the energies and the
/// balance E - W_C - W_S + D.
struct ContactEngine::OutputContext {
  const ContactEngine& engine;
  double t;
  const double* x;
  const Solution& s;
  const std::vector<ContactTerms>& terms;
  const std::vector<ConstraintTerms>& cterms;
  double T, V, h, balance;
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
  output_list_ = engine_output_list(contacts_, constraint_names_);
  output_list_.add_block(std::move(user_outputs), [](const OutputContext& c, double* y) {
    c.engine.user_output_values(c.t, c.x, c.s.a.data(), y);
  });
  outputs_ = output_list_.signals();
  user_witnesses_ = std::move(user_witnesses);
  settings_ = settings;
}

Signals ContactEngine::engine_states(bool constraints, bool moving_surfaces) {
  Signals v{Signal{"dissipated_friction", "J", "energy taken by Coulomb friction since the start"}.as(Role::Dissipation),
            Signal{"dissipated_impact", "J", "energy lost in impacts since the start"}.as(Role::Dissipation)};
  if (constraints)
    v.push_back(Signal{"work_constraints", "J",
                       "work done by the holonomic constraints' forces G^T lambda since the start (by a constraint "
                       "that moves in time)"}
                    .as(Role::ConstraintWork));
  if (moving_surfaces)
    v.push_back(Signal{"work_surfaces", "J",
                       "work done on the system by the friction of moving surfaces (the slip's part w0 that does not "
                       "vanish with the rates) since the start"}
                    .as(Role::ConstraintWork));
  return v;
}

RuntimeOutputList<ContactEngine::OutputContext> ContactEngine::engine_output_list(
    const std::vector<ContactSpec>& contacts, const std::vector<std::string>& constraint_names) {
  using C = OutputContext;
  RuntimeOutputList<C> out;
  // The balance is a column of its own: the model's works E - h (a torque's, ...) need not be columns.
  out.add(Signal{"kinetic_energy", "J", "kinetic energy T"}.as(Role::KineticEnergy), [](const C& c) { return c.T; });
  out.add(Signal{"potential_energy", "J", "potential energy V"}.as(Role::PotentialEnergy),
          [](const C& c) { return c.V; });
  out.add(Signal{"energy", "J", "Jacobi energy h = q'.dL/dq' - L (T + V for a natural system)"}.as(Role::TotalEnergy),
          [](const C& c) { return c.h; });
  out.add(Signal{"energy_balance", "J",
                     std::string("h - work_forces + work_explicit_time + dissipated_friction + dissipated_impact") +
                         (constraint_names.empty() ? "" : " - work_constraints") +
                         (std::any_of(contacts.begin(), contacts.end(),
                                      [](const ContactSpec& c) { return c.friction && c.moving_surface; })
                              ? " - work_surfaces"
                              : "") +
                         ": constant"}
              .as(Role::Ledger),
          [](const C& c) { return c.balance; });
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const ContactSpec& c = contacts[k];
    if (c.unilateral) {
      out.add(Signal{"gap_" + c.name, "m", "gap g of contact " + c.name}.of_contact(Role::Gap, c.name),
              [k](const C& o) { return o.terms[k].gap; });
      out.add(Signal{"gap_rate_" + c.name, "m/s", "g' of contact " + c.name}.of_contact(Role::GapRate, c.name),
              [k](const C& o) { return o.s.gdot[k]; });
    }
    out.add(Signal{"normal_force_" + c.name, "N", "normal force of contact " + c.name + " (its multiplier)"}
                .of_contact(Role::NormalForce, c.name),
            [k](const C& o) { return o.s.lam_n[k]; });
    if (c.friction) {
      out.add(Signal{"tangential_force_" + c.name, "N",
                     "friction force of contact " + c.name + " along dw/dq' (opposes w when sliding)"}
                  .of_contact(Role::TangentialForce, c.name),
              [k](const C& o) { return o.s.lam_t[k]; });
      out.add(Signal{"slip_velocity_" + c.name, "m/s", "slip velocity w of contact " + c.name}.of_contact(
                  Role::SlipVelocity, c.name),
              [k](const C& o) { return o.terms[k].slip; });
    }
  }
  for (std::size_t j = 0; j < constraint_names.size(); ++j) {
    const std::string& name = constraint_names[j];
    out.add({"lambda_" + name, "", "multiplier of constraint " + name + " (its generalized force is G^T lambda)"},
            [j](const C& o) { return o.s.lam_c[j]; });
    out.add({"constraint_" + name, "", "residual of constraint " + name}, [j](const C& o) { return o.cterms[j].value; });
  }
  return out;
}

Signals ContactEngine::engine_outputs(const std::vector<ContactSpec>& contacts,
                                      const std::vector<std::string>& constraint_names) {
  return engine_output_list(contacts, constraint_names).signals();
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
    ok = distribute_dependent(w, contacts_, mode, n, s.best_margin);
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
  const double balance = E - constraint_work(x) - surface_work(x) + x[n_base_] + x[n_base_ + 1];
  output_list_.compute(OutputContext{*this, t, x, s, w.terms, w.cterms, T, V, h, balance}, y);
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
    if (u.name == witness) return WitnessSystem::on_event(t, x, mode, witness, dir);
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
  if (fired == contacts_.size()) return WitnessSystem::on_event(t, x, mode, witness, dir);
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

std::unique_ptr<Summarizer> ContactEngine::make_summarizer() const {
  std::vector<std::string> names;
  for (const auto& c : contacts_) names.push_back(c.name);
  return std::make_unique<ContactSummarizer>(
      *this, std::move(names),
      [](int mode, std::size_t k) {
        static const char sym[4] = {'o', '0', '+', '-'};
        return sym[ContactEngine::contact_mode(mode, k)];
      },
      "o open, 0 stick or closed, + -, slide",
      std::vector<std::string>{"impact", "capture", "touchdown", "lift_off", "stick", "slip", "reversal"},
      [](const std::string& kind) { return kind; });
}

}  // namespace rollsim
