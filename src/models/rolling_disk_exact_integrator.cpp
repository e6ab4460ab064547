// solver.method = "exact" for the rolling disk: every mode is a linear ODE with a closed form, so a step is a
// whole segment, from one event to the next, and the event times are roots of analytic functions isolated and
// polished to round-off (rolling_disk_exact.hpp). It sits behind the same Integrator interface as CVODE, so the
// Filippov engine classifies the events and the simulate loop samples, records and writes exactly as for CVODE.
#include <array>
#include <cmath>
#include <limits>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/hybrid/integrator.hpp"
#include "rollsim/models/rolling_disk.hpp"
#include "rollsim/models/rolling_disk_exact.hpp"

namespace rollsim::rolling_disk {

namespace {

class ExactIntegrator final : public Integrator {
 public:
  ExactIntegrator(const Params& p, const SolverOptions& opt) : p_(p), s_(scales(p)), opt_(opt) {
    // The witnesses' positions in each mode, looked up by name once rather than at every event.
    for (const int mode : {FilippovSystem::kMinus, 0, FilippovSystem::kPlus}) {
      const auto& ws = FilippovSystem::mode_witnesses(mode);
      Indices& ix = indices_[static_cast<std::size_t>(mode + 1)];
      ix.count = ws.size();
      if (mode != 0) {
        ix.switching = witness_index(ws, FilippovSystem::kSwitchingWitness);
      } else {
        ix.sigma_plus = witness_index(ws, FilippovSystem::kSigmaPlusWitness);
        ix.sigma_minus = witness_index(ws, FilippovSystem::kSigmaMinusWitness);
      }
    }
  }

  void reset(double t, const double* x, int mode) override {
    t0_ = t;
    start_ = State{x[kX], x[kY], x[kZ]};
    d0_ = x[kDissipated];
    mode_ = mode;
    const double j = p_.inertia_ratio;
    if (mode < -1 || mode > 1) throw SolverError("exact propagation: no mode " + std::to_string(mode));
    const Indices& ix = indices_[static_cast<std::size_t>(mode + 1)];
    if (mode == FilippovSystem::kPlus || mode == FilippovSystem::kMinus) {
      if (mode * start_.z < 0)
        throw SolverError("exact propagation: the state z = " + std::to_string(start_.z) + " is not in mode " +
                          std::to_string(mode));
      const SlidingHit hit = sliding_event_time(j, mode, start_);
      grazings_ += static_cast<long>(hit.grazings);
      tau_event_ = hit.tau;
      event_witness_ = ix.switching;  // H = z
      event_direction_ = -mode;
    } else {
      int side = 0;
      tau_event_ = rolling_exit_time(start_, &side);
      // sigma+ rises through 0 at the exit at x = -1 (into +1), sigma- falls through 0 at x = +1 (into -1).
      event_witness_ = side > 0 ? ix.sigma_minus : ix.sigma_plus;
      event_direction_ = side > 0 ? -1 : +1;
    }
    t_event_ = std::isfinite(tau_event_) ? t0_ + tau_event_ / s_.omega0 : std::numeric_limits<double>::infinity();
    roots_.assign(ix.count, 0);
    t_ = t;
    prev_t_ = t;
    std::copy(x, x + kStates, x_);
    ++segments_;
  }

  Status step(double t_stop) override {
    prev_t_ = t_;
    std::fill(roots_.begin(), roots_.end(), 0);
    if (t_event_ <= t_stop) {
      t_ = t_event_;
      state_at(t_, x_);
      // At the root the switching quantity is zero by definition; remove the round-off of the closed form.
      if (mode_ != 0) x_[kZ] = 0.0;
      else x_[kX] = event_direction_ < 0 ? 1.0 : -1.0;
      roots_[event_witness_] = event_direction_;
      t_event_ = std::numeric_limits<double>::infinity();  // reported once; the loop resets after handling it
      ++steps_;
      return Status::Root;
    }
    t_ = t_stop;
    state_at(t_, x_);
    ++steps_;
    return Status::StopTime;
  }

  double t() const override { return t_; }
  const double* x() const override { return x_; }

  void state_at(double t, double* x) const override {
    const double tau = (t - t0_) * s_.omega0;
    double d;
    const State s = mode_state(p_.inertia_ratio, mode_, start_, tau, d);
    x[kX] = s.x;
    x[kY] = s.y;
    x[kZ] = mode_ == 0 ? 0.0 : s.z;
    x[kDissipated] = d0_ + s_.energy * d;
  }

  void derivative_at(double t, double* xdot) const override {
    const double tau = (t - t0_) * s_.omega0;
    const double j = p_.inertia_ratio;
    const State st = mode_state(j, mode_, start_, tau);
    const State r = mode_rate(j, mode_, st);
    xdot[kX] = s_.omega0 * r.x;
    xdot[kY] = s_.omega0 * r.y;
    xdot[kZ] = mode_ == 0 ? 0.0 : s_.omega0 * r.z;
    xdot[kDissipated] = mode_ == 0 ? 0.0 : s_.omega0 * s_.energy * j * mode_ * st.z;
  }

  const std::vector<int>& roots() const override { return roots_; }
  /// The closed form is exact to round-off; the audit still measures against the tolerances asked for.
  void error_scale(const double* x, double* err) const override {
    for (int i = 0; i < kStates; ++i) err[i] = opt_.rtol * std::abs(x[i]) + opt_.atol;
  }
  bool locates_events_exactly() const override { return true; }
  double last_step_size() const override { return t_ - prev_t_; }

  SolverStats stats() const override {
    SolverStats s;
    s.method = "exact";
    s.rtol = opt_.rtol;
    s.atol = opt_.atol;
    s.counts = {{"n_steps", steps_}, {"n_segments", segments_}, {"n_grazings", grazings_},
                {"n_rhs_evals", 0}, {"n_jac_evals", 0}, {"n_root_evals", 0}};
    return s;
  }

 private:
  Params p_;
  Scales s_;
  SolverOptions opt_;
  double t0_ = 0, t_ = 0, prev_t_ = 0, d0_ = 0, tau_event_ = 0, t_event_ = 0;
  State start_;
  int mode_ = 0, event_direction_ = 0;
  std::size_t event_witness_ = 0;
  double x_[kStates] = {0, 0, 0, 0};
  std::vector<int> roots_;
  struct Indices {
    std::size_t count = 0, switching = 0, sigma_plus = 0, sigma_minus = 0;
  };
  std::array<Indices, 3> indices_;  ///< by mode + 1
  long steps_ = 0, segments_ = 0, grazings_ = 0;
};

}  // namespace

std::unique_ptr<Integrator> make_exact_integrator(const Params& p, const SolverOptions& options) {
  return std::make_unique<ExactIntegrator>(p, options);
}

}  // namespace rollsim::rolling_disk
