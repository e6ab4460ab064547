#pragma once
/// \file The list of models: their scenario schemas and how to build a runnable system from a scenario.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

class HybridSystem;

/// What a model contributes to the program.
struct ModelEntry {
  std::string name;         ///< the value of `model = "..."`
  std::string description;  ///< one line for --help and errors
  /// Keys of the model. `raw` holds the scenario's top-level string keys (e.g. units, formulation) so that a
  /// model can offer different key sets; unknown values there are reported by the model.
  std::function<std::vector<KeySpec>(const std::map<std::string, std::string>& raw)> schema;
  /// Build the system to simulate from a validated scenario. Throws InputError for inconsistent values.
  std::function<std::unique_ptr<HybridSystem>(const Scenario&)> make_system;
};

/// All models, in a fixed order.
const std::vector<ModelEntry>& models();
/// The entry for a name, or nullptr.
const ModelEntry* find_model(const std::string& name);

/// The system a validated scenario describes: its model's make_system, then the checks every model shares, so
/// that every input error is found before a command opens a file: an initial state that is finite (parameters
/// or initial values that overflow double precision are input errors, at the [initial] section), an initial
/// mode the model accepts (initial_mode may refuse a start, e.g. on a switching surface), and state names in
/// solver.atol = { name = value } that are states of the system. Throws InputError with file:line:column.
/// Every command builds its systems through this.
std::unique_ptr<HybridSystem> build_system(const Scenario& sc);

/// Keys every model shares: [simulation], [solver], [output] and the title. A model may redefine one (e.g. its own
/// solver.method choices); its [events] keys are its own.
std::vector<KeySpec> common_keys();

}  // namespace rollsim
