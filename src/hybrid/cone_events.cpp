/// \file The cone engine's events (docs in cone_engine.hpp): touchdown and impacts, lift-off, stick -> slip,
/// slip -> stick, the slip reference's reset, the choice of modes at each and the settling of the rates.
#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "cone_detail.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

using namespace cone_detail;

namespace {

/// A slide's direction counts as its reference's where 1 - d.r is below this (an angle of 1.4e-3 rad).
constexpr double kSameDirection = 1e-6;

/// The witness kinds, longest prefix first (slip_turn_ before slip_).
enum class WitnessKind { Gap, Normal, StickMargin, SlipTurn, Slip, None };
WitnessKind kind_of(const std::string& witness, const std::vector<ConeContactSpec>& contacts, std::size_t& k) {
  static const std::pair<const char*, WitnessKind> prefixes[] = {{"slip_turn_", WitnessKind::SlipTurn},
                                                          {"stick_margin_", WitnessKind::StickMargin},
                                                          {"normal_force_", WitnessKind::Normal},
                                                          {"slip_", WitnessKind::Slip},
                                                          {"gap_", WitnessKind::Gap}};
  for (const auto& entry : prefixes) {
    const std::string pre = entry.first;
    if (witness.rfind(pre, 0) != 0) continue;
    const std::string name = witness.substr(pre.size());
    for (k = 0; k < contacts.size(); ++k)
      if (contacts[k].name == name) return entry.second;
  }
  return WitnessKind::None;
}

}  // namespace

double ConeEngine::slip_tolerance(std::size_t k, const double* x) const {
  const ConeWork& w = cone_work(n_, contacts_.size());
  const auto o = static_cast<Eigen::Index>(w.p.off[k]);
  double worst = 0;
  for (Eigen::Index i = 1; i <= static_cast<Eigen::Index>(w.p.dim[k]); ++i) {
    double r = 0;
    for (std::size_t j = 0; j < n_; ++j)
      r += std::abs(w.J(o + i, static_cast<Eigen::Index>(j))) * (settings_.rtol * std::abs(x[n_ + j]) + settings_.atol);
    worst = std::max(worst, r);
  }
  return rest_speed(x) + 100 * worst;
}

double ConeEngine::settle(double t, double* x, const std::vector<int>& modes, const std::vector<bool>& hold_slip,
                          const std::vector<double>& seed, const std::vector<Eigen::Vector3d>& dirs) const {
  const std::size_t n = n_, nc = contacts_.size();
  Solution s;
  solve(t, x, 0, s);
  ConeWork& w = cone_work(n, nc);
  const auto ni = static_cast<Eigen::Index>(n);
  const Eigen::Map<const Eigen::VectorXd> v(x + n, ni);
  // The rows held at zero: the gap rate of every closed contact, the slip of every sticking one and of every one
  // that starts to slide from rest.
  std::vector<Eigen::Index> rows;
  for (std::size_t k = 0; k < nc; ++k) {
    if (modes[k] == kOpen) continue;
    const auto o = static_cast<Eigen::Index>(w.p.off[k]);
    rows.push_back(o);
    if (modes[k] == kStick || hold_slip[k])
      for (Eigen::Index i = 1; i <= static_cast<Eigen::Index>(w.p.dim[k]); ++i) rows.push_back(o + i);
  }
  double loss = 0;
  if (!rows.empty()) {
    const auto m = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd Jh(m, ni);
    Eigen::VectorXd r(m);
    // The slip rows' values are the slip itself (with a moving surface's part), the normal rows' the gap rate.
    Eigen::VectorXd value(static_cast<Eigen::Index>(w.p.rows()));
    value.setZero();
    for (std::size_t k = 0; k < nc; ++k) {
      const auto o = static_cast<Eigen::Index>(w.p.off[k]);
      value(o) = s.gdot[k];
      for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(w.p.dim[k]); ++i)
        value(o + 1 + i) = s.v[3 * k + static_cast<std::size_t>(i)] - seed[k] * dirs[k](i);
    }
    for (Eigen::Index i = 0; i < m; ++i) {
      Jh.row(i) = w.J.row(rows[static_cast<std::size_t>(i)]);
      r(i) = -value(rows[static_cast<std::size_t>(i)]);
    }
    const Eigen::MatrixXd MiJt = w.lu.solve(Jh.transpose());
    const Eigen::VectorXd y = (Jh * MiJt).completeOrthogonalDecomposition().solve(r);
    const Eigen::VectorXd dv = MiJt * y;
    double T0, V0, h0, E0, T1, V1, h1, E1;
    energies(t, x, T0, V0, h0, E0);
    for (std::size_t i = 0; i < n; ++i) x[n + i] += dv(static_cast<Eigen::Index>(i));
    energies(t, x, T1, V1, h1, E1);
    loss = E0 - E1;  // >= 0 up to rounding: the M-weighted projection onto rows through zero takes kinetic energy
    x[d_impact()] += loss;
  }
  // The slip references: the direction a slide from rest starts in, else the slip's direction. A sticking contact
  // keeps there (first component) the offset of its stick margin: 0, or where it starts to stick on the cone's edge
  // at a margin below 0 at the limit of consistency, that deficit, so that its witness starts at 0 and a crossing
  // later is still found.
  int mode = 0;
  for (std::size_t k = 0; k < nc; ++k) mode = with_contact_mode(mode, k, modes[k]);
  solve(t, x, mode, s);
  for (std::size_t k = 0; k < nc; ++k) {
    if (modes[k] == kStick) {
      const double* P = &s.P[3 * k];
      const double margin = stick_bound(w.terms[k]) * s.N[k] - std::sqrt(P[0] * P[0] + P[1] * P[1] + P[2] * P[2]);
      x[ref_state(k)] = std::max(0.0, -margin);
      x[ref_state(k) + 1] = x[ref_state(k) + 2] = 0;
      continue;
    }
    Eigen::Vector3d r = dirs[k];
    if (modes[k] == kSlide && !hold_slip[k]) {
      const Eigen::Vector3d vk(s.v[3 * k], s.v[3 * k + 1], s.v[3 * k + 2]);
      if (vk.norm() > 0) r = vk.normalized();
    }
    if (!(r.norm() > 0)) r = Eigen::Vector3d::UnitX();
    r.normalize();
    for (int i = 0; i < 3; ++i) x[ref_state(k) + static_cast<std::size_t>(i)] = r(i);
  }
  return loss;
}

int ConeEngine::select_mode(double t, double* x, int current, int fired, int left, bool fired_at_rest,
                            EventOutcome& out, bool settle_state) const {
  const std::size_t n = n_, nc = contacts_.size();
  Solution s;
  solve(t, x, current, s);
  ConeWork& w = cone_work(n, nc);
  const Problem p = w.p;  // a copy: the directions' search solves again
  const double vz = rest_speed(x);
  std::vector<std::vector<int>> cands(nc);
  std::vector<int> cur(nc);
  std::vector<bool> at_rest(nc, false), from_rest(nc, false);
  std::vector<Eigen::Vector3d> dirs(nc, Eigen::Vector3d::UnitX());
  for (std::size_t k = 0; k < nc; ++k) {
    const ConeTerms& c = w.terms[k];
    cur[k] = contact_mode(current, k);
    const bool touching = cur[k] != kOpen || c.gap <= settings_.gap_tolerance;
    const Eigen::Vector3d v(s.v[3 * k], s.v[3 * k + 1], s.v[3 * k + 2]);
    const bool slip_zero = (static_cast<int>(k) == fired && fired_at_rest) || v.norm() <= slip_tolerance(k, x);
    if (!touching || s.gdot[k] > vz) {
      cands[k] = {kOpen};
      continue;
    }
    at_rest[k] = true;
    if (frictionless(c)) {
      cands[k] = {kOpen, kSlide};
    } else if (slip_zero) {
      cands[k] = {kOpen, kStick, kSlide};
      from_rest[k] = true;
      // Where no combination holds strictly (a contact on the cone's edge: sticking and a slide whose rate kappa
      // is 0 both hold only at the limit), the one closest to sticking at the contacts at rest is taken: a slip
      // that came back to zero sticks, rather than restarting a slide that the next rounding stops again.
      cur[k] = kStick;
    } else {
      cands[k] = {kOpen, kSlide};
      dirs[k] = v.normalized();
    }
    if (static_cast<int>(k) == fired && left >= 0 && cands[k].size() > 1)
      cands[k].erase(std::remove(cands[k].begin(), cands[k].end(), left), cands[k].end());
  }
  Combination chosen;
  ChoiceReport report;
  if (!choose(p, cands, cur, at_rest, from_rest, dirs, chosen, report)) {
    std::string names;
    for (std::size_t k = 0; k < nc; ++k)
      if (cands[k].size() > 1) names += (names.empty() ? "" : ", ") + contacts_[k].name;
    throw SolverError("cone contacts at t = " + num(t) + " (mode " + mode_name(current) + ", contacts undecided: " +
                      names + "): " + report.why + "; check the friction coefficients and the restitution");
  }
  int mode = 0;
  std::vector<bool> hold(nc, false);
  for (std::size_t k = 0; k < nc; ++k) {
    mode = with_contact_mode(mode, k, chosen.modes[k]);
    hold[k] = chosen.modes[k] == kSlide && from_rest[k];
    if (chosen.modes[k] == kSlide) dirs[k] = chosen.d[k];
    out.extra["slip_direction_x_" + contacts_[k].name] = chosen.modes[k] == kSlide ? dirs[k](0) : 0.0;
    out.extra["slip_direction_y_" + contacts_[k].name] = chosen.modes[k] == kSlide ? dirs[k](1) : 0.0;
  }
  out.extra["mode_candidates"] = static_cast<double>(report.candidates);
  // A slide from rest on the cone's edge (its slip rate kappa consistent only at the limit, below kStrict of the
  // rates' scale) starts at the zero-speed tolerance along its direction, as the planar engine lets a contact that
  // lifts off at zero rate open at that rate: its slip grows as kappa t, below what the integration resolves of it
  // for microseconds, and its witness v.r would cross zero on the integration error and restart the slide again and
  // again (a coin at the cone's edge restarted 257 times in 3 s). The kinetic energy changes by the tolerance squared
  // over |W| (counted in D_impact with the settling). A slide from rest with a clear kappa starts at v = 0, except
  // where a slide's slip came back to zero and the law sends it on along the reference it had, to within
  // kSameDirection: the slide was consistent along it (a slip that decelerates to zero along r has its acceleration
  // against r, and the law's direction at rest is then away from r), so its witness v.r crossed zero on the
  // integration's error alone. That happens where the slip grows as kappa t below that error for the first step
  // (kappa above the edge's kStrict, yet kappa h below the error): Euler's disk late in its spin-down, at 477 rad/s,
  // grew 4e-10 m/s in a step against an error of 1e-8, and restarted 54 times in 3.5 microseconds. It too starts at
  // the zero-speed tolerance.
  std::vector<double> seed(nc, 0.0);
  {
    double as = std::numeric_limits<double>::min();
    for (Eigen::Index i = 0; i < p.b.size(); ++i) as = std::max({as, std::abs(p.b(i)), std::abs(chosen.y(i))});
    for (std::size_t k = 0; k < nc; ++k) {
      if (!hold[k] || frictionless(w.terms[k])) continue;
      const auto o = static_cast<Eigen::Index>(p.off[k]);
      const auto dk = static_cast<Eigen::Index>(p.dim[k]);
      const double kappa = chosen.d[k].head(dk).dot(chosen.y.segment(o + 1, dk));
      const bool resumed = static_cast<int>(k) == fired && contact_mode(current, k) == kSlide &&
                           chosen.d[k].dot(slip_reference(k, x)) >= 1 - kSameDirection;
      if (kappa < kStrict * as || resumed) seed[k] = rest_speed(x);
    }
  }
  if (settle_state) {
    out.extra["settle_energy_loss"] = settle(t, x, chosen.modes, hold, seed, dirs);
  } else {
    for (std::size_t k = 0; k < nc; ++k) {
      Eigen::Vector3d r = dirs[k];
      const Eigen::Vector3d v(s.v[3 * k], s.v[3 * k + 1], s.v[3 * k + 2]);
      if (chosen.modes[k] == kSlide && !hold[k] && v.norm() > 0) r = v.normalized();
      if (chosen.modes[k] == kStick) r.setZero();  // the stick margin's offset (settle): 0 at the start
      for (int i = 0; i < 3; ++i) x[ref_state(k) + static_cast<std::size_t>(i)] = r(i);
    }
  }
  return mode;
}

void ConeEngine::impact(double t, double* x, int mode, std::size_t fired, EventOutcome& out) const {
  const std::size_t n = n_, nc = contacts_.size();
  Solution s;
  solve(t, x, mode, s);
  ConeWork& w = cone_work(n, nc);
  const auto ni = static_cast<Eigen::Index>(n);
  Problem p = w.p;
  const Eigen::Map<const Eigen::VectorXd> v(x + n, ni);
  const Eigen::VectorXd jv = w.J * v;
  // The contacts at zero gap take part; Newton's law on their normal rates: y_n+ + e y_n- >= 0, complementary to
  // P_N >= 0; the cone in the impulse on the tangential rows (targets 0: a sticking impulse stops the slip).
  const double vz = rest_speed(x);
  std::vector<std::vector<int>> cands(nc);
  std::vector<int> cur(nc);
  std::vector<bool> at_rest(nc, false), from_rest(nc, false);
  std::vector<Eigen::Vector3d> dirs(nc, Eigen::Vector3d::UnitX());
  p.b.setZero();
  p.target.setZero();
  for (std::size_t k = 0; k < nc; ++k) {
    const ConeTerms& c = w.terms[k];
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    cur[k] = kOpen;
    const bool part = k == fired || ((contact_mode(mode, k) != kOpen || c.gap <= settings_.gap_tolerance) && jv(o) <= vz);
    for (Eigen::Index i = 0; i <= static_cast<Eigen::Index>(p.dim[k]); ++i) p.b(o + i) = jv(o + i);
    if (!part) {
      cands[k] = {kOpen};
      continue;
    }
    double e = c.restitution;
    // Capture: a rebound slower than the capture velocity (given, or what the integration resolves of the flight
    // under gravity-like pull) is plastic, which ends an accumulation of impacts.
    const double approach = -jv(o);
    double capture = settings_.capture_velocity;
    if (!(capture > 0)) {
      const double pull = std::max(-s.gddot[k], 0.0);
      double resolution = settings_.gap_tolerance;
      for (std::size_t i = 0; i < n; ++i)
        resolution += std::abs(c.Wn[i]) * (settings_.rtol * std::abs(x[i]) + settings_.atol);
      capture = std::sqrt(2 * pull * ContactSettings::kResolvedApex * resolution);
    }
    if (e * approach <= capture) e = 0;
    if (approach > 0) p.b(o) = (1 + e) * jv(o);
    at_rest[k] = true;
    from_rest[k] = !frictionless(c);
    cands[k] = frictionless(c) ? std::vector<int>{kOpen, kSlide} : std::vector<int>{kOpen, kStick, kSlide};
  }
  Combination chosen;
  ChoiceReport report;
  if (!choose(p, cands, cur, at_rest, from_rest, dirs, chosen, report))
    throw SolverError("cone contacts: the impact of " + contacts_[fired].name + " at t = " + num(t) + ": " + report.why);
  const Eigen::VectorXd dv = w.MiJt * chosen.P;
  double T0, V0, h0, E0, T1, V1, h1, E1;
  energies(t, x, T0, V0, h0, E0);
  for (std::size_t i = 0; i < n; ++i) x[n + i] += dv(static_cast<Eigen::Index>(i));
  energies(t, x, T1, V1, h1, E1);
  const double loss = E0 - E1;
  if (loss < -1e-9 * std::max(std::abs(T0), std::numeric_limits<double>::min()))
    throw SolverError("cone contacts: the impact of " + contacts_[fired].name + " at t = " + num(t) +
                      " would raise the kinetic energy by " + num(-loss) + " J (Newton's restitution with friction in "
                      "the impulse; lower the restitution or the friction coefficient)");
  x[d_impact()] += std::max(loss, 0.0);
  out.extra["kinetic_energy_loss"] = loss;
  for (std::size_t k = 0; k < nc; ++k) {
    const auto o = static_cast<Eigen::Index>(p.off[k]);
    out.extra["impulse_normal_" + contacts_[k].name] = chosen.P(o);
    out.extra["impulse_x_" + contacts_[k].name] = chosen.P(o + 1);
    out.extra["impulse_y_" + contacts_[k].name] = chosen.P(o + 2);
  }
}

EventOutcome ConeEngine::on_event(double t, double* x, int mode, const std::string& witness, int crossing) const {
  std::size_t k = 0;
  const WitnessKind kind = kind_of(witness, contacts_, k);
  if (kind == WitnessKind::None) return WitnessSystem::on_event(t, x, mode, witness, crossing);
  EventOutcome out;
  out.state_changed = true;
  const std::string& name = contacts_[k].name;
  const int cm = contact_mode(mode, k);
  switch (kind) {
    case WitnessKind::Gap: {
      Solution s;
      solve(t, x, mode, s);
      if (s.gdot[k] < -rest_speed(x)) {
        impact(t, x, mode, k, out);
        out.kind = "impact_" + name;
        // After the impulse the contacts at rest are decided like any others (a rebound leaves them open).
        out.new_mode = select_mode(t, x, mode, -1, -1, false, out);
      } else {
        out.kind = "touchdown_" + name;
        out.new_mode = select_mode(t, x, mode, static_cast<int>(k), kOpen, false, out);
      }
      break;
    }
    case WitnessKind::Normal:
      out.kind = "lift_off_" + name;
      out.new_mode = select_mode(t, x, mode, static_cast<int>(k), cm, false, out);
      break;
    case WitnessKind::StickMargin:
      out.kind = "slip_" + name;
      out.new_mode = select_mode(t, x, mode, static_cast<int>(k), kStick, true, out);
      break;
    case WitnessKind::Slip:
    case WitnessKind::SlipTurn: {
      Solution s;
      solve(t, x, mode, s);
      const Eigen::Vector3d v(s.v[3 * k], s.v[3 * k + 1], s.v[3 * k + 2]);
      if (v.norm() <= std::max(slip_tolerance(k, x), 0.0) || (kind == WitnessKind::Slip && v.norm() <= slip_tolerance(k, x))) {
        // The slip reached zero: it sticks, or slides on in the direction the law gives at rest.
        out.new_mode = select_mode(t, x, mode, static_cast<int>(k), -1, true, out);
        out.kind = (contact_mode(out.new_mode, k) == kStick ? "stick_" : "slip_restart_") + name;
      } else {
        // The slip turned 60 degrees from its reference: a new reference, nothing else changes.
        const Eigen::Vector3d r = v.normalized();
        for (int i = 0; i < 3; ++i) x[ref_state(k) + static_cast<std::size_t>(i)] = r(i);
        out.kind = "slip_direction_" + name;
        out.new_mode = mode;
      }
      break;
    }
    case WitnessKind::None:
      break;
  }
  return out;
}

}  // namespace rollsim
