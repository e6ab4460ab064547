#include "rollsim/scenario/key_table.hpp"

#include <sstream>

#include "rollsim/scenario/toml_text.hpp"

namespace rollsim {

namespace {

std::string type_of(const KeySpec& k) {
  switch (k.kind) {
    case Kind::Real: return k.by_name ? "number, or a table by state name" : "number";
    case Kind::Integer: return "integer";
    case Kind::Boolean: return "boolean";
    case Kind::String: return k.expression ? "expression (string or number)" : "string";
    case Kind::RealList: return "array of numbers";
    case Kind::StringList: return "array of strings";
  }
  return "?";
}

std::string default_of(const KeySpec& k) {
  if (k.required) return "(required)";
  if (!k.def_list.empty()) {
    std::string s;
    for (double v : k.def_list) s += (s.empty() ? "" : ", ") + toml_text::number(v);
    return "[" + s + "]";
  }
  if (!k.def_strings.empty()) {
    std::string s;
    for (const auto& v : k.def_strings) s += (s.empty() ? "" : ", ") + toml_text::string_text(v);
    return "[" + s + "]";
  }
  if (!k.default_text.empty()) return k.default_text;
  if (k.derive) return "derived";
  if (!k.def) return "none";
  if (const double* d = std::get_if<double>(&*k.def)) return toml_text::number(*d);
  return to_string(*k.def);
}

std::string allowed_of(const KeySpec& k) {
  switch (k.kind) {
    case Kind::Boolean: return "true, false";
    case Kind::String:
    case Kind::StringList: {
      if (k.choices.empty()) return "any";
      std::string s;
      for (const auto& c : k.choices) s += (s.empty() ? "" : ", ") + ("\"" + c + "\"");
      return s;
    }
    default: break;
  }
  const std::string r = k.range_text();
  return r == "(-inf, inf)" ? "any" : r;
}

/// A cell of a markdown table: '|' escaped, so that a description may hold |s|.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

KeyRow key_row(const KeySpec& k) {
  return KeyRow{k.path, type_of(k), k.unit, default_of(k), allowed_of(k), k.description};
}

std::string markdown_key_table(const std::vector<KeySpec>& keys) {
  std::ostringstream os;
  os << "| key | type | unit | default | allowed | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& k : keys) {
    const KeyRow r = key_row(k);
    os << "| `" << r.key << "` | " << cell(r.type) << " | " << cell(r.unit) << " | " << cell(r.def) << " | "
       << cell(r.allowed) << " | " << cell(r.meaning) << " |\n";
  }
  return os.str();
}

std::string text_key_table(const std::vector<KeySpec>& keys) {
  std::ostringstream os;
  for (const auto& k : keys) {
    const KeyRow r = key_row(k);
    os << r.key << "  (" << r.type << (r.unit.empty() ? "" : ", " + r.unit) << ")\n"
       << "    default " << r.def << "; allowed " << r.allowed << "\n"
       << "    " << r.meaning << "\n";
  }
  return os.str();
}

}  // namespace rollsim
