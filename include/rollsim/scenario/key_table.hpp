#pragma once
/// \file Scenario keys as documentation: one row per key (key, type, unit, default, allowed values, meaning),
/// as a markdown table or as plain text. `rollsim keys MODEL` prints them; the key tables of scenarios/README.md
/// and docs/scenario-keys-*.md are this output.
#include <string>
#include <vector>

#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

/// One row of a key table, each cell as text.
struct KeyRow {
  std::string key, type, unit, def, allowed, meaning;
};
KeyRow key_row(const KeySpec& k);

/// A markdown table: a header row "| key | type | unit | default | allowed | meaning |", then one row per key.
std::string markdown_key_table(const std::vector<KeySpec>& keys);
/// The same as plain text, one block of lines per key.
std::string text_key_table(const std::vector<KeySpec>& keys);

}  // namespace rollsim
