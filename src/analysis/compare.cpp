#include "rollsim/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "rollsim/core/error.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

void Recorder::on_start(const RunInfo& info) {
  time.clear();
  columns.clear();
  events.clear();
  state_names.clear();
  output_names.clear();
  for (const auto& s : info.system->states()) {
    state_names.push_back(s.name);
    units[s.name] = s.unit;
    descriptions[s.name] = s.description;
    columns[s.name];
  }
  for (const auto& s : info.system->outputs()) {
    output_names.push_back(s.name);
    units[s.name] = s.unit;
    descriptions[s.name] = s.description;
    columns[s.name];
  }
}

void Recorder::on_sample(double t, const double* x, const double* y, int) {
  time.push_back(t);
  for (size_t i = 0; i < state_names.size(); ++i) columns[state_names[i]].push_back(x[i]);
  for (size_t i = 0; i < output_names.size(); ++i) columns[output_names[i]].push_back(y[i]);
}

const std::vector<double>& Recorder::column(const std::string& name) const {
  static const std::vector<double> empty;
  const auto it = columns.find(name);
  return it == columns.end() ? empty : it->second;
}

namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(3);
  os << std::scientific << v;
  return os.str();
}

}  // namespace

Comparison compare_runs(const Recorder& a, const Recorder& b, const CompareTolerances& tol) {
  Comparison c;
  // Pairs of sample indices at the same time (both sample lists are increasing).
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0, j = 0; i < a.time.size() && j < b.time.size();) {
    const double ta = a.time[i], tb = b.time[j];
    const double eps = 1e-12 * std::max(1.0, std::abs(ta));
    if (std::abs(ta - tb) <= eps) {
      // Several samples may share a time (an event instant): pair the last of each.
      if (i + 1 < a.time.size() && std::abs(a.time[i + 1] - ta) <= eps) {
        ++i;
        continue;
      }
      if (j + 1 < b.time.size() && std::abs(b.time[j + 1] - tb) <= eps) {
        ++j;
        continue;
      }
      pairs.emplace_back(i++, j++);
    } else if (ta < tb) {
      ++i;
    } else {
      ++j;
    }
  }
  c.n_common_samples = pairs.size();

  auto diff = [&](const std::string& name) {
    SignalDifference d;
    d.name = name;
    d.unit = a.units.count(name) ? a.units.at(name) : "";
    d.description = a.descriptions.count(name) ? a.descriptions.at(name) : "";
    const auto& ca = a.column(name);
    const auto& cb = b.column(name);
    for (const auto& [i, j] : pairs) {
      const bool nan_a = std::isnan(ca[i]), nan_b = std::isnan(cb[j]);
      if (nan_a || nan_b) {
        if (d.undefined_both + d.undefined_one == 0) d.undefined_from = a.time[i];
        d.undefined_to = a.time[i];
        ++(nan_a && nan_b ? d.undefined_both : d.undefined_one);
        if (nan_a != nan_b && d.max_abs < INFINITY) {  // defined in one run only: an infinite difference
          d.max_abs = INFINITY;
          d.at_t = a.time[i];
        }
        continue;
      }
      const double e = std::abs(ca[i] - cb[j]);
      if (e > d.max_abs) {
        d.max_abs = e;
        d.at_t = a.time[i];
      }
    }
    return d;
  };
  for (const auto& name : a.state_names)
    if (b.has(name)) c.states.push_back(diff(name));  // a state of a, as a state or an output of b
  for (const auto& name : a.output_names) {
    if (!b.has(name)) continue;
    if (a.units.at(name) == "N")
      c.forces.push_back(diff(name));
    else
      c.others.push_back(diff(name));
  }
  // A judged signal is defined wherever both runs have a sample: NaN in both would otherwise pass unseen.
  for (const auto* rows : {&c.states, &c.forces})
    for (const auto& d : *rows)
      if (d.undefined_both > 0)
        c.problems.push_back(d.name + " is NaN in both runs at " + std::to_string(d.undefined_both) + " samples");
  for (const auto& d : c.states)
    if (d.max_abs >= c.max_state) {
      c.max_state = d.max_abs;
      c.worst_state = d.name;
    }
  for (const auto& d : c.forces)
    if (d.max_abs >= c.max_force) {
      c.max_force = d.max_abs;
      c.worst_force = d.name;
    }

  const size_t ne = std::min(a.events.size(), b.events.size());
  for (size_t k = 0; k < ne; ++k) {
    EventDifference e{a.events[k].kind, a.events[k].t, b.events[k].t};
    if (a.events[k].kind != b.events[k].kind)
      c.problems.push_back("event " + std::to_string(k + 1) + " is " + a.events[k].kind + " in the first run but " +
                           b.events[k].kind + " in the second");
    const double dt = std::abs(e.t_a - e.t_b);
    if (dt >= c.max_event_time) {
      c.max_event_time = dt;
      c.worst_event = e.kind;
    }
    c.events.push_back(e);
  }
  if (a.events.size() != b.events.size())
    c.problems.push_back("the runs have " + std::to_string(a.events.size()) + " and " + std::to_string(b.events.size()) +
                         " events");
  if (pairs.empty()) c.problems.push_back("the runs share no sample times");
  if (c.states.empty()) c.problems.push_back("the runs share no state signals");
  if (c.max_state > tol.state)
    c.problems.push_back("state " + c.worst_state + " differs by " + fmt(c.max_state) + " > state_tol " + fmt(tol.state));
  if (c.max_force > tol.force)
    c.problems.push_back("force " + c.worst_force + " differs by " + fmt(c.max_force) + " > force_tol " + fmt(tol.force));
  if (c.max_event_time > tol.event_time)
    c.problems.push_back("event " + c.worst_event + " time differs by " + fmt(c.max_event_time) + " s > event_time_tol " +
                         fmt(tol.event_time));
  c.passed = c.problems.empty();
  return c;
}

const Parameters<CompareTolerances>& formulation_check_parameters() {
  using O = CompareTolerances;
  static const Parameters<O> list{
      "[check] keys",
      {
          param(&O::state,
                real_key("check.state_tol", "state units",
                         "rollsim check formulations: largest allowed difference of the ODE's states between ODE and DAE")
                    .positive()),
          param(&O::force, real_key("check.force_tol", "N",
                                    "rollsim check formulations: largest allowed difference of a force output")
                               .positive()),
          param(&O::event_time, real_key("check.event_time_tol", "s",
                                         "rollsim check formulations: largest allowed event time difference")
                                    .positive()),
      }};
  return list;
}

std::vector<KeySpec> formulation_check_keys() { return formulation_check_parameters().keys(); }

}  // namespace rollsim
