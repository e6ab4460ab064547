/// Boost.Odeint's Dormand-Prince 5(4) stepper behind the Integrator interface: solver.method = "dopri5", an
/// explicit Runge-Kutta method with its own dense output (order 4), for small smooth nonstiff models where the
/// cost of a step matters more than the number of steps. Odeint's controlled stepper takes the steps; the
/// error test is CVODE's: the weighted RMS norm of the error estimate with weights 1 / (rtol |x_i| + atol_i) at
/// the step's start (error_scale). The witnesses are watched at the step ends and a sign change is located
/// on the dense output by the root location the simulate loop's step search uses (core/crossing.hpp). All
/// storage is sized at construction: a step allocates nothing, and rebind() keeps it for the next run of a
/// sweep.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <boost/numeric/odeint/stepper/controlled_runge_kutta.hpp>
#include <boost/numeric/odeint/stepper/runge_kutta_dopri5.hpp>

#include "rollsim/core/crossing.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/solve/integrator.hpp"

namespace rollsim {

namespace {

namespace odeint = boost::numeric::odeint;

/// A state of the system's size: a fixed-size array where the size is one of the common ones (the compiler
/// unrolls Odeint's stage sums), a vector otherwise.
template <class State>
State make_state(std::size_t n) {
  if constexpr (std::is_same_v<State, std::vector<double>>) {
    return State(n, 0.0);
  } else {
    (void)n;
    return State{};
  }
}

/// The error test's weights, shared by the integrator and its error checker.
struct Weights {
  double rtol = 0;
  std::vector<double> atol;  ///< per state: (the state's own atol, else solver.atol) x the model's scale
  mutable bool not_finite = false;  ///< the last error estimate was not a number: the model failed along the step
};

/// Odeint's ErrorChecker concept: the error estimate's weighted RMS norm, 1 or less to accept the step. A
/// norm that is not finite (the model could not be evaluated along the step) rejects the step.
class WeightedRms {
 public:
  explicit WeightedRms(const Weights* w = nullptr) : w_(w) {}
  template <class Algebra, class StateIn, class Deriv, class Err, class Time>
  double error(Algebra&, const StateIn& x_old, const Deriv&, Err& x_err, Time) const {
    const std::size_t n = x_err.size();
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double e = x_err[i] / (w_->rtol * std::abs(x_old[i]) + w_->atol[i]);
      sum += e * e;
    }
    const double norm = std::sqrt(sum / static_cast<double>(std::max<std::size_t>(n, 1)));
    w_->not_finite = !std::isfinite(norm);
    return w_->not_finite ? std::numeric_limits<double>::max() : norm;
  }

 private:
  const Weights* w_;
};

template <class State>
class Dopri5Integrator final : public Integrator {
  using Stepper = odeint::runge_kutta_dopri5<State>;
  using Controlled = odeint::controlled_runge_kutta<Stepper, WeightedRms>;

 public:
  Dopri5Integrator(const HybridSystem& sys, const SolverOptions& opt)
      : sys_(&sys), system_type_(&typeid(sys)), opt_(opt), n_(sys.size()), controlled_(WeightedRms(&weights_)) {
    for (State* v : {&x_, &x_old_, &dxdt_old_, &x_new_, &dxdt_new_, &scratch_, &scratch2_}) *v = make_state<State>(n_);
    set_weights();
  }

  void reset(double t, const double* x, int mode) override {
    if (started_) ++restarts_;
    started_ = true;
    mode_ = mode;
    std::copy(x, x + n_, x_.begin());
    x_new_ = x_;
    x_old_ = x_;
    t_ = t_old_ = t_new_ = t;
    evaluate_rhs(t, x_new_, dxdt_new_);
    dxdt_old_ = dxdt_new_;
    const auto ws = sys_->witnesses(mode);
    nw_ = ws.size();
    directions_.resize(nw_);
    for (std::size_t i = 0; i < nw_; ++i) directions_[i] = ws[i].direction;
    roots_.assign(nw_, 0);
    for (auto* g : {&g_old_, &g_new_, &g_root_, &g_scratch_}) g->resize(nw_);
    if (nw_) witnesses(t, x_new_.data(), g_old_);
    pending_ = false;
    controlled_.reset();
    h_ = initial_step();
  }

  Status step(double t_stop) override {
    if (pending_) {
      // The rest of the step a root interrupted: search (root, step end] from the witnesses at the root.
      pending_ = false;
      if (t_ < t_new_) {
        if (find_root(t_)) return Status::Root;
        finish_step();
        return pending_status_;
      }
    }
    std::swap(x_old_, x_new_);
    std::swap(dxdt_old_, dxdt_new_);
    t_old_ = t_new_;
    const double h_max = opt_.max_step_size > 0 ? opt_.max_step_size : std::numeric_limits<double>::infinity();
    for (;;) {
      const double remaining = t_stop - t_old_;
      if (!(remaining > 0)) {
        // Already at the stop time: nothing to take.
        x_new_ = x_old_;
        dxdt_new_ = dxdt_old_;
        t_new_ = t_old_;
        t_ = t_new_;
        return Status::StopTime;
      }
      double dt = std::min(h_, h_max);
      // The last step before the stop time stretched to it rather than followed by a sliver (as DOPRI5 does).
      const bool to_stop = t_old_ + 1.01 * dt >= t_stop;
      if (to_stop) dt = remaining;
      double t = t_old_;
      const auto result = controlled_.try_step(rhs_, x_old_, dxdt_old_, t, x_new_, dxdt_new_, dt);
      if (result == odeint::success) {
        // dt is now the proposal for the next step; a step cut short for the stop time keeps the larger one.
        h_ = to_stop ? std::max(h_, dt) : dt;
        t_new_ = to_stop ? t_stop : t;
        ++n_steps_;
        break;
      }
      ++n_err_fails_;
      h_ = dt;
      const double t_scale = std::max(std::abs(t_old_), std::abs(t_stop));
      if (!(dt > 16 * std::numeric_limits<double>::epsilon() * t_scale) || !std::isfinite(dt))
        throw SolverError("dopri5 step", -1, "TOO_SMALL_STEP", t_old_, dt, sys_->mode_name(mode_),
                          weights_.not_finite
                              ? "the right-hand side was not finite along the step: the model could not be "
                                "evaluated here"
                              : "the error test failed down to a step of round-off size; the problem may be stiff "
                                "or not smooth here: try solver.method = \"bdf\", or loosen solver.rtol or "
                                "solver.atol");
    }
    const bool reached_stop = t_new_ >= t_stop;
    pending_status_ = reached_stop ? Status::StopTime : Status::Step;
    if (nw_) {
      witnesses(t_new_, x_new_.data(), g_new_);
      if (find_root(t_old_)) return Status::Root;
    }
    finish_step();
    return pending_status_;
  }

  double t() const override { return t_; }
  const double* x() const override { return x_.data(); }

  void state_at(double t, double* x) const override {
    if (t == t_new_) {
      std::copy(x_new_.begin(), x_new_.end(), x);
    } else if (t == t_old_) {
      std::copy(x_old_.begin(), x_old_.end(), x);
    } else {
      controlled_.stepper().calc_state(t, scratch_, x_old_, dxdt_old_, t_old_, x_new_, dxdt_new_, t_new_);
      std::copy(scratch_.begin(), scratch_.end(), x);
    }
  }

  /// At the step's ends the stages' own derivatives; inside, the right-hand side at the dense output's state.
  void derivative_at(double t, double* xdot) const override {
    if (t == t_new_) {
      std::copy(dxdt_new_.begin(), dxdt_new_.end(), xdot);
    } else if (t == t_old_) {
      std::copy(dxdt_old_.begin(), dxdt_old_.end(), xdot);
    } else {
      state_at(t, scratch2_.data());
      sys_->rhs(t, scratch2_.data(), mode_, xdot);
      ++n_rhs_;
    }
  }

  const std::vector<int>& roots() const override { return roots_; }
  double last_step_size() const override { return t_new_ - t_old_; }

  SolverStats stats() const override {
    SolverStats s;
    s.method = "odeint-dopri5";
    s.rtol = opt_.rtol;
    s.atol = opt_.atol;
    s.counts = {{"n_steps", n_steps_},          {"n_rhs_evals", n_rhs_},  {"n_jac_evals", 0},
                {"n_root_evals", n_root_evals_}, {"n_err_test_fails", n_err_fails_}, {"n_restarts", restarts_}};
    return s;
  }

  void error_scale(const double* x, double* err) const override {
    for (std::size_t i = 0; i < n_; ++i) err[i] = weights_.rtol * std::abs(x[i]) + weights_.atol[i];
  }

  bool rebind(const HybridSystem& sys, const SolverOptions& opt) override {
    // The bound system may be gone by now (a finished sweep point): only its class is compared.
    if (typeid(sys) != *system_type_ || sys.size() != n_ || opt.method != opt_.method) return false;
    sys_ = &sys;
    opt_ = opt;
    set_weights();
    n_steps_ = n_rhs_ = n_root_evals_ = n_err_fails_ = restarts_ = 0;
    started_ = false;
    pending_ = false;
    return true;
  }

 private:
  /// Odeint's System concept: x' = f(t, x) in the current mode.
  struct Rhs {
    Dopri5Integrator* self;
    void operator()(const State& x, State& dxdt, double t) const {
      self->sys_->rhs(t, x.data(), self->mode_, dxdt.data());
      ++self->n_rhs_;
    }
  };

  void set_weights() {
    weights_.rtol = opt_.rtol;
    weights_.atol.resize(n_);
    absolute_tolerances(*sys_, opt_, weights_.atol.data());
  }

  void evaluate_rhs(double t, const State& x, State& dxdt) {
    sys_->rhs(t, x.data(), mode_, dxdt.data());
    ++n_rhs_;
  }

  void witnesses(double t, const double* x, std::vector<double>& g) const {
    sys_->witness_values(t, x, mode_, g.data());
    ++n_root_evals_;
  }

  double norm_of(const State& v) const {
    double sum = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const double e = v[i] / (weights_.rtol * std::abs(x_old_[i]) + weights_.atol[i]);
      sum += e * e;
    }
    return std::sqrt(sum / static_cast<double>(std::max<std::size_t>(n_, 1)));
  }

  /// The first step's size (Hairer, Norsett and Wanner, Solving ODE I, II.4): from the sizes of x, x' and x''
  /// in the error test's norm, at the cost of one right-hand side.
  double initial_step() {
    const double d0 = norm_of(x_new_), d1 = norm_of(dxdt_new_);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (opt_.max_step_size > 0) h0 = std::min(h0, opt_.max_step_size);
    for (std::size_t i = 0; i < n_; ++i) scratch_[i] = x_new_[i] + h0 * dxdt_new_[i];
    evaluate_rhs(t_new_ + h0, scratch_, scratch2_);
    for (std::size_t i = 0; i < n_; ++i) scratch2_[i] -= dxdt_new_[i];
    const double d2 = norm_of(scratch2_) / h0;
    const double dmax = std::max(d1, d2);
    const double h1 = dmax <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / dmax, 1.0 / 5.0);
    double h = std::min(100 * h0, h1);
    if (!std::isfinite(h) || !(h > 0)) h = 1e-6;
    if (opt_.max_step_size > 0) h = std::min(h, opt_.max_step_size);
    return h;
  }

  /// A witness changes sign between its value at the search's start (g_old_) and at the step's end (g_new_)
  /// in its direction; a witness exactly zero at the start is the event just handled (as CVODE skips it).
  bool crosses(std::size_t i) const {
    const double a = g_old_[i], b = g_new_[i];
    if (a == 0 || std::isnan(a) || std::isnan(b)) return false;
    const int dir = a > 0 ? -1 : +1;
    if (directions_[i] != 0 && directions_[i] != dir) return false;
    return a > 0 ? b <= 0 : b >= 0;
  }

  bool beyond(std::size_t i, double g) const { return g_old_[i] > 0 ? g <= 0 : g >= 0; }

  /// The earliest crossing in (t_from, t_new_], located on the dense output: the state moves to it and roots_
  /// names every witness that has crossed there. False when there is none.
  bool find_root(double t_from) {
    double t_root = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < nw_; ++i) {
      if (!crosses(i)) continue;
      // The witness signed so that it turns from negative to non-negative at the crossing.
      const double s = g_old_[i] > 0 ? -1.0 : 1.0;
      const double ti = locate_crossing(
          t_from, t_new_, s * g_old_[i], s * g_new_[i],
          [&](double t) {
            state_at(t, scratch2_.data());
            witnesses(t, scratch2_.data(), g_scratch_);
            return s * g_scratch_[i];
          },
          /*zero_beyond=*/true);
      t_root = std::min(t_root, ti);
    }
    if (!std::isfinite(t_root)) return false;
    state_at(t_root, x_.data());
    witnesses(t_root, x_.data(), g_root_);
    for (std::size_t i = 0; i < nw_; ++i)
      roots_[i] = crosses(i) && beyond(i, g_root_[i]) ? (g_old_[i] > 0 ? -1 : +1) : 0;
    t_ = t_root;
    g_old_ = g_root_;
    pending_ = true;
    return true;
  }

  void finish_step() {
    t_ = t_new_;
    x_ = x_new_;
    g_old_ = g_new_;
    std::fill(roots_.begin(), roots_.end(), 0);
  }

  const HybridSystem* sys_;
  const std::type_info* system_type_;
  SolverOptions opt_;
  std::size_t n_;
  Weights weights_;
  Controlled controlled_;
  Rhs rhs_{this};
  int mode_ = 0;
  // The last accepted step [t_old_, t_new_], its ends' states and derivatives (the dense output's data), and
  // the reported point (t_, x_): the step's end, or a root inside it.
  double t_ = 0, t_old_ = 0, t_new_ = 0, h_ = 0;
  State x_, x_old_, dxdt_old_, x_new_, dxdt_new_;
  mutable State scratch_, scratch2_;
  // Witnesses: directions, values at the search's start and the step's end, at a root, and scratch.
  std::size_t nw_ = 0;
  std::vector<int> directions_, roots_;
  std::vector<double> g_old_, g_new_, g_root_;
  mutable std::vector<double> g_scratch_;
  bool pending_ = false, started_ = false;
  Status pending_status_ = Status::Step;
  mutable long n_rhs_ = 0, n_root_evals_ = 0;
  long n_steps_ = 0, n_err_fails_ = 0, restarts_ = 0;
};

}  // namespace

std::unique_ptr<Integrator> make_dopri5_integrator(const HybridSystem& system, const SolverOptions& options) {
  if (system.size() == 4) return std::make_unique<Dopri5Integrator<std::array<double, 4>>>(system, options);
  return std::make_unique<Dopri5Integrator<std::vector<double>>>(system, options);
}

}  // namespace rollsim
