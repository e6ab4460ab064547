/// Explicit Runge-Kutta integrators for small smooth nonstiff models, where the cost of a step matters more than
/// the number of steps, behind the Integrator interface:
///  - solver.method = "dopri5": Boost.Odeint's Dormand-Prince 5(4) stepper, with its dense output of order 4;
///  - solver.method = "dop853": Dormand and Prince's DOP853 (Hairer, Norsett and Wanner, Solving ODE I, II.10):
///    order 8, the step's error estimated by the fifth-order estimate damped by the third-order one, and a
///    dense output of order 7 whose three extra stages are computed only when the step's interior is asked for
///    (an event to locate, a sample to write). No Debian library has an order-8 method with a dense output
///    (Odeint's Fehlberg 7(8) and GSL's Prince-Dormand rk8pd have none; ARKODE's Fehlberg 13(7)8 is "erk", with
///    ARKODE's own per-step cost), so the stepper is written here from the published coefficients
///    (include/rollsim/solve/dop853_tableau.hpp) and step-size rule (no PI term, safety 0.9; a step grows at
///    most 6-fold and shrinks at most 3-fold).
/// Both take the error test's norm from CVODE: the weighted RMS norm with weights 1 / (rtol |x_i| + atol_i) at
/// the step's start (error_scale). The witnesses are watched at the step ends and a sign change is located
/// on the dense output by the root location the simulate loop's step search uses (core/crossing.hpp). All
/// storage is sized at construction: a step allocates nothing, and rebind() keeps it for the next run of a
/// sweep.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <boost/numeric/odeint/stepper/controlled_runge_kutta.hpp>
#include <boost/numeric/odeint/stepper/runge_kutta_dopri5.hpp>

#include "rollsim/core/crossing.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/solve/dop853_tableau.hpp"
#include "rollsim/solve/integrator.hpp"
#include "mode_directions.hpp"

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

/// Copies a state out: a fixed-size array as the block it is (std::copy through its begin and end became a call
/// to memmove per sample).
template <class State>
void copy_out(const State& v, double* out) {
  if constexpr (std::is_same_v<State, std::vector<double>>) std::copy(v.begin(), v.end(), out);
  else std::memcpy(out, v.data(), sizeof(State));
}

/// The error test's weights, shared by the integrator and its error checker.
struct Weights {
  double rtol = 0;
  std::vector<double> atol;         ///< per state: (the state's own atol, else solver.atol) x the model's scale
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

/// Odeint's Dormand-Prince 5(4), controlled by its own step-size rule with the weighted RMS norm.
template <class State>
class Dopri5Method {
  using Stepper = odeint::runge_kutta_dopri5<State>;
  using Controlled = odeint::controlled_runge_kutta<Stepper, WeightedRms>;

 public:
  static constexpr int kOrder = 5;
  static constexpr const char* kMethod = "dopri5";
  static constexpr const char* kStatsName = "odeint-dopri5";

  Dopri5Method(std::size_t, const Weights* w) : controlled_(WeightedRms(w)) {}
  void reset() { controlled_.reset(); }
  void restart() { reset(); }
  bool stiff() const { return false; }  ///< no stiffness test

  /// One attempt from (t, x) with step dt: true with (t + dt, x_new, dxdt_new) and the next step's proposal in
  /// dt, or false with a smaller dt to try.
  template <class F>
  bool try_step(F& f, const State& x, const State& dxdt, double& t, State& x_new, State& dxdt_new, double& dt) {
    return controlled_.try_step(f, x, dxdt, t, x_new, dxdt_new, dt) == odeint::success;
  }

  /// The dense output within the last accepted step.
  template <class F>
  void calc_state(F&, double t, State& out, const State& x_old, const State& dxdt_old, double t_old, const State& x_new,
                  const State& dxdt_new, double t_new) {
    controlled_.stepper().calc_state(t, out, x_old, dxdt_old, t_old, x_new, dxdt_new, t_new);
  }

 private:
  Controlled controlled_;
};

/// DOP853 (Hairer, Norsett and Wanner, Solving ODE I, II.10, and the authors' code DOP853): the stages, the
/// error estimate, the step-size rule and the dense output.
template <class State>
class Dop853Method {
  using T = dop853::Tableau;

 public:
  static constexpr int kOrder = 8;
  static constexpr const char* kMethod = "dop853";
  static constexpr const char* kStatsName = "dop853";

  Dop853Method(std::size_t n, const Weights* w) : w_(w) {
    for (auto& k : k_) k = make_state<State>(n);
    for (auto& r : r_) r = make_state<State>(n);
    y_ = make_state<State>(n);
  }
  void reset() {
    rejected_ = false;
    dense_ready_ = false;
  }
  /// A fresh run: also forgets the stiffness test's count.
  void restart() {
    reset();
    stiff_steps_ = nonstiff_steps_ = 0;
    stiff_ = false;
  }
  /// True once the stiffness test has found the problem stiff (see test_stiffness).
  bool stiff() const { return stiff_; }

  template <class F>
  bool try_step(F& f, const State& x, const State& dxdt, double& t, State& x_new, State& dxdt_new, double& dt) {
    const std::size_t n = x.size();
    const double h = dt;
    dense_ready_ = false;
    k_[0] = dxdt;
    for (int s = 1; s < 12; ++s) stage(f, s, x, t, h);
    double e5 = 0, e3 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double b = 0, s5 = 0, s3 = 0;
      for (int j = 0; j < 12; ++j) {
        b += T::a[12][j] * k_[j][i];
        s5 += T::e5[j] * k_[j][i];
        s3 += T::e3[j] * k_[j][i];
      }
      x_new[i] = x[i] + h * b;
      const double sk = w_->rtol * std::abs(x[i]) + w_->atol[i];
      e5 += (s5 / sk) * (s5 / sk);
      e3 += (s3 / sk) * (s3 / sk);
    }
    double deno = e5 + 0.01 * e3;
    if (!(deno > 0)) deno = 1;
    double err = std::abs(h) * e5 * std::sqrt(1.0 / (static_cast<double>(std::max<std::size_t>(n, 1)) * deno));
    w_->not_finite = !std::isfinite(err);
    if (w_->not_finite) err = std::numeric_limits<double>::max();
    // Step-size rule of DOP853 without its PI term: h_new = h / fac, fac = err^(1/8) / 0.9 within [1/6, 3].
    constexpr double kSafe = 0.9, kShrinkMax = 1 / 0.333, kGrowMax = 6.0;
    const double fac11 = std::pow(err, 1.0 / 8.0);
    if (err <= 1) {
      f(x_new, dxdt_new, t + h);
      test_stiffness(x_new, dxdt_new, h);
      double h_new = h / std::max(1 / kGrowMax, std::min(kShrinkMax, fac11 / kSafe));
      if (rejected_) h_new = std::min(h_new, h);  // no growth right after a rejection
      rejected_ = false;
      t += h;
      dt = h_new;
      return true;
    }
    rejected_ = true;
    dt = h / std::min(kShrinkMax, fac11 / kSafe);
    return false;
  }

  /// The dense output of order 7: y(t_old + s h) = x_old + s (r0 + (1-s) (r1 + s (r2 + (1-s) (r3 + s (r4 +
  /// (1-s) (r5 + s r6)))))), its coefficients computed at the first call within a step (three more stages).
  template <class F>
  void calc_state(F& f, double t, State& out, const State& x_old, const State& dxdt_old, double t_old,
                  const State& x_new, const State& dxdt_new, double t_new) {
    const std::size_t n = x_old.size();
    const double h = t_new - t_old;
    if (!dense_ready_) {
      k_[12] = dxdt_new;
      for (int s = 13; s < 16; ++s) stage(f, s, x_old, t_old, h);
      for (std::size_t i = 0; i < n; ++i) {
        const double dy = x_new[i] - x_old[i], bspl = h * dxdt_old[i] - dy;
        r_[0][i] = dy;
        r_[1][i] = bspl;
        r_[2][i] = dy - h * dxdt_new[i] - bspl;
        for (int r = 0; r < 4; ++r) {
          double acc = 0;
          for (int j = 0; j < 16; ++j) acc += T::d[r][j] * k_[j][i];
          r_[3 + r][i] = h * acc;
        }
      }
      dense_ready_ = true;
    }
    const double s = (t - t_old) / h, s1 = 1 - s;
    for (std::size_t i = 0; i < n; ++i)
      out[i] =
          x_old[i] +
          s * (r_[0][i] +
               s1 * (r_[1][i] + s * (r_[2][i] + s1 * (r_[3][i] + s * (r_[4][i] + s1 * (r_[5][i] + s * r_[6][i]))))));
  }

 private:
  /// Stage s from the stages before it: k_s = f(t + c_s h, x + h sum_j a_sj k_j).
  template <class F>
  void stage(F& f, int s, const State& x, double t, double h) {
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i) {
      double acc = 0;
      for (int j = 0; j < s; ++j) acc += T::a[s][j] * k_[j][i];
      y_[i] = x[i] + h * acc;
    }
    f(y_, k_[s], t + T::c[s] * h);
  }

  /// The stiffness test of Hairer's DOP853 (Hairer and Wanner, Solving ODE II, IV.2, and the authors' code): the
  /// last stage Y12 and the new solution y1 are both at t + h, so h |f(y1) - f(Y12)| / |y1 - Y12| estimates
  /// h |lambda| for the Jacobian's dominant eigenvalue. Above 6.1, DOP853's stability boundary on the negative real
  /// axis, the step size is limited by stability rather than accuracy; 15 such accepted steps in a row (fewer than
  /// 6 others between them) find the problem stiff. Tested at every accepted step (the authors' code tests every
  /// 1000th until one is positive): its cost is two sums over the state.
  void test_stiffness(const State& x_new, const State& dxdt_new, double h) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x_new.size(); ++i) {
      num += (dxdt_new[i] - k_[11][i]) * (dxdt_new[i] - k_[11][i]);
      den += (x_new[i] - y_[i]) * (x_new[i] - y_[i]);
    }
    if (!(den > 0)) return;
    constexpr double kStabilityBoundary = 6.1;
    constexpr int kStiffSteps = 15, kNonstiffSteps = 6;
    if (std::abs(h) * std::sqrt(num / den) > kStabilityBoundary) {
      nonstiff_steps_ = 0;
      if (++stiff_steps_ >= kStiffSteps) stiff_ = true;
    } else if (++nonstiff_steps_ >= kNonstiffSteps) {
      stiff_steps_ = 0;
    }
  }

  const Weights* w_;
  int stiff_steps_ = 0, nonstiff_steps_ = 0;
  bool stiff_ = false;
  std::array<State, 16> k_;  ///< the stages of the last attempt (k_[12]: x' at its end, for the dense output)
  std::array<State, 7> r_;   ///< the dense output's coefficients of the last accepted step
  State y_;
  bool rejected_ = false, dense_ready_ = false;
};

/// The step loop, the witnesses and the root location, shared by the methods above.
template <class State, class Method>
class ExplicitRkIntegrator final : public Integrator {
 public:
  ExplicitRkIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : sys_(&sys),
        ode_(facet<OdeSystem>(sys)),
        witness_sys_(facet<WitnessSystem>(sys)),
        system_type_(&typeid(sys)),
        opt_(opt),
        n_(sys.size()),
        method_(n_, &weights_) {
    for (State* v : {&x_, &x_old_, &dxdt_old_, &x_new_, &dxdt_new_, &scratch_, &scratch2_, &dense_x_})
      *v = make_state<State>(n_);
    set_weights();
  }

  void reset(double t, const double* x, int mode) override {
    const bool restarting = started_;
    if (started_) ++restarts_;
    else method_.restart();
    started_ = true;
    dense_valid_ = false;
    mode_ = mode;
    std::copy(x, x + n_, x_.begin());
    x_new_ = x_;
    x_old_ = x_;
    t_ = t_old_ = t_new_ = t;
    evaluate_rhs(t, x_new_, dxdt_new_);
    dxdt_old_ = dxdt_new_;
    if (witness_sys_) {
      const std::vector<int>& d = mode_directions_.of(*witness_sys_, mode);
      directions_.assign(d.begin(), d.end());
    } else {
      directions_.clear();
    }
    nw_ = directions_.size();
    roots_.assign(nw_, 0);
    for (auto* g : {&g_old_, &g_new_, &g_root_, &g_scratch_}) g->resize(nw_);
    if (nw_) witnesses(t, x_new_.data(), g_old_);
    pending_ = false;
    method_.reset();
    // A restart after an event continues with the step size the run had reached: the error test rejects it where
    // the new mode needs a smaller one. Only a fresh start estimates its first step, which is smaller by an order
    // of magnitude and takes a few steps to grow back (the disk with DOP853 from (3, 0, 1) to tau = 60: 38
    // restarts, 299 steps and 5,329 right-hand sides with an estimate at each, 256 and 4,757 without).
    h_ = restarting && h_ > 0 && std::isfinite(h_) ? h_ : initial_step();
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
    dense_valid_ = false;
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
      if (method_.try_step(rhs_, x_old_, dxdt_old_, t, x_new_, dxdt_new_, dt)) {
        // dt is now the proposal for the next step; a step cut short for the stop time keeps the larger one.
        h_ = to_stop ? std::max(h_, dt) : dt;
        t_new_ = to_stop ? t_stop : t;
        ++n_steps_;
        break;
      }
      ++n_err_fails_;
      h_ = dt;
      const double t_scale = std::max(std::abs(t_old_), std::abs(t_stop));
      if (!(dt > 16 * std::numeric_limits<double>::epsilon() * t_scale) || !std::isfinite(dt)) {
        const std::string where = std::string(Method::kMethod) + " step", mode = sys_->mode_name(mode_);
        if (weights_.not_finite)
          throw SolverError(where, -1, "TOO_SMALL_STEP", t_old_, dt, mode,
                            "the right-hand side was not finite along the step: the model could not be evaluated "
                            "here");
        throw StepSizeError(where, -1, "TOO_SMALL_STEP", t_old_, dt, mode,
                            "the error test failed down to a step of round-off size; the problem may be stiff or not "
                            "smooth here: try solver.method = \"bdf\", or loosen solver.rtol or solver.atol");
      }
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
      copy_out(x_new_, x);
    } else if (t == t_old_) {
      copy_out(x_old_, x);
    } else {
      method_.calc_state(rhs_, t, dense_x_, x_old_, dxdt_old_, t_old_, x_new_, dxdt_new_, t_new_);
      dense_t_ = t;
      dense_valid_ = true;
      copy_out(dense_x_, x);
    }
  }

  /// At the step's ends the stages' own derivatives; inside, the right-hand side at the dense output's state.
  void derivative_at(double t, double* xdot) const override {
    if (t == t_new_) {
      copy_out(dxdt_new_, xdot);
    } else if (t == t_old_) {
      copy_out(dxdt_old_, xdot);
    } else {
      // The state there is usually the one state_at has just given (a point of the step search, a rate in a
      // root search): the dense output is not evaluated twice.
      if (!(dense_valid_ && dense_t_ == t)) state_at(t, scratch2_.data());
      ode_->rhs(t, dense_x_.data(), mode_, xdot);
      ++n_rhs_;
    }
  }

  const std::vector<int>& roots() const override { return roots_; }
  /// g_old_: after a step the values at its end, after a root those at the root; with no step since the last
  /// reset, those at the start.
  const double* witness_values() const override { return nw_ ? g_old_.data() : nullptr; }
  double last_step_size() const override { return t_new_ - t_old_; }
  bool stiff() const override { return method_.stiff(); }

  SolverStats stats() const override {
    SolverStats s;
    s.method = Method::kStatsName;
    s.rtol = opt_.rtol;
    s.atol = opt_.atol;
    s.counts = {{"n_steps", n_steps_},
                {"n_rhs_evals", n_rhs_},
                {"n_jac_evals", 0},
                {"n_root_evals", n_root_evals_},
                {"n_err_test_fails", n_err_fails_},
                {"n_restarts", restarts_}};
    return s;
  }

  void error_scale(const double* x, double* err) const override {
    for (std::size_t i = 0; i < n_; ++i) err[i] = weights_.rtol * std::abs(x[i]) + weights_.atol[i];
  }

  bool rebind(const HybridSystem& sys, const SolverOptions& opt) override {
    // The bound system may be gone by now (a finished sweep point): only its class is compared.
    if (typeid(sys) != *system_type_ || sys.size() != n_ || opt.method != opt_.method) return false;
    sys_ = &sys;
    ode_ = facet<OdeSystem>(sys);
    witness_sys_ = facet<WitnessSystem>(sys);
    opt_ = opt;
    set_weights();
    n_steps_ = n_rhs_ = n_root_evals_ = n_err_fails_ = restarts_ = 0;
    started_ = false;
    pending_ = false;
    dense_valid_ = false;
    mode_directions_.clear();
    return true;
  }

 private:
  /// Odeint's System concept: x' = f(t, x) in the current mode.
  struct Rhs {
    ExplicitRkIntegrator* self;
    void operator()(const State& x, State& dxdt, double t) const {
      self->ode_->rhs(t, x.data(), self->mode_, dxdt.data());
      ++self->n_rhs_;
    }
  };

  void set_weights() {
    weights_.rtol = opt_.rtol;
    weights_.atol.resize(n_);
    absolute_tolerances(*sys_, opt_, weights_.atol.data());
  }

  void evaluate_rhs(double t, const State& x, State& dxdt) {
    ode_->rhs(t, x.data(), mode_, dxdt.data());
    ++n_rhs_;
  }

  void witnesses(double t, const double* x, std::vector<double>& g) const {
    witness_sys_->witness_values(t, x, mode_, g.data());
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
    const double h1 = dmax <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / dmax, 1.0 / Method::kOrder);
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
    g_old_.swap(g_new_);  // g_new_ is computed afresh at the next step's end before it is read
    std::fill(roots_.begin(), roots_.end(), 0);
  }

  const HybridSystem* sys_;
  const OdeSystem* ode_;              ///< the facet integrated (make_integrator checked that it has one)
  const WitnessSystem* witness_sys_;  ///< nullptr for a system without witnesses
  const std::type_info* system_type_;
  SolverOptions opt_;
  std::size_t n_;
  Weights weights_;
  mutable Method method_;  ///< mutable: a method may complete its dense output at the first call within a step
  Rhs rhs_{this};
  int mode_ = 0;
  // The last accepted step [t_old_, t_new_], its ends' states and derivatives (the dense output's data), and
  // the reported point (t_, x_): the step's end, or a root inside it.
  double t_ = 0, t_old_ = 0, t_new_ = 0, h_ = 0;
  State x_, x_old_, dxdt_old_, x_new_, dxdt_new_;
  mutable State scratch_, scratch2_;
  // The last interior state of the dense output (state_at) and its time, valid within the step that gave it.
  mutable State dense_x_;
  mutable double dense_t_ = 0;
  mutable bool dense_valid_ = false;
  // Witnesses: directions, values at the search's start and the step's end, at a root, and scratch.
  std::size_t nw_ = 0;
  std::vector<int> directions_, roots_;
  ModeDirections mode_directions_;  ///< of each mode met since the system was bound
  std::vector<double> g_old_, g_new_, g_root_;
  mutable std::vector<double> g_scratch_;
  bool pending_ = false, started_ = false;
  Status pending_status_ = Status::Step;
  mutable long n_rhs_ = 0, n_root_evals_ = 0;
  long n_steps_ = 0, n_err_fails_ = 0, restarts_ = 0;
};

}  // namespace

namespace {

template <template <class> class Method>
std::unique_ptr<Integrator> make_explicit_rk(const HybridSystem& system, const SolverOptions& options) {
  using Small = std::array<double, 4>;
  if (system.size() == 4) return std::make_unique<ExplicitRkIntegrator<Small, Method<Small>>>(system, options);
  using Any = std::vector<double>;
  return std::make_unique<ExplicitRkIntegrator<Any, Method<Any>>>(system, options);
}

}  // namespace

std::unique_ptr<Integrator> make_dopri5_integrator(const HybridSystem& system, const SolverOptions& options) {
  return make_explicit_rk<Dopri5Method>(system, options);
}

std::unique_ptr<Integrator> make_dop853_integrator(const HybridSystem& system, const SolverOptions& options) {
  return make_explicit_rk<Dop853Method>(system, options);
}

}  // namespace rollsim
