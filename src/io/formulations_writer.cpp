#include "rollsim/io/formulations_writer.hpp"

#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/result_file.hpp"

namespace rollsim {

namespace {

/// One row per compared signal: its kind (state, force, other), name, unit, largest |DAE - ODE| and where.
void write_signals(hid_t parent, const Comparison& c) {
  std::vector<std::string> kind, name, unit;
  std::vector<double> diff, at;
  std::vector<long long> nan_both, nan_one;
  for (const auto& [k, rows] : {std::pair{"state", &c.states}, {"force", &c.forces}, {"other", &c.others}})
    for (const auto& d : *rows) {
      kind.push_back(k);
      name.push_back(d.name);
      unit.push_back(d.unit);
      diff.push_back(d.max_abs);
      at.push_back(d.at_t);
      nan_both.push_back(static_cast<long long>(d.undefined_both));
      nan_one.push_back(static_cast<long long>(d.undefined_one));
    }
  h5::Handle g = h5::create_group(parent, "signals");
  const hid_t id = g.get();
  h5::write_strings(id, "kind", kind, "state (judged against state_tol), force (force_tol) or other (not judged)");
  h5::write_strings(id, "name", name, "signal: a state of the ODE, a state or output of the same name in the DAE");
  h5::write_strings(id, "unit", unit, "unit of the signal and of its difference");
  h5::write_vector(id, "max_abs_difference", diff, "",
                   "largest |DAE - ODE| over the common samples where both runs define the signal (+inf where one run "
                   "only does), in the unit of dataset unit");
  h5::write_vector(id, "at_time", at, "s", "time of the largest difference");
  h5::write_ints(id, "undefined_both", nan_both,
                 "common samples where the signal is NaN in both runs (undefined there, as its description says): "
                 "left out of the difference");
  h5::write_ints(id, "undefined_one", nan_one, "common samples where the signal is NaN in one run only");
}

}  // namespace

void write_formulations(hid_t root, const FormulationCheck& fc) {
  const Comparison& c = fc.comparison;
  h5::Handle gr = h5::create_group(root, "formulations");
  const hid_t id = gr.get();
  h5::write_attr(id, "passed", c.passed ? 1LL : 0LL);
  h5::write_attr(id, "n_common_samples", static_cast<long long>(c.n_common_samples));

  // The judged quantities: the largest difference of each kind next to its tolerance, a [check] key whose
  // unit the schema states.
  const std::vector<double> largest{c.max_state, c.max_force, c.max_event_time};
  const std::vector<double> tolerance{fc.tol.state, fc.tol.force, fc.tol.event_time};
  std::vector<std::string> key, unit;
  std::vector<long long> within;
  for (const auto& k : formulation_check_keys()) {
    key.push_back(k.path);
    unit.push_back(k.unit);
  }
  for (std::size_t i = 0; i < largest.size(); ++i) within.push_back(largest[i] <= tolerance[i] ? 1 : 0);
  h5::write_strings(id, "quantity", {"state", "force", "event_time"}, "what is judged");
  h5::write_vector(id, "largest", largest, "", "largest |DAE - ODE| of the quantity, in its unit (dataset unit)");
  h5::write_strings(id, "worst", {c.worst_state, c.worst_force, c.worst_event},
                    "the signal (state, force) or event kind of the largest difference");
  h5::write_vector(id, "tolerance", tolerance, "", "the scenario's [check] key (dataset key), in its unit");
  h5::write_strings(id, "key", key, "the scenario key of the tolerance");
  h5::write_strings(id, "unit", unit, "unit of largest and tolerance");
  h5::write_ints(id, "within", within, "1 if largest <= tolerance");
  h5::write_strings(id, "problems", c.problems, "what breaks the check, one line each (empty: passed)");

  write_signals(id, c);

  std::vector<std::string> kind;
  std::vector<double> t_ode, t_dae, d;
  for (const auto& e : c.events) {
    kind.push_back(e.kind);
    t_ode.push_back(e.t_a);
    t_dae.push_back(e.t_b);
    d.push_back(e.t_b - e.t_a);
  }
  h5::Handle ev = h5::create_group(id, "events");
  h5::write_strings(ev.get(), "kind", kind, "event kind, matched in order of occurrence");
  h5::write_vector(ev.get(), "time_ode", t_ode, "s", "event time in the ODE run");
  h5::write_vector(ev.get(), "time_dae", t_dae, "s", "event time in the DAE run");
  h5::write_vector(ev.get(), "difference", d, "s", "time_dae - time_ode");

  // Each run's /summary and /solver, as a run's result file has them.
  for (const auto& [name, run] : {std::pair{"ode", &fc.ode}, {"dae", &fc.dae}}) {
    h5::Handle g = h5::create_group(id, name);
    write_summary(g.get(), run->result);
  }
}

}  // namespace rollsim
