/// \file The contact engine's choice of modes at an event (docs in contacts.hpp): each contact's candidate modes,
/// the LCP that narrows them where they are many, the consistency check of every combination left, and the choice.
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

namespace contact_detail {

double combinations(const std::vector<std::vector<int>>& options) {
  double n = 1;
  for (const auto& o : options) n *= static_cast<double>(o.size());
  return n;
}

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

bool narrow_first(const ContactSettings& s, const std::vector<std::vector<int>>& options) {
  const double n = combinations(options);
  return (s.mode_selection == ModeSelection::Lcp && n > 1) ||
         (s.mode_selection == ModeSelection::Auto && n > ContactSettings::kAutoCombinations);
}

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

namespace {

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

}  // namespace

bool narrow_options(const PlanarContactProblem& p, const std::vector<LcpContact>& lc,
                    const std::vector<ContactSpec>& specs, const std::vector<int>& closed_slide,
                    std::vector<std::vector<int>>& options, int keep_all, const char* what,
                    const std::string& where, bool prefer_closed) {
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

}  // namespace contact_detail

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


/// The choice of the contacts' modes at one event (ContactEngine::select_mode): each contact's candidates, the LCP
/// narrowing where they are many, the check of every combination against the complementarity conditions, and the
/// choice among the consistent ones.
class ContactEngine::ModeSelector {
 public:
  ModeSelector(const ContactEngine& sys, double t, const double* x, int current, const char* when)
      : sys_(sys), t_(t), x_(x), current_(current), when_(when), n_(sys.n_), nc_(sys.contacts_.size()) {
    // A gap rate or a slip counts as zero below vtol: far below the capture velocity (so that a rebound, however
    // slow, opens the contact) and relative to the rates, for the rounding of a closed or sticking contact.
    double vscale = 0;
    for (std::size_t i = 0; i < n_; ++i) vscale = std::max(vscale, std::abs(x[n_ + i]));
    vtol_ = 1e-9 * vscale + 1e-3 * sys_.settings_.rest_speed();
  }

  /// The consistent mode; `fired`/`left`: a contact and the mode it left (-1: none).
  int select(int fired, int left, double* lcp_candidates) {
    candidates(fired, left);
    // Many contacts at rest at once: the closed reading first (every touching contact shares the load), the LCP
    // solution's own reading where no mode of the closed one is consistent.
    const std::vector<std::vector<int>> unnarrowed = options_;
    bool closed_reading = false;
    if (narrow_first(sys_.settings_, options_)) {
      closed_reading = sys_.narrow_modes(t_, x_, current_, fired, options_, where(), true);
      if (lcp_candidates) *lcp_candidates = combinations(options_);
    }
    free_scale_ = free_acceleration_scale();
    enumerate();
    if (closed_reading && strict_.empty() && weak_.empty()) {
      options_ = unnarrowed;
      sys_.narrow_modes(t_, x_, current_, fired, options_, where(), false);
      if (lcp_candidates) *lcp_candidates = combinations(options_);
      enumerate();
    }
    return choose();
  }

 private:
  std::string where() const {
    return std::string(" at t = ") + num(t_) + " (" + when_ + ", from mode " + sys_.mode_name(current_) + ")";
  }

  /// Each contact's candidate modes: open, and closed where it touches and does not open (sticking, or sliding
  /// in the direction of its slip, or every closed mode at rest); without the mode `fired` left.
  void candidates(int fired, int left) {
    options_.assign(nc_, {});
    const Work& w0 = work(n_, nc_, sys_.constraint_names_.size());
    Solution probe;
    sys_.solve(t_, x_, current_, probe);  // fills the terms
    for (std::size_t k = 0; k < nc_; ++k) {
      const ContactSpec& c = sys_.contacts_[k];
      const ContactTerms& ct = w0.terms[k];
      std::vector<int> closed;
      if (c.friction && frictionless_here(c, ct)) {
        closed = {kStick};  // mu = 0: stick, slide + and slide - are one frictionless motion
      } else if (c.friction) {
        if (std::abs(ct.slip) > vtol_)
          closed = {ct.slip > 0 ? kSlidePlus : kSlideMinus};
        else
          closed = {kStick, kSlidePlus, kSlideMinus};
      } else {
        closed = {kStick};
      }
      auto& o = options_[k];
      if (c.unilateral) {
        const double gd = dot(ct.Wn, x_ + n_, n_);
        o.push_back(kOpen);
        if (ct.gap <= sys_.settings_.gap_tolerance && gd <= vtol_) o.insert(o.end(), closed.begin(), closed.end());
      } else {
        o = closed;
      }
      if (static_cast<int>(k) == fired && o.size() > 1) o.erase(std::remove(o.begin(), o.end(), left), o.end());
    }
  }

  /// The accelerations' scale: those the smooth forces would cause with every contact open, so that a body held at
  /// rest (accelerations of rounding size) is not judged on its rounding.
  double free_acceleration_scale() const {
    Solution probe;
    sys_.solve(t_, x_, current_, probe);
    const Work& w0 = work(n_, nc_, sys_.constraint_names_.size());
    const Eigen::VectorXd a_free = w0.M.partialPivLu().solve(w0.f);
    double scale = max_abs(a_free);
    for (std::size_t k = 0; k < nc_; ++k)
      scale = std::max({scale, std::abs(dot(w0.terms[k].Wn, a_free.data(), n_)),
                        std::abs(dot(w0.terms[k].Wt, a_free.data(), n_))});
    return scale;
  }

  /// Every combination of the candidates, judged (judge) and sorted into strictly and weakly consistent ones, and
  /// the nearest to consistent.
  void enumerate() {
    strict_.clear();
    weak_.clear();
    nearest_ = Choice{};
    nearest_.verdict.margin = -std::numeric_limits<double>::infinity();
    check_combinations(options_, t_, "contact modes");
    std::vector<std::size_t> idx(nc_, 0);
    Solution s;
    do {
      int mode = 0;
      for (std::size_t k = 0; k < nc_; ++k) mode = with_contact_mode(mode, k, options_[k][idx[k]]);
      const Choice ch = judge(mode, s);
      if (ch.verdict.strict()) strict_.push_back(ch);
      if (ch.verdict.weak()) weak_.push_back(ch);
      if (!ch.verdict.singular && ch.verdict.margin > nearest_.verdict.margin) nearest_ = ch;
    } while (next(idx, options_));
  }

  /// One mode's verdict: its complementarity conditions at (t, x), each relative to its scale.
  Choice judge(int mode, Solution& s) const {
    Choice ch;
    ch.mode = mode;
    for (std::size_t k = 0; k < nc_; ++k) ch.changes += contact_mode(mode, k) != contact_mode(current_, k);
    const bool ok = sys_.solve(t_, x_, mode, s);
    const Work& w = work(n_, nc_, sys_.constraint_names_.size());
    if (!ok) {
      ch.verdict.singular = true;
      ch.verdict.worst = s.dependent ? "the contact constraints are dependent and contradict each other"
                                     : "the contact constraints are dependent (singular matrix)";
      return ch;
    }
    double fscale = 0, ascale = free_scale_;
    for (std::size_t i = 0; i < n_; ++i) ascale = std::max(ascale, std::abs(s.a[i]));
    for (std::size_t k = 0; k < nc_; ++k) {
      fscale = std::max({fscale, std::abs(s.lam_n[k]), std::abs(s.lam_t[k])});
      ascale = std::max({ascale, std::abs(s.gddot[k]), std::abs(s.wdot[k]), std::abs(w.terms[k].gap_bias),
                         std::abs(w.terms[k].slip_bias)});
    }
    for (std::size_t k = 0; k < nc_; ++k) {
      const ContactSpec& c = sys_.contacts_[k];
      const ContactTerms& ct = w.terms[k];
      const int cm = contact_mode(mode, k);
      const bool closed = is_closed(c, cm);
      if (c.unilateral && !closed && ct.gap <= sys_.settings_.gap_tolerance && std::abs(s.gdot[k]) <= vtol_)
        ch.verdict.check(s.gddot[k], ascale, c.name + ": open at zero gap needs g'' >= 0; g''");
      if (c.unilateral && closed) ch.verdict.check(s.lam_n[k], fscale, c.name + ": closed needs lambda_N >= 0; lambda_N");
      if (c.friction && closed && cm == kStick && !frictionless_here(c, ct))
        ch.verdict.check(stick_mu(ct) * s.lam_n[k] - std::abs(s.lam_t[k]), fscale,
                         c.name + ": sticking needs |lambda_T| <= mu_s lambda_N; mu_s lambda_N - |lambda_T|");
      if (c.friction && closed && cm != kStick && std::abs(ct.slip) <= vtol_)
        ch.verdict.check((cm == kSlidePlus ? 1 : -1) * s.wdot[k], ascale,
                         c.name + ": " + kModeNames[cm] + " from w = 0 needs s w' >= 0; s w'");
    }
    return ch;
  }

  /// The one strictly consistent mode (after prefer_static_sticking); else, among the weakly consistent ones, the
  /// one that changes fewest contacts. Several strict, or none at all: a SolverError.
  int choose() {
    if (strict_.size() > 1) sys_.prefer_static_sticking(t_, x_, strict_);
    if (strict_.size() > 1) {
      std::string modes;
      for (const auto& c : strict_) modes += "\n  " + sys_.mode_name(c.mode);
      throw SolverError("contact modes: more than one consistent mode" + where() +
                        ": forward motion is not unique (the Painlevé paradox for a sliding contact whose friction "
                        "pushes it into the surface); consistent:" + modes);
    }
    if (strict_.size() == 1) return strict_.front().mode;
    if (!weak_.empty()) {
      std::sort(weak_.begin(), weak_.end(), [](const Choice& a, const Choice& b) {
        return a.changes != b.changes ? a.changes < b.changes : a.verdict.margin > b.verdict.margin;
      });
      return weak_.front().mode;
    }
    throw SolverError("contact modes: no consistent mode" + where() + ": every combination of the contacts' modes breaks "
                      "a complementarity condition (the Painlevé paradox: no contact force can stop a sliding contact "
                      "from entering the surface); the nearest, " + sys_.mode_name(nearest_.mode) + ", breaks " +
                      nearest_.verdict.worst);
  }

  const ContactEngine& sys_;
  double t_;
  const double* x_;
  int current_;
  const char* when_;
  std::size_t n_, nc_;
  double vtol_ = 0, free_scale_ = 0;
  std::vector<std::vector<int>> options_;
  std::vector<Choice> strict_, weak_;
  Choice nearest_;
};

int ContactEngine::select_mode(double t, const double* x, int current, int fired, int left, const char* when,
                               double* lcp_candidates) const {
  return ModeSelector(*this, t, x, current, when).select(fired, left, lcp_candidates);
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

}  // namespace rollsim
