// A program outside rollsim that uses it as a library: it loads a tipping-table scenario, lets the run go on
// past lift-off (events.lift_off = "record"), records the events through an Observer, and prints the time at
// which the wheel reaches the table edge.
//
//   usage: rollsim_consumer SCENARIO.toml
//
// Exit codes follow rollsim's: 0 the edge time was printed; 1 the run ended without reaching the edge;
// 2 bad input; 3 the solver failed (or the run could not vouch for its result); 4 a file could not be read;
// 70 anything else.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "rollsim/core/error.hpp"
// Only matters in a LeakSanitizer build: CLN (under GiNaC) keeps one allocation of its static initialisation.
#include "rollsim/core/lsan_suppressions.hpp"
#include "rollsim/core/version.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"

namespace {

/// Keeps the events of a run; the samples are not needed here.
class EventLog final : public rollsim::Observer {
 public:
  std::vector<rollsim::EventRecord> events;
  void on_sample(double, const double*, const double*, int) override {}
  void on_event(const rollsim::EventRecord& e) override { events.push_back(e); }
};

int run(const std::string& path) {
  using namespace rollsim;
  const Scenario scenario = load_scenario(path, {"events.lift_off=record"});
  const auto system = build_system(scenario);
  EventLog log;
  const RunResult result = simulate(*system, simulation_options(scenario), {&log});
  if (!result.completed()) {
    std::fprintf(stderr, "rollsim_consumer: the run did not complete (%s): %s\n", result.status.c_str(),
                 result.message.c_str());
    return kExitSolver;
  }
  for (const EventRecord& e : log.events)
    if (e.kind == "table_edge") {
      std::printf("table_edge t = %.12f s\n", e.t);
      return kExitOk;
    }
  std::fprintf(stderr, "rollsim_consumer: the run ended at t = %.12g s (%s) without reaching the table edge\n",
               result.t_final, result.termination.c_str());
  return kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rollsim;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENARIO.toml   (built against rollsim %s)\n", argv[0], kSoftwareVersion);
    return kExitInput;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    // Loading reports bad input (InputError, with file:line:column) and an unreadable file (IoError); a solver
    // failure comes back in the RunResult instead.
    std::fprintf(stderr, "rollsim_consumer: %s\n", e.what());
    if (dynamic_cast<const InputError*>(&e)) return kExitInput;
    if (dynamic_cast<const IoError*>(&e)) return kExitIo;
    return kExitInternal;
  }
}
