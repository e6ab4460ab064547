#include "rollsim/models/registry.hpp"

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

const ModelEntry* find_model(const std::string& name) {
  for (const auto& m : models())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<KeySpec> common_keys() {
  auto real = [](std::string path, double def, double lo, bool lo_open, double hi, bool hi_open, std::string unit,
                 std::string desc) {
    KeySpec k;
    k.path = std::move(path);
    k.kind = Kind::Real;
    k.def = def;
    k.lo = lo;
    k.lo_open = lo_open;
    k.hi = hi;
    k.hi_open = hi_open;
    k.unit = std::move(unit);
    k.description = std::move(desc);
    return k;
  };
  std::vector<KeySpec> v{
      real("simulation.t_end", 10.0, 0, true, 1e308, false, "s", "end time"),
      real("simulation.output_dt", 1e-3, 0, true, 1e308, false, "s", "sample spacing"),
      real("solver.rtol", 1e-10, 0, true, 1, true, "1", "relative tolerance"),
      real("solver.atol", 1e-12, 0, true, 1e308, false, "state units", "absolute tolerance"),
  };
  KeySpec method;
  method.path = "solver.method";
  method.kind = Kind::String;
  method.def = std::string("adams");
  method.choices = {"adams", "bdf", "erk"};
  method.description = "CVODE Adams or BDF, or ARKODE explicit Runge-Kutta of order 8 (erk)";
  v.push_back(method);
  KeySpec steps;
  steps.path = "solver.max_steps";
  steps.kind = Kind::Integer;
  steps.def = 1000000LL;
  steps.lo = 1;
  steps.hi = 1e12;
  steps.description = "internal steps allowed for the whole run";
  v.push_back(steps);
  KeySpec file;
  file.path = "output.file";
  file.kind = Kind::String;
  file.def = std::string("");
  file.description = "HDF5 result file; default: the scenario's name with .h5, in the working directory";
  v.push_back(file);
  return v;
}

}  // namespace rollsim
