#include "rollsim/models/lagrangian.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "lagrangian_engine_model.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian {

namespace {

using symbolic::KernelNames;

using namespace detail;

// ---- the smooth ODE --------------------------------------------------------------------------------------

class SmoothSystem final : public OdeSystem, public WitnessSystem, public Linearizable, public UserModel {
 public:
  SmoothSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0)
      : UserModel(c), c_(std::move(c)), x0_(std::move(x0)), list_(output_list(*c_)), energy_(list_.signals()), charts_(c_, x0_.data()) {
    states_ = state_signals(*c_);
    add_extra_states(*c_, states_);
    for (std::size_t i = 0; i < c_->n; ++i)
      inputs_.push_back({"force_" + c_->coordinates[i], "generalized force",
                         "generalized force added to Q of " + c_->coordinates[i] + " (0 in a run; a linearisation's input)"});
  }
  std::string model_name() const override { return "lagrangian"; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return list_.signals(); }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  void rhs(double t, const double* x, int, double* xdot) const override { ode_rhs(*c_, t, x, 0.0, xdot); }
  bool jacobian(double t, const double* x, int, double* J) const override {
    ode_jacobian(*c_, t, x, 0.0, J);
    return true;
  }
  // The user's events, then one witness per orientation chart (a terminal SolverError before gimbal lock).
  std::vector<Witness> witnesses(int) const override { return charts_.after(user_witnesses(*c_)); }
  std::size_t witness_count(int) const override { return c_->n_events + charts_.count(); }
  void witness_values(double t, const double* x, int, double* g) const override {
    witness_eval(*c_, t, x, 0.0, g);
    charts_.values(t, x, g + c_->n_events);
  }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    charts_.on_event(witness, t);
    return WitnessSystem::on_event(t, x, mode, witness, dir);
  }
  bool energy_ledger(double t, const double* x, int, EnergyLedger& e) const override {
    double* y = output_buffer(list_.size());
    compute_outputs(t, x, 0, y);
    e.energy = y[energy_.balance];
    e.dissipated = 0;
    e.scale = ledger_scale(*c_, energy_, x, y);
    return true;
  }
  void compute_outputs(double t, const double* x, int, double* y) const override {
    list_.compute(ode_output_context(*c_, t, x, 0.0), y);
  }
  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<EnergySummarizer>(c_, energy_);
  }

  // Linearizable: values from the compiled kernels, first derivatives from their exact Jacobians.
  /// The inputs: a generalized force on each coordinate, added to Q (0 in a run), so that a linearisation has
  /// B = [0; M^-1] (and the frequency response of a force to a coordinate).
  const Signals& inputs() const override { return inputs_; }
  std::vector<double> input_values() const override { return std::vector<double>(c_->n, 0.0); }
  void rhs_ad(const AD* x, const AD* u, AD* xdot) const override {
    const std::size_t N = size(), n = c_->n;
    std::vector<double> xv(N), f(N), J(N * N);
    for (std::size_t i = 0; i < N; ++i) xv[i] = x[i].value();
    rhs(0.0, xv.data(), 0, f.data());
    jacobian(0.0, xv.data(), 0, J.data());
    const Eigen::MatrixXd Minv = mass_inverse(xv.data());
    for (std::size_t i = 0; i < N; ++i) {
      Eigen::VectorXd dv = Eigen::VectorXd::Zero(x[0].derivatives().size());
      for (std::size_t j = 0; j < N; ++j)
        if (J[i + N * j] != 0) dv += J[i + N * j] * x[j].derivatives();
      for (std::size_t j = 0; j < n; ++j) {
        if (i >= n && i < 2 * n) dv += Minv(static_cast<Eigen::Index>(i - n), static_cast<Eigen::Index>(j)) * u[j].derivatives();
        if (c_->has_forces && i == 2 * n) dv += xv[n + j] * u[j].derivatives();  // the input's power in W_Q
      }
      xdot[i] = AD(f[i], dv);
    }
  }
  /// M^-1 at the state x.
  Eigen::MatrixXd mass_inverse(const double* x) const {
    Scratch& w = scratch(*c_);
    c_->dyn(fill(*c_, w, 0.0, x, 0.0), w.dyn.data());
    const auto n = static_cast<Eigen::Index>(c_->n);
    const Eigen::MatrixXd M = Eigen::Map<const Eigen::MatrixXd>(w.dyn.data(), n, n);
    return M.inverse();
  }
  void signals_ad(const AD* x, const AD* u, AD* y) const override;
  int degrees_of_freedom() const override { return static_cast<int>(c_->n); }
  std::vector<std::string> default_linear_outputs() const override { return {c_->coordinates.front()}; }

 private:
  std::shared_ptr<const Compiled> c_;
  std::vector<double> x0_;
  RuntimeOutputList<OutputContext> list_;  ///< the outputs
  EnergyColumns energy_;                   ///< the ledger's columns among them
  ChartWitnesses charts_;                  ///< the orientation charts' witnesses, after the user's
  Signals states_, inputs_;
};

void SmoothSystem::signals_ad(const AD* x, const AD* u, AD* y) const {
  const Compiled& c = *c_;
  const std::size_t N = size(), n = c.n, m = list_.size();
  for (std::size_t i = 0; i < N; ++i) y[i] = x[i];
  std::vector<double> xv(N), yv(m), J(N * N);
  for (std::size_t i = 0; i < N; ++i) xv[i] = x[i].value();
  compute_outputs(0.0, xv.data(), 0, yv.data());
  jacobian(0.0, xv.data(), 0, J.data());
  const Eigen::Index k = x[0].derivatives().size();
  // dx/dseed, and da/dseed = J's acceleration rows times it.
  std::vector<Eigen::VectorXd> dx(N), da(n);
  for (std::size_t j = 0; j < N; ++j) dx[j] = x[j].derivatives();
  const Eigen::MatrixXd Minv = mass_inverse(xv.data());
  for (std::size_t i = 0; i < n; ++i) {
    da[i] = Eigen::VectorXd::Zero(k);
    for (std::size_t j = 0; j < N; ++j) da[i] += J[n + i + N * j] * dx[j];
    for (std::size_t j = 0; j < n; ++j) da[i] += Minv(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) * u[j].derivatives();
  }
  // The user's outputs are differentiated exactly (their Jacobian kernel, with da/dx through the accelerations);
  // the built-in ones (energies, contact values) by forward differences of their exact values, which is enough
  // for outputs that are never a linearisation's default.
  const std::size_t first_user = c.user_outputs.empty() ? m : list_.index(c.user_outputs.front().name);
  Scratch& w = scratch(c);
  accelerations(c, w, 0.0, xv.data(), 0.0, w.tmp.data());
  std::vector<double> oj(c.n_user_outputs * 3 * n);
  if (c.n_user_outputs) c.outputs_jac(w.in.data(), oj.data());
  for (std::size_t o = 0; o < m; ++o) {
    Eigen::VectorXd dv = Eigen::VectorXd::Zero(k);
    if (o >= first_user) {
      const std::size_t r = o - first_user, R = c.n_user_outputs;
      for (std::size_t j = 0; j < 2 * n; ++j) dv += oj[r + R * j] * dx[j];
      for (std::size_t j = 0; j < n; ++j) dv += oj[r + R * (2 * n + j)] * da[j];
    } else {
      for (std::size_t j = 0; j < N; ++j) {
        const double h = 1e-7 * std::max(1.0, std::abs(xv[j]));
        std::vector<double> xp = xv, yp(m);
        xp[j] += h;
        compute_outputs(0.0, xp.data(), 0, yp.data());
        dv += (yp[o] - yv[o]) / h * dx[j];
      }
    }
    y[N + o] = AD(yv[o], dv);
  }
}

// ---- the Coulomb contact (Filippov) ------------------------------------------------------------------------

class ContactSystem final : public FilippovSystem, public UserModel {
 public:
  ContactSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0)
      : UserModel(c), c_(std::move(c)), x0_(std::move(x0)), list_(output_list(*c_)), energy_(list_.signals()), charts_(c_, x0_.data()) {
    states_ = state_signals(*c_);
    add_extra_states(*c_, states_);
    for (int m : {kMinus, kSliding, kPlus}) engine_count_[m + 1] = FilippovSystem::witnesses(m).size();
    d_index_ = signal_index(states_, "dissipated_friction", "user model states");
  }
  std::string model_name() const override { return "lagrangian"; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return list_.signals(); }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  void field_plus(double t, const double* x, double* f) const override { ode_rhs(*c_, t, x, 1.0, f); }
  void field_minus(double t, const double* x, double* f) const override { ode_rhs(*c_, t, x, -1.0, f); }
  bool jacobian_plus(double t, const double* x, double* J) const override {
    ode_jacobian(*c_, t, x, 1.0, J);
    return true;
  }
  bool jacobian_minus(double t, const double* x, double* J) const override {
    ode_jacobian(*c_, t, x, -1.0, J);
    return true;
  }
  double switching(double t, const double* x) const override {
    Scratch& w = scratch(*c_);
    c_->contact(fill(*c_, w, t, x, 0.0), w.out.data());
    return w.out[0];
  }
  void switching_gradient(double t, const double* x, double* grad) const override {
    Scratch& w = scratch(*c_);
    c_->contact(fill(*c_, w, t, x, 0.0), w.out.data());
    std::fill(grad, grad + size(), 0.0);
    std::copy(w.out.data() + 1, w.out.data() + 1 + 2 * c_->n, grad);
  }
  std::string crossing_kind() const override { return "reversal"; }

  // The engine's witnesses, the user's events, then the orientation charts' (a SolverError before gimbal lock).
  std::vector<Witness> witnesses(int mode) const override {
    auto v = FilippovSystem::witnesses(mode);
    for (auto& u : user_witnesses(*c_)) v.push_back(std::move(u));
    return charts_.after(std::move(v));
  }
  std::size_t witness_count(int mode) const override { return engine_count_[mode + 1] + c_->n_events + charts_.count(); }
  void witness_values(double t, const double* x, int mode, double* g) const override {
    FilippovSystem::witness_values(t, x, mode, g);
    witness_eval(*c_, t, x, sign(t, x, mode), g + engine_count_[mode + 1]);
    charts_.values(t, x, g + engine_count_[mode + 1] + c_->n_events);
  }
  void witness_rates(double t, const double* x, const double* xdot, int mode, double* gdot) const override {
    if (c_->n_events || charts_.count()) WitnessSystem::witness_rates(t, x, xdot, mode, gdot);
    FilippovSystem::witness_rates(t, x, xdot, mode, gdot);
  }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    charts_.on_event(witness, t);
    for (const auto& e : c_->events)
      if (e.name == witness) return WitnessSystem::on_event(t, x, mode, witness, dir);
    return FilippovSystem::on_event(t, x, mode, witness, dir);
  }
  void event_details(double t, const double* x, int mode, const std::string& witness,
                     std::map<std::string, double>& extra) const override {
    for (const auto& e : c_->events)
      if (e.name == witness) return;  // a user's event: the engine's values are not its own
    FilippovSystem::event_details(t, x, mode, witness, extra);
  }
  bool energy_ledger(double t, const double* x, int mode, EnergyLedger& e) const override {
    double* y = output_buffer(list_.size());
    compute_outputs(t, x, mode, y);
    if (c_->friction_dissipates) {
      e.dissipated = x[d_index_];
      e.energy = y[energy_.balance] - e.dissipated;
      e.dissipated_state = static_cast<int>(d_index_);
    } else {
      e.energy = y[energy_.balance];
    }
    e.scale = ledger_scale(*c_, energy_, x, y);
    return true;
  }
  void compute_outputs(double t, const double* x, int mode, double* y) const override {
    // Sticking: F0 is F_s with the equivalent control's s (sign()).
    list_.compute(ode_output_context(*c_, t, x, sign(t, x, mode)), y);
  }
  std::string symbol_legend() const override { return "+ slip forward (w > 0), - slip backward, 0 stick"; }
  std::unique_ptr<Summarizer> make_physics_summarizer(const FilippovRecord&) const override {
    return std::make_unique<EnergySummarizer>(c_, energy_);
  }

 private:
  /// The friction sign for outputs and user witnesses: the mode's, or in sticking the equivalent control's
  /// convex weight mapped to [-1, 1].
  double sign(double t, const double* x, int mode) const {
    if (mode != kSliding) return mode;
    double sp, sm;
    sigmas(t, x, sp, sm);
    const double den = sm - sp;
    if (!(den != 0)) return 0.0;
    // F0 = (sm F+ - sp F-)/(sm - sp) and F_s is affine in s: F0 = F_s with s = (sm + sp)/(sm - sp).
    return (sm + sp) / den;
  }

  std::shared_ptr<const Compiled> c_;
  std::vector<double> x0_;
  RuntimeOutputList<OutputContext> list_;  ///< the outputs
  EnergyColumns energy_;                   ///< the ledger's columns among them
  ChartWitnesses charts_;                  ///< the orientation charts' witnesses, after the user's
  Signals states_;
  std::size_t engine_count_[3] = {1, 2, 1};
  std::size_t d_index_ = 0;  ///< the state dissipated_friction
};

// ---- several contacts, unilateral gaps, impacts (the contact engine) ---------------------------------------

class UserContactSystem final : public UserEngineModel<ContactEngine> {
 public:
  UserContactSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0, std::vector<ContactSpec> specs,
                    ContactSettings settings, std::vector<std::string> constraint_names = {})
      : UserEngineModel(std::move(c), x0.data()) {
    configure(c_->n, std::move(specs), base_states(), std::move(x0), c_->user_outputs, model_witnesses(), settings,
              std::move(constraint_names));
  }

 protected:
  void contact_terms(double t, const double* x, ContactTerms* terms) const override {
    Scratch& w = scratch(*c_);
    c_->contacts(fill(*c_, w, t, x, 0.0), w.out.data());
    const std::size_t n = c_->n, stride = symbolic::KernelNames::contact_stride(n);
    for (std::size_t k = 0; k < c_->n_contacts; ++k) {
      const double* o = w.out.data() + k * stride;
      ContactTerms& ct = terms[k];
      ct.gap = o[0];
      std::copy(o + 1, o + 1 + n, ct.Wn.begin());
      ct.gap_bias = o[1 + n];
      ct.slip = o[2 + n];
      std::copy(o + 3 + n, o + 3 + 2 * n, ct.Wt.begin());
      ct.slip_bias = o[3 + 2 * n];
      ct.mu = o[4 + 2 * n];
      ct.restitution = o[5 + 2 * n];
      ct.given_normal = o[6 + 2 * n];
      ct.mu_static = o[7 + 2 * n];
    }
  }
  void constraint_terms(double t, const double* x, ConstraintTerms* terms) const override {
    if (!c_->nc) return;
    Scratch& w = scratch(*c_);
    c_->contact_constraints(fill(*c_, w, t, x, 0.0), w.out.data());
    const std::size_t n = c_->n, stride = symbolic::KernelNames::constraint_stride(n);
    for (std::size_t k = 0; k < c_->nc; ++k) {
      const double* o = w.out.data() + k * stride;
      ConstraintTerms& ct = terms[k];
      ct.value = o[0];
      ct.rate = o[1];
      std::copy(o + 2, o + 2 + n, ct.G.begin());
      ct.bias = o[2 + n];
    }
  }
};

}  // namespace

// ---- the systems, for the build (lagrangian_build.cpp) ------------------------------------------------------

namespace detail {

std::unique_ptr<HybridSystem> smooth_system(std::shared_ptr<const Compiled> c, std::vector<double> x0) {
  return std::make_unique<SmoothSystem>(std::move(c), std::move(x0));
}

std::unique_ptr<HybridSystem> filippov_contact_system(std::shared_ptr<const Compiled> c, std::vector<double> x0) {
  return std::make_unique<ContactSystem>(std::move(c), std::move(x0));
}

std::unique_ptr<HybridSystem> user_contact_system(std::shared_ptr<const Compiled> c, std::vector<double> x0,
                                                  std::vector<ContactSpec> specs, const ContactSettings& settings,
                                                  const std::vector<std::string>& constraint_names) {
  return std::make_unique<UserContactSystem>(std::move(c), std::move(x0), std::move(specs), settings, constraint_names);
}

}  // namespace detail

}  // namespace rollsim::lagrangian
