#include "rollsim/scenario/scenario_set.hpp"

#include <iterator>
#include <stdexcept>

#include "convert.hpp"
#include "rollsim/scenario/toml_text.hpp"

namespace rollsim {

namespace {

const KeySpec* spec_of(const Scenario& sc, const std::string& key) {
  for (const auto& k : sc.schema)
    if (k.path == key) return &k;
  return nullptr;
}

/// The TOML node a value is, as the parser would make it of value_text(v).
toml::table node_of(const Value& v) {
  toml::table t;
  std::visit(
      [&](auto&& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, long long>)
          t.insert("v", static_cast<int64_t>(x));
        else
          t.insert("v", x);
      },
      v);
  return t;
}

}  // namespace

std::string value_text(const Value& v) {
  if (const double* d = std::get_if<double>(&v)) return toml_text::float_text(*d);
  return to_string(v);
}

bool settable(const Scenario& sc, const std::string& key) {
  return key.find('.') != std::string::npos && spec_of(sc, key) != nullptr;
}

PreparedValue prepare_value(const Scenario& sc, const std::string& key, const Value& value) {
  if (!settable(sc, key)) throw std::logic_error("set_value: '" + key + "' is not a dotted key of the schema");
  const KeySpec& spec = *spec_of(sc, key);
  PreparedValue p;
  p.key = key;
  p.item = key + "=" + value_text(value);
  const Origin where{"--set " + scenario_detail::shown_key(p.item), 0, 0};
  const toml::table t = node_of(value);
  p.entry = scenario_detail::convert_node(spec, *t.get("v"), where);
  return p;
}

void set_prepared(Scenario& sc, const PreparedValue& value) {
  // Derived defaults as the loader computes them: in schema order, after every other key, each seeing the ones
  // before it.
  sc.values.insert_or_assign(value.key, value.entry);
  sc.overrides.push_back(value.item);
  for (auto it = sc.values.begin(); it != sc.values.end();) it = it->second.derived ? sc.values.erase(it) : std::next(it);
  scenario_detail::derive_defaults(sc);
}

void set_value(Scenario& sc, const std::string& key, const Value& value) {
  // Past the check nothing throws: sc changes only in set_prepared.
  set_prepared(sc, prepare_value(sc, key, value));
}

}  // namespace rollsim
