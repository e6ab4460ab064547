#pragma once
/// \file Setting one key of an already validated scenario to a typed value, without parsing the text again: the
/// same checks and messages as `--set key=value`, and the derived defaults computed anew (sweep points).
#include <string>

#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

/// A value as TOML text: a double as a float literal (toml_text::float_text), an integer, true/false, a quoted
/// string. `key + "=" + value_text(v)` is the override that sets the same value.
std::string value_text(const Value& v);

/// Whether set_value can set `key` of `sc`: a dotted key of its schema. A top-level key (e.g. `formulation`)
/// may choose the schema itself, so it needs the scenario loaded again.
bool settable(const Scenario& sc, const std::string& key);

/// Sets `key` of `sc` to `value` as `--set key=value_text(value)` would on the scenario's text: checked against
/// the key's type and range, an error located at that override ("--set key=value: ..."), the override appended to
/// sc.overrides, and every derived default computed again from the new values. Throws InputError; `sc` is
/// unchanged then. Needs settable(sc, key) (std::logic_error otherwise).
void set_value(Scenario& sc, const std::string& key, const Value& value);

/// set_value in two halves, for one value set on many copies of one scenario (a sweep's points): the check and
/// conversion, which depend on the key's schema entry alone, done once; the assignment done per copy.
struct PreparedValue {
  std::string key;
  Scenario::Entry entry;  ///< the converted value, located at its override
  std::string item;       ///< the override, "key=value_text(value)"
};
/// set_value's checks: throws InputError (with set_value's message) or returns the value ready to set on any
/// scenario of the same schema as `sc`.
PreparedValue prepare_value(const Scenario& sc, const std::string& key, const Value& value);
/// set_value's assignment: the entry replaced, the override appended, the derived defaults computed again.
void set_prepared(Scenario& sc, const PreparedValue& value);

}  // namespace rollsim
