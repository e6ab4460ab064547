#include "rollsim/solve/simulate.hpp"

#include <cmath>
#include <sstream>

#include "rollsim/core/error.hpp"

namespace rollsim {

std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {

class Loop {
 public:
  Loop(const HybridSystem& sys, const SimulationOptions& opt, const std::vector<Observer*>& obs)
      : sys_(sys), opt_(opt), obs_(obs), n_(sys.size()), x_(n_), y_(sys.outputs().size()), summarizer_(sys.make_summarizer()) {}

  RunResult run() {
    RunResult res;
    RunInfo info{&sys_, opt_.t0, opt_.t_end};
    for (auto* o : obs_) o->on_start(info);
    sys_.initial_state(x_.data());
    mode_ = sys_.initial_mode(x_.data());
    t_ = opt_.t0;
    std::unique_ptr<Integrator> integ;
    try {
      integ = make_integrator(sys_, opt_.solver);
      integ->reset(t_, x_.data(), mode_);
      emit_sample(t_, x_.data());
      next_k_ = 1;
      run_loop(*integ, res);
    } catch (const SolverError& e) {
      res.status = "solver_failure";
      res.termination = "solver_failure";
      res.message = e.what();
    } catch (const Interrupted& e) {
      res.status = "interrupted";
      res.termination = "interrupted";
      res.message = e.what();
    }
    if (res.status != "ok" && last_sample_t_ < t_) emit_sample(t_, x_.data());  // keep what was reached
    res.t_final = t_;
    res.time_unit = sys_.time_signal().unit;
    res.final_mode = mode_;
    res.x_final = x_;
    res.n_samples = n_samples_;
    res.n_events = n_events_;
    if (integ) res.stats = integ->stats();
    res.summary = summarizer_->items();
    for (auto* o : obs_) o->on_finish(res);
    return res;
  }

 private:
  double grid(long k) const { return opt_.t0 + static_cast<double>(k) * opt_.output_dt; }

  void emit_sample(double t, const double* x) {
    sys_.compute_outputs(t, x, mode_, y_.data());
    summarizer_->on_point(t, x, y_.data(), mode_);
    for (auto* o : obs_) o->on_sample(t, x, y_.data(), mode_);
    last_sample_t_ = t;
    ++n_samples_;
  }

  /// Samples on the grid up to and including `t_upto`, from the integrator's dense output.
  void emit_grid_samples(const Integrator& integ, double t_upto) {
    std::vector<double>& xs = scratch_;
    while (next_k_ >= 0) {
      const double tk = grid(next_k_);
      if (tk > t_upto || tk > opt_.t_end) break;
      ++next_k_;
      if (tk > last_sample_t_) {
        integ.state_at(tk, xs.data());
        emit_sample(tk, xs.data());
        // One long step can hold millions of samples: stop between them, with the last sample as the state.
        if ((next_k_ & 1023) == 0 && interrupt_flag().load(std::memory_order_relaxed)) {
          t_ = tk;
          std::copy(xs.begin(), xs.end(), x_.begin());
          throw Interrupted();
        }
      }
    }
  }

  void run_loop(Integrator& integ, RunResult& res) {
    const long max_steps = opt_.solver.max_steps;
    long steps = 0;
    while (true) {
      if (interrupt_flag().load(std::memory_order_relaxed)) throw Interrupted();
      const auto status = integ.step(opt_.t_end);
      ++steps;
      const double t_new = integ.t();
      emit_grid_samples(integ, t_new);
      t_ = t_new;
      std::copy(integ.x(), integ.x() + n_, x_.begin());
      sys_.compute_outputs(t_, x_.data(), mode_, y_.data());
      summarizer_->on_point(t_, x_.data(), y_.data(), mode_);
      if (status == Integrator::Status::Root) {
        if (handle_roots(integ, res)) return;
      } else if (status == Integrator::Status::StopTime || t_ >= opt_.t_end) {
        if (last_sample_t_ < t_) emit_sample(t_, x_.data());
        res.termination = "t_end";
        return;
      }
      if (steps >= max_steps) {
        std::ostringstream os;
        os.precision(10);
        throw SolverError("simulate", -1, "MAX_STEPS", t_, integ.last_step_size(),
                          sys_.mode_name(mode_),
                          "the run took solver.max_steps = " + std::to_string(max_steps) +
                              " steps before reaching simulation.t_end; raise solver.max_steps or shorten t_end");
      }
    }
  }

  /// Returns true if the run ends here.
  bool handle_roots(Integrator& integ, RunResult& res) {
    const auto witnesses = sys_.witnesses(mode_);
    const std::vector<int> roots = integ.roots();
    bool restart = false, stop = false;
    std::string stop_kind;
    std::vector<double> x_before = x_;
    for (size_t i = 0; i < roots.size(); ++i) {
      if (roots[i] == 0) continue;
      const int before = mode_;
      EventOutcome out = sys_.on_event(t_, x_.data(), mode_, static_cast<int>(i), roots[i]);
      out.terminal = out.terminal || witnesses[i].terminal;
      EventRecord ev;
      ev.t = t_;
      ev.kind = out.kind.empty() ? witnesses[i].name : out.kind;
      ev.mode_before = before;
      ev.mode_after = out.new_mode;
      ev.terminal = out.terminal;
      ev.x = x_;
      ev.extra = out.extra;
      mode_ = out.new_mode;
      ++n_events_;
      summarizer_->on_event(t_, ev.kind, before, mode_, x_.data());
      for (auto* o : obs_) o->on_event(ev);
      if (mode_ != before || out.state_changed) restart = true;
      if (out.terminal && !stop) {
        stop = true;
        stop_kind = ev.kind;
      }
      if (static_cast<long>(n_events_) > opt_.max_events)
        throw SolverError("simulate", -1, "MAX_EVENTS", t_, integ.last_step_size(),
                          sys_.mode_name(mode_),
                          "more than " + std::to_string(opt_.max_events) + " events (a Zeno accumulation?); shorten t_end");
    }
    // The event instant is a sample, with the state after the handler.
    emit_sample(t_, x_.data());
    if (stop) {
      res.termination = stop_kind;
      return true;
    }
    if (restart) integ.reset(t_, x_.data(), mode_);
    return false;
  }

  const HybridSystem& sys_;
  const SimulationOptions& opt_;
  const std::vector<Observer*>& obs_;
  size_t n_;
  std::vector<double> x_, y_, scratch_ = std::vector<double>(n_);
  std::unique_ptr<Summarizer> summarizer_;
  int mode_ = 0;
  double t_ = 0, last_sample_t_ = -INFINITY;
  long next_k_ = 1;
  size_t n_samples_ = 0, n_events_ = 0;
};

}  // namespace

RunResult simulate(const HybridSystem& system, const SimulationOptions& options, const std::vector<Observer*>& observers) {
  Loop loop(system, options, observers);
  return loop.run();
}

}  // namespace rollsim
