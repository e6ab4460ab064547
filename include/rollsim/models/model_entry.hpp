#pragma once
/// \file What a model contributes to the program: its name, its scenario schema and how to build a runnable
/// system from a validated scenario. Each model offers its entry (model_entry()); the list of them is the
/// registry (app/registry.hpp), one layer up.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

struct ModelEntry {
  std::string name;         ///< the value of `model = "..."`
  std::string description;  ///< one line for --help and errors
  /// Keys of the model. `raw` holds the scenario's top-level string keys (e.g. units, formulation) so that a
  /// model can offer different key sets; unknown values there are reported by the model.
  std::function<std::vector<KeySpec>(const std::map<std::string, std::string>& raw)> schema;
  /// Build the system to simulate from a validated scenario. Throws InputError for inconsistent values.
  std::function<std::unique_ptr<HybridSystem>(const Scenario&)> make_system;
};

}  // namespace rollsim
