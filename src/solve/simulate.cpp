#include "rollsim/solve/simulate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "rollsim/core/crossing.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {

/// A model without a summary of its own.
class NoSummary final : public Summarizer {
 public:
  void on_point(double, const double*, const double*, int) override {}
  std::vector<SummaryItem> items() const override { return {}; }
  bool reads_outputs() const override { return false; }
  bool reads_samples() const override { return false; }
};

std::string number(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

/// v resized to n only when its size differs: the hot paths' vectors keep their size, and resize is not inlined.
inline void fit(std::vector<double>& v, size_t n) {
  if (v.size() != n) v.resize(n);
}

/// The items of `all` named in `keys`, in the order of `keys` (SimulationOptions::summary); a key no item has is
/// left out.
std::vector<SummaryItem> selected(std::vector<SummaryItem> all, const std::vector<std::string>& keys) {
  std::vector<SummaryItem> out;
  out.reserve(keys.size());
  for (const auto& k : keys)
    for (auto& it : all)
      if (it.key == k) {
        out.push_back(std::move(it));
        break;
      }
  return out;
}

/// A witness crossing found by the loop's own search of a step (docs/audit.md): the time, the state on the far
/// side of the crossing, and the witness with its direction.
struct Crossing {
  double t = std::numeric_limits<double>::infinity();
  std::vector<double> x;
  int index = -1;
  int direction = 0;
  bool found() const { return index >= 0; }
};

class Loop {
 public:
  Loop(const HybridSystem& sys, std::span<const double> x0, const SimulationOptions& opt,
       const std::vector<Observer*>& obs, SolverWorkspace* ws)
      : sys_(sys), ev_(facet<WitnessSystem>(sys)), opt_(opt), obs_(obs), workspace_(ws), n_(sys.size()), x_(x0.begin(), x0.end()), y_(sys.outputs().size()),
        summarizer_(sys.make_summarizer()) {
    if (!summarizer_) summarizer_ = std::make_unique<NoSummary>();
    if (opt_.summary) summarizer_->select(*opt_.summary);
    summary_reads_outputs_ = summarizer_->reads_outputs();
    if (summary_reads_outputs_ && obs_.empty()) summary_columns_ = summarizer_->output_columns();
    samples_read_ = !obs_.empty() || summarizer_->reads_samples();
  }

  RunResult run() {
    RunResult res;
    RunInfo info{&sys_, opt_.t0, opt_.t_end, opt_.output_dt};
    for (auto* o : obs_) o->on_start(info);
    mode_ = sys_.initial_mode(x_.data());
    // The step search's scratch sized before the first step, so that no step allocates (a graze first met late
    // in a run included).
    for (auto* v : {&xdot_scratch_, &xe_scratch_, &err_scratch_, &bisect_x_}) v->reserve(n_);
    bisect_g_.reserve(std::max<size_t>(4, ev_ ? ev_->witness_count(mode_) : 0));
    t_ = opt_.t0;
    std::unique_ptr<Integrator> integ;
    try {
      const SolverOptions solver = for_run(opt_.solver, opt_.t0, opt_.t_end);
      integ = workspace_ ? workspace_->take(sys_, solver) : make_integrator(sys_, solver);
      summarizer_->on_tolerances(opt_.solver.rtol, opt_.solver.atol, integ->locates_events_exactly());
      integ->reset(t_, x_.data(), mode_);
      audit(*integ, "the initial state");
      emit_sample(t_, x_.data());
      next_k_ = 1;
      run_loop(*integ, res);
    } catch (const AuditError& e) {
      res.status = "audit_failure";
      res.termination = "audit_failure";
      res.message = e.what();
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
    res.stats.counts.emplace_back("n_located_by_search", n_located_);
    res.summary = summarizer_->items();
    if (sys_.has_modes() || ledger_started_) {
      std::string verdict = res.status == "audit_failure" ? "failed"
                            : res.status == "ok"          ? "passed"
                                                          : "passed until the run stopped";
      verdict += sys_.has_modes() ? " (mode regions" : " (";
      if (ledger_started_) verdict += sys_.has_modes() ? ", dissipation, energy balance)" : "dissipation, energy balance)";
      else verdict += ")";
      res.summary.push_back({std::string(kLoopSummaryKeys[0]), 0, verdict, "",
                             "self-audit at every step and event (docs/audit.md)", false});
      if (ledger_started_)
        res.summary.push_back({std::string(kLoopSummaryKeys[1]), worst_balance_ratio_, "", "1",
                               "largest energy imbalance / its audit tolerance (fails above 1)", false});
    }
    if (opt_.summary) res.summary = selected(std::move(res.summary), *opt_.summary);
    for (auto* o : obs_) o->on_finish(res);
    if (workspace_ && res.completed()) workspace_->give_back(std::move(integ));
    return res;
  }

 private:
  double grid(long k) const { return opt_.t0 + static_cast<double>(k) * opt_.output_dt; }

  /// \param grid an interpolated sample on the output grid (Summarizer::on_sample), not a state the run stands on
  void emit_sample(double t, const double* x, bool grid = false) {
    const double* y = nullptr;
    if (summary_reads_outputs_ || !obs_.empty()) {
      outputs_at(t, x);
      y = y_.data();
    }
    if (grid)
      summarizer_->on_sample(t, x, summary_reads_outputs_ ? y : nullptr, mode_);
    else
      summarizer_->on_point(t, x, summary_reads_outputs_ ? y : nullptr, mode_);
    for (auto* o : obs_) o->on_sample(t, x, y, mode_);
    last_sample_t_ = t;
    ++n_samples_;
  }

  /// Samples on the grid up to and including `t_upto`, from the integrator's dense output.
  void emit_grid_samples(const Integrator& integ, double t_upto) {
    if (!samples_read_) {
      count_grid_samples(t_upto);
      return;
    }
    std::vector<double>& xs = scratch_;
    while (next_k_ >= 0) {
      const double tk = grid(next_k_);
      if (tk > t_upto || tk > opt_.t_end) break;
      ++next_k_;
      if (tk > last_sample_t_) {
        integ.state_at(tk, xs.data());
        emit_sample(tk, xs.data(), /*grid=*/true);
        // One long step can hold millions of samples: stop between them, with the last sample as the state.
        if ((next_k_ & 1023) == 0 && interrupt_flag().load(std::memory_order_relaxed)) {
          t_ = tk;
          std::copy(xs.begin(), xs.end(), x_.begin());
          throw Interrupted();
        }
      }
    }
  }

  /// The grid's samples up to and including `t_upto` when no one reads them: counted as emit_grid_samples counts
  /// them (the times after the last sample), none interpolated.
  void count_grid_samples(double t_upto) {
    const double upto = std::min(t_upto, opt_.t_end);
    if (!(grid(next_k_) <= upto)) return;
    // The largest k with grid(k) <= upto: the quotient (truncated: upto - t0 >= 0 here), corrected for its rounding.
    long last = std::max(next_k_, static_cast<long>(std::min((upto - opt_.t0) / opt_.output_dt, 4e18)));
    while (last > next_k_ && grid(last) > upto) --last;
    while (grid(last + 1) <= upto) ++last;
    long first = next_k_;
    while (first <= last && grid(first) <= last_sample_t_) ++first;
    if (last >= first) {
      n_samples_ += static_cast<std::size_t>(last - first + 1);
      last_sample_t_ = grid(last);
    }
    next_k_ = last + 1;
  }

  void run_loop(Integrator& integ, RunResult& res) {
    const long max_steps = opt_.solver.max_steps;
    long steps = 0;
    while (true) {
      if (interrupt_flag().load(std::memory_order_relaxed)) throw Interrupted();
      const double t_a = t_;
      const auto status = integ.step(opt_.t_end);
      ++steps;
      ++steps_since_restart_;
      const double t_b = integ.t();
      const Crossing& missed = search_step(integ, t_a, t_b, status == Integrator::Status::Root);
      if (missed.found()) {
        // A crossing the root finder did not report, before the step's end: the run goes back to it.
        emit_grid_samples(integ, missed.t);
        t_ = missed.t;
        x_ = missed.x;
        record_point();
        std::vector<int>& roots = missed_roots_;
        roots.assign(witnesses_of(mode_).size(), 0);
        roots[static_cast<size_t>(missed.index)] = missed.direction;
        ++n_located_;
        cache_valid_ = false;
        if (handle_roots(integ, roots, res, /*must_restart=*/true)) return;
      } else {
        emit_grid_samples(integ, t_b);
        t_ = t_b;
        std::copy(integ.x(), integ.x() + n_, x_.begin());
        record_point();
        // Valid as the next start only when the search filled it for this very step.
        cache_valid_ = searched_ && status != Integrator::Status::Root;
        if (cache_valid_) {
          pa_.swap(pb_);
          cache_mode_ = mode_;
        }
        if (status == Integrator::Status::Root) {
          if (handle_roots(integ, integ.roots(), res, false)) return;
        } else {
          audit(integ, "an accepted step");
          if (status == Integrator::Status::StopTime || t_ >= opt_.t_end) {
            if (last_sample_t_ < t_) emit_sample(t_, x_.data());
            res.termination = "t_end";
            return;
          }
        }
      }
      if (steps >= max_steps) {
        throw SolverError("simulate", -1, "MAX_STEPS", t_, integ.last_step_size(), sys_.mode_name(mode_),
                          "the run took solver.max_steps = " + std::to_string(max_steps) +
                              " steps before reaching simulation.t_end; raise solver.max_steps or shorten t_end");
      }
    }
  }

  /// The summarizer sees every internal step and every event state.
  void record_point() {
    if (!summary_reads_outputs_) {
      summarizer_->on_point(t_, x_.data(), nullptr, mode_);
      return;
    }
    outputs_at(t_, x_.data());
    summarizer_->on_point(t_, x_.data(), y_.data(), mode_);
  }

  /// The outputs at (t, x) into y_: all of them, or with no observer only the columns the summary reads when it
  /// names them (Summarizer::output_columns; the disk's energy items read one of eight).
  void outputs_at(double t, const double* x) {
    if (summary_columns_.empty()) sys_.compute_outputs(t, x, mode_, y_.data());
    else sys_.compute_output_columns(t, x, mode_, summary_columns_, y_.data());
  }

  // ---- the search of a step for crossings the root finder missed (docs/audit.md) ---------------------------

  struct Point {
    double t = 0;
    std::vector<double> x, xdot, g, rate;
    /// Sized for n states and m witnesses (resized only when a size differs: a step's search calls no resize).
    void size(size_t n, size_t m) {
      if (x.size() != n) {
        x.resize(n);
        xdot.resize(n);
      }
      if (g.size() != m) {
        g.resize(m);
        rate.resize(m);
      }
    }
    /// Exchanges the storage (the step's end becomes the next start) without moving the vectors through a temporary.
    void swap(Point& o) noexcept {
      std::swap(t, o.t);
      x.swap(o.x);
      xdot.swap(o.xdot);
      g.swap(o.g);
      rate.swap(o.rate);
    }
  };

  /// \param g_known the witness values at x_known, when the integrator has them (Integrator::witness_values)
  void fill_point(Point& p, const Integrator& integ, double t, const double* x_known, size_t m,
                  const double* g_known = nullptr) const {
    p.t = t;
    p.size(n_, m);
    if (x_known)
      std::copy(x_known, x_known + n_, p.x.begin());
    else
      integ.state_at(t, p.x.data());
    integ.derivative_at(t, p.xdot.data());
    if (g_known)
      std::copy(g_known, g_known + m, p.g.begin());
    else
      ev_->witness_values(t, p.x.data(), mode_, p.g.data());
    ev_->witness_rates(t, p.x.data(), p.xdot.data(), mode_, p.rate.data());
  }

  double witness_at(const Integrator& integ, double t, size_t i, std::vector<double>& x, std::vector<double>& g,
                    bool rate) const {
    integ.state_at(t, x.data());
    if (rate) {
      fit(xdot_scratch_, n_);
      integ.derivative_at(t, xdot_scratch_.data());
      ev_->witness_rates(t, x.data(), xdot_scratch_.data(), mode_, g.data());
    } else
      ev_->witness_values(t, x.data(), mode_, g.data());
    return g[i];
  }

  /// The time in [lo, hi] where s * (witness i, or its rate) turns > 0, given it is v_lo <= 0 at lo and
  /// v_hi > 0 at hi, located to round-off (core/crossing.hpp); returns the time on the far side.
  double locate(const Integrator& integ, double lo, double hi, double v_lo, double v_hi, size_t i, int s,
                bool rate) const {
    std::vector<double>& x = bisect_x_;
    std::vector<double>& g = bisect_g_;
    fit(x, n_);
    fit(g, ev_->witness_count(mode_));
    return locate_crossing(lo, hi, v_lo, v_hi, [&](double t) { return s * witness_at(integ, t, i, x, g, rate); });
  }

  /// The first crossing of witness i in (lo.t, hi.t] in its direction: a sign change between the points, or an
  /// extremum between them on the far side (a graze). For a region witness it counts when the excursion
  /// exceeds the integration error (smaller ones are rounding, and the audit allows them), from any start;
  /// for another witness, when it starts clear of zero (near zero it is the event just handled).
  /// Into `c` (its state's storage reused: no allocation per event).
  void search_interval(const Integrator& integ, const Point& lo, const Point& hi, size_t i, const Witness& w,
                       Crossing& c) const {
    c.t = std::numeric_limits<double>::infinity();
    c.index = -1;
    c.direction = 0;
    const double g0 = lo.g[i];
    int d = w.direction;
    if (d == 0) {
      if (g0 == 0) return;
      d = g0 > 0 ? -1 : +1;
    }
    // Already beyond at the start: for a non-region witness an event handled before; for a region witness a
    // departure within the integration error so far (the audit passed there), followed below.
    const bool beyond = d * g0 > 0;
    if (beyond && !w.bounds_region) return;
    double t_far = 0, excess = 0;
    bool graze = false;
    std::vector<double>& xe = xe_scratch_;  // per-loop scratch: a step's search does not allocate
    fit(xe, n_);
    if (d * hi.g[i] > 0) {
      t_far = hi.t;
      excess = d * hi.g[i];
      xe = hi.x;
    } else if (d * lo.rate[i] > 0 && d * hi.rate[i] < 0) {
      const double te = locate(integ, lo.t, hi.t, -d * lo.rate[i], -d * hi.rate[i], i, -d, /*rate=*/true);
      std::vector<double>& g = bisect_g_;
      fit(g, lo.g.size());
      const double ge = witness_at(integ, te, i, xe, g, false);
      if (!(d * ge > 0)) return;
      t_far = te;
      excess = d * ge;
      graze = true;
    } else {
      return;
    }
    std::vector<double>& err = err_scratch_;
    fit(err, n_);
    if (w.bounds_region) {
      // A region witness: an excursion within the integration error is not an event (the audit allows it);
      // beyond it, it is one, from any start.
      // A graze (out and back within the step) is decided against the global error the path can carry: the
      // local bounds summed over the steps since the last restart. A rolling circle of radius 1 computed as
      // 1 + 1e-11 does not slip.
      integ.error_scale(xe.data(), err.data());
      const double local = witness_error_bound(*ev_, t_far, xe.data(), mode_, i, err.data());
      const double steps = graze ? static_cast<double>(std::max(1L, steps_since_restart_)) : 1.0;
      if (excess <= local * steps) return;
    } else {
      // Another witness near zero at the start: the event just handled (the integrator's root finder skips it
      // likewise), or rounding.
      integ.error_scale(lo.x.data(), err.data());
      if (std::abs(g0) <= witness_error_bound(*ev_, lo.t, lo.x.data(), mode_, i, err.data())) return;
    }
    if (beyond) {
      // The departure began before this step, within the error: the event is taken at the step's start.
      c.t = lo.t;
      c.x = lo.x;
    } else {
      c.t = locate(integ, lo.t, t_far, d * g0, excess, i, d, false);
      fit(c.x, n_);
      integ.state_at(c.t, c.x.data());
    }
    c.index = static_cast<int>(i);
    c.direction = d;
  }

  /// Searches (t_a, t_b] for crossings the integrator did not report, at three points of the step; the earliest
  /// one before a reported root (or any at all, without one) is returned.
  const Crossing& search_step(const Integrator& integ, double t_a, double t_b, bool root_reported) {
    Crossing& best = best_;
    best.t = std::numeric_limits<double>::infinity();
    best.index = -1;
    best.direction = 0;
    searched_ = false;
    if (integ.locates_events_exactly() || !(t_b > t_a)) return best;
    const auto& ws = witnesses_of(mode_);
    const size_t m = ws.size();
    if (m == 0) return best;
    searched_ = true;
    // The start is the last step's end when nothing happened there (same time, state and mode).
    if (!(cache_valid_ && pa_.t == t_a && cache_mode_ == mode_)) fill_point(pa_, integ, t_a, x_.data(), m);
    // The middle of the step too, where a region witness could hide two extrema (a Filippov model's witnesses
    // and rates are cheap); the other witnesses are searched between the ends only.
    bool any_region = false;
    for (const auto& w : ws) any_region = any_region || w.bounds_region;
    if (any_region) fill_point(pm_, integ, 0.5 * (t_a + t_b), nullptr, m);
    fill_point(pb_, integ, t_b, integ.x(), m, integ.witness_values());
    const Point &a = pa_, &mid = pm_, &b = pb_;
    for (size_t i = 0; i < m; ++i) {
      Crossing& c = candidate_;
      if (any_region) {
        search_interval(integ, a, mid, i, ws[i], c);
        if (!c.found()) search_interval(integ, mid, b, i, ws[i], c);
      } else {
        search_interval(integ, a, b, i, ws[i], c);
      }
      if (!c.found()) continue;
      // A crossing at the root the integrator reports (to within its root tolerance) is that event itself.
      if (root_reported && c.t >= t_b - 200 * std::numeric_limits<double>::epsilon() * (std::abs(t_b) + (t_b - t_a)))
        continue;
      if (c.t < best.t) std::swap(best, c);  // both keep their states' storage
    }
    return best;
  }

  /// The witnesses of a mode, asked of the model once per mode for the first kCachedModes modes of the run (a
  /// Filippov model alternates between three), then once per mode change. The references stay valid while the
  /// cache fills (an array). None for a system without the witnesses facet.
  const std::vector<Witness>& witnesses_of(int mode) {
    if (!ev_) return ws_;  // stays empty
    for (std::size_t i = 0; i < n_ws_cached_; ++i)
      if (ws_cache_[i].first == mode) return ws_cache_[i].second;
    if (n_ws_cached_ < kCachedModes) {
      auto& slot = ws_cache_[n_ws_cached_++];
      slot = {mode, ev_->witnesses(mode)};
      return slot.second;
    }
    if (!ws_known_ || ws_mode_ != mode) {
      ws_ = ev_->witnesses(mode);
      ws_mode_ = mode;
      ws_known_ = true;
    }
    return ws_;
  }

  // ---- events ----------------------------------------------------------------------------------------------

  /// Handles the roots of the current mode's witnesses at t_; returns true if the run ends here. Every root
  /// belongs to the mode the step was taken in: once one event changes the mode, the remaining roots of the
  /// old mode are not applied (the new mode's witnesses are searched from the restart on).
  bool handle_roots(Integrator& integ, const std::vector<int>& roots, RunResult& res, bool must_restart) {
    const int step_mode = mode_;
    const std::vector<Witness>& witnesses = witnesses_of(step_mode);  // not refreshed within this call
    bool restart = must_restart, stop = false, state_changed = false;
    std::string stop_kind;
    for (size_t i = 0; i < roots.size() && i < witnesses.size(); ++i) {
      if (roots[i] == 0) continue;
      // After a change of mode or of the state (an impact that took several contacts at once), the other roots of
      // this step are stale: the restart's witnesses find whatever still crosses.
      if (mode_ != step_mode || state_changed) break;
      const int before = mode_;
      EventOutcome out = ev_->on_event(t_, x_.data(), step_mode, witnesses[i].name, roots[i]);
      out.terminal = out.terminal || witnesses[i].terminal;
      const std::string& kind = out.kind.empty() ? witnesses[i].name : out.kind;
      mode_ = out.new_mode;
      ++n_events_;
      summarizer_->on_event(t_, kind, before, mode_, x_.data());
      if (!obs_.empty()) {  // the record is built only for someone to read it
        EventRecord ev;
        ev.t = t_;
        ev.kind = kind;
        ev.mode_before = before;
        ev.mode_after = out.new_mode;
        ev.terminal = out.terminal;
        ev.x = x_;
        ev.extra = std::move(out.extra);
        ev_->event_details(t_, x_.data(), step_mode, witnesses[i].name, ev.extra);
        for (auto* o : obs_) o->on_event(ev);
      }
      if (mode_ != before || out.state_changed) restart = true;
      state_changed = state_changed || out.state_changed;
      if (out.terminal && !stop) {
        stop = true;
        stop_kind = kind;
      }
      if (static_cast<long>(n_events_) > opt_.max_events)
        throw SolverError("simulate", -1, "MAX_EVENTS", t_, integ.last_step_size(), sys_.mode_name(mode_),
                          "more than " + std::to_string(opt_.max_events) + " events (a Zeno accumulation?); shorten t_end");
    }
    note_instant(step_mode);
    // The event instant is a sample, with the state after the handler.
    emit_sample(t_, x_.data());
    if (stop) {
      res.termination = stop_kind;
      return true;
    }
    if (restart) {
      integ.reset(t_, x_.data(), mode_);
      steps_since_restart_ = 0;
    }
    audit(integ, "the state after an event");
    return false;
  }

  /// Guards against a mode that cannot settle at one instant (each event there found its mode's field pointing
  /// out of its region): past a few events at the same time, the run fails the audit.
  void note_instant(int mode_before) {
    const double tol = 4 * std::numeric_limits<double>::epsilon() * (std::abs(t_) + 1);
    if (!(std::abs(t_ - instant_t_) <= tol)) {
      instant_t_ = t_;
      instant_modes_.clear();
    }
    if (instant_modes_.empty()) instant_modes_.push_back(mode_before);
    instant_modes_.push_back(mode_);
    if (instant_modes_.size() > kMaxEventsPerInstant) {
      std::string modes;
      for (int m : instant_modes_) modes += (modes.empty() ? "" : " -> ") + sys_.mode_name(m);
      throw AuditError("self-audit: the mode cannot settle at t = " + number(t_) + " " + sys_.time_signal().unit +
                       ": " + std::to_string(instant_modes_.size() - 1) + " events at this instant (" + modes +
                       "), each mode's field leaving its region; forward motion is not unique here, or the "
                       "tolerances are too loose to decide (tighten solver.rtol and solver.atol)");
    }
  }

  // ---- the self-audit (docs/audit.md) --------------------------------------------------------------------

  void audit(const Integrator& integ, const char* where) {
    if (!sys_.has_modes() && !audit_energy_) return;
    fit(err_, n_);
    integ.error_scale(x_.data(), err_.data());
    if (sys_.has_modes() && ev_) {
      const RegionCheck rc = ev_->region_check(t_, x_.data(), mode_, err_.data());
      if (rc.violated())
        throw AuditError("self-audit: at t = " + number(t_) + " " + sys_.time_signal().unit + " (" + where +
                         "), mode " + sys_.mode_name(mode_) + ": the state lies outside its mode's region (rule: " +
                         rc.rule + "; excess " + number(rc.excess) + " > tolerance " + number(rc.tolerance) +
                         "); tighten solver.rtol and solver.atol, or report the scenario");
    }
    EnergyLedger e;
    if (!sys_.energy_ledger(t_, x_.data(), mode_, e)) {
      audit_energy_ = false;
      return;
    }
    audit_energy_ = true;
    ++n_audit_points_;
    const double total = e.energy + e.dissipated;
    const double rtol = opt_.solver.rtol, eps = std::numeric_limits<double>::epsilon();
    // The energy scale: the running maximum of the sum of the magnitudes of the ledger's parts (EnergyLedger::scale;
    // at least |E| + |D|). It is zero at a start at rest at zero potential, and small while T and V grow from zero.
    energy_scale_ = std::max({energy_scale_, e.scale, std::abs(e.energy) + std::abs(e.dissipated)});
    if (!ledger_started_) {
      ledger_started_ = true;
      total0_ = total;
      dissipated_max_ = e.dissipated;
      // The absolute floor, from the start: what the absolute tolerances of the states make of E + D and of D.
      update_energy_floor(integ, e);
    }
    // Dissipation: never below its running maximum by more than the integration error of D in one step
    // (rtol |D| + atol of D's state, or without a state for D, rtol times the energy scale with the absolute
    // floor under it), times kErrorFactor.
    auto tolerance_d = [&] {
      const double err_d = e.dissipated_state >= 0
                               ? err_[static_cast<size_t>(e.dissipated_state)]
                               : std::max(rtol * std::max(std::abs(e.dissipated), energy_scale_), dissipated_floor_);
      return kErrorFactor * (err_d + eps * energy_scale_);
    };
    double tol_d = tolerance_d();
    if (e.dissipated < dissipated_max_ - tol_d && update_energy_floor(integ, e)) tol_d = tolerance_d();
    if (e.dissipated < dissipated_max_ - tol_d)
      throw AuditError("self-audit: at t = " + number(t_) + " " + sys_.time_signal().unit + " (" + where + "), mode " +
                       sys_.mode_name(mode_) + ": the dissipated energy decreased from " + number(dissipated_max_) +
                       " to " + number(e.dissipated) + " (tolerance " + number(tol_d) +
                       "): a field is being integrated outside its region; tighten solver.rtol and solver.atol, "
                       "or report the scenario");
    dissipated_max_ = std::max(dissipated_max_, e.dissipated);
    // Balance: E + D is conserved up to the local errors summed over the steps taken: kErrorFactor times, per step,
    // the larger of (rtol + eps) times the energy scale and the absolute floor.
    auto tolerance_b = [&] {
      return kErrorFactor * std::max((rtol + eps) * energy_scale_, energy_floor_) *
             static_cast<double>(n_audit_points_);
    };
    double tol_b = tolerance_b();
    const double imbalance = std::abs(total - total0_);
    if (imbalance > tol_b && update_energy_floor(integ, e)) tol_b = tolerance_b();
    worst_balance_ratio_ = std::max(worst_balance_ratio_, tol_b > 0 ? imbalance / tol_b : imbalance > 0 ? INFINITY : 0.0);
    if (imbalance > tol_b)
      throw AuditError("self-audit: at t = " + number(t_) + " " + sys_.time_signal().unit + " (" + where + "), mode " +
                       sys_.mode_name(mode_) + ": the energy balance E + D = const is off by " + number(imbalance) +
                       " (tolerance " + number(tol_b) + " after " + std::to_string(n_audit_points_) +
                       " steps; energy scale " + number(energy_scale_) + ", absolute floor " + number(energy_floor_) +
                       "); tighten solver.rtol and solver.atol");
  }

  /// The absolute floor of the energy tolerances at the current state (docs/audit.md): sum over the states of
  /// |d(E + D)/dx_k| atol_k (and of |dD/dx_k| atol_k), by forward differences of the ledger, atol_k the
  /// integrator's absolute tolerance of state k (its error scale at x = 0). Kept as the running maximum of the
  /// states it was evaluated at: the start, and every check that fails without it. Returns whether it grew.
  bool update_energy_floor(const Integrator& integ, const EnergyLedger& e) {
    if (atol_.empty()) {
      const std::vector<double> zero(n_, 0.0);
      atol_.resize(n_);
      integ.error_scale(zero.data(), atol_.data());
    }
    std::vector<double>& xp = floor_x_;
    xp = x_;
    const double total = e.energy + e.dissipated;
    double f_total = 0, f_d = 0;
    for (size_t k = 0; k < n_; ++k) {
      const double dx = 1e-7 * std::max(1.0, std::abs(x_[k]));
      xp[k] = x_[k] + dx;
      EnergyLedger ep;
      // A displaced state the model cannot be evaluated at (rows that vanish at x_ and disagree beside it) adds
      // nothing: the floor is then smaller and the audit stricter, never looser.
      bool ok = false;
      try {
        ok = sys_.energy_ledger(t_, xp.data(), mode_, ep);
      } catch (const SolverError&) {
      }
      xp[k] = x_[k];
      if (!ok) continue;
      const double g_total = (ep.energy + ep.dissipated - total) / dx, g_d = (ep.dissipated - e.dissipated) / dx;
      if (std::isfinite(g_total)) f_total += std::abs(g_total) * atol_[k];
      if (std::isfinite(g_d)) f_d += std::abs(g_d) * atol_[k];
    }
    const bool grew = f_total > energy_floor_ || f_d > dissipated_floor_;
    energy_floor_ = std::max(energy_floor_, f_total);
    dissipated_floor_ = std::max(dissipated_floor_, f_d);
    return grew;
  }

  static constexpr size_t kMaxEventsPerInstant = 6;
  static constexpr double kErrorFactor = 10;

  const HybridSystem& sys_;
  const WitnessSystem* ev_;  ///< the system's witnesses facet; nullptr: no witnesses, no events
  const SimulationOptions& opt_;
  const std::vector<Observer*>& obs_;
  SolverWorkspace* workspace_;
  size_t n_;
  std::vector<double> x_, y_, scratch_ = std::vector<double>(n_), err_;
  // Scratch of the step search, sized once: searching a step does not allocate.
  mutable std::vector<double> xdot_scratch_, xe_scratch_, err_scratch_, bisect_x_, bisect_g_;
  Crossing best_, candidate_;        ///< a step's search: the earliest crossing, and the witness's being searched
  std::vector<int> missed_roots_;  ///< the roots of a crossing the search found
  std::unique_ptr<Summarizer> summarizer_;
  bool summary_reads_outputs_ = true;  ///< the summarizer reads the outputs (Summarizer::reads_outputs)
  std::vector<std::size_t> summary_columns_;  ///< the only outputs computed (outputs_at); empty: all of them
  int mode_ = 0;
  double t_ = 0, last_sample_t_ = -INFINITY;
  long next_k_ = 1;
  bool samples_read_ = true;  ///< whether anyone reads the grid's samples (an observer, or the summarizer)
  size_t n_samples_ = 0, n_events_ = 0;
  long n_located_ = 0, steps_since_restart_ = 0;
  // The search's points: the step's start, middle and end; the end becomes the next start (cache_valid_).
  Point pa_, pm_, pb_;
  bool cache_valid_ = false, searched_ = false;
  static constexpr std::size_t kCachedModes = 16;
  std::array<std::pair<int, std::vector<Witness>>, kCachedModes> ws_cache_;
  std::size_t n_ws_cached_ = 0;
  std::vector<Witness> ws_;
  int ws_mode_ = 0;
  bool ws_known_ = false;
  int cache_mode_ = 0;
  // The same-instant guard.
  double instant_t_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<int> instant_modes_;
  // The energy ledger.
  bool audit_energy_ = true, ledger_started_ = false;
  double total0_ = 0, dissipated_max_ = 0, energy_scale_ = 0;
  // The absolute floor of the energy tolerances (update_energy_floor), and its scratch.
  double energy_floor_ = 0, dissipated_floor_ = 0;
  std::vector<double> atol_, floor_x_;
  long n_audit_points_ = 0;
  double worst_balance_ratio_ = 0;
};

}  // namespace

RunResult simulate(const HybridSystem& system, std::span<const double> initial_state, const SimulationOptions& options,
                   const std::vector<Observer*>& observers, SolverWorkspace* workspace) {
  if (initial_state.size() != system.size())
    throw std::invalid_argument("simulate: an initial state of " + std::to_string(initial_state.size()) +
                                " values for the " + std::to_string(system.size()) + " states of " + system.model_name());
  Loop loop(system, initial_state, options, observers, workspace);
  return loop.run();
}

std::vector<std::string> summary_keys(const HybridSystem& system) {
  std::vector<std::string> keys;
  if (const auto summarizer = system.make_summarizer()) {
    for (const auto& it : summarizer->items()) keys.push_back(it.key);
    for (auto& k : summarizer->conditional_keys()) keys.push_back(std::move(k));
  }
  // The loop's own, as run() reports them: the verdict where there are modes or an energy ledger, the balance's use
  // where there is a ledger (asked at the initial state, as the run's first audit does).
  std::vector<double> x0(system.size());
  system.initial_state(x0.data());
  EnergyLedger e;
  const bool ledger = system.energy_ledger(0, x0.data(), system.initial_mode(x0.data()), e);
  if (system.has_modes() || ledger) keys.emplace_back(kLoopSummaryKeys[0]);
  if (ledger) keys.emplace_back(kLoopSummaryKeys[1]);
  return keys;
}

RunResult simulate(const HybridSystem& system, const SimulationOptions& options, const std::vector<Observer*>& observers) {
  std::vector<double> x0(system.size());
  system.initial_state(x0.data());
  return simulate(system, x0, options, observers);
}

}  // namespace rollsim
