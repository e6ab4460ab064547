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

void set_value(Scenario& sc, const std::string& key, const Value& value) {
  if (!settable(sc, key)) throw std::logic_error("set_value: '" + key + "' is not a dotted key of the schema");
  const KeySpec& spec = *spec_of(sc, key);
  const std::string item = key + "=" + value_text(value);
  const Origin where{"--set " + scenario_detail::shown_key(item), 0, 0};
  const toml::table t = node_of(value);
  Scenario::Entry e = scenario_detail::convert_node(spec, *t.get("v"), where);
  // Past the check nothing throws: sc changes only now. Derived defaults as the loader computes them: in schema
  // order, after every other key, each seeing the ones before it.
  Scenario& out = sc;
  out.values[key] = std::move(e);
  out.overrides.push_back(item);
  for (auto it = out.values.begin(); it != out.values.end();) it = it->second.derived ? out.values.erase(it) : std::next(it);
  scenario_detail::derive_defaults(out);
}

}  // namespace rollsim
