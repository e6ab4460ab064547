// The user model with velocity (nonholonomic) constraint rows, integrated in independent speeds (Maggi's
// equations; docs/nonholonomic.md). State x = (q [n], u [n - m] the rates of the independent coordinates, the
// extra energy states: W_Q, P (those present) and W_C). At each evaluation the dependent rates follow from the
// rows, q'_D = -A_D^-1 (A_I u + b), and the accelerations and multipliers from the saddle-point system
// [M -A^T; A 0] [a; lambda] = [f; -c]; u' = a_I. The velocity rows hold exactly by construction; position-level
// rows (holonomic constraints, contact gaps) drift at the integration error, which the summary monitors and audits.
#include <atomic>
#include <cmath>
#include <sstream>

#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/core/error.hpp"
#include "lagrangian_nonholonomic.hpp"

namespace rollsim::lagrangian::detail::nh {

namespace {

/// The choice of a mode, kept per thread for the last system and mode asked.
const Choice& cached_choice(const Nh& s, int mode) {
  thread_local std::uint64_t owner = 0;
  thread_local int cached = -1;
  thread_local Choice ch;
  if (!s.has_modes()) mode = 0;
  if (owner != s.id || cached != mode) {
    ch = choice_of(s, mode);
    owner = s.id;
    cached = mode;
  }
  return ch;
}

/// x' at the evaluated point w (evaluate first).
void rates(const Nh& s, const Choice& ch, const Work& w, double* xdot) {
  const Compiled& c = *s.c;
  const std::size_t n = c.n;
  for (std::size_t i = 0; i < n; ++i) xdot[i] = w.qd(static_cast<Index>(i));
  for (std::size_t k = 0; k < s.ni(); ++k) xdot[n + k] = w.a(static_cast<Index>(ch.indep[k]));
  if (c.n_extra) c.extra(w.in, xdot + n + s.ni());
  // W_C' = (A^T lambda).q' = lambda.(A q') = -lambda.b: zero for scleronomic rows.
  xdot[n + s.ni() + c.n_extra] = -w.lambda.dot(w.b);
}

/// The exact Jacobian dx'/dx (N x N) and dx'/dF of a generalized force F added to Q (N x n), by implicit
/// differentiation of the rows and of the saddle-point system at the evaluated point w; with `da`, the
/// accelerations' derivatives [da/dx, da/dF] (n x (N + n)).
void jacobians(const Nh& s, const Choice& ch, Work& w, MatrixXd& J, MatrixXd& B, MatrixXd* da = nullptr) {
  const Compiled& c = *s.c;
  const std::size_t n = c.n, m = s.m(), nI = s.ni(), nd = ch.dep.size(), E = c.n_extra, N = s.size();
  const auto ni = static_cast<Index>(n), mi = static_cast<Index>(m), Ni = static_cast<Index>(N);
  Scratch& sc = scratch(c);
  c.jac(w.in, sc.jac.data());
  s.jac_k(w.in, w.jac.data());
  const double* nj = w.jac.data();
  const MatrixXd drdq = Eigen::Map<const MatrixXd>(nj, mi, ni), dbdq = Eigen::Map<const MatrixXd>(nj + m * n, mi, ni),
                 dcdq = Eigen::Map<const MatrixXd>(nj + 2 * m * n, mi, ni),
                 dcdqd = Eigen::Map<const MatrixXd>(nj + 3 * m * n, mi, ni);
  // sum_k lambda_k dA_kj/dq_i (n x n, [j, i]) and sum_j dA_kj/dq_i a_j (m x n, [k, i]).
  MatrixXd dAtl(ni, ni), dAa(mi, ni);
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Map<const MatrixXd> dA(nj + 4 * m * n + m * n * i, mi, ni);
    dAtl.col(static_cast<Index>(i)) = dA.transpose() * w.lambda;
    dAa.col(static_cast<Index>(i)) = dA * w.a;
  }
  const Eigen::Map<const MatrixXd> dRdq(sc.jac.data(), ni, ni), dRdqd(sc.jac.data() + n * n, ni, ni);
  // dq/dx and dq'/dx (n x N).
  MatrixXd Dq = MatrixXd::Zero(ni, Ni), Dqd = MatrixXd::Zero(ni, Ni);
  Dq.leftCols(ni).setIdentity();
  const MatrixXd dD_dq = -w.solve_D(drdq), dD_du = -w.solve_D(w.AI);
  for (std::size_t k = 0; k < nI; ++k) Dqd(static_cast<Index>(ch.indep[k]), static_cast<Index>(n + k)) = 1.0;
  for (std::size_t k = 0; k < nd; ++k) {
    Dqd.row(static_cast<Index>(ch.dep[k])).head(ni) = dD_dq.row(static_cast<Index>(k));
    Dqd.row(static_cast<Index>(ch.dep[k])).segment(ni, static_cast<Index>(nI)) = dD_du.row(static_cast<Index>(k));
  }
  MatrixXd rhs(ni + mi, Ni + ni);
  rhs.topLeftCorner(ni, Ni) = -(dRdq - dAtl) * Dq - dRdqd * Dqd;
  rhs.bottomLeftCorner(mi, Ni) = -(dcdq + dAa) * Dq - dcdqd * Dqd;
  rhs.topRightCorner(ni, ni).setIdentity();
  rhs.bottomRightCorner(mi, ni).setZero();
  const MatrixXd sol = w.solve_K(rhs);
  if (da) *da = sol.topRows(ni);
  J.setZero(Ni, Ni);
  B.setZero(Ni, ni);
  J.topRows(ni) = Dqd;
  for (std::size_t k = 0; k < nI; ++k) {
    J.row(static_cast<Index>(n + k)) = sol.row(static_cast<Index>(ch.indep[k])).head(Ni);
    B.row(static_cast<Index>(n + k)) = sol.row(static_cast<Index>(ch.indep[k])).tail(ni);
  }
  // The extra states of rs_extra: rows after R in rs_jac, columns q then q'.
  const std::size_t e0 = n + nI;
  for (std::size_t e = 0; e < E; ++e) {
    VectorXd dq(ni), dqd(ni);
    for (std::size_t j = 0; j < n; ++j) {
      dq(static_cast<Index>(j)) = sc.jac[n * 2 * n + e + E * j];
      dqd(static_cast<Index>(j)) = sc.jac[n * 2 * n + e + E * (n + j)];
    }
    J.row(static_cast<Index>(e0 + e)) = dq.transpose() * Dq + dqd.transpose() * Dqd;
    if (c.has_forces && e == 0) B.row(static_cast<Index>(e0)) = w.qd.transpose();  // the input's power F.q'
  }
  // W_C' = -lambda.b.
  const MatrixXd dlam = sol.bottomRows(mi);
  J.row(static_cast<Index>(N - 1)) = -(w.b.transpose() * dlam.leftCols(Ni) + w.lambda.transpose() * dbdq * Dq);
  B.row(static_cast<Index>(N - 1)) = -(w.b.transpose() * dlam.rightCols(ni));
}

// ---- outputs ----------------------------------------------------------------------------------------------

struct Context {
  const Nh& s;
  const Work& w;
  double T = 0, V = 0, h = 0, balance = 0;
};

RuntimeOutputList<Context> nh_outputs(const Nh& s) {
  using C = Context;
  RuntimeOutputList<C> out;
  add_energy_outputs(out, "h - work_forces + work_explicit_time - work_constraints: constant");
  const Compiled& c = *s.c;
  for (const std::size_t d : s.dep)
    out.add({"der_" + c.coordinates[d], c.units[d].empty() ? "1/s" : c.units[d] + "/s",
             "rate of " + c.coordinates[d] + " (dependent: from the constraint rows)"},
            [d](const C& o) { return o.w.qd(static_cast<Index>(d)); });
  // The rates of the coordinates independent at the start: their state columns der_NAME are the slots of the
  // mode's independent speeds, which a re-choice gives to other coordinates; rate_NAME keeps its coordinate.
  if (s.has_modes())
    for (const std::size_t i : s.indep)
      out.add({"rate_" + c.coordinates[i], c.units[i].empty() ? "1/s" : c.units[i] + "/s",
               "rate of " + c.coordinates[i] + " in every mode (its state column der_" + c.coordinates[i] +
                   " holds it while the start's dependent speeds last)"},
              [i](const C& o) { return o.w.qd(static_cast<Index>(i)); });
  for (std::size_t k = 0; k < s.m(); ++k) {
    const Row& r = s.rows[k];
    const auto lam = [k](const C& o) { return o.w.lambda(static_cast<Index>(k)); };
    const auto pos = [k](const C& o) { return o.w.g(static_cast<Index>(k)); };
    if (r.kind == Kind::Normal) {
      out.add(Signal{"normal_force_" + r.contact, "N", "normal force of contact " + r.contact + " (pushing the body up)"}
                  .of_contact(Role::NormalForce, r.contact),
              lam);
      out.add(Signal{"gap_" + r.contact, "m", "gap of contact " + r.contact + " (0 held; its drift is the integration error)"}
                  .of_contact(Role::Gap, r.contact),
              pos);
    } else if (r.kind == Kind::Tangential) {
      const std::string axis = r.name.size() > 2 && r.name.compare(r.name.size() - 2, 2, "_y") == 0 ? "y" : "x";
      out.add(Signal{"tangential_force_" + axis + "_" + r.contact, "N",
                     "the " + axis + " component of the no-slip force of contact " + r.contact}
                  .of_contact(Role::TangentialForce, r.contact),
              lam);
    } else {
      out.add({"lambda_" + r.name, "", "multiplier of constraint " + r.name + " (its generalized force is A^T lambda)"}, lam);
      if (r.position)
        out.add({"constraint_" + r.name, "", "residual of constraint " + r.name + " (held at velocity level; drifts at "
                                             "the integration error)"},
                pos);
    }
  }
  out.add_block(c.user_outputs, [](const C& o, double* y) { o.s.c->outputs(o.w.in, y); });
  return out;
}

/// The energy drift and the position-level rows' drift (audited), the dependent speeds and the integrability.
class NhSummarizer : public Summarizer {
 public:
  NhSummarizer(const Nh& s, std::size_t balance, std::vector<std::size_t> positions)
      : s_(s), n_(s.c->n), balance_(balance), positions_(std::move(positions)), dependent_(s.dependent_text),
        integrability_(s.integrability), integrability_text_(s.integrability_text),
        first_energy_state_(s.c->n + s.ni()), size_(s.size()) {}
  void on_event(double, const std::string& kind, int before, int after, const double*) override {
    if (kind != kRechooseWitness || before == after) return;
    ++changes_;
    dependent_ = rate_list(s_, choice_of(s_, after).dep);
  }
  void on_tolerances(double rtol, double atol, bool) override {
    rtol_ = rtol;
    atol_ = atol;
  }
  void on_point(double t, const double* x, const double* y, int) override {
    if (!have_) {
      e0_ = y[balance_];
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(y[balance_] - e0_));
    // The ledger's scale: |T| + |V| (the first two outputs) and the energy states' magnitudes.
    double scale = std::abs(y[0]) + std::abs(y[1]);
    for (std::size_t k = first_energy_state_; k < size_; ++k) scale += std::abs(x[k]);
    scale_ = std::max(scale_, scale);
    for (std::size_t i = 0; i < n_; ++i) qscale_ = std::max(qscale_, std::abs(x[i]));
    for (const std::size_t k : positions_) worst_ = std::max(worst_, std::abs(y[k]));
    if (worst_ > limit()) {
      std::ostringstream os;
      os.precision(6);
      os << "at t = " << t << " a position-level constraint row has drifted to |g| = " << worst_
         << ", above the audit's limit " << limit() << " = 1e4 (rtol max(1, |q|) + atol): the integration error of "
         << "the coordinates is larger than the tolerances promise; tighten solver.rtol and solver.atol";
      throw AuditError(os.str());
    }
  }
  std::vector<SummaryItem> items() const override {
    std::vector<SummaryItem> v{{kEnergyDriftKeys[0], e0_, "", "J", "initial energy balance h - W_Q + P - W_C", false},
                               {kEnergyDriftKeys[1], drift_, "", "J", "largest drift of the energy balance", false},
                               {kEnergyDriftKeys[2], scale_ > 0 ? drift_ / scale_ : 0.0, "", "1",
                                "largest drift, relative to the largest |T| + |V| + |W_Q| + |P| + |W_C|", false},
                               {"dependent_speeds", 0, dependent_, "", "dependent speeds at the end (from the constraint rows)", false},
                               {"dependent_speeds_start", 0, s_.dependent_text, "", "dependent speeds at the start", false},
                               {"dependent_speed_changes", static_cast<double>(changes_), "", "",
                                "times the dependent speeds were chosen again", true},
                               {"constraint_integrability", 0, integrability_, "", integrability_text_, false}};
    if (!positions_.empty()) {
      v.push_back({"position_residual_max", worst_, "", "", "largest |g| of the position-level rows", false});
      v.push_back({"position_residual_limit", limit(), "", "", "the audit's limit 1e4 (rtol max(1, |q|) + atol)", false});
    }
    return v;
  }

 private:
  double limit() const { return 1e4 * (rtol_ * std::max(1.0, qscale_) + atol_); }
  const Nh& s_;  // the system's, which outlives its run's summarizer
  std::size_t n_, balance_, changes_ = 0;
  std::vector<std::size_t> positions_;
  std::string dependent_, integrability_, integrability_text_;
  bool have_ = false;
  std::size_t first_energy_state_, size_;
  double e0_ = 0, drift_ = 0, worst_ = 0, qscale_ = 0, rtol_ = 1e-6, atol_ = 1e-9, scale_ = 0;
};

// ---- the system -------------------------------------------------------------------------------------------

class NonholonomicSystem final : public OdeSystem, public WitnessSystem, public Linearizable, public UserModel {
 public:
  NonholonomicSystem(Nh s, std::vector<double> x0)
      : UserModel(s.c), s_(std::move(s)), x0_(std::move(x0)), list_(nh_outputs(s_)), charts_(s_.c, x0_.data()) {
    const Compiled& c = *s_.c;
    for (std::size_t i = 0; i < c.n; ++i) states_.push_back({c.coordinates[i], c.units[i], "generalized coordinate"});
    for (const std::size_t i : s_.indep)
      states_.push_back(Signal{"der_" + c.coordinates[i], c.units[i].empty() ? "1/s" : c.units[i] + "/s",
                               "rate of " + c.coordinates[i] + " (an independent speed; after a re-choice of the "
                               "dependent speeds, the mode's independent speed in this slot: see rate_" +
                               c.coordinates[i] + ")"}
                            .as(Role::Rate));
    add_extra_states(c, states_);
    states_.push_back(ledger_state(LedgerState::WorkConstraints));  // (A^T lambda).q' = -lambda.b
    balance_ = list_.index("energy_balance");
    for (std::size_t k = 0; k < s_.m(); ++k) {
      const Row& r = s_.rows[k];
      if (r.kind == Kind::Normal) {
        positions_.push_back(list_.index("gap_" + r.contact));
        normals_.push_back(k);
      } else if (r.kind == Kind::Constraint && r.position) {
        positions_.push_back(list_.index("constraint_" + r.name));
      }
    }
    // The orientation charts' witnesses after the user's: a SolverError before gimbal lock (lagrangian_internal.hpp).
    witnesses_ = charts_.after(user_witnesses(c));
    for (const std::size_t k : normals_) witnesses_.push_back({"lift_off_" + s_.rows[k].contact, -1, true});
    // det(A_D) changes sign where the dependent speeds stop following from the rows: the run stops there (a square
    // A_D: rows without redundancy), unless the speeds were chosen again before, where A_D's conditioning fell below
    // tau (the modes).
    if (!s_.redundant()) witnesses_.push_back({kSingularWitness, 0, true});
    if (s_.has_modes()) witnesses_.push_back({kRechooseWitness, -1, false});
    for (std::size_t i = 0; i < c.n; ++i)
      inputs_.push_back({"force_" + c.coordinates[i], "generalized force",
                         "generalized force added to Q of " + c.coordinates[i] + " (0 in a run; a linearisation's input)"});
  }
  std::string model_name() const override { return "lagrangian"; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return list_.signals(); }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  // The modes: a choice of dependent speeds, as the bit set of the coordinates whose role differs from the start's
  // choice (mode 0; docs/nonholonomic.md).
  bool has_modes() const override { return s_.has_modes(); }
  int largest_mode() const override { return s_.has_modes() ? static_cast<int>((1u << s_.c->n) - 1) : 0; }
  std::string mode_name(int mode) const override { return rate_list(s_, cached_choice(s_, mode).dep) + " dependent"; }
  void rhs(double t, const double* x, int mode, double* xdot) const override {
    Work& w = work(s_);
    const Choice& ch = cached_choice(s_, mode);
    evaluate(s_, ch, t, x, w);
    rates(s_, ch, w, xdot);
  }
  bool jacobian(double t, const double* x, int mode, double* J) const override {
    Work& w = work(s_);
    const Choice& ch = cached_choice(s_, mode);
    evaluate(s_, ch, t, x, w);
    MatrixXd Jm, B;
    jacobians(s_, ch, w, Jm, B);
    std::copy(Jm.data(), Jm.data() + Jm.size(), J);
    return true;
  }
  std::vector<Witness> witnesses(int) const override { return witnesses_; }
  std::size_t witness_count(int) const override { return witnesses_.size(); }
  void witness_values(double t, const double* x, int mode, double* g) const override {
    Work& w = work(s_);
    evaluate(s_, cached_choice(s_, mode), t, x, w);
    if (s_.c->n_events) s_.c->witnesses(w.in, g);
    const std::size_t k0 = s_.c->n_events + s_.c->charts.size();
    charts_.values(t, x, g + s_.c->n_events);
    for (std::size_t j = 0; j < normals_.size(); ++j) g[k0 + j] = w.lambda(static_cast<Index>(normals_[j]));
    std::size_t k = k0 + normals_.size();
    if (!s_.redundant()) g[k++] = w.det;
    if (s_.has_modes()) g[k] = w.cond - s_.tau;
  }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    if (witness == kSingularWitness) {
      Work& w = work(s_);
      const Choice& ch = cached_choice(s_, mode);
      evaluate(s_, ch, t, x, w);
      throw SolverError(singular_message(s_, ch, t, w.cond, conditioning(w.A, best_choice(w.A, ch.dep.size()))));
    }
    if (witness == kRechooseWitness) return rechoose(t, x, mode);
    charts_.on_event(witness, t);
    return WitnessSystem::on_event(t, x, mode, witness, dir);
  }
  void compute_outputs(double t, const double* x, int mode, double* y) const override {
    Work& w = work(s_);
    evaluate(s_, cached_choice(s_, mode), t, x, w);
    double e[3];
    s_.c->energy(w.in, e);
    Context o{s_, w};
    o.h = e[0];
    o.T = e[1];
    o.V = e[2];
    o.balance = e[0];
    std::size_t k = s_.c->n + s_.ni();
    if (s_.c->has_forces) o.balance -= x[k++];
    if (s_.c->explicit_time) o.balance += x[k++];
    o.balance -= x[k];
    list_.compute(o, y);
  }
  bool energy_ledger(double t, const double* x, int mode, EnergyLedger& e) const override {
    double* y = output_buffer(list_.size());
    compute_outputs(t, x, mode, y);
    e.energy = y[balance_];
    e.dissipated = 0;
    e.scale = std::abs(y[0]) + std::abs(y[1]);
    for (std::size_t k = s_.c->n + s_.ni(); k < size(); ++k) e.scale += std::abs(x[k]);
    return true;
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<NhSummarizer>(s_, balance_, positions_);
  }

  const Signals& inputs() const override { return inputs_; }
  std::vector<double> input_values() const override { return std::vector<double>(s_.c->n, 0.0); }
  void rhs_ad(const AD* x, const AD* u, AD* xdot) const override {
    const std::size_t N = size(), n = s_.c->n;
    std::vector<double> xv(N), f(N);
    for (std::size_t i = 0; i < N; ++i) xv[i] = x[i].value();
    Work& w = work(s_);
    evaluate(s_, 0.0, xv.data(), w);
    const Choice start{s_.dep, s_.indep};
    rates(s_, start, w, f.data());
    MatrixXd J, B;
    jacobians(s_, start, w, J, B);
    for (std::size_t i = 0; i < N; ++i) {
      VectorXd dv = VectorXd::Zero(x[0].derivatives().size());
      for (std::size_t j = 0; j < N; ++j)
        if (J(static_cast<Index>(i), static_cast<Index>(j)) != 0) dv += J(static_cast<Index>(i), static_cast<Index>(j)) * x[j].derivatives();
      for (std::size_t j = 0; j < n; ++j)
        if (B(static_cast<Index>(i), static_cast<Index>(j)) != 0) dv += B(static_cast<Index>(i), static_cast<Index>(j)) * u[j].derivatives();
      xdot[i] = AD(f[i], dv);
    }
  }
  void signals_ad(const AD* x, const AD* u, AD* y) const override;
  int degrees_of_freedom() const override { return static_cast<int>(s_.ni()); }
  std::vector<std::string> default_linear_outputs() const override { return {s_.c->coordinates.front()}; }
  MatrixXd state_constraint_jacobian(const double* x) const override {
    std::vector<std::size_t> pos;
    for (std::size_t k = 0; k < s_.m(); ++k)
      if (s_.rows[k].position) pos.push_back(k);
    if (pos.empty()) return {};
    Work& w = work(s_);
    evaluate(s_, 0.0, x, w);
    const std::size_t n = s_.c->n, m = s_.m();
    MatrixXd G = MatrixXd::Zero(static_cast<Index>(pos.size()), static_cast<Index>(size()));
    for (std::size_t r = 0; r < pos.size(); ++r)
      for (std::size_t j = 0; j < n; ++j) G(static_cast<Index>(r), static_cast<Index>(j)) = w.rows[m * n + 3 * m + pos[r] + m * j];
    return G;
  }

 private:
  /// The dependent speeds chosen again at (t, x): the best-conditioned choice, the new independent speeds read from
  /// the full rates of the old choice (the motion is continuous), the mode that names it; the integrator restarts.
  EventOutcome rechoose(double t, double* x, int mode) const {
    Work& w = work(s_);
    const Choice& old = cached_choice(s_, mode);
    evaluate(s_, old, t, x, w);
    const std::vector<std::size_t> dep = best_choice(w.A, old.dep.size());
    EventOutcome out;
    out.kind = kRechooseWitness;
    out.new_mode = mode;
    // No better choice (the rows themselves lose rank): the mode is kept, and the run stops where A_D is singular.
    if (!(conditioning(w.A, dep) > w.cond)) return out;
    out.new_mode = mode_of(s_, dep);
    const Choice& ch = cached_choice(s_, out.new_mode);
    for (std::size_t k = 0; k < ch.indep.size(); ++k) x[s_.c->n + k] = w.qd(static_cast<Index>(ch.indep[k]));
    out.state_changed = true;
    return out;
  }
  Nh s_;
  std::vector<double> x0_;
  RuntimeOutputList<Context> list_;
  Signals states_, inputs_;
  std::vector<Witness> witnesses_;
  ChartWitnesses charts_;  ///< the orientation charts' witnesses (signed by the start's determinants)
  std::size_t balance_ = 0;
  std::vector<std::size_t> positions_, normals_;
};

void NonholonomicSystem::signals_ad(const AD* x, const AD* u, AD* y) const {
  const Compiled& c = *s_.c;
  const std::size_t N = size(), n = c.n, no = list_.size();
  for (std::size_t i = 0; i < N; ++i) y[i] = x[i];
  std::vector<double> xv(N), yv(no);
  for (std::size_t i = 0; i < N; ++i) xv[i] = x[i].value();
  const Index k = x[0].derivatives().size();
  Work& w = work(s_);
  evaluate(s_, 0.0, xv.data(), w);
  MatrixXd J, B, Da;
  jacobians(s_, Choice{s_.dep, s_.indep}, w, J, B, &Da);
  // dx/dseed, dF/dseed; dq'/dseed and da/dseed from the implicit differentiation (exact): the user's outputs are
  // differentiated through their Jacobian kernel; the built-in ones (energies, multipliers, residuals) by forward
  // differences of their exact values, as the smooth form does.
  MatrixXd dx(static_cast<Index>(N), k), du(static_cast<Index>(n), k);
  for (std::size_t j = 0; j < N; ++j) dx.row(static_cast<Index>(j)) = x[j].derivatives().transpose();
  for (std::size_t j = 0; j < n; ++j) du.row(static_cast<Index>(j)) = u[j].derivatives().transpose();
  const MatrixXd dqd = J.topRows(static_cast<Index>(n)) * dx;
  const MatrixXd da = Da.leftCols(static_cast<Index>(N)) * dx + Da.rightCols(static_cast<Index>(n)) * du;
  std::vector<double> oj(c.n_user_outputs * 3 * n);
  if (c.n_user_outputs) c.outputs_jac(w.in, oj.data());
  compute_outputs(0.0, xv.data(), 0, yv.data());
  const std::size_t first_user = c.user_outputs.empty() ? no : list_.index(c.user_outputs.front().name);
  // The built-in outputs' derivatives by the states: one forward difference of every output per state.
  MatrixXd dY = MatrixXd::Zero(static_cast<Index>(no), static_cast<Index>(N));
  if (first_user > 0) {
    std::vector<double> xp(xv), yp(no);
    for (std::size_t j = 0; j < N; ++j) {
      const double h = 1e-7 * std::max(1.0, std::abs(xv[j]));
      xp[j] = xv[j] + h;
      compute_outputs(0.0, xp.data(), 0, yp.data());
      xp[j] = xv[j];
      for (std::size_t o = 0; o < first_user; ++o) dY(static_cast<Index>(o), static_cast<Index>(j)) = (yp[o] - yv[o]) / h;
    }
  }
  for (std::size_t o = 0; o < no; ++o) {
    VectorXd dv = VectorXd::Zero(k);
    if (o >= first_user) {
      const std::size_t r = o - first_user, R = c.n_user_outputs;
      for (std::size_t j = 0; j < n; ++j) {
        dv += oj[r + R * j] * dx.row(static_cast<Index>(j)).transpose();
        dv += oj[r + R * (n + j)] * dqd.row(static_cast<Index>(j)).transpose();
        dv += oj[r + R * (2 * n + j)] * da.row(static_cast<Index>(j)).transpose();
      }
    } else {
      dv = (dY.row(static_cast<Index>(o)) * dx).transpose();
    }
    y[N + o] = AD(yv[o], dv);
  }
}

}  // namespace

std::unique_ptr<HybridSystem> make_system(Nh s, std::vector<double> x0) {
  static std::atomic<std::uint64_t> systems{0};
  s.id = ++systems;
  return std::make_unique<NonholonomicSystem>(std::move(s), std::move(x0));
}

}  // namespace rollsim::lagrangian::detail::nh
