#include <cmath>

#include "rollsim/solve/observer.hpp"

namespace rollsim {

std::vector<EventColumn> event_columns(const HybridSystem& sys) {
  const Signal ts = sys.time_signal();
  std::vector<EventColumn> ev{{Signal{"time", ts.unit, "event time"}.as(Role::Time), false},
                              {Signal{"mode_before", "1", "mode before the event"}.as(Role::Mode), true},
                              {Signal{"mode_after", "1", "mode after the event"}.as(Role::Mode), true}};
  // Each column keeps its signal's role (a state without one is a state), so that a reader finds the ledger and the
  // contact quantities at the events as in the trajectory.
  auto at_event = [](const Signal& s, Role plain, const std::string& when) {
    Signal e = s;
    e.description += when;
    if (e.role == Role::Plain) e.role = plain;
    return e;
  };
  for (const auto& s : sys.states()) ev.push_back({at_event(s, Role::State, " at the event"), false});
  // build_system refuses an output named like a state or a table column, so every name here is its own.
  for (const auto& s : sys.outputs()) ev.push_back({at_event(s, Role::Output, " at the event (after it)"), false});
  for (const auto& e : sys.event_extras())
    ev.push_back({Signal{e, "", e + " at the event"}.as(Role::EventValue), false});
  return ev;
}

void event_row(const HybridSystem& sys, const EventRecord& ev, std::vector<double>& row) {
  const std::size_t n = sys.states().size(), m = sys.outputs().size();
  const auto extras = sys.event_extras();
  row.assign(3 + n + m + extras.size(), 0.0);
  row[0] = ev.t;
  row[1] = ev.mode_before;
  row[2] = ev.mode_after;
  std::copy(ev.x.begin(), ev.x.end(), row.begin() + 3);
  if (m) sys.compute_outputs(ev.t, ev.x.data(), ev.mode_after, row.data() + 3 + n);
  for (std::size_t k = 0; k < extras.size(); ++k) {
    auto it = ev.extra.find(extras[k]);
    row[3 + n + m + k] = it == ev.extra.end() ? NAN : it->second;
  }
}

}  // namespace rollsim
