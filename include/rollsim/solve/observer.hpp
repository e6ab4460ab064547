#pragma once
/// \file One observer interface for what a run produces: the HDF5 writer, the progress bar and the test
/// recorders all receive the same calls from the simulate loop (the terminal summary is printed from the
/// RunResult afterwards).
#include <map>
#include <string>
#include <vector>

#include "rollsim/hybrid/integrator.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim {

struct RunInfo {
  const HybridSystem* system = nullptr;
  double t0 = 0, t_end = 0;
  double output_dt = 0;  ///< the samples' spacing (simulation.output_dt)
};

struct EventRecord {
  double t = 0;
  std::string kind;
  int mode_before = 0, mode_after = 0;
  bool terminal = false;
  std::vector<double> x;  ///< the state after the event handler (projected, if it projects)
  std::map<std::string, double> extra;
};

struct RunResult {
  std::string status = "ok";       ///< ok | solver_failure | audit_failure | interrupted (io_error: set by the writer)
  std::string termination;         ///< t_end, or the name of the terminal event, or the failure
  std::string message;             ///< the failure message, if any
  double t_final = 0;
  std::string time_unit = "s";     ///< "s", or "1" for a dimensionless time
  int final_mode = 0;
  std::vector<double> x_final;
  std::size_t n_samples = 0, n_events = 0;
  SolverStats stats;
  std::vector<SummaryItem> summary;
  bool completed() const { return status == "ok"; }
};

/// The numeric columns of an event row, declared once for every writer (/events of a run, /points/N/events of
/// a sweep): time, mode_before, mode_after, the state after the event, the outputs after it (named as in
/// /trajectory; a name a state already has gets the prefix "output_"), and the model's extra values. The event
/// kind is a string column besides these.
struct EventColumn {
  Signal signal;
  bool integer = false;  ///< the modes
};
std::vector<EventColumn> event_columns(const HybridSystem& sys);
/// The values of event_columns() for one event. \param row out, resized to event_columns().size().
void event_row(const HybridSystem& sys, const EventRecord& ev, std::vector<double>& row);

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_start(const RunInfo&) {}
  /// A sample: t, the state and the outputs.
  virtual void on_sample(double t, const double* x, const double* y, int mode) = 0;
  virtual void on_event(const EventRecord&) {}
  virtual void on_finish(const RunResult&) {}
};

}  // namespace rollsim
