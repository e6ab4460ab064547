/// \file The contact engine's impact law (docs in contacts.hpp): the contacts that take part and their
/// restitution after the capture rule, the impulses by enumeration (narrowed by the impulses' LCP where the
/// combinations are many, a dependent set solved by the force distribution rule), their checks, and the energy
/// check of the chosen impulses.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "contact_detail.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

using namespace contact_detail;

/// The impact law at one touchdown (ContactEngine::impact), on a copy of the model's terms at the instant of the
/// impact: the trials of the impulses overwrite the rates of x, never these.
class ContactEngine::ImpactLaw {
 public:
  /// One combination of impulses: per taking-part contact 0 no impulse, 1 sticking impulse, 2 sliding +,
  /// 3 sliding - (frictionless: 0, 1); the solution [dq', the impulses, the constraints' impulses] and its verdict.
  struct Candidate {
    Verdict verdict;
    Eigen::VectorXd sol;
    std::vector<int> pick;
  };

  ImpactLaw(const ContactEngine& sys, double t, const double* x, int mode, std::size_t fired);

  /// The impulses under the tangential law on xi_T = w+ + et w- (et = tangential * e of the contact): a sticking
  /// impulse makes xi_T = 0, a sliding one has s xi_T >= 0. tangential = 0: the sticking impulse stops the slip.
  /// With many contacts at once, the closed reading first (every contact at zero gap takes a share of the impulse by
  /// the force distribution rule), the LCP solution's own reading where the closed one finds no consistent impulse.
  Candidate choose(double tangential, bool prefer_closed) const;
  /// The chosen impulses as the event's extras.
  void record(const Candidate& chosen, double tangential, EventOutcome& out) const;
  /// The picks of a candidate, for messages.
  std::string picks(const Candidate& cd) const;

  /// Whether a contact with friction and a restitution takes part (then the tangential law may take e too).
  bool any_friction() const {
    for (const std::size_t k : part_)
      if (sys_.contacts_[k].friction && e_[k] > 0) return true;
    return false;
  }
  bool captured() const { return captured_; }
  const std::string& where() const { return where_; }

 private:
  void take_part(double t, const double* x, const Solution& pre);
  bool narrow(double tangential, std::vector<std::vector<int>>& opts, bool prefer_closed) const;
  Candidate judge(const std::vector<int>& pick, double tangential) const;
  bool distribute(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, Candidate& cd) const;
  void check(Candidate& cd, double tangential) const;
  Candidate best(std::vector<Candidate>& strict, std::vector<Candidate>& weak) const;

  const ContactEngine& sys_;
  double t_;
  std::size_t n_, nc_, nk_, fired_;
  Eigen::Index ni_ = 0, N_ = 0;  ///< n, and the size of the impulse system
  Eigen::MatrixXd M_;
  std::vector<ContactTerms> terms_;
  std::vector<ConstraintTerms> cterms_;
  std::vector<double> v0_;  ///< the rates before the impact
  std::vector<std::size_t> part_;  ///< the contacts at zero gap, which take part
  std::vector<double> gd_, e_;  ///< every contact's g'- and its restitution after the capture rule
  bool captured_ = false;
  double vscale_ = 0;
  std::vector<std::vector<int>> options_;
  std::string where_;
  mutable double lcp_left_ = NAN;  ///< the combinations the impulses' LCP left (NaN where it was not used)
};

ContactEngine::ImpactLaw::ImpactLaw(const ContactEngine& sys, double t, const double* x, int mode, std::size_t fired)
    : sys_(sys), t_(t), n_(sys.n_), nc_(sys.contacts_.size()), nk_(sys.constraint_names_.size()), fired_(fired) {
  Solution pre;
  sys_.solve(t, x, mode, pre);
  const Work& w = work(n_, nc_, nk_);
  M_ = w.M;
  terms_ = w.terms;
  // The constraints held with the contacts keep their rate: G dq' = -C' (C' = 0 after the impact).
  cterms_ = w.cterms;
  v0_.assign(x + n_, x + 2 * n_);
  take_part(t, x, pre);
  // Per taking-part contact: 0 no impulse, 1 sticking impulse, 2 sliding +, 3 sliding - (frictionless: 0, 1).
  options_.resize(part_.size());
  for (std::size_t j = 0; j < part_.size(); ++j)
    options_[j] = !frictionless_here(sys_.contacts_[part_[j]], terms_[part_[j]]) ? std::vector<int>{0, 1, 2, 3}
                                                                                  : std::vector<int>{0, 1};
  ni_ = static_cast<Eigen::Index>(n_);
  N_ = static_cast<Eigen::Index>(n_ + 2 * part_.size() + nk_);
  for (std::size_t i = 0; i < n_; ++i) vscale_ = std::max(vscale_, std::abs(v0_[i]));
  for (std::size_t k = 0; k < nc_; ++k) vscale_ = std::max({vscale_, std::abs(gd_[k]), std::abs(terms_[k].slip)});
  where_ = " at t = " + num(t) + " (impact of contact " + sys_.contacts_[fired].name + ", approach g' = " +
           num(gd_[fired]) + ")";
}

void ContactEngine::ImpactLaw::take_part(double t, const double* x, const Solution& pre) {
  // The contacts at zero gap take part; an approach slower than the capture velocity is plastic.
  gd_.assign(nc_, 0.0);
  e_.assign(nc_, 0.0);
  const double gtol = sys_.settings_.gap_tolerance;
  for (std::size_t k = 0; k < nc_; ++k) {
    if (!sys_.contacts_[k].unilateral) continue;
    gd_[k] = dot(terms_[k].Wn, v0_.data(), n_);
    if (!(terms_[k].gap <= gtol || k == fired_)) continue;
    part_.push_back(k);
    const double r = terms_[k].restitution;
    if (!(r >= 0 && r <= 1))
      throw SolverError("contact " + sys_.contacts_[k].name + ": restitution e = " + num(r) + " at t = " + num(t) +
                        " is outside [0, 1]");
    // The capture rule: a rebound slower than the capture velocity is not taken (e = 0, the contact closes).
    // (Named a capture where the rule decides: a restitution it sets to 0, or an approach slower than it.)
    const double approach = std::max(0.0, -gd_[k]);
    const double vc = sys_.capture_speed(x, terms_[k], pre.gddot[k]);
    const bool capture = r * approach < vc;
    e_[k] = capture ? 0.0 : r;
    if (k == fired_ && capture && (r > 0 || approach < vc)) captured_ = true;
  }
}

std::string ContactEngine::ImpactLaw::picks(const Candidate& cd) const {
  static const char* names[4] = {"no impulse", "sticking impulse", "sliding impulse +", "sliding impulse -"};
  std::string s;
  for (std::size_t j = 0; j < part_.size(); ++j)
    s += (j ? ", " : "") + sys_.contacts_[part_[j]].name + ": " + names[cd.pick[j]];
  return s;
}

bool ContactEngine::ImpactLaw::narrow(double tangential, std::vector<std::vector<int>>& opts, bool prefer_closed) const {
  // The impulses' LCP (where the combinations are many): P_N against g'+ + e g'-, P_T against xi_T (choose).
  const ConstrainedInverse lu(M_, cterms_);
  std::vector<LcpContact> lc(part_.size());
  std::vector<Eigen::VectorXd> rows;
  for (std::size_t j = 0; j < part_.size(); ++j) {
    lc[j].contact = part_[j];
    lc[j].normal = static_cast<int>(j);
    rows.push_back(Eigen::Map<const Eigen::VectorXd>(terms_[part_[j]].Wn.data(), ni_));
  }
  PlanarContactProblem p;
  p.n_normal = part_.size();
  for (std::size_t j = 0; j < part_.size(); ++j)
    if (sys_.contacts_[part_[j]].friction) {
      lc[j].tangential = static_cast<int>(rows.size() - part_.size());
      rows.push_back(Eigen::Map<const Eigen::VectorXd>(terms_[part_[j]].Wt.data(), ni_));
      p.normal_of.push_back(static_cast<int>(j));
      p.mu.push_back(terms_[part_[j]].mu);
      p.bound.push_back(0.0);
    }
  p.G = delassus(lu, rows, rows);
  p.d.resize(static_cast<Eigen::Index>(rows.size()));
  // The change of the rates that restores the constraints' rate (C' = 0 after the impact).
  Eigen::VectorXd bc(static_cast<Eigen::Index>(nk_));
  for (std::size_t j = 0; j < nk_; ++j) bc(static_cast<Eigen::Index>(j)) = -cterms_[j].rate;
  const Eigen::VectorXd dv0 = lu.particular(bc);
  for (std::size_t j = 0; j < part_.size(); ++j) {
    const std::size_t k = part_[j];
    p.d(static_cast<Eigen::Index>(j)) = gd_[k] - e_[k] * std::max(0.0, -gd_[k]) + rows[j].dot(dv0);
    if (lc[j].tangential >= 0) {
      const auto i = static_cast<Eigen::Index>(part_.size()) + lc[j].tangential;
      p.d(i) = (1 + tangential * e_[k]) * terms_[k].slip + rows[static_cast<std::size_t>(i)].dot(dv0);
    }
  }
  const auto fired_part = std::find(part_.begin(), part_.end(), fired_) - part_.begin();
  const bool reading = narrow_options(p, lc, sys_.contacts_, std::vector<int>(part_.size(), 0), opts,
                                      static_cast<int>(fired_part), "impact", where_, prefer_closed);
  lcp_left_ = combinations(opts);
  return reading;
}

ContactEngine::ImpactLaw::Candidate ContactEngine::ImpactLaw::choose(double tangential, bool prefer_closed) const {
  std::vector<Candidate> strict, weak;
  Candidate nearest;
  nearest.verdict.margin = -std::numeric_limits<double>::infinity();
  std::vector<std::vector<int>> opts = options_;
  const bool closed_reading = narrow_first(sys_.settings_, opts) && narrow(tangential, opts, prefer_closed);
  check_combinations(opts, t_, "impact");
  std::vector<std::size_t> idx(part_.size(), 0);
  do {
    std::vector<int> pick;
    for (std::size_t j = 0; j < part_.size(); ++j) pick.push_back(opts[j][idx[j]]);
    Candidate cd = judge(pick, tangential);
    if (cd.verdict.strict()) strict.push_back(cd);
    if (cd.verdict.weak()) weak.push_back(cd);
    if (!cd.verdict.singular && cd.verdict.margin > nearest.verdict.margin) nearest = cd;
  } while (next(idx, opts));
  if (!strict.empty() || !weak.empty()) return best(strict, weak);
  if (closed_reading) return choose(tangential, false);
  throw SolverError("impact: no consistent impulse" + where_ + "; the nearest (" + picks(nearest) + ") breaks " +
                    nearest.verdict.worst);
}

ContactEngine::ImpactLaw::Candidate ContactEngine::ImpactLaw::best(std::vector<Candidate>& strict,
                                                                   std::vector<Candidate>& weak) const {
  if (strict.size() > 1) {
    // As for the modes (prefer_static_sticking): a contact whose static coefficient exceeds the kinetic one may
    // take a sticking impulse (|P_T| <= mu_s P_N) or a sliding one (mu_k P_N); Coulomb's law with static
    // friction says it sticks. Keep the impulses that stick at the most such contacts.
    auto sticking = [&](const Candidate& c) {
      int count = 0;
      for (std::size_t j = 0; j < part_.size(); ++j)
        count += c.pick[j] == 1 && terms_[part_[j]].mu_static > terms_[part_[j]].mu;
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
    throw SolverError("impact: more than one consistent impulse" + where_ + ": the impact law has no unique answer here;"
                      " consistent:" + list);
  }
  if (strict.size() == 1) return strict.front();
  std::sort(weak.begin(), weak.end(), [](const Candidate& a, const Candidate& b) { return a.verdict.margin > b.verdict.margin; });
  return weak.front();
}

ContactEngine::ImpactLaw::Candidate ContactEngine::ImpactLaw::judge(const std::vector<int>& pick, double tangential) const {
  Candidate cd;
  cd.pick = pick;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(N_, N_);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(N_);
  A.topLeftCorner(ni_, ni_) = M_;
  for (std::size_t j = 0; j < part_.size(); ++j) {
    const std::size_t k = part_[j];
    const ContactTerms& c = terms_[k];
    const auto rn = static_cast<Eigen::Index>(n_ + 2 * j), rt = rn + 1;
    const int p = cd.pick[j];
    const double sgn = p == 2 ? 1.0 : p == 3 ? -1.0 : 0.0;
    if (p != 0) {
      for (std::size_t i = 0; i < n_; ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        A(ii, rn) = -(c.Wn[i] - sgn * c.mu * c.Wt[i]);
        A(rn, ii) = c.Wn[i];
      }
      b(rn) = -gd_[k] + e_[k] * std::max(0.0, -gd_[k]);  // g'+ = -e g'- (0 for a contact at rest)
    } else {
      A(rn, rn) = 1;
    }
    if (p == 1 && !frictionless_here(sys_.contacts_[k], c)) {
      for (std::size_t i = 0; i < n_; ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        A(ii, rt) = -c.Wt[i];
        A(rt, ii) = c.Wt[i];
      }
      b(rt) = -c.slip - tangential * e_[k] * c.slip;  // w+ = -et w-
    } else {
      A(rt, rt) = 1;
    }
  }
  for (std::size_t j = 0; j < nk_; ++j) {
    const auto r = static_cast<Eigen::Index>(n_ + 2 * part_.size() + j);
    for (std::size_t i = 0; i < n_; ++i) {
      const auto ii = static_cast<Eigen::Index>(i);
      A(ii, r) = -cterms_[j].G[i];
      A(r, ii) = cterms_[j].G[i];
    }
    b(r) = -cterms_[j].rate;
  }
  Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
  bool solved = lu.isInvertible() && lu.rcond() >= kDependentPivot;
  if (solved) cd.sol = lu.solve(b);
  else solved = distribute(A, b, cd);
  if (!solved) {
    cd.verdict.singular = true;
    cd.verdict.worst = "the impulse conditions are dependent and contradict each other";
  } else {
    check(cd, tangential);
  }
  return cd;
}

bool ContactEngine::ImpactLaw::distribute(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, Candidate& cd) const {
  // Dependent impulse conditions (a flat landing on several contacts): the force distribution rule picks one
  // impulse distribution inside the cones (force_distribution.hpp).
  std::vector<Eigen::Index> held;
  for (Eigen::Index r = ni_; r < N_; ++r)
    if (A(r, r) != 1 || A.row(r).head(ni_).any()) held.push_back(r);
  const auto m = static_cast<Eigen::Index>(held.size());
  auto index_of = [&](Eigen::Index row) -> Eigen::Index {
    const auto it = std::find(held.begin(), held.end(), row);
    return it == held.end() ? -1 : static_cast<Eigen::Index>(it - held.begin());
  };
  ForceDistributionProblem dp;
  dp.M = M_;
  dp.f = Eigen::VectorXd::Zero(ni_);
  dp.J.resize(m, ni_);
  dp.C.resize(ni_, m);
  dp.b.resize(m);
  for (Eigen::Index r = 0; r < m; ++r) {
    const Eigen::Index row = held[static_cast<std::size_t>(r)];
    dp.J.row(r) = A.row(row).head(ni_);
    dp.C.col(r) = -A.col(row).head(ni_);
    dp.b(r) = b(row);
  }
  std::vector<Eigen::RowVectorXd> prow;
  for (std::size_t j = 0; j < part_.size(); ++j) {
    const Eigen::Index in = index_of(static_cast<Eigen::Index>(n_ + 2 * j));
    const Eigen::Index it = index_of(static_cast<Eigen::Index>(n_ + 2 * j + 1));
    if (in < 0) continue;
    prow.push_back(Eigen::RowVectorXd::Unit(m, in));
    if (it >= 0)
      for (const double side : {-1.0, 1.0}) {
        Eigen::RowVectorXd r = Eigen::RowVectorXd::Zero(m);
        r(it) = side;
        r(in) = stick_mu(terms_[part_[j]]);
        prow.push_back(r);
      }
  }
  dp.P.resize(static_cast<Eigen::Index>(prow.size()), m);
  for (std::size_t r = 0; r < prow.size(); ++r) dp.P.row(static_cast<Eigen::Index>(r)) = prow[r];
  dp.p0 = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(prow.size()));
  ForceDistribution dist;
  if (!distribute_forces(dp, dist)) return false;
  cd.sol = Eigen::VectorXd::Zero(N_);
  cd.sol.head(ni_) = dist.a;
  for (Eigen::Index r = 0; r < m; ++r) cd.sol(held[static_cast<std::size_t>(r)]) = dist.lambda(r);
  return true;
}

void ContactEngine::ImpactLaw::check(Candidate& cd, double tangential) const {
  const double* v = v0_.data();
  Eigen::VectorXd vplus = Eigen::Map<const Eigen::VectorXd>(v, ni_) + cd.sol.head(ni_);
  double pscale = 0;
  for (Eigen::Index i = ni_; i < N_; ++i) pscale = std::max(pscale, std::abs(cd.sol(i)));
  for (std::size_t j = 0; j < part_.size(); ++j) {
    const std::size_t k = part_[j];
    const ContactTerms& c = terms_[k];
    const auto rn = static_cast<Eigen::Index>(n_ + 2 * j);
    const int p = cd.pick[j];
    const double gplus = dot(c.Wn, vplus.data(), n_);
    const std::string& nm = sys_.contacts_[k].name;
    if (p == 0) {
      cd.verdict.check(gplus - e_[k] * std::max(0.0, -gd_[k]), vscale_, nm + ": no impulse needs g'+ >= -e g'-; g'+ + e g'-");
      continue;
    }
    const double Pn = cd.sol(rn);
    cd.verdict.check(Pn, pscale, nm + ": the normal impulse must be >= 0; P_N");
    if (frictionless_here(sys_.contacts_[k], c)) continue;
    const double wplus = dot(c.Wt, vplus.data(), n_) + (c.slip - dot(c.Wt, v, n_));
    const double xi = wplus + tangential * e_[k] * c.slip;
    if (p == 1)
      cd.verdict.check(stick_mu(c) * Pn - std::abs(cd.sol(rn + 1)), pscale, nm + ": a sticking impulse needs |P_T| <= mu_s P_N; mu_s P_N - |P_T|");
    else
      cd.verdict.check((p == 2 ? 1 : -1) * xi, vscale_, nm + ": a sliding impulse needs s (w+ + et w-) >= 0; s xi_T");
  }
}

void ContactEngine::ImpactLaw::record(const Candidate& chosen, double tangential, EventOutcome& out) const {
  for (std::size_t k = 0; k < nc_; ++k)
    if (sys_.contacts_[k].unilateral) {
      out.extra["impulse_normal_" + sys_.contacts_[k].name] = 0.0;
      if (sys_.contacts_[k].friction) out.extra["impulse_tangential_" + sys_.contacts_[k].name] = 0.0;
    }
  for (std::size_t j = 0; j < part_.size(); ++j) {
    const std::size_t k = part_[j];
    const int p = chosen.pick[j];
    if (p == 0) continue;
    const auto rn = static_cast<Eigen::Index>(n_ + 2 * j);
    const double Pn = chosen.sol(rn);
    out.extra["impulse_normal_" + sys_.contacts_[k].name] = Pn;
    if (sys_.contacts_[k].friction)
      out.extra["impulse_tangential_" + sys_.contacts_[k].name] =
          p == 1 ? (frictionless_here(sys_.contacts_[k], terms_[k]) ? 0.0 : chosen.sol(rn + 1))
                 : -(p == 2 ? 1.0 : -1.0) * terms_[k].mu * Pn;
  }
  if (!std::isnan(lcp_left_)) out.extra["lcp_impulse_candidates"] = lcp_left_;
  for (const auto& c : sys_.contacts_)
    if (c.unilateral && c.friction) out.extra["tangential_restitution"] = tangential * e_[fired_];
}

void ContactEngine::impact(double t, double* x, int mode, std::size_t fired, EventOutcome& out) const {
  const ImpactLaw law(*this, t, x, mode, fired);
  // Newton's law with a sticking impulse that stops the slip is not energy-consistent in general (coupled normal
  // and tangential directions can gain energy, as in Kane's example). Where it would gain, the tangential law takes
  // the same restitution as the normal one, xi = v+ + e v- in both directions: then the change of kinetic energy is
  // P.xi / (1 + e) - (1 - e) / (2 (1 + e)) P.G P <= 0 (G = W M^-1 W^T), for every configuration (Glocker, 2013).
  const std::vector<double> v0(x + n_, x + 2 * n_);
  double T0, V0, h0, E0;
  energies(t, x, T0, V0, h0, E0);
  auto apply = [&](const ImpactLaw::Candidate& cd) {
    for (std::size_t i = 0; i < n_; ++i) x[n_ + i] = v0[i] + cd.sol(static_cast<Eigen::Index>(i));
    double T1, V1, h1, E1;
    energies(t, x, T1, V1, h1, E1);
    return E0 - E1;
  };
  const double gain_tolerance = 1e-9 * std::max(std::abs(T0), std::numeric_limits<double>::min());
  double tangential = 0;
  ImpactLaw::Candidate chosen = law.choose(tangential, true);
  double loss = apply(chosen);
  if (loss < -gain_tolerance && law.any_friction()) {
    tangential = 1;
    chosen = law.choose(tangential, true);
    loss = apply(chosen);
  }
  if (loss < -gain_tolerance)
    throw SolverError("impact: the impulses" + law.where() + " (" + law.picks(chosen) + ") would raise the kinetic energy by " +
                      num(-loss) + " J: with contacts of different restitutions the impact law is not energy-consistent "
                      "here; give the contacts that meet at once the same restitution, or use e = 0");
  x[n_base_ + 1] += std::max(loss, 0.0);
  law.record(chosen, tangential, out);
  out.extra["kinetic_energy_loss"] = loss;
  out.kind = law.captured() ? "capture" : "impact";
  out.state_changed = true;
}

}  // namespace rollsim
