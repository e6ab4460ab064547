#pragma once
// Helpers of the contact tests: signals by name, events by kind and their extras, the shipped scenarios' text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support.hpp"

namespace rollsim::test {


/// A number as the text that reads back as the same double.
inline std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// The value of a signal (a state first, else an output) of a system, by name.
struct SignalLookup {
  std::vector<std::string> states, outputs;
  explicit SignalLookup(const Scenario& sc) {
    auto sys = build_system(sc);
    for (const auto& s : sys->states()) states.push_back(s.name);
    for (const auto& s : sys->outputs()) outputs.push_back(s.name);
  }
  long state_index(const std::string& name) const {
    for (std::size_t i = 0; i < states.size(); ++i)
      if (states[i] == name) return static_cast<long>(i);
    return -1;
  }
  bool has(const std::string& name) const {
    return state_index(name) >= 0 || std::find(outputs.begin(), outputs.end(), name) != outputs.end();
  }
  /// At sample k of a run.
  double at(const Run& r, std::size_t k, const std::string& name) const {
    if (const long i = state_index(name); i >= 0) return r.rec.x[k][static_cast<std::size_t>(i)];
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i] == name) return r.rec.y[k][i];
    FAIL("no signal " << name);
    return NAN;
  }
  /// A state after an event.
  double after(const EventRecord& e, const std::string& name) const {
    const long i = state_index(name);
    REQUIRE_MESSAGE(i >= 0, "no state " << name);
    return e.x[static_cast<std::size_t>(i)];
  }
};

inline std::vector<const EventRecord*> events_of(const Run& r, const std::string& kind) {
  std::vector<const EventRecord*> out;
  for (const auto& e : r.rec.events)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

inline double extra(const EventRecord& e, const std::string& key) {
  const auto it = e.extra.find(key);
  REQUIRE_MESSAGE(it != e.extra.end(), "event " << e.kind << " at t = " << e.t << " has no extra " << key);
  return it->second;
}

}  // namespace rollsim::test
