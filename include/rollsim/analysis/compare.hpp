#pragma once
/// \file Comparing two runs of the same scenario (e.g. the ODE and the DAE formulation): an in-memory
/// recorder observer, and the largest differences in states, forces and event times.
#include <map>
#include <string>
#include <vector>

#include "rollsim/scenario/parameters.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/observer.hpp"

namespace rollsim {

/// Keeps every sample and event of a run in memory, columns by signal name.
class Recorder final : public Observer {
 public:
  void on_start(const RunInfo& info) override;
  void on_sample(double t, const double* x, const double* y, int mode) override;
  void on_event(const EventRecord& e) override { events.push_back(e); }
  void on_finish(const RunResult& r) override { result = r; }

  /// The column of a state or output signal (empty if the run has no such signal).
  const std::vector<double>& column(const std::string& name) const;
  bool has(const std::string& name) const { return columns.count(name) != 0; }

  std::vector<double> time;
  std::map<std::string, std::vector<double>> columns;
  std::vector<std::string> state_names, output_names;
  std::map<std::string, std::string> units;
  std::map<std::string, std::string> descriptions;  ///< each signal's description (it says where a signal is NaN)
  std::vector<EventRecord> events;
  RunResult result;
};

struct CompareTolerances {
  double state = 1e-7;       ///< the ODE's states (e.g. theta1, theta2, omega1, omega2: rad, rad/s)
  double force = 1e-6;       ///< outputs with unit N [N]
  double event_time = 1e-8;  ///< [s]
};

/// The largest difference of one signal over the common sample times. A state of run a is compared with the
/// signal of the same name in run b, a state or an output there (the DAE reports the minimal coordinates of
/// the carriage pendulum as outputs). A signal may be undefined (NaN) at a sample, as its description says (the
/// friction demand |T|/N where N <= 0): NaN in both runs is no difference (both say "undefined"), and is counted;
/// NaN in one run only is an infinite difference.
struct SignalDifference {
  std::string name, unit;
  std::string description;  ///< run a's description of the signal
  double max_abs = 0;       ///< over the samples where both runs define the signal (+inf: one run only defines it)
  double at_t = 0;
  std::size_t undefined_both = 0;  ///< samples where the signal is NaN in both runs
  std::size_t undefined_one = 0;   ///< samples where it is NaN in one run only
  double undefined_from = 0, undefined_to = 0;  ///< the first and last time of those samples
};

struct EventDifference {
  std::string kind;
  double t_a = 0, t_b = 0;
};

struct Comparison {
  std::vector<SignalDifference> states;   ///< states present in both runs under the same name
  std::vector<SignalDifference> forces;   ///< outputs in N present in both
  std::vector<SignalDifference> others;   ///< other common outputs (reported, not judged)
  std::vector<EventDifference> events;    ///< matched in order of occurrence
  std::size_t n_common_samples = 0;
  double max_state = 0, max_force = 0, max_event_time = 0;
  std::string worst_state, worst_force, worst_event;
  std::vector<std::string> problems;  ///< what breaks the tolerances, one line each
  bool passed = false;
};

/// Compare run b against run a at the sample times they share (equal to 1e-12 s relative; event
/// instants sampled at slightly different times are left out), and their events in order.
Comparison compare_runs(const Recorder& a, const Recorder& b, const CompareTolerances& tol);

/// The [check] keys of a model with an ODE and a DAE formulation, bound to CompareTolerances (its default member
/// initializers are the keys' defaults); read(scenario) gives a check's tolerances.
const Parameters<CompareTolerances>& formulation_check_parameters();
/// The [check] keys of a schema: formulation_check_parameters().keys().
std::vector<KeySpec> formulation_check_keys();

/// Both formulations of one scenario, run and compared.
struct FormulationCheck {
  Recorder ode, dae;
  CompareTolerances tol;  ///< from the scenario's [check] keys
  Comparison comparison;  ///< dae against ode
};

/// The two scenarios a formulation check runs: the scenario loaded with formulation = "ode" (its own solver
/// settings) and with formulation = "dae" (solver.method = "bdf", IDA).
struct FormulationScenarios {
  Scenario ode, dae;
};

// Loading both scenarios and running them (the registry's work) is app/formulations.hpp.

}  // namespace rollsim
