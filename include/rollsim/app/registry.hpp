#pragma once
/// \file The wiring of the program: the list of models, scenarios loaded with their model's schema, and the
/// system a scenario describes. Every command goes through these; the layers below know no model list.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim {

/// All models, in a fixed order.
const std::vector<ModelEntry>& models();
/// The entry for a name, or nullptr.
const ModelEntry* find_model(const std::string& name);

/// The models' names and schemas, with common_keys(), as the scenario loader takes them.
const ScenarioSchemas& model_schemas();

/// Parse and validate a scenario file with overrides ("dotted.key=value") against its model's schema.
/// Throws InputError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// Same, from text already in memory (`path` names it in messages).
Scenario load_scenario_text(const std::string& text, const std::string& path,
                            const std::vector<std::string>& overrides = {});

/// The system a validated scenario describes: its model's make_system, then the checks every model shares, so
/// that every input error is found before a command opens a file: an initial state that is finite (parameters
/// or initial values that overflow double precision are input errors, at the [initial] section), an initial
/// mode the model accepts (initial_mode may refuse a start, e.g. on a switching surface), and state names in
/// solver.atol = { name = value } that are states of the system. Throws InputError with file:line:column.
/// Every command builds its systems through this.
std::unique_ptr<HybridSystem> build_system(const Scenario& sc);

/// Whether build_system compares the result file's column names (check_unique_columns).
enum class ColumnCheck {
  check,
  /// Already done for a system built from a scenario of the same keys and the same text values: a sweep whose
  /// swept values are all numbers checks its first point per worker only. Names come from declarations (keys,
  /// text values), not from numbers; were one ever made from a number, a clash at a later point would still stop
  /// the sweep with an I/O error (exit 4): the trajectory writer makes no second dataset of one name, and the
  /// sweep's table refuses a point that reports a summary item twice (sweep::TableBuilder::add).
  done,
};
std::unique_ptr<HybridSystem> build_system(const Scenario& sc, ColumnCheck columns);

/// The check build_system makes first: the result file's trajectory and events tables would hold one column per
/// name (states, outputs, event extras, time, mode, kind), and /summary one attribute per name (the run's own and
/// the items the system's summarizer declares before its run). Throws InputError at the scenario's model key,
/// naming both declarations of a name.
void check_unique_columns(const HybridSystem& sys, const Scenario& sc);

/// For a user model (model = "lagrangian"), one line on how long its setup took: derivation, source, and the
/// compilation or the cache. Empty for the other models. For the terminal only (the times vary from run to run).
std::string model_setup_text(const HybridSystem& system);

/// How many user models this process has derived in full (GiNaC): a sweep of a smooth one derives it once.
std::size_t user_models_derived();

/// Keys every model shares: [simulation], [solver], [output] and the title, as declared once in
/// analysis/simulation_keys.hpp. A model may narrow one with a variant of that declaration (e.g. its own
/// solver.method choices); its [events] keys are its own.
std::vector<KeySpec> common_keys();

/// The [simulation] and [solver] keys of a validated scenario (simulation_parameters() reads them), with the
/// number of samples checked.
SimulationOptions simulation_options(const Scenario& sc);
struct OutputOptions;  // analysis/simulation_keys.hpp
/// The [output] keys and the title of a validated scenario (output_parameters() reads them).
OutputOptions output_options(const Scenario& sc);

}  // namespace rollsim
