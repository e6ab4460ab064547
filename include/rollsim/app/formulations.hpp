#pragma once
/// \file The formulation check as a command runs it: both scenarios loaded with the model's schema, both
/// systems built and run, and compared (analysis/compare.hpp holds the comparison and its result types).
#include <string>
#include <vector>

#include "rollsim/analysis/compare.hpp"

namespace rollsim {

/// Load both scenarios (all input errors surface here, before anything runs). Throws InputError if the model
/// has no formulation choice.
FormulationScenarios formulation_scenarios(const std::string& scenario_path, const std::vector<std::string>& overrides);

/// Run both formulations in memory and compare them; the tolerances are the ODE scenario's [check] keys. A run
/// that fails is reported in the comparison's problems.
FormulationCheck check_formulations(const FormulationScenarios& scenarios);

/// formulation_scenarios, then check_formulations.
FormulationCheck check_formulations(const std::string& scenario_path, const std::vector<std::string>& overrides);

}  // namespace rollsim
