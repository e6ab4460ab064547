#include "rollsim/scenario/parameters.hpp"

#include <algorithm>

#include "rollsim/scenario/toml_text.hpp"

namespace rollsim {

namespace parameters_detail {

std::string with_default_text(const std::string& description, const std::string& shown) {
  static const std::string mark = "{default}";
  std::string s = description;
  for (auto at = s.find(mark); at != std::string::npos; at = s.find(mark, at + shown.size()))
    s.replace(at, mark.size(), shown);
  return s;
}

std::string number_text(double v) { return toml_text::number(v); }

std::size_t find_name(const std::vector<std::string>& paths, const std::string& name, const std::string& what) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    const std::string leaf = path.substr(path.find('.') + 1);
    if (name == path || name == leaf) return i;
    names.push_back(leaf);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  std::string msg = "'" + name + "' is not one of the " + what + "; allowed names: " + list;
  const std::string near = closest_match(name, names);
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  throw InputError(msg);
}

namespace {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Real: return "a number";
    case Kind::Integer: return "an integer";
    case Kind::Boolean: return "a boolean";
    case Kind::String: return "a string";
    case Kind::RealList: return "a list of numbers";
    case Kind::StringList: return "a list of strings";
  }
  return "?";
}

}  // namespace

void check_kind(const KeySpec& spec, Kind kind, const char* member) {
  if (spec.kind != kind)
    throw std::logic_error(std::string(member) + ": the key is declared as " + kind_name(spec.kind) +
                           " but bound to a member that holds " + kind_name(kind));
}

void check_default(const KeySpec& spec) {
  if (!spec.def) return;
  const Value& v = *spec.def;
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end())
      throw std::logic_error(spec.path + ": the default \"" + *s + "\" is not " + spec.range_text());
    return;
  }
  double x = 0;
  if (const auto* d = std::get_if<double>(&v)) x = *d;
  else if (const auto* i = std::get_if<long long>(&v)) x = static_cast<double>(*i);
  else return;  // a boolean
  if (!in_key_range(spec, x))
    throw std::logic_error(spec.path + ": the default " + number_text(x) + " is outside " + spec.range_text());
}

}  // namespace parameters_detail

namespace {

KeySpec option_spec(std::string path, Kind kind, std::string description) {
  KeySpec k;
  k.path = std::move(path);
  k.kind = kind;
  k.description = std::move(description);
  return k;
}

}  // namespace

KeyBuilder string_option(std::string path, std::vector<std::string> choices, std::string description) {
  KeySpec k = option_spec(std::move(path), Kind::String, std::move(description));
  k.choices = std::move(choices);
  return KeyBuilder(std::move(k));
}

KeyBuilder choice_option(std::string path, std::string description) {
  return KeyBuilder(option_spec(std::move(path), Kind::String, std::move(description)));
}

KeyBuilder boolean_option(std::string path, std::string description) {
  return KeyBuilder(option_spec(std::move(path), Kind::Boolean, std::move(description)));
}

KeyBuilder integer_option(std::string path, std::string description) {
  return KeyBuilder(option_spec(std::move(path), Kind::Integer, std::move(description)));
}

KeyVariant KeyVariant::adding_choices(const std::vector<std::string>& more, const std::string& meaning) && {
  for (const auto& c : more)
    if (std::find(spec_.choices.begin(), spec_.choices.end(), c) == spec_.choices.end()) spec_.choices.push_back(c);
  if (!meaning.empty()) spec_.description += "; " + meaning;
  return std::move(*this);
}

KeyVariant KeyVariant::only_choices(const std::vector<std::string>& kept) && {
  for (const auto& c : kept)
    if (std::find(spec_.choices.begin(), spec_.choices.end(), c) == spec_.choices.end())
      throw std::logic_error(spec_.path + ": \"" + c + "\" is not " + spec_.range_text());
  const auto* def = spec_.def ? std::get_if<std::string>(&*spec_.def) : nullptr;
  if (!kept.empty() && (!def || std::find(kept.begin(), kept.end(), *def) == kept.end())) spec_.def = kept.front();
  spec_.choices = kept;
  return std::move(*this);
}

KeyVariant KeyVariant::with_default(Value v) && {
  spec_.def = std::move(v);
  parameters_detail::check_default(spec_);
  return std::move(*this);
}

KeyVariant KeyVariant::with_unit(std::string unit) && {
  spec_.unit = std::move(unit);
  return std::move(*this);
}

KeyVariant KeyVariant::with_description(std::string description) && {
  spec_.description = std::move(description);
  return std::move(*this);
}

}  // namespace rollsim
