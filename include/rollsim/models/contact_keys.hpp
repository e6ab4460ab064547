#pragma once
/// \file The scenario keys of the contact engine's settings ([nonsmooth]), declared once for every model that
/// uses the engine (user models with gaps, the tipping table's contact formulation).
#include <vector>

#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/scenario/parameters.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

/// nonsmooth.capture_velocity, nonsmooth.gap_tolerance, nonsmooth.stabilization_rate and
/// nonsmooth.mode_selection, bound to ContactSettings (its default member initializers are the keys' defaults).
const Parameters<ContactSettings>& nonsmooth_parameters();
/// The [nonsmooth] keys of a schema: nonsmooth_parameters().keys().
std::vector<KeySpec> nonsmooth_keys();
/// The settings those keys give in a validated scenario, with the solver's rtol and atol for the derived capture
/// rule.
ContactSettings contact_settings_from(const Scenario& sc);

}  // namespace rollsim
