// The user model with holonomic constraints and no contacts: a DAE of index 1 with Baumgarte stabilisation on IDA.
#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/system.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian {

namespace {

using namespace detail;

// ---- holonomic constraints (DAE) -------------------------------------------------------------------------

class ConstrainedUserSystem final : public DaeSystem, public WitnessSystem, public UserModel {
 public:
  ConstrainedUserSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0)
      : UserModel(c), c_(std::move(c)), x0_(std::move(x0)), list_(output_list(*c_)), columns_(*c_, list_.signals()),
        charts_(c_, x0_.data()) {
    states_ = state_signals(*c_);
    for (const auto& n : c_->constraint_names)
      states_.push_back({"lambda_" + n, "", "multiplier of constraint " + n + " (its generalized force is G^T lambda)"});
    if (c_->has_forces) states_.push_back(ledger_state(LedgerState::WorkForces));
    if (c_->explicit_time) states_.push_back(ledger_state(LedgerState::WorkExplicitTime));
    states_.push_back(ledger_state(LedgerState::WorkConstraints));
  }
  std::string model_name() const override { return "lagrangian"; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return list_.signals(); }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  void residual(double t, const double* x, const double* xdot, int, double* r) const override {
    const std::size_t n = c_->n;
    Scratch& w = scratch(*c_);
    double* in = fill_dae(w, t, x, xdot);
    for (std::size_t i = 0; i < n; ++i) r[i] = xdot[i] - x[n + i];
    c_->dae(in, r + n);
    // The extra states (works): x_e' - rate_e = 0.
    const std::size_t e0 = 2 * n + c_->nc;
    c_->dae_extra(in, r + e0);
    for (std::size_t e = 0; e < c_->n_dae_extra; ++e) r[e0 + e] = xdot[e0 + e] - r[e0 + e];
  }
  void differential_ids(double* id) const override {
    // q, v and the works are differential, lambda algebraic.
    for (std::size_t i = 0; i < size(); ++i) id[i] = i < 2 * c_->n || i >= 2 * c_->n + c_->nc ? 1.0 : 0.0;
  }
  bool residual_jacobian(double t, const double* x, const double* xdot, int, double cj, double* J) const override {
    const std::size_t n = c_->n, nc = c_->nc, N = size(), R = n + nc;
    Scratch& w = scratch(*c_);
    c_->dae_jac(fill_dae(w, t, x, xdot), w.jac.data());
    std::fill(J, J + N * N, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      J[i + N * i] = cj;
      J[i + N * (n + i)] = -1.0;
    }
    // Blocks of rs_dae_jac, columns: q (n), v (n), lambda (nc), a (n); rows R = n + nc.
    for (std::size_t col = 0; col < 2 * n + nc; ++col)
      for (std::size_t r = 0; r < R; ++r) J[n + r + N * col] = w.jac[r + R * col];
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t r = 0; r < R; ++r) J[n + r + N * (n + j)] += cj * w.jac[r + R * (2 * n + nc + j)];
    // The works' rows: cj on their own column, minus their rates' derivatives by q, v and lambda.
    const std::size_t E = c_->n_dae_extra, e0 = 2 * n + nc;
    c_->dae_extra_jac(w.in.data(), w.out.data());
    for (std::size_t e = 0; e < E; ++e) {
      J[e0 + e + N * (e0 + e)] = cj;
      for (std::size_t col = 0; col < 2 * n + nc; ++col) J[e0 + e + N * col] = -w.out[e + E * col];
    }
    return true;
  }
  void initial_derivative(double t, const double* x, int, double* xdot0) const override {
    consistent(t, x, xdot0, nullptr);
  }
  // The user's events, then the orientation charts' (a SolverError before gimbal lock).
  std::vector<Witness> witnesses(int) const override { return charts_.after(user_witnesses(*c_)); }
  std::size_t witness_count(int) const override { return c_->n_events + charts_.count(); }
  void witness_values(double t, const double* x, int, double* g) const override {
    charts_.values(t, x, g + c_->n_events);
    if (!c_->n_events) return;
    std::vector<double> xd(size());
    consistent(t, x, xd.data(), nullptr);
    Scratch& w = scratch(*c_);
    c_->witnesses(fill_dae(w, t, x, xd.data()), g);
  }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    charts_.on_event(witness, t);
    return WitnessSystem::on_event(t, x, mode, witness, dir);
  }
  void compute_outputs(double t, const double* x, int, double* y) const override {
    const std::size_t nc = c_->nc;
    std::vector<double> xd(size());
    consistent(t, x, xd.data(), nullptr);
    Scratch& w = scratch(*c_);
    double* in = fill_dae(w, t, x, xd.data());
    double e[3];
    c_->energy(in, e);
    std::vector<double> cons(2 * nc);
    c_->constraints(in, cons.data());
    OutputContext o{*c_, in};
    o.h = e[0];
    o.T = e[1];
    o.V = e[2];
    o.balance = balance(e[0], x);
    o.constraints = cons.data();
    list_.compute(o, y);
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<ConstraintSummarizer>(columns_);
  }
  /// E = h - W_Q + P - W_C, conserved (the self-audit checks it); no dissipation.
  bool energy_ledger(double t, const double* x, int, EnergyLedger& e) const override {
    double* y = output_buffer(list_.size());
    compute_outputs(t, x, 0, y);
    e.energy = y[columns_.energy.balance];
    e.dissipated = 0;
    e.scale = std::abs(y[columns_.energy.T]) + std::abs(y[columns_.energy.V]);
    for (std::size_t k = 2 * c_->n + c_->nc; k < size(); ++k) e.scale += std::abs(x[k]);
    return true;
  }

  /// a and lambda consistent with (t, q, v): the residual is affine in them; solve it. Writes xdot (q' = v, v' = a)
  /// and, if lambda is given, the multipliers.
  void consistent(double t, const double* x, double* xdot, double* lambda) const {
    const std::size_t n = c_->n, nc = c_->nc, R = n + nc;
    std::vector<double> xz(x, x + size()), xdz(size(), 0.0), r0(R), jac(R * (3 * n + nc));
    for (std::size_t k = 0; k < nc; ++k) xz[2 * n + k] = 0.0;
    Scratch& w = scratch(*c_);
    double* in = fill_dae(w, t, xz.data(), xdz.data());
    c_->dae(in, r0.data());
    c_->dae_jac(in, jac.data());
    Eigen::MatrixXd A(R, R);
    Eigen::VectorXd b(R);
    for (std::size_t r = 0; r < R; ++r) {
      b(static_cast<Eigen::Index>(r)) = -r0[r];
      for (std::size_t j = 0; j < n; ++j) A(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = jac[r + R * (2 * n + nc + j)];
      for (std::size_t k = 0; k < nc; ++k)
        A(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(n + k)) = jac[r + R * (2 * n + k)];
    }
    const Eigen::VectorXd sol = A.partialPivLu().solve(b);
    for (std::size_t i = 0; i < n; ++i) {
      xdot[i] = x[n + i];
      xdot[n + i] = sol(static_cast<Eigen::Index>(i));
    }
    for (std::size_t k = 0; k < nc; ++k) {
      xdot[2 * n + k] = 0.0;
      xz[2 * n + k] = sol(static_cast<Eigen::Index>(n + k));
      if (lambda) lambda[k] = xz[2 * n + k];
    }
    // The works' rates at the solved multipliers.
    c_->dae_extra(fill_dae(w, t, xz.data(), xdot), xdot + 2 * n + nc);
  }

 private:
  /// The columns the ledger and the summary read, found by name among the outputs (output_list, their one
  /// declaration).
  struct Columns {
    Columns(const Compiled& c, const Signals& outputs) : energy(outputs) {
      for (const auto& n : c.constraint_names) constraints.push_back(signal_index(outputs, "constraint_" + n, "user model outputs"));
    }
    EnergyColumns energy;
    std::vector<std::size_t> constraints;
  };

  class ConstraintSummarizer : public Summarizer {
   public:
    explicit ConstraintSummarizer(Columns columns) : columns_(std::move(columns)) {}
    void on_point(double, const double*, const double* y, int) override {
      if (!have_) {
        e0_ = y[columns_.energy.balance];
        have_ = true;
      }
      drift_ = std::max(drift_, std::abs(y[columns_.energy.balance] - e0_));
      for (const std::size_t k : columns_.constraints) worst_ = std::max(worst_, std::abs(y[k]));
    }
    std::vector<SummaryItem> items() const override {
      return {{"energy_initial", e0_, "", "J", "initial energy balance h - W_Q + P - W_C", false},
              {"energy_drift_abs", drift_, "", "J", "largest drift of the energy balance h - W_Q + P - W_C", false},
              {"constraint_residual_max", worst_, "", "", "largest |C| over the samples and steps", false}};
    }

   private:
    Columns columns_;
    bool have_ = false;
    double e0_ = 0, drift_ = 0, worst_ = 0;
  };

  /// h - W_Q + P - W_C from the extra states of x.
  double balance(double h, const double* x) const {
    std::size_t k = 2 * c_->n + c_->nc;
    double b = h;
    if (c_->has_forces) b -= x[k++];
    if (c_->explicit_time) b += x[k++];
    return b - x[k];
  }

  double* fill_dae(Scratch& w, double t, const double* x, const double* xdot) const {
    const Compiled& c = *c_;
    double* in = fill(c, w, t, x, 0.0);
    std::copy(xdot + c.n, xdot + 2 * c.n, in + c.in_a);
    std::copy(x + 2 * c.n, x + 2 * c.n + c.nc, in + c.in_lambda);
    return in;
  }

  std::shared_ptr<const Compiled> c_;
  std::vector<double> x0_;
  RuntimeOutputList<OutputContext> list_;  ///< the outputs
  Columns columns_;                        ///< the ledger's and the summary's columns among them
  ChartWitnesses charts_;                  ///< the orientation charts' witnesses, after the user's
  Signals states_;
};

}  // namespace

namespace detail {

std::unique_ptr<HybridSystem> constrained_system(std::shared_ptr<const Compiled> c, std::vector<double> x0) {
  x0.resize(2 * c->n + c->nc + c->n_dae_extra, 0.0);
  const ConstrainedUserSystem first(c, x0);
  std::vector<double> xd(x0.size()), lam(c->nc);
  first.consistent(0.0, x0.data(), xd.data(), lam.data());
  for (std::size_t k = 0; k < c->nc; ++k) x0[2 * c->n + k] = lam[k];
  return std::make_unique<ConstrainedUserSystem>(std::move(c), std::move(x0));
}

}  // namespace detail

}  // namespace rollsim::lagrangian
