#include "rollsim/hybrid/cone_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "cone_detail.hpp"
#include "contact_summary.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

using namespace cone_detail;

ConeWork& cone_detail::cone_work(std::size_t n, std::size_t nc) {
  thread_local ConeWork w;
  w.ensure(n, nc);
  return w;
}

namespace {
constexpr const char* kPrefixes[5] = {"gap_", "normal_force_", "stick_margin_", "slip_", "slip_turn_"};
}  // namespace

struct ConeEngine::OutputContext {
  const ConeEngine& engine;
  double t;
  const double* x;
  const Solution& s;
  const std::vector<ConeTerms>& terms;
  double T, V, h, balance;
};

void ConeEngine::configure(std::size_t n, std::vector<ConeContactSpec> contacts, Signals base_states,
                           std::vector<double> x0, Signals user_outputs, std::vector<Witness> user_witnesses,
                           ContactSettings settings) {
  n_ = n;
  contacts_ = std::move(contacts);
  n_base_ = base_states.size();
  states_ = std::move(base_states);
  moving_surfaces_ = std::any_of(contacts_.begin(), contacts_.end(), [](const auto& c) { return c.moving_surface; });
  for (auto& s : engine_states(contacts_)) states_.push_back(std::move(s));
  x0_ = std::move(x0);
  x0_.resize(states_.size(), 0.0);
  output_list_ = engine_output_list(contacts_);
  output_list_.add_block(std::move(user_outputs), [](const OutputContext& c, double* y) {
    c.engine.user_output_values(c.t, c.x, c.s.a.data(), y);
  });
  outputs_ = output_list_.signals();
  user_witnesses_ = std::move(user_witnesses);
  settings_ = settings;
}

Signals ConeEngine::engine_states(const std::vector<ConeContactSpec>& contacts) {
  Signals v{Signal{"dissipated_friction", "J", "energy taken by Coulomb friction since the start"}.as(Role::Dissipation),
            Signal{"dissipated_impact", "J",
                   "energy lost in impacts, and in settling the rates to a new mode, since the start"}
                .as(Role::Dissipation)};
  for (const auto& c : contacts)
    for (const char* axis : {"x", "y", "spin"})
      v.push_back(Signal{"slip_reference_" + std::string(axis) + "_" + c.name, "1",
                         "contact " + c.name + ": the unit direction the sliding friction is continued along "
                         "(reset at events; its spin part is 0 without spin friction)"});
  if (std::any_of(contacts.begin(), contacts.end(), [](const auto& c) { return c.moving_surface; }))
    v.push_back(Signal{"work_surfaces", "J",
                       "work done on the system by the friction of moving surfaces since the start"}
                    .as(Role::ConstraintWork));
  return v;
}

RuntimeOutputList<ConeEngine::OutputContext> ConeEngine::engine_output_list(const std::vector<ConeContactSpec>& contacts) {
  using C = OutputContext;
  RuntimeOutputList<C> out;
  const bool moving = std::any_of(contacts.begin(), contacts.end(), [](const auto& c) { return c.moving_surface; });
  out.add(Signal{"kinetic_energy", "J", "kinetic energy T"}.as(Role::KineticEnergy), [](const C& c) { return c.T; });
  out.add(Signal{"potential_energy", "J", "potential energy V"}.as(Role::PotentialEnergy), [](const C& c) { return c.V; });
  out.add(Signal{"energy", "J", "Jacobi energy h = q'.dL/dq' - L (T + V for a natural system)"}.as(Role::TotalEnergy),
          [](const C& c) { return c.h; });
  out.add(Signal{"energy_balance", "J",
                 std::string("h - work_forces + work_explicit_time + dissipated_friction + dissipated_impact") +
                     (moving ? " - work_surfaces" : "") + ": constant"}
              .as(Role::Ledger),
          [](const C& c) { return c.balance; });
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const ConeContactSpec& c = contacts[k];
    const std::size_t o = 3 * k;
    out.add(Signal{"gap_" + c.name, "m", "gap g of contact " + c.name}.of_contact(Role::Gap, c.name),
            [k](const C& q) { return q.terms[k].gap; });
    out.add(Signal{"gap_rate_" + c.name, "m/s", "g' of contact " + c.name}.of_contact(Role::GapRate, c.name),
            [k](const C& q) { return q.s.gdot[k]; });
    out.add(Signal{"normal_force_" + c.name, "N", "normal force of contact " + c.name}.of_contact(Role::NormalForce, c.name),
            [k](const C& q) { return q.s.N[k]; });
    out.add(Signal{"friction_x_" + c.name, "N", "friction force of contact " + c.name + " along the first tangent"}
                .of_contact(Role::TangentialForce, c.name),
            [o](const C& q) { return q.s.P[o]; });
    out.add(Signal{"friction_y_" + c.name, "N", "friction force of contact " + c.name + " along the second tangent"},
            [o](const C& q) { return q.s.P[o + 1]; });
    if (c.spin_friction)
      out.add(Signal{"spin_torque_" + c.name, "N m", "drilling friction torque of contact " + c.name + " about the normal"},
              [k, o](const C& q) { return q.s.P[o + 2] * kSpinLever * q.terms[k].spin_radius; });
    out.add(Signal{"slip_x_" + c.name, "m/s", "slip velocity of contact " + c.name + " along the first tangent"}
                .of_contact(Role::SlipVelocity, c.name),
            [k](const C& q) { return q.terms[k].slip[0]; });
    out.add(Signal{"slip_y_" + c.name, "m/s", "slip velocity of contact " + c.name + " along the second tangent"},
            [k](const C& q) { return q.terms[k].slip[1]; });
    out.add(Signal{"slip_speed_" + c.name, "m/s", "|u|, the slip speed of contact " + c.name},
            [k](const C& q) { return std::hypot(q.terms[k].slip[0], q.terms[k].slip[1]); });
    out.add(Signal{"spin_" + c.name, "rad/s", "angular velocity about the normal relative to the surface at " + c.name},
            [k](const C& q) { return q.terms[k].spin; });
    out.add(Signal{"cone_ratio_" + c.name, "1",
                   "|P| / (mu_s N) of contact " + c.name + " (1 on the cone's edge; 0 when open)"},
            [k, o](const C& q) {
              const double bound = stick_bound(q.terms[k]) * q.s.N[k];
              const double P = std::sqrt(q.s.P[o] * q.s.P[o] + q.s.P[o + 1] * q.s.P[o + 1] + q.s.P[o + 2] * q.s.P[o + 2]);
              return bound > 0 ? P / bound : 0.0;
            });
  }
  return out;
}

Signals ConeEngine::engine_outputs(const std::vector<ConeContactSpec>& contacts) {
  return engine_output_list(contacts).signals();
}

std::vector<std::string> ConeEngine::witness_names(const ConeContactSpec& c) {
  std::vector<std::string> v;
  for (const char* p : kPrefixes) v.push_back(p + c.name);
  return v;
}

void ConeEngine::initial_state(double* x0) const {
  std::copy(x0_.begin(), x0_.end(), x0);
  // The slip references of the start: the slip's direction, or for a contact that starts to slide from rest the
  // direction the law gives (the rates themselves are the scenario's, not settled).
  std::vector<double> x(x0, x0 + size());
  EventOutcome out;
  select_mode(0.0, x.data(), 0, -1, -1, false, out, false);
  for (std::size_t k = 0; k < contacts_.size(); ++k) std::copy(x.begin() + static_cast<std::ptrdiff_t>(ref_state(k)),
                                                               x.begin() + static_cast<std::ptrdiff_t>(ref_state(k) + 3),
                                                               x0 + ref_state(k));
}

std::string ConeEngine::mode_name(int mode) const {
  std::string s;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const int cm = contact_mode(mode, k);
    s += (k ? "," : "") + contacts_[k].name + ":" + (cm <= kSlide ? kModeNames[cm] : "?");
  }
  return s;
}

void ConeEngine::fill_terms(double t, const double* x, std::vector<ConeTerms>& terms) const {
  for (auto& c : terms) {
    c.gap = c.gap_bias = c.spin = c.spin_bias = c.mu = c.mu_static = c.restitution = c.spin_radius = 0;
    c.slip[0] = c.slip[1] = c.slip_bias[0] = c.slip_bias[1] = 0;
  }
  cone_terms(t, x, terms.data());
}

void ConeEngine::slip_of(std::size_t k, const ConeTerms& c, double* v) const {
  v[0] = c.slip[0];
  v[1] = c.slip[1];
  v[2] = contacts_[k].spin_friction ? kSpinLever * c.spin_radius * c.spin : 0.0;
}

/// Fills the Delassus problem at (t, x) from the model's M, f and terms (already in w): the rows J (per contact
/// W_n, then the generalized tangential rows), G = J M^-1 J^T, b = J M^-1 f + the biases, the stabilised targets.
void cone_detail::build_problem(ConeWork& w, const std::vector<ConeContactSpec>& specs, const double* x, std::size_t n,
                   double alpha) {
  Problem& p = w.p;
  const std::size_t nc = specs.size();
  p.nc = nc;
  p.off.resize(nc);
  p.dim.resize(nc);
  p.mu.resize(nc);
  p.mu_s.resize(nc);
  std::size_t rows = 0;
  for (std::size_t k = 0; k < nc; ++k) {
    p.off[k] = rows;
    p.dim[k] = specs[k].spin_friction ? 3 : 2;
    rows += 1 + p.dim[k];
    p.mu[k] = w.terms[k].mu;
    p.mu_s[k] = stick_bound(w.terms[k]);
  }
  const auto m = static_cast<Eigen::Index>(rows), ni = static_cast<Eigen::Index>(n);
  w.J.setZero(m, ni);
  Eigen::VectorXd bias = Eigen::VectorXd::Zero(m), rate = Eigen::VectorXd::Zero(m), value = Eigen::VectorXd::Zero(m);
  for (std::size_t k = 0; k < nc; ++k) {
    const ConeTerms& c = w.terms[k];
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    const double rho = kSpinLever * c.spin_radius;
    for (Eigen::Index i = 0; i < ni; ++i) {
      const auto ii = static_cast<std::size_t>(i);
      w.J(o, i) = c.Wn[ii];
      w.J(o + 1, i) = c.Wt1[ii];
      w.J(o + 2, i) = c.Wt2[ii];
      if (p.dim[k] == 3) w.J(o + 3, i) = rho * c.Ws[ii];
    }
    bias(o) = c.gap_bias;
    bias(o + 1) = c.slip_bias[0];
    bias(o + 2) = c.slip_bias[1];
    value(o) = c.gap;
    rate(o + 1) = c.slip[0];
    rate(o + 2) = c.slip[1];
    if (p.dim[k] == 3) {
      bias(o + 3) = rho * c.spin_bias;
      rate(o + 3) = rho * c.spin;
    }
  }
  const Eigen::Map<const Eigen::VectorXd> v(x + n, ni);
  Eigen::VectorXd jv = w.J * v;
  w.lu.compute(w.M);
  w.Mif = w.lu.solve(w.f);
  w.MiJt = w.lu.solve(w.J.transpose());
  p.G = w.J * w.MiJt;
  p.b = w.J * w.Mif + bias;
  p.target.setZero(m);
  for (std::size_t k = 0; k < nc; ++k) {
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    p.target(o) = -(2 * alpha * jv(o) + alpha * alpha * value(o));
    for (Eigen::Index i = 1; i <= static_cast<Eigen::Index>(p.dim[k]); ++i) p.target(o + i) = -alpha * rate(o + i);
  }
}

bool ConeEngine::solve(double t, const double* x, int mode, Solution& s) const {
  const std::size_t n = n_, nc = contacts_.size();
  ConeWork& w = cone_work(n, nc);
  s.a.assign(n, 0.0);
  s.N.assign(nc, 0.0);
  s.P.assign(3 * nc, 0.0);
  s.gdot.assign(nc, 0.0);
  s.gddot.assign(nc, 0.0);
  s.v.assign(3 * nc, 0.0);
  s.vdot.assign(3 * nc, 0.0);
  s.dir.assign(3 * nc, 0.0);
  mass_and_forces(t, x, w.M.data(), w.f.data());
  fill_terms(t, x, w.terms);
  build_problem(w, contacts_, x, n, settings_.stabilization_rate);
  const Problem& p = w.p;
  Combination c;
  c.modes.resize(nc);
  c.d.assign(nc, Eigen::Vector3d::UnitX());
  for (std::size_t k = 0; k < nc; ++k) {
    c.modes[k] = contact_mode(mode, k);
    double v[3];
    slip_of(k, w.terms[k], v);
    for (int i = 0; i < 3; ++i) s.v[3 * k + static_cast<std::size_t>(i)] = v[i];
    s.gdot[k] = 0;
    for (std::size_t i = 0; i < n; ++i) s.gdot[k] += w.terms[k].Wn[i] * x[n + i];
    for (int i = 0; i < 3; ++i) s.dir[3 * k + static_cast<std::size_t>(i)] = c.d[k](i);
  }
  // The sliding force's direction: the slip's, continued through zero along the reference (cone_engine.hpp), and the
  // reference's where the slip is below the zero-speed tolerance eps: d = (sign(v.r) v + eps r)/|...|. In exact
  // arithmetic a slip that starts from rest, or comes to rest, does so along its reference (v = kappa d t), where
  // this is v/|v| itself. Near zero slip the direction of v relaxes at a rate (mu N |W| + |v'|)/|v| that grows
  // without bound: below eps that stiffness (a slide from rest on the cone's edge stalled the integrator at steps of
  // 1e-13 s) is replaced by the reference.
  const double eps = rest_speed(x);
  for (std::size_t k = 0; k < nc; ++k) {
    if (c.modes[k] != kSlide) continue;
    const Eigen::Vector3d vv(s.v[3 * k], s.v[3 * k + 1], s.v[3 * k + 2]);
    const Eigen::Vector3d r = slip_reference(k, x);
    const Eigen::Vector3d wv = (vv.dot(r) < 0 ? -vv : vv) + eps * r;
    const double wn = wv.norm();
    c.d[k] = wn > 0 && std::isfinite(wn) ? Eigen::Vector3d(wv / wn) : r;
    for (int i = 0; i < 3; ++i) s.dir[3 * k + static_cast<std::size_t>(i)] = c.d[k](i);
  }
  s.ok = solve_combination(p, c);
  if (!s.ok) return false;
  const Eigen::VectorXd a = w.Mif + w.MiJt * c.P;
  for (std::size_t i = 0; i < n; ++i) s.a[i] = a(static_cast<Eigen::Index>(i));
  for (std::size_t k = 0; k < nc; ++k) {
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    s.N[k] = c.P(o);
    s.gddot[k] = c.y(o);
    for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(p.dim[k]); ++i) {
      s.P[3 * k + static_cast<std::size_t>(i)] = c.P(o + 1 + i);
      s.vdot[3 * k + static_cast<std::size_t>(i)] = c.y(o + 1 + i);
    }
  }
  s.ok = a.allFinite();
  return s.ok;
}

void ConeEngine::rhs(double t, const double* x, int mode, double* xdot) const {
  thread_local Solution s;
  const bool ok = solve(t, x, mode, s);
  rhs_of(t, x, mode, s, ok, xdot);
}

// The Jacobian of a sliding contact's rates has the term -mu N W^T (I - d d^T) W / |v| from the friction's direction
// d = v/|v|, unbounded as the slip goes to zero. The difference quotients with increments of 1e-8 |q'| (the
// integrator's own, or difference_jacobian's) change a slip of 1e-7 m/s by as much as itself: the Jacobian they give
// is wrong where the slip is small, Newton's iteration failed to converge at most steps of a slide started on the
// cone's edge, and the steps fell to 1e-11 s (Euler's disk near the end of its spin-down: docs/user-models.md).
// Here each column's increment is cut until no sliding contact's slip changes by more than kJacobianSlip of
// |v| + the zero-speed tolerance (d's own scale, see solve), down to kJacobianFloor of the plain increment, below
// which the rounding of the rates would swamp the difference.
bool ConeEngine::jacobian(double t, const double* x, int mode, double* J) const {
  constexpr double kJacobianSlip = 1e-2, kJacobianFloor = 1e-6;
  const std::size_t m = size(), nc = contacts_.size();
  thread_local Solution s0, s1;
  thread_local std::vector<double> xp, f0, f1;
  xp.assign(x, x + m);
  f0.resize(m);
  f1.resize(m);
  const bool ok0 = solve(t, x, mode, s0);
  rhs_of(t, x, mode, s0, ok0, f0.data());
  const double eps = rest_speed(x);
  auto slip_change = [&](const Solution& a, const Solution& b) {  // the largest relative change of a sliding slip
    double r = 0;
    for (std::size_t k = 0; k < nc; ++k) {
      if (contact_mode(mode, k) != kSlide || frictionless(cone_work(n_, nc).terms[k])) continue;
      double dv = 0, v = 0;
      for (std::size_t i = 0; i < 3; ++i) {
        dv += std::pow(a.v[3 * k + i] - b.v[3 * k + i], 2);
        v += std::pow(a.v[3 * k + i], 2);
      }
      r = std::max(r, std::sqrt(dv) / (std::sqrt(v) + eps));
    }
    return r;
  };
  for (std::size_t j = 0; j < m; ++j) {
    const double plain = 1e-8 * std::max(1.0, std::abs(x[j]));
    double dx = plain;
    bool ok = false;
    for (int tries = 0; tries < 3; ++tries) {
      xp[j] = x[j] + dx;
      ok = solve(t, xp.data(), mode, s1);
      const double change = ok ? slip_change(s0, s1) : 0.0;
      if (change <= kJacobianSlip || dx <= kJacobianFloor * plain) break;
      dx = std::max(kJacobianFloor * plain, dx * 0.5 * kJacobianSlip / change);
    }
    rhs_of(t, xp.data(), mode, s1, ok, f1.data());
    xp[j] = x[j];
    for (std::size_t i = 0; i < m; ++i) J[i + m * j] = (f1[i] - f0[i]) / dx;
  }
  return true;
}

void ConeEngine::rhs_of(double t, const double* x, int mode, const Solution& s, bool ok, double* xdot) const {
  const std::size_t n = n_;
  std::copy(x + n, x + 2 * n, xdot);
  if (!ok)
    throw SolverError("cone contacts: the forces of mode " + mode_name(mode) + " at t = " + num(t) +
                      " are not determined (the mass matrix or the rows of the contacts held are singular, or "
                      "dependent and inconsistent); check the contacts' geometry at that state");
  std::copy(s.a.begin(), s.a.end(), xdot + n);
  extra_rates(t, x, s.a.data(), xdot + 2 * n);
  // The friction's power on the system is P.(J_t q'); it splits into the dissipation D' = -P.v (>= 0 while sliding:
  // P = -mu N d with d along v) and the moving surface's work W_S' = P.(J_t q' - v).
  const ConeWork& w = cone_work(n, contacts_.size());
  double pd = 0, ps = 0;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    if (contact_mode(mode, k) == kOpen) continue;
    const auto o = static_cast<Eigen::Index>(w.p.off[k]);
    for (std::size_t i = 0; i < w.p.dim[k]; ++i) {
      const double P = s.P[3 * k + i];
      double jq = 0;
      for (std::size_t j = 0; j < n; ++j) jq += w.J(o + 1 + static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) * x[n + j];
      if (contact_mode(mode, k) == kSlide) pd -= P * s.v[3 * k + i];
      ps += P * (jq - s.v[3 * k + i]);
    }
  }
  xdot[d_friction()] = pd;
  xdot[d_impact()] = 0;
  for (std::size_t k = 0; k < contacts_.size(); ++k) std::fill(xdot + ref_state(k), xdot + ref_state(k) + 3, 0.0);
  if (moving_surfaces_) xdot[surface_work_state()] = ps;
}

std::vector<Witness> ConeEngine::witnesses(int mode) const {
  std::vector<Witness> v;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const std::string& name = contacts_[k].name;
    const int cm = contact_mode(mode, k);
    if (cm == kOpen) {
      v.push_back({kPrefixes[0] + name, -1, false, true});
      continue;
    }
    v.push_back({kPrefixes[1] + name, -1, false, true});
    if (cm == kStick) {
      v.push_back({kPrefixes[2] + name, -1, false, true});
    } else {
      v.push_back({kPrefixes[3] + name, -1, false, false});
      v.push_back({kPrefixes[4] + name, -1, false, false});
    }
  }
  for (const auto& u : user_witnesses_) v.push_back(u);
  return v;
}

std::size_t ConeEngine::witness_count(int mode) const {
  std::size_t count = user_witnesses_.size();
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const int cm = contact_mode(mode, k);
    count += cm == kOpen ? 1 : cm == kStick ? 2 : 3;
  }
  return count;
}

void ConeEngine::witness_values(double t, const double* x, int mode, double* g) const {
  thread_local Solution s;
  solve(t, x, mode, s);
  const ConeWork& w = cone_work(n_, contacts_.size());
  std::size_t j = 0;
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const int cm = contact_mode(mode, k);
    const ConeTerms& c = w.terms[k];
    if (cm == kOpen) {
      g[j++] = c.gap;
      continue;
    }
    g[j++] = s.N[k];
    const double* P = &s.P[3 * k];
    const double* v = &s.v[3 * k];
    if (cm == kStick) {
      // With the offset a contact that started to stick on the cone's edge keeps (settle): 0 otherwise.
      g[j++] = frictionless(c) ? 1.0
                               : stick_bound(c) * s.N[k] - std::sqrt(P[0] * P[0] + P[1] * P[1] + P[2] * P[2]) +
                                     x[ref_state(k)];
    } else if (frictionless(c)) {
      g[j++] = 1;  // no friction force: nothing happens when the slip passes zero
      g[j++] = 1;
    } else {
      const double* r = x + ref_state(k);
      const double vr = v[0] * r[0] + v[1] * r[1] + v[2] * r[2];
      g[j++] = vr;
      // The turn of the slip from its reference, ignored below the zero-speed tolerance (the direction of a slip
      // that small is rounding noise, which would reset the reference again and again).
      g[j++] = vr - 0.5 * std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + rest_speed(x);
    }
  }
  if (!user_witnesses_.empty()) user_witness_values(t, x, s.a.data(), g + j);
}

bool ConeEngine::energy_ledger(double t, const double* x, int /*mode*/, EnergyLedger& e) const {
  ConeWork& w = cone_work(n_, contacts_.size());
  fill_terms(t, x, w.terms);
  for (std::size_t k = 0; k < contacts_.size(); ++k) {
    const ConeTerms& c = w.terms[k];
    if (!(c.mu >= 0) || !(c.mu_static >= 0) || (c.mu_static > 0 && c.mu_static < c.mu) || !(c.restitution >= 0) ||
        !(c.restitution <= 1) || !(c.spin_radius >= 0))
      throw SolverError("contact " + contacts_[k].name + ": at t = " + num(t) + " mu = " + num(c.mu) + ", mu_s = " +
                        num(c.mu_static) + ", e = " + num(c.restitution) + ", R = " + num(c.spin_radius) +
                        "; Coulomb's law needs 0 <= mu <= mu_s, 0 <= e <= 1 and R >= 0: check the contact's expressions");
  }
  double T, V, h, E;
  energies(t, x, T, V, h, E);
  const double ws = moving_surfaces_ ? x[surface_work_state()] : 0.0;
  e.energy = E - ws;
  e.dissipated = x[d_friction()] + x[d_impact()];
  e.dissipated_state = static_cast<int>(d_friction());
  e.scale = std::max(std::abs(h), std::abs(T) + std::abs(V)) + std::abs(E - h) + std::abs(ws) +
            std::abs(x[d_friction()]) + std::abs(x[d_impact()]);
  return true;
}

void ConeEngine::compute_outputs(double t, const double* x, int mode, double* y) const {
  thread_local Solution s;
  solve(t, x, mode, s);
  const ConeWork& w = cone_work(n_, contacts_.size());
  double T, V, h, E;
  energies(t, x, T, V, h, E);
  const double balance = E - (moving_surfaces_ ? x[surface_work_state()] : 0.0) + x[d_friction()] + x[d_impact()];
  output_list_.compute(OutputContext{*this, t, x, s, w.terms, T, V, h, balance}, y);
}

std::vector<std::string> ConeEngine::event_extras() const {
  std::vector<std::string> v;
  for (const auto& c : contacts_) {
    v.push_back("impulse_normal_" + c.name);
    v.push_back("impulse_x_" + c.name);
    v.push_back("impulse_y_" + c.name);
    v.push_back("slip_direction_x_" + c.name);
    v.push_back("slip_direction_y_" + c.name);
  }
  v.push_back("kinetic_energy_loss");
  v.push_back("settle_energy_loss");
  v.push_back("mode_candidates");
  return v;
}

std::unique_ptr<Summarizer> ConeEngine::make_summarizer() const {
  std::vector<std::string> names;
  for (const auto& c : contacts_) names.push_back(c.name);
  // The event kinds name their contact (stick_NAME): counted by what precedes the name.
  std::vector<std::string> families{"impact", "touchdown", "lift_off", "stick", "slip", "slip_restart", "slip_direction"};
  auto family = [names](const std::string& kind) {
    for (const auto& n : names)
      if (kind.size() > n.size() + 1 && kind.compare(kind.size() - n.size() - 1, std::string::npos, "_" + n) == 0)
        return kind.substr(0, kind.size() - n.size() - 1);
    return kind;
  };
  return std::make_unique<ContactSummarizer>(
      *this, std::move(names),
      [](int mode, std::size_t k) {
        static const char sym[4] = {'o', '0', 's', '?'};
        return sym[ConeEngine::contact_mode(mode, k)];
      },
      "o open, 0 stick, s slide", std::move(families), family);
}

Eigen::Vector3d ConeEngine::slip_reference(std::size_t k, const double* x) const {
  const Eigen::Vector3d r(x[ref_state(k)], x[ref_state(k) + 1], x[ref_state(k) + 2]);
  return r.norm() > 0 ? Eigen::Vector3d(r.normalized()) : Eigen::Vector3d::UnitX();
}

double ConeEngine::rest_speed(const double* x) const {
  double vmax = 0;
  for (std::size_t i = 0; i < n_; ++i) vmax = std::max(vmax, std::abs(x[n_ + i]));
  return 1e-3 * settings_.rest_speed() + 1e-9 * vmax;
}

int ConeEngine::initial_mode(const double* x0) const {
  std::vector<double> x(x0, x0 + size());
  EventOutcome out;
  return select_mode(0.0, x.data(), 0, -1, -1, false, out, false);
}

}  // namespace rollsim
