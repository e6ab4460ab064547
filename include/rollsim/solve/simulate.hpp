#pragma once
/// \file The event loop: integrate, sample on a fixed grid from dense output, locate witnesses, let the
/// system handle each event, restart when the mode or the state changed, and tell the observers.
#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/solve/integrator.hpp"
#include "rollsim/solve/observer.hpp"

namespace rollsim {

struct SimulationOptions {
  double t0 = 0;
  double t_end = 10;
  double output_dt = 1e-3;  ///< sample spacing; samples at t0 + k output_dt, plus event instants and t_final
  SolverOptions solver;
  long max_events = 1000000;  ///< a run stops with an error past this many events (a guard against Zeno)
  /// The summary items to report, by key, in this order (a sweep's `summary` list): the others are left out of
  /// RunResult::summary, and what only they need is not computed. Unset: every item. Keys come from summary_keys.
  std::optional<std::vector<std::string>> summary;
};

/// The keys a run of `system` reports in its summary: its summarizer's items, then the loop's own
/// (kLoopSummaryKeys) where its self-audit applies (modes, or an energy ledger at the initial state).
std::vector<std::string> summary_keys(const HybridSystem& system);

/// Set by a SIGINT/SIGTERM handler: the loop ends at the next step and keeps its data.
std::atomic<bool>& interrupt_flag();

/// Run one simulation. Solver failures and interrupts do not throw: they come back in the result (status,
/// message), after on_finish has been called, so that observers keep what was computed. Errors raised by
/// observers (I/O) propagate.
/// The run starts at `initial_state` (dim system.size(); its mode from system.initial_mode), so that one system
/// serves many starts; a span of another size is a caller's defect (std::invalid_argument). With a `workspace`
/// the integrator comes from it and goes back to it after a completed run (a thread's runs share solver memory).
RunResult simulate(const HybridSystem& system, std::span<const double> initial_state, const SimulationOptions& options,
                   const std::vector<Observer*>& observers, SolverWorkspace* workspace = nullptr);
/// The same, from the system's own initial state.
RunResult simulate(const HybridSystem& system, const SimulationOptions& options,
                   const std::vector<Observer*>& observers);

}  // namespace rollsim
