#include "rollsim/scenario/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "convert.hpp"
#include "rollsim/scenario/toml_text.hpp"

namespace rollsim {

namespace {

constexpr std::size_t kMaxScenarioBytes = 1 << 20;  // 1 MiB: a scenario is a few hundred bytes
constexpr int kMaxKeyDepth = 32;                    // components of one dotted key; a scenario needs 2
constexpr std::size_t kMaxShownKey = 64;            // longer keys are cut short in messages

/// A key as shown in a message: at most kMaxShownKey bytes, cut at a UTF-8 character boundary.
std::string shown(const std::string& key) {
  if (key.size() <= kMaxShownKey) return key;
  std::size_t n = kMaxShownKey;
  while (n > 0 && (static_cast<unsigned char>(key[n]) & 0xC0) == 0x80) --n;
  return key.substr(0, n) + "... (" + std::to_string(key.size()) + " bytes)";
}

/// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
/// A TOML document must be; toml++ checks a scenario file, and overrides are checked here, since a bare
/// word is stored as written and the resolved text that quotes it must load again.
bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else return false;
    if (i + len > n) return false;
    if (len > 1 && (p[i + 1] < lo || p[i + 1] > hi)) return false;
    for (std::size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

/// toml++ parses dotted keys and table headers recursively, so a key of some ten thousand components
/// overflows the stack inside toml::parse. Before parsing, find the longest chain of dotted key
/// components outside strings and comments, and refuse one deeper than kMaxKeyDepth.
void check_key_depth(const std::string& text, const std::string& path) {
  int line = 1, dots = 0;
  std::size_t i = 0, line_start = 0;
  const std::size_t n = text.size();
  auto starts = [&](const char* s) { return text.compare(i, std::char_traits<char>::length(s), s) == 0; };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      dots = 0;
      line_start = ++i;
    } else if (c == '#') {
      while (i < n && text[i] != '\n') ++i;
    } else if (starts("\"\"\"") || starts("'''")) {
      const std::string close = text.substr(i, 3);
      i += 3;
      while (i < n && !starts(close.c_str())) {
        if (text[i] == '\\' && close[0] == '"' && i + 1 < n) ++i;  // an escape, perhaps of a line end
        if (text[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
        ++i;
      }
      i += 3;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') {
        if (text[i] == '\\' && c == '"') ++i;
        ++i;
      }
      if (i < n && text[i] == c) ++i;
    } else if (c == '.') {
      if (++dots >= kMaxKeyDepth)
        throw InputError(Origin{path, line, static_cast<int>(i - line_start) + 1}, "a key nested more than " + std::to_string(kMaxKeyDepth) +
                                                    " levels deep; scenario keys have two levels, e.g. parameters.wheel_mass");
      ++i;
    } else if (c == '=' || c == ',' || c == '[' || c == ']' || c == '{' || c == '}') {
      dots = 0;
      ++i;
    } else {
      ++i;
    }
  }
}

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::Real: return "a number";
    case Kind::Integer: return "an integer";
    case Kind::Boolean: return "true or false";
    case Kind::String: return "a string";
    case Kind::RealList: return "an array of numbers";
    case Kind::StringList: return "an array of strings";
  }
  return "?";
}

std::string node_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

std::string node_text(const toml::node& n) {
  std::ostringstream os;
  if (auto s = n.as_string()) {
    os << '"' << s->get() << '"';
  } else if (auto f = n.as_floating_point()) {
    os << toml_text::number(f->get());
  } else {
    n.visit([&](auto&& v) { os << v; });
  }
  return os.str();
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// `s` without the spaces and tabs at either end.
std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// For a number written without a digit before its decimal point (".02", "-.5e3"), where the point is.
std::optional<std::size_t> leading_point(const std::string& v) {
  const std::size_t p = !v.empty() && (v[0] == '+' || v[0] == '-') ? 1 : 0;
  if (v.size() > p + 1 && v[p] == '.' && std::isdigit(static_cast<unsigned char>(v[p + 1])) &&
      v.find_first_not_of("0123456789.eE+-_", p) == std::string::npos)
    return p;
  return std::nullopt;
}

/// A hint for a syntax error on `line`: a number written as ".02".
std::string syntax_hint(const std::string& text, int line) {
  std::size_t b = 0;
  for (int l = 1; l < line && b != std::string::npos; ++l) {
    b = text.find('\n', b);
    if (b != std::string::npos) ++b;
  }
  if (b == std::string::npos) return "";
  const std::string row = text.substr(b, text.find('\n', b) - b);
  const auto eq = row.find('=');
  if (eq == std::string::npos) return "";
  std::string v = trimmed(row.substr(eq + 1));
  v = trimmed(v.substr(0, v.find('#')));
  if (!leading_point(v)) return "";
  std::string fixed = v;
  fixed.insert(*leading_point(v), "0");
  return "; TOML numbers need a digit before the decimal point: write " + fixed + ", not " + v;
}

struct Loader {
  std::string path;
  std::map<std::string, Origin> override_origins;  // dotted key -> the override that set it

  Origin origin_of(const std::string& key, const toml::node& n) const {
    auto it = override_origins.find(key);
    if (it != override_origins.end()) return it->second;
    // A table made or changed by an override of one of its entries (--set solver.atol.theta1=...).
    for (const auto& [k, o] : override_origins)
      if (k.rfind(key + ".", 0) == 0) return o;
    const auto& src = n.source();
    return Origin{path, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)};
  }

  void apply_override(toml::table& root, const std::string& item) {
    const auto eq = item.find('=');
    if (!valid_utf8(item))
      throw InputError(Origin{"--set", 0, 0}, "an override must be UTF-8 text; this one has a byte sequence that is not");
    const Origin where{"--set " + shown(item), 0, 0};
    if (eq == std::string::npos || eq == 0)
      throw InputError(where, "an override must read KEY=VALUE, e.g. --set initial.theta1=0.02");
    const std::string key = trimmed(item.substr(0, eq));
    std::string raw = trimmed(item.substr(eq + 1));
    // TOML wants a digit before the point; ".02" on the command line means 0.02.
    if (const auto dot = leading_point(raw)) raw.insert(*dot, "0");
    if (key.empty()) throw InputError(where, "an override must read KEY=VALUE, e.g. --set initial.theta1=0.02");
    std::vector<std::string> parts;
    std::stringstream ks(key);
    for (std::string part; std::getline(ks, part, '.');) {
      if (part.empty()) throw InputError(where, "the key '" + shown(key) + "' has an empty component");
      parts.push_back(part);
      if (parts.size() > static_cast<std::size_t>(kMaxKeyDepth))
        throw InputError(where, "a key nested more than " + std::to_string(kMaxKeyDepth) + " levels deep");
    }
    if (!key.empty() && key.back() == '.') throw InputError(where, "the key '" + shown(key) + "' has an empty component");
    // The value is read as a TOML value; a bare word that is not one is taken as a string.
    toml::table parsed;
    try {
      parsed = toml::parse("v = " + raw);
    } catch (const toml::parse_error&) {
      if (raw.find_first_of("\"'[]{}=\n") != std::string::npos || raw.empty())
        throw InputError(where, "the value '" + raw + "' is not a valid TOML value");
      parsed = toml::table{};
      parsed.insert("v", raw);
    }
    toml::table* t = &root;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto* n = t->get(parts[i]);
      if (!n) {
        t->insert(parts[i], toml::table{});
        n = t->get(parts[i]);
      }
      if (!n->is_table()) throw InputError(where, "'" + parts[i] + "' is not a table, so '" + shown(key) + "' cannot be set");
      t = n->as_table();
    }
    t->insert_or_assign(parts.back(), *parsed.get("v"));
    override_origins[key] = where;
  }
};

/// A TOML integer or float as a double; nothing for any other node.
std::optional<double> number_of(const toml::node& n) {
  if (auto i = n.as_integer()) return static_cast<double>(i->get());
  if (auto f = n.as_floating_point()) return f->get();
  return std::nullopt;
}

/// The error of a value of the wrong type for its key, with the value as written.
InputError wrong_type(const KeySpec& spec, const toml::node& n, const Origin& where) {
  return InputError(where, spec.path + " must be " + kind_name(spec.kind) + ", not " + node_type_name(n) + " (" +
                               node_text(n) + ")");
}

/// A real key given as a table { name = number, ... } (KeySpec::by_name): each number within the key's range,
/// located at its own position; the unnamed entries take the key's default.
void convert_real_table(const KeySpec& spec, const toml::table& t, const Origin& where, Scenario::Entry& e) {
  for (const auto& [k, item] : t) {
    const std::string name(k.str());
    const Origin at = where.line > 0 ? Origin{where.file, static_cast<int>(item.source().begin.line),
                                              static_cast<int>(item.source().begin.column)}
                                     : where;
    const auto v = number_of(item);
    if (!v)
      throw InputError(at, spec.path + "." + shown(name) + " must be a number, not " + node_type_name(item) +
                               " (" + node_text(item) + ")");
    KeySpec named = spec;
    named.path = spec.path + "." + shown(name);
    if (!in_key_range(named, *v)) check_key_value(named, *v, at, node_text(item));
    e.strings.push_back(name);
    e.list.push_back(*v);
    e.item_origins.push_back(at);
  }
  e.value = spec.def ? std::get<double>(*spec.def) : 0.0;
}

/// Refuses a string that is not among the key's choices (where it has them), with the nearest; `in_list`: the string
/// is an element of a list key's value.
void check_choice(const KeySpec& spec, const std::string& v, const Origin& where, bool in_list) {
  if (spec.choices.empty() || std::find(spec.choices.begin(), spec.choices.end(), v) != spec.choices.end()) return;
  std::string msg = spec.path + (in_list ? " holds \"" + v + "\", which is" : " = \"" + v + "\" is") +
                    " not allowed; allowed values " + spec.range_text();
  const std::string near = closest_match(v, spec.choices);
  if (!near.empty()) msg += "; did you mean \"" + near + "\"?";
  throw InputError(where, msg);
}

/// A string key's value: one of its choices where it has them; an expression key also takes a number, kept as the
/// shortest text that reads back as the same double.
void convert_string(const KeySpec& spec, const toml::node& n, const Origin& where, Scenario::Entry& e) {
  auto s = n.as_string();
  if (!s && spec.expression) {
    const auto v = number_of(n);
    if (!v)
      throw InputError(where, spec.path + " must be a string (an expression) or a number, not " + node_type_name(n) +
                                  " (" + node_text(n) + ")");
    if (!std::isfinite(*v))
      throw InputError(where, spec.path + " = " + node_text(n) + " is not a finite number; allowed: an expression or a finite number");
    // The shortest text that reads back as the same double: the expression parser reads it exactly.
    char buf[64];
    const auto r = n.as_integer() ? std::to_chars(buf, buf + sizeof buf, n.as_integer()->get())
                                  : std::to_chars(buf, buf + sizeof buf, *v);
    e.value = std::string(buf, r.ptr);
    return;
  }
  if (!s) throw wrong_type(spec, n, where);
  const std::string v = s->get();
  check_choice(spec, v, where, false);
  e.value = v;
}

/// A list key's values: numbers within the key's range, or strings among its choices.
void convert_list(const KeySpec& spec, const toml::array& a, const Origin& where, Scenario::Entry& e) {
  for (const auto& item : a) {
    if (spec.kind == Kind::RealList) {
      const auto v = number_of(item);
      if (!v) throw InputError(where, spec.path + " must be an array of numbers; it holds " + node_type_name(item));
      if (!in_key_range(spec, *v)) check_key_value(spec, *v, where, node_text(item));
      e.list.push_back(*v);
      continue;
    }
    if (spec.expression && !item.as_string()) {
      // A list of expressions takes numbers too; a matrix's rows (spec.rows) are lists, kept row by row with each
      // row's length in e.list.
      const auto* row = item.as_array();
      if (spec.rows && !row) throw InputError(where, spec.path + " must be an array of rows (arrays); it holds " + node_type_name(item));
      Scenario::Entry one;
      auto take = [&](const toml::node& x) {
        convert_string(spec, x, where, one);
        e.strings.push_back(std::get<std::string>(one.value));
      };
      if (!row) {
        take(item);
        continue;
      }
      for (const auto& x : *row) take(x);
      e.list.push_back(static_cast<double>(row->size()));
      continue;
    }
    auto str = item.as_string();
    if (!str) throw InputError(where, spec.path + " must be an array of strings; it holds " + node_type_name(item));
    const std::string v = str->get();
    check_choice(spec, v, where, true);
    e.strings.push_back(v);
  }
  e.value = static_cast<long long>(spec.kind == Kind::RealList ? e.list.size() : e.strings.size());
}

Scenario::Entry convert(const KeySpec& spec, const toml::node& n, const Origin& where) {
  Scenario::Entry e;
  e.origin = where;
  // The value as written, for messages only: formatting it took a tenth of a sweep point of the exact disk.
  auto text = [&]() { return node_text(n); };
  switch (spec.kind) {
    case Kind::Real: {
      if (spec.by_name && n.is_table()) {
        convert_real_table(spec, *n.as_table(), where, e);
        break;
      }
      const auto v = number_of(n);
      if (!v && spec.by_name)
        throw InputError(where, spec.path + " must be a number or a table { name = number, ... }, not " +
                                    node_type_name(n) + " (" + text() + ")");
      if (!v) throw wrong_type(spec, n, where);
      if (!in_key_range(spec, *v)) check_key_value(spec, *v, where, text());
      e.value = *v;
      break;
    }
    case Kind::Integer: {
      auto i = n.as_integer();
      if (!i) throw wrong_type(spec, n, where);
      if (!in_key_range(spec, static_cast<double>(i->get())))
        check_key_value(spec, static_cast<double>(i->get()), where, text());
      e.value = static_cast<long long>(i->get());
      break;
    }
    case Kind::Boolean: {
      auto b = n.as_boolean();
      if (!b) throw wrong_type(spec, n, where);
      e.value = b->get();
      break;
    }
    case Kind::String:
      convert_string(spec, n, where, e);
      break;
    case Kind::RealList:
    case Kind::StringList: {
      auto a = n.as_array();
      if (!a) throw wrong_type(spec, n, where);
      convert_list(spec, *a, where, e);
      break;
    }
  }
  return e;
}

}  // namespace

bool in_key_range(const KeySpec& spec, double v) {
  const bool below = spec.lo_open ? !(v > spec.lo) : !(v >= spec.lo);
  const bool above = spec.hi_open ? !(v < spec.hi) : !(v <= spec.hi);
  return std::isfinite(v) && !below && !above;
}

void check_key_value(const KeySpec& spec, double v, const Origin& where, const std::string& text) {
  if (in_key_range(spec, v)) return;
  throw InputError(where, spec.path + " = " + text +
                              (std::isfinite(v) ? " is out of range" : " is not a finite number") + "; allowed range " +
                              spec.range_text() + (spec.unit.empty() ? "" : " [" + spec.unit + "]"));
}

std::string to_string(const Value& v) {
  return std::visit(
      [](auto&& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>)
          return toml_text::number(x);
        else if constexpr (std::is_same_v<T, long long>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else
          return toml_text::string_text(x);
      },
      v);
}

std::string KeySpec::range_text() const {
  if (kind == Kind::String || kind == Kind::StringList) {
    if (choices.empty()) return "any string";
    std::string s;
    for (const auto& c : choices) s += (s.empty() ? "" : ", ") + ("\"" + c + "\"");
    return "one of " + s;
  }
  if (kind == Kind::Boolean) return "true or false";
  auto bound = [](double b) -> std::string {
    if (b >= 1e308) return "inf";
    if (b <= -1e308) return "-inf";
    return toml_text::number(b);
  };
  return std::string(lo_open || lo <= -1e308 ? "(" : "[") + bound(lo) + ", " + bound(hi) +
         (hi_open || hi >= 1e308 ? ")" : "]");
}

KeyBuilder KeyBuilder::with_default(double v) && {
  spec_.def = v;
  return std::move(*this);
}

KeyBuilder KeyBuilder::with_default(std::vector<double> v) && {
  spec_.def_list = std::move(v);
  return std::move(*this);
}

KeyBuilder KeyBuilder::positive() && { return std::move(*this).range(0, 1e308, true, false); }

KeyBuilder KeyBuilder::non_negative() && { return std::move(*this).range(0, 1e308, false, false); }

KeyBuilder KeyBuilder::range(double lo, double hi, bool lo_open, bool hi_open) && {
  spec_.lo = lo;
  spec_.hi = hi;
  spec_.lo_open = lo_open;
  spec_.hi_open = hi_open;
  return std::move(*this);
}

KeyBuilder KeyBuilder::required() && {
  spec_.required = true;
  return std::move(*this);
}

KeyBuilder KeyBuilder::or_table_by_name() && {
  spec_.by_name = true;
  return std::move(*this);
}

KeyBuilder KeyBuilder::derived(std::function<Value(const Scenario&)> rule) && {
  spec_.derive = std::move(rule);
  return std::move(*this);
}

namespace {

KeySpec key_of(std::string path, Kind kind, std::string unit, std::string description) {
  KeySpec k;
  k.path = std::move(path);
  k.kind = kind;
  k.unit = std::move(unit);
  k.description = std::move(description);
  return k;
}

}  // namespace

KeyBuilder real_key(std::string path, std::string unit, std::string description) {
  return KeyBuilder(key_of(std::move(path), Kind::Real, std::move(unit), std::move(description)));
}

KeyBuilder integer_key(std::string path, long long def, std::string description) {
  KeySpec k = key_of(std::move(path), Kind::Integer, "", std::move(description));
  k.def = def;
  return KeyBuilder(std::move(k));
}

KeyBuilder string_key(std::string path, std::string def, std::vector<std::string> choices, std::string description) {
  KeySpec k = key_of(std::move(path), Kind::String, "", std::move(description));
  k.def = std::move(def);
  k.choices = std::move(choices);
  return KeyBuilder(std::move(k));
}

KeyBuilder expression_key(std::string path, std::string def, std::string description) {
  KeySpec k = key_of(std::move(path), Kind::String, "", std::move(description));
  k.def = std::move(def);
  k.expression = true;
  return KeyBuilder(std::move(k));
}

KeyBuilder boolean_key(std::string path, bool def, std::string description) {
  KeySpec k = key_of(std::move(path), Kind::Boolean, "", std::move(description));
  k.def = def;
  return KeyBuilder(std::move(k));
}

KeyBuilder real_list_key(std::string path, std::string unit, std::string description) {
  return KeyBuilder(key_of(std::move(path), Kind::RealList, std::move(unit), std::move(description)));
}

KeyBuilder string_list_key(std::string path, std::string description) {
  return KeyBuilder(key_of(std::move(path), Kind::StringList, "", std::move(description)));
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const size_t len_diff = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (len_diff >= best_d) continue;  // the distance is at least the difference in length
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

bool Scenario::has(std::string_view key) const { return values.find(key) != values.end(); }

static const Scenario::Entry& entry(const Scenario& s, std::string_view key) {
  auto it = s.values.find(key);
  if (it == s.values.end()) throw std::logic_error("scenario key not in schema or not set: " + std::string(key));
  return it->second;
}

double Scenario::real(std::string_view key) const { return std::get<double>(entry(*this, key).value); }
long long Scenario::integer(std::string_view key) const { return std::get<long long>(entry(*this, key).value); }
bool Scenario::boolean(std::string_view key) const { return std::get<bool>(entry(*this, key).value); }
const std::string& Scenario::string(std::string_view key) const {
  return std::get<std::string>(entry(*this, key).value);
}
std::optional<double> Scenario::optional_real(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return real(key);
}
std::vector<double> Scenario::real_list(std::string_view key) const { return entry(*this, key).list; }
std::vector<std::string> Scenario::string_list(std::string_view key) const { return entry(*this, key).strings; }
Origin Scenario::origin(std::string_view key) const {
  auto it = values.find(key);
  if (it == values.end()) return Origin{path, 0, 0};
  return it->second.origin;
}
std::vector<std::pair<std::string, std::pair<double, Origin>>> Scenario::by_name(std::string_view key) const {
  std::vector<std::pair<std::string, std::pair<double, Origin>>> out;
  const Entry& e = entry(*this, key);
  for (std::size_t i = 0; i < e.strings.size() && i < e.list.size(); ++i)
    out.push_back({e.strings[i], {e.list[i], i < e.item_origins.size() ? e.item_origins[i] : e.origin}});
  return out;
}

bool Scenario::is_default(std::string_view key) const {
  auto it = values.find(key);
  return it == values.end() || it->second.defaulted;
}
void Scenario::fail(const std::string& key, const std::string& message) const { throw InputError(origin(key), message); }

std::string Scenario::resolved_text() const {
  std::ostringstream os;
  for (const auto& [k, e] : values) {
    os << k << " = ";
    const KeySpec* spec = nullptr;
    for (const auto& s : schema)
      if (s.path == k) spec = &s;
    if (spec && spec->by_name && !e.strings.empty()) {
      os << "{ ";
      for (size_t i = 0; i < e.strings.size(); ++i)
        os << (i ? ", " : "") << toml_text::key_text(e.strings[i]) << " = " << toml_text::float_text(e.list[i]);
      os << " }\n";
      continue;
    }
    if (!e.list.empty() || std::holds_alternative<long long>(e.value)) {
      const Kind kind = spec ? spec->kind : Kind::Integer;
      if (kind == Kind::RealList) {
        os << '[';
        for (size_t i = 0; i < e.list.size(); ++i) os << (i ? ", " : "") << toml_text::float_text(e.list[i]);
        os << "]\n";
        continue;
      }
      if (kind == Kind::StringList) {
        // A key of rows (spec->rows: a matrix, a drawing's points) keeps its rows, whose lengths e.list holds.
        const bool rows = spec && spec->rows;
        std::size_t next_row = 0, row = 0;
        os << '[';
        for (size_t i = 0; i < e.strings.size(); ++i) {
          const bool opens = rows && i == next_row;
          if (opens) next_row += static_cast<std::size_t>(e.list[row++]);
          os << (i ? (opens ? "], [" : ", ") : (rows ? "[" : "")) << toml_text::string_text(e.strings[i]);
        }
        os << (rows && !e.strings.empty() ? "]]\n" : "]\n");
        continue;
      }
    }
    if (const double* d = std::get_if<double>(&e.value))
      os << toml_text::float_text(*d) << '\n';
    else
      os << to_string(e.value) << '\n';
  }
  return os.str();
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const ScenarioSchemas& schemas) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(Origin{path, 0, 0}, "is a directory, not a scenario file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(Origin{path, 0, 0}, "cannot open the scenario file");
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  if (end < 0) throw InputError(Origin{path, 0, 0}, "cannot read the scenario file");
  const auto size = static_cast<std::size_t>(end);
  if (size > kMaxScenarioBytes)
    throw InputError(Origin{path, 0, 0}, "the scenario file is " + std::to_string(size) +
                                             " bytes; the limit is " + std::to_string(kMaxScenarioBytes) + " bytes");
  in.seekg(0);
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  return load_scenario_text(text, path, overrides, schemas);
}

namespace {

/// The parsed document of `text`: its size, its bytes and its keys' depth checked first, a syntax error located.
toml::table parse_document(const std::string& text, const std::string& path) {
  if (text.size() > kMaxScenarioBytes)
    throw InputError(Origin{path, 0, 0}, "the scenario text is larger than " + std::to_string(kMaxScenarioBytes) + " bytes");
  if (text.find('\0') != std::string::npos) throw InputError(Origin{path, 0, 0}, "the scenario file contains NUL bytes");
  check_key_depth(text, path);
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw InputError(Origin{path, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
                     std::string("syntax error: ") + std::string(e.description()) +
                         syntax_hint(text, static_cast<int>(src.begin.line)));
  }
}

/// The model the document names: a string, one of schemas.models.
std::string model_of(const toml::table& root, const Loader& L, const ScenarioSchemas& schemas) {
  const toml::node* model_node = root.get("model");
  const auto model_list = [&] {
    std::string s;
    for (const auto& m : schemas.models) s += (s.empty() ? "\"" : ", \"") + m + "\"";
    return s;
  };
  if (!model_node) throw InputError(Origin{L.path, 1, 1}, "missing key 'model'; allowed values: " + model_list());
  if (!model_node->is_string())
    throw InputError(L.origin_of("model", *model_node), "model must be a string, not " + node_type_name(*model_node));
  const std::string model = model_node->as_string()->get();
  if (std::find(schemas.models.begin(), schemas.models.end(), model) == schemas.models.end()) {
    std::string msg = "unknown model \"" + model + "\"; allowed values " + model_list();
    const std::string near = closest_match(model, schemas.models);
    if (!near.empty()) msg += "; did you mean \"" + near + "\"?";
    throw InputError(L.origin_of("model", *model_node), msg);
  }
  return model;
}

/// The top-level string keys, and the dotted path of every leaf below the top level (its text if a string, else
/// empty), so that a model may declare keys named by the scenario itself (e.g. its parameters). An array of tables
/// contributes each element's leaves under its index ("bodies.0.mass").
std::map<std::string, std::string> raw_leaves(const toml::table& root) {
  std::map<std::string, std::string> raw;
  for (const auto& [k, v] : root)
    if (auto s = v.as_string()) raw[std::string(k.str())] = s->get();
  std::function<void(const toml::node&, const std::string&)> leaves = [&](const toml::node& n, const std::string& key) {
    if (auto t = n.as_table()) {
      for (const auto& [k, v] : *t) leaves(v, key + "." + std::string(k.str()));
    } else if (auto a = n.as_array(); a && a->is_array_of_tables()) {
      for (std::size_t i = 0; i < a->size(); ++i) leaves(*a->get(i), key + "." + std::to_string(i));
    } else {
      auto s = n.as_string();
      raw[key] = s ? s->get() : std::string();
    }
  };
  for (const auto& [k, v] : root)
    if (v.is_table() || v.is_array_of_tables()) leaves(v, std::string(k.str()));
  return raw;
}

/// The scenario's schema: the model's keys first (a model may redefine a common key, e.g. its own solver.method
/// choices), then the common keys it does not redefine, then `model` itself.
Schema scenario_schema(const ScenarioSchemas& schemas, const std::string& model,
                       const std::map<std::string, std::string>& raw) {
  std::vector<KeySpec> schema = schemas.keys(model, raw);
  for (const auto& k : schemas.common) {
    bool redefined = false;
    for (auto& m : schema)
      if (m.path == k.path) {
        redefined = true;
        if (!m.derive) m.derive = k.derive;  // a common derived default (the title) carries over
      }
    if (!redefined) schema.push_back(k);
  }
  KeySpec model_key;
  model_key.path = "model";
  model_key.kind = Kind::String;
  model_key.required = true;
  model_key.description = "the model to simulate";
  schema.push_back(model_key);
  return Schema(std::move(schema));
}

/// The walk of the parsed document: every leaf must be a key of the scenario's schema, and is converted and
/// checked against it (convert); the raw sections (sweep) are kept as text.
class DocumentWalk {
 public:
  DocumentWalk(Scenario& sc, const Loader& L) : sc_(sc), L_(L) {
    for (const auto& k : sc_.schema) {
      by_path_[k.path] = &k;
      all_paths_.push_back(k.path);
      const auto dot = k.path.find('.');
      if (dot != std::string::npos) sections_.insert(k.path.substr(0, dot));
      for (auto d = k.path.find('.'); d != std::string::npos; d = k.path.find('.', d + 1))
        prefixes_.insert(k.path.substr(0, d));
    }
  }

  void walk(const toml::table& t, const std::string& prefix) {
    for (const auto& [k, node] : t) {
      const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      if (prefix.empty() && kRawSections.count(key)) {
        std::ostringstream os;
        if (node.is_table()) os << *node.as_table();
        else os << node_text(node);
        sc_.raw_tables[key] = os.str();
        continue;
      }
      auto it = by_path_.find(key);
      if (it == by_path_.end() && node.is_table() &&
          (prefix.empty() ? sections_.count(key) != 0 : prefixes_.count(key) != 0)) {
        walk(*node.as_table(), key);
        continue;
      }
      if (it == by_path_.end() && node.is_array_of_tables() && prefixes_.count(key)) {
        const auto& a = *node.as_array();
        for (std::size_t i = 0; i < a.size(); ++i) walk(*a.get(i)->as_table(), key + "." + std::to_string(i));
        continue;
      }
      if (it == by_path_.end() && prefix.empty() && sections_.count(key))
        throw InputError(L_.origin_of(key, node), key + " must be a table ([" + key + "]), not " + node_type_name(node));
      if (it == by_path_.end()) unknown(key, node, prefix.empty());
      sc_.values[key] = convert(*it->second, node, L_.origin_of(key, node));
    }
  }

 private:
  /// Refuses a key the schema does not have, with the nearest known key or section.
  [[noreturn]] void unknown(const std::string& key, const toml::node& node, bool top) const {
    const Origin where = L_.origin_of(key, node);
    std::string msg = node.is_table() && top ? "unknown section [" + shown(key) + "]" : "unknown key '" + shown(key) + "'";
    // Inside a nested table with a few names (a shape's: { box = ... } or { rod = ... }), the names it takes.
    const auto last = key.rfind('.');
    if (last != std::string::npos && key.find('.') < last) {
      const std::string parent = key.substr(0, last) + ".";
      std::vector<std::string> names;
      for (const auto& p : all_paths_)
        if (p.rfind(parent, 0) == 0) {
          const std::string name = p.substr(parent.size(), p.find('.', parent.size()) - parent.size());
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
      if (!names.empty() && names.size() <= 4) {
        msg += "; allowed under " + shown(key.substr(0, last)) + ":";
        for (std::size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : " ") + names[i];
        throw InputError(where, msg);
      }
    }
    std::vector<std::string> candidates = all_paths_;
    for (const auto& s : sections_) candidates.push_back(s);
    std::string near = closest_match(key, candidates);
    if (near.empty()) {
      // A misspelt leaf in a known section: compare the last component only.
      const auto dot = key.rfind('.');
      if (dot != std::string::npos) {
        std::vector<std::string> leafs;
        for (const auto& p : all_paths_)
          if (p.rfind(key.substr(0, dot + 1), 0) == 0) leafs.push_back(p);
        near = closest_match(key, leafs);
      }
    }
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    else msg += " for model \"" + sc_.model + "\"; see scenarios/README.md for the allowed keys";
    throw InputError(where, msg);
  }

  inline static const std::set<std::string> kRawSections{"sweep"};
  Scenario& sc_;
  const Loader& L_;
  std::map<std::string, const KeySpec*> by_path_;
  std::set<std::string> sections_;  // the top-level sections
  std::set<std::string> prefixes_;  // every proper dotted prefix of a key (tables the walk descends into)
  std::vector<std::string> all_paths_;
};

/// The keys the document does not give: a required one is refused; the others take their schema default (a
/// derived default waits for derive_defaults, once every other key is known).
void apply_defaults(Scenario& sc) {
  for (const auto& k : sc.schema) {
    if (sc.values.count(k.path)) continue;
    if (k.required) throw InputError(Origin{sc.path, 1, 1}, "missing required key '" + k.path + "' (" + k.description + ")");
    if (k.derive) continue;
    if (!k.def_list.empty() || !k.def_strings.empty()) {
      Scenario::Entry e;
      e.list = k.def_list;
      e.strings = k.def_strings;
      e.value = static_cast<long long>(e.list.size() + e.strings.size());
      e.origin = Origin{sc.path, 0, 0};
      e.defaulted = true;
      sc.values[k.path] = e;
    } else if (k.def) {
      Scenario::Entry e;
      e.value = *k.def;
      e.origin = Origin{sc.path, 0, 0};
      e.defaulted = true;
      sc.values[k.path] = e;
    }
  }
}

}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides,
                            const ScenarioSchemas& schemas) {
  toml::table root = parse_document(text, path);
  Loader L{path, {}};
  for (const auto& o : overrides) L.apply_override(root, o);
  Scenario sc;
  sc.path = path;
  sc.text = text;
  sc.overrides = overrides;
  sc.model = model_of(root, L, schemas);
  sc.schema = scenario_schema(schemas, sc.model, raw_leaves(root));
  DocumentWalk(sc, L).walk(root, "");
  apply_defaults(sc);
  scenario_detail::derive_defaults(sc);
  return sc;
}

}  // namespace rollsim

namespace rollsim::scenario_detail {

Scenario::Entry convert_node(const KeySpec& spec, const toml::node& n, const Origin& where) {
  return convert(spec, n, where);
}

std::string shown_key(const std::string& key) { return shown(key); }

void derive_defaults(Scenario& sc) {
  // Computed from the resolved values, so that resolved_text holds every value used.
  for (const auto& k : sc.schema) {
    if (!k.derive || sc.values.count(k.path)) continue;
    Scenario::Entry e;
    e.value = k.derive(sc);
    e.origin = Origin{sc.path, 0, 0};
    e.defaulted = true;
    e.derived = true;
    sc.values[k.path] = e;
  }
}

}  // namespace rollsim::scenario_detail
