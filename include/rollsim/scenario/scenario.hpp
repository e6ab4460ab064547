#pragma once
/// \file Scenarios: a TOML file (plus command-line overrides) checked against a schema of keys.
/// Every value keeps its origin (file:line:column, or the override that set it) for error messages.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "rollsim/core/error.hpp"

namespace rollsim {

class Scenario;

/// A scalar scenario value.
using Value = std::variant<double, long long, bool, std::string>;
std::string to_string(const Value& v);

/// What a key may hold.
enum class Kind { Real, Integer, Boolean, String, RealList, StringList };

/// One key of a schema: its dotted path, type, default, allowed range or choices, unit and meaning.
struct KeySpec {
  std::string path;          ///< dotted, e.g. "parameters.wheel_mass"
  Kind kind = Kind::Real;
  std::optional<Value> def;  ///< no default and not required: the key is optional
  std::vector<double> def_list;          ///< default of a RealList key (used when not empty)
  std::vector<std::string> def_strings;  ///< default of a StringList key (used when not empty)
  bool required = false;
  double lo = -1e308, hi = 1e308;  ///< allowed range for numbers
  bool lo_open = false, hi_open = false;
  std::vector<std::string> choices;  ///< allowed strings
  std::string unit, description;
  /// A Real key that may also be a table of name = number (e.g. solver.atol per state); the names are checked
  /// by whoever knows them (build_system for state names). The numbers obey the key's range.
  bool by_name = false;
  /// A String key that holds an expression (a user model's formula): a TOML number is accepted too and becomes
  /// its shortest round-trip text (std::to_chars), so `mass = 2` reads as `mass = "2"`.
  bool expression = false;
  /// A StringList of expressions given as rows (an array of arrays, a matrix): its strings row by row, and
  /// Scenario::Entry::list the length of each row.
  bool rows = false;
  /// A default derived from other values (e.g. an inertia from a mass and a length), computed when the key is
  /// absent, after every other key is resolved; it appears in resolved_text like any value.
  std::function<Value(const Scenario&)> derive;
  /// The default as key tables show it where `def` cannot: a derived rule's text ("1/2 wheel_mass
  /// wheel_radius^2"), or the value a model takes for an absent key that has no schema default.
  std::string default_text;
  std::string range_text() const;    ///< e.g. "(0, inf)" or one of "bdf", "adams"
};

/// Throws InputError at `where` unless v is a finite number in the key's range, with the message every scenario
/// value gets ("<path> = <text> is out of range; allowed range (0, inf) [kg]"); `text` is v as written.
void check_key_value(const KeySpec& spec, double v, const Origin& where, const std::string& text);
/// Whether check_key_value accepts v: a finite number in the key's range.
bool in_key_range(const KeySpec& spec, double v);

/// Builds a KeySpec: start from real_key, integer_key, string_key, real_list_key or string_list_key, chain
/// the modifiers, and let it convert to a KeySpec, e.g.
///   real_key("parameters.mass", "kg", "disk mass m").with_default(1.0).positive()
/// Unless a modifier says otherwise a number may be anything in (-inf, inf) and a key has no default.
class KeyBuilder {
 public:
  explicit KeyBuilder(KeySpec spec) : spec_(std::move(spec)) {}
  KeyBuilder with_default(double v) &&;               ///< a Real key's default
  KeyBuilder with_default(std::vector<double> v) &&;  ///< a RealList key's default
  KeyBuilder positive() &&;                           ///< numbers in (0, inf)
  KeyBuilder non_negative() &&;                       ///< numbers in [0, inf)
  /// Numbers between lo and hi, each end included unless it is open.
  KeyBuilder range(double lo, double hi, bool lo_open = false, bool hi_open = false) &&;
  KeyBuilder required() &&;  ///< the scenario must give the key
  KeyBuilder or_table_by_name() &&;  ///< a Real key may also be a table { name = number, ... }
  /// The default, when the key is absent, is computed from the other resolved keys.
  KeyBuilder derived(std::function<Value(const Scenario&)> rule) &&;
  operator KeySpec() && { return std::move(spec_); }

 private:
  KeySpec spec_;
};

/// A real number; no default unless .with_default() gives one.
KeyBuilder real_key(std::string path, std::string unit, std::string description);
/// An integer with its default.
KeyBuilder integer_key(std::string path, long long def, std::string description);
/// A string with its default and, unless `choices` is empty, the values allowed.
KeyBuilder string_key(std::string path, std::string def, std::vector<std::string> choices, std::string description);
/// An expression: a string, or a number taken as its shortest round-trip text; with its default text.
KeyBuilder expression_key(std::string path, std::string def, std::string description);
/// true or false, with its default.
KeyBuilder boolean_key(std::string path, bool def, std::string description);
/// A list of real numbers; the range applies to every element.
KeyBuilder real_list_key(std::string path, std::string unit, std::string description);
/// A list of strings, any values, no default.
KeyBuilder string_list_key(std::string path, std::string description);

/// The keys a scenario was checked against, read-only and shared by its copies (a sweep copies its scenario for
/// every point, and the keys, with their texts and rules, were most of a copy's cost).
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<KeySpec> keys) : keys_(std::make_shared<const std::vector<KeySpec>>(std::move(keys))) {}
  std::vector<KeySpec>::const_iterator begin() const { return keys().begin(); }
  std::vector<KeySpec>::const_iterator end() const { return keys().end(); }

 private:
  const std::vector<KeySpec>& keys() const {
    static const std::vector<KeySpec> none;
    return keys_ ? *keys_ : none;
  }
  std::shared_ptr<const std::vector<KeySpec>> keys_;
};

/// A validated scenario: every schema key resolved to a value (given, or its default).
class Scenario {
 public:
  std::string path;  ///< the file it came from
  std::string text;  ///< the exact input text
  std::string model;
  std::vector<std::string> overrides;  ///< "key=value" as given on the command line
  /// Free-form tables that the schema does not describe key by key (e.g. [sweep]), as raw TOML text.
  std::map<std::string, std::string> raw_tables;

  bool has(std::string_view key) const;
  double real(std::string_view key) const;
  long long integer(std::string_view key) const;
  bool boolean(std::string_view key) const;
  const std::string& string(std::string_view key) const;
  std::optional<double> optional_real(std::string_view key) const;
  std::vector<double> real_list(std::string_view key) const;
  std::vector<std::string> string_list(std::string_view key) const;
  Origin origin(std::string_view key) const;  ///< where the key was set (the file, if defaulted)
  bool is_default(std::string_view key) const;
  /// Throws an InputError at the key's origin.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  /// Every resolved key, "key = value" per line, sorted.
  std::string resolved_text() const;

  /// The numbers of a by-name table key, name -> (value, origin); empty when the key holds one number.
  std::vector<std::pair<std::string, std::pair<double, Origin>>> by_name(std::string_view key) const;

  struct Entry {
    Value value;
    std::vector<double> list;
    std::vector<std::string> strings;  ///< a StringList's values; a by-name table's names (values in `list`)
    std::vector<Origin> item_origins;  ///< a by-name table: where each name is
    Origin origin;
    bool defaulted = false;
    bool derived = false;  ///< defaulted by a KeySpec::derive rule
  };
  std::map<std::string, Entry, std::less<>> values;  ///< transparent: looked up by std::string_view
  Schema schema;
};

/// The models a scenario may name and their keys, as the loader needs them. This layer knows no model: the
/// layer that lists the models gives them (app/registry.hpp: model_schemas(), with load_scenario wrappers).
struct ScenarioSchemas {
  std::vector<std::string> models;  ///< the allowed values of `model`, in order
  /// The keys of the model named (one of `models`); `raw` holds the scenario's top-level string keys.
  std::function<std::vector<KeySpec>(const std::string& model, const std::map<std::string, std::string>& raw)> keys;
  /// Keys every model shares. A model's key of the same path replaces one (a derived default carries over).
  std::vector<KeySpec> common;
};

/// Parse and validate a scenario file with overrides ("dotted.key=value") against `schemas`. Throws InputError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const ScenarioSchemas& schemas);
/// Same, from text already in memory (`path` names it in messages).
Scenario load_scenario_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides,
                            const ScenarioSchemas& schemas);

/// The closest candidate by edit distance, or "" if none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace rollsim
