#include "rollsim/models/registry.hpp"

#include <cmath>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/system.hpp"

#include "rollsim/models/carriage_pendulum.hpp"
#include "rollsim/models/relay_feedback.hpp"
#include "rollsim/models/rolling_disk.hpp"
#include "rollsim/models/tipping_table_system.hpp"

namespace rollsim {

const std::vector<ModelEntry>& models() {
  static const std::vector<ModelEntry> list{
      tipping_table::model_entry(),
      carriage_pendulum::model_entry(),
      rolling_disk::model_entry(),
      relay_feedback::model_entry(),
  };
  return list;
}

std::unique_ptr<HybridSystem> build_system(const Scenario& sc) {
  const ModelEntry* model = find_model(sc.model);
  if (!model) throw InputError(sc.origin("model"), "unknown model \"" + sc.model + "\"");
  auto system = model->make_system(sc);
  std::vector<double> x0(system->size());
  system->initial_state(x0.data());
  for (std::size_t i = 0; i < x0.size(); ++i)
    if (!std::isfinite(x0[i])) {
      std::string key;
      for (const auto& [k, e] : sc.values)
        if (k.rfind("initial.", 0) == 0 && !e.defaulted && key.empty()) key = k;
      throw InputError(key.empty() ? Origin{sc.path, 0, 0} : sc.origin(key),
                       "the initial state is not finite (" + system->states()[i].name + " = " +
                           std::to_string(x0[i]) + "): the parameters or the initial values overflow double precision");
    }
  return system;
}

const ModelEntry* find_model(const std::string& name) {
  for (const auto& m : models())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<KeySpec> common_keys() {
  return {
      real_key("simulation.t_end", "s", "end time").with_default(10.0).positive(),
      real_key("simulation.output_dt", "s", "sample spacing").with_default(1e-3).positive(),
      real_key("solver.rtol", "1", "relative tolerance").with_default(1e-10).range(0, 1, true, true),
      real_key("solver.atol", "state units", "absolute tolerance").with_default(1e-12).positive(),
      string_key("solver.method", "adams", {"adams", "bdf", "erk"},
                 "CVODE Adams or BDF, or ARKODE explicit Runge-Kutta of order 8 (erk)"),
      integer_key("solver.max_steps", 1000000, "internal steps allowed for the whole run").range(1, 1e12),
      string_key("output.file", "", {},
                 "HDF5 result file; default: the scenario's name with .h5, in the working directory"),
  };
}

}  // namespace rollsim
