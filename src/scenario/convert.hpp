#pragma once
/// \file The scenario layer's one conversion of a TOML value into a checked entry (type, range, choices), shared
/// by the file loader and the typed setter (scenario_set.cpp). Not installed.
#include <toml++/toml.h>

#include "rollsim/scenario/scenario.hpp"

namespace rollsim::scenario_detail {

/// The entry `spec` makes of `n`, set at `where`; throws InputError there with the loader's message.
Scenario::Entry convert_node(const KeySpec& spec, const toml::node& n, const Origin& where);

/// The derived defaults (KeySpec::derive) of every key `sc` does not hold, in schema order, each seeing the ones
/// before it.
void derive_defaults(Scenario& sc);

/// A key as a message shows it (long keys cut short).
std::string shown_key(const std::string& key);

}  // namespace rollsim::scenario_detail
