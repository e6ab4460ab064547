#pragma once
/// \file Model parameters and initial values declared once. A declaration binds one scenario key (its path,
/// unit, description and range, given as a KeyBuilder) to a member of a struct T (a number, an optional
/// number or a list of numbers) or to an element of a state vector T = std::array<double, N>. A list of them,
/// Parameters<T>, gives everything else:
///   - the schema's KeySpecs, with each default read off a default-constructed T (the struct's default member
///     initializer is the one place a default is written) or computed by a derived rule on T;
///   - the reader: read(scenario) fills a T from a validated scenario;
///   - typed access by name: set(t, "wheel_mass", 2.0) (checked against the key's range) and get(t, "wheel_mass").
/// A description may hold "{default}", replaced by the default as the key table shows it.
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

/// How a declared key behaves when the scenario does not give it.
enum class Absent {
  Default,   ///< the schema default, read off T{} (the usual case); an optional member has none
  Derived,   ///< the schema computes it from the other values (Parameter::derived)
  Keep,      ///< no schema default, nothing in /scenario/resolved; the reader keeps T{}'s value (shown as the default)
  Unset,     ///< no schema default, nothing in /scenario/resolved; the model decides (shown as "none")
};

/// One declared key bound to a place in T. Build it with param(&T::member, key) or element<T>(index, key).
template <class T>
class Parameter {
 public:
  Parameter(KeySpec spec, std::function<double*(T&)> real, std::function<std::optional<double>*(T&)> optional,
            std::function<std::vector<double>*(T&)> list)
      : spec_(std::move(spec)), real_(std::move(real)), optional_(std::move(optional)), list_(std::move(list)) {}

  /// The default is computed from the other values of T by `rule`; `text` shows it in descriptions and tables.
  Parameter derived(std::string text, std::function<double(const T&)> rule) && {
    absent_ = Absent::Derived;
    derived_text_ = std::move(text);
    rule_ = std::move(rule);
    return std::move(*this);
  }
  /// No schema default: when absent the reader keeps T{}'s value, which tables show as the default.
  Parameter keep_when_absent() && {
    absent_ = Absent::Keep;
    return std::move(*this);
  }
  /// No schema default and no value: the model checks whether the key was given.
  Parameter unset_when_absent() && {
    absent_ = Absent::Unset;
    return std::move(*this);
  }

  const KeySpec& spec() const { return spec_; }
  Absent absent() const { return absent_; }
  const std::string& derived_text() const { return derived_text_; }
  const std::function<double(const T&)>& rule() const { return rule_; }
  bool is_list() const { return static_cast<bool>(list_); }
  bool is_optional() const { return static_cast<bool>(optional_); }
  double* real(T& t) const { return real_ ? real_(t) : nullptr; }
  std::optional<double>* optional(T& t) const { return optional_ ? optional_(t) : nullptr; }
  std::vector<double>* list(T& t) const { return list_ ? list_(t) : nullptr; }

 private:
  KeySpec spec_;
  std::function<double*(T&)> real_;
  std::function<std::optional<double>*(T&)> optional_;
  std::function<std::vector<double>*(T&)> list_;
  Absent absent_ = Absent::Default;
  std::string derived_text_;
  std::function<double(const T&)> rule_;
};

/// A number member.
template <class T>
Parameter<T> param(double T::*member, KeySpec key) {
  return Parameter<T>(std::move(key), [member](T& t) { return &(t.*member); }, nullptr, nullptr);
}
/// An optional number: absent means no value (std::nullopt), and the key has no default.
template <class T>
Parameter<T> param(std::optional<double> T::*member, KeySpec key) {
  return Parameter<T>(std::move(key), nullptr, [member](T& t) { return &(t.*member); }, nullptr);
}
/// A list of numbers (a RealList key).
template <class T>
Parameter<T> param(std::vector<double> T::*member, KeySpec key) {
  return Parameter<T>(std::move(key), nullptr, nullptr, [member](T& t) { return &(t.*member); });
}
/// Element `index` of a state vector T = std::array<double, N> (an initial value).
template <class T>
Parameter<T> element(std::size_t index, KeySpec key) {
  static_assert(std::is_same_v<typename T::value_type, double>, "a state vector of doubles");
  return Parameter<T>(std::move(key), [index](T& t) { return &t.at(index); }, nullptr, nullptr);
}

namespace parameters_detail {
/// `description` with "{default}" replaced by `shown`.
std::string with_default_text(const std::string& description, const std::string& shown);
/// A number as scenario text ("9.81", "0").
std::string number_text(double v);
/// The declared name that `name` means ("wheel_mass" or "parameters.wheel_mass"), or an InputError naming
/// the allowed names (and the closest one).
std::size_t find_name(const std::vector<std::string>& paths, const std::string& name, const std::string& what);
}  // namespace parameters_detail

/// The declarations of one struct, in the order the schema lists them.
template <class T>
class Parameters {
 public:
  /// \param what names the set in messages, e.g. "tipping_table parameters". \param defaults the values of
  /// absent keys (T{} unless a state vector needs other zeros).
  Parameters(std::string what, std::vector<Parameter<T>> list, T defaults = T{})
      : data_(std::make_shared<Data>(Data{std::move(what), std::move(list), std::move(defaults)})) {}

  const std::vector<Parameter<T>>& list() const { return data_->list; }
  const T& defaults() const { return data_->defaults; }

  /// The schema's keys, defaults filled in (see Absent).
  std::vector<KeySpec> keys() const {
    std::vector<KeySpec> out;
    for (const auto& p : data_->list) {
      KeySpec k = p.spec();
      T d = data_->defaults;
      std::optional<double> kept;
      if (p.real(d)) kept = *p.real(d);
      switch (p.absent()) {
        case Absent::Default:
          if (p.real(d)) k.def = *p.real(d);
          if (p.list(d)) k.def_list = *p.list(d);
          if (p.optional(d) && *p.optional(d)) k.def = **p.optional(d);
          break;
        case Absent::Derived: {
          auto data = data_;
          auto rule = p.rule();
          k.derive = [data, rule](const Scenario& sc) -> Value { return rule(read_given(*data, sc)); };
          break;
        }
        case Absent::Keep:
        case Absent::Unset:
          break;
      }
      if (p.absent() == Absent::Derived) k.default_text = p.derived_text();
      if (p.absent() == Absent::Keep && kept) k.default_text = parameters_detail::number_text(*kept);
      const std::string shown = k.def ? to_string(*k.def) : k.default_text;
      k.description = parameters_detail::with_default_text(k.description, shown);
      out.push_back(std::move(k));
    }
    return out;
  }

  /// The values of a validated scenario: every given or defaulted key; absent ones as Absent says.
  T read(const Scenario& sc) const { return read_given(*data_, sc); }

  /// Sets the value of `name` ("wheel_mass" or "parameters.wheel_mass") after checking it against the key's
  /// range. Throws InputError (at "set NAME") for an unknown name, a value out of range, or a list key.
  void set(T& t, const std::string& name, double value) const {
    const Parameter<T>& p = find(name);
    check_key_value(p.spec(), value, Origin{"set " + name, 0, 0}, parameters_detail::number_text(value));
    if (double* r = p.real(t)) *r = value;
    else if (std::optional<double>* o = p.optional(t)) *o = value;
    else throw InputError(Origin{"set " + name, 0, 0}, p.spec().path + " is a list of numbers, not a number");
  }
  /// The value of `name`. Throws InputError for an unknown name, an unset optional value or a list key.
  double get(const T& t, const std::string& name) const {
    const Parameter<T>& p = find(name);
    T& m = const_cast<T&>(t);  // read only
    if (const double* r = p.real(m)) return *r;
    if (const std::optional<double>* o = p.optional(m)) {
      if (*o) return **o;
      throw InputError(Origin{"get " + name, 0, 0}, p.spec().path + " has no value");
    }
    throw InputError(Origin{"get " + name, 0, 0}, p.spec().path + " is a list of numbers, not a number");
  }
  /// The paths of every declared key, in order.
  std::vector<std::string> paths() const {
    std::vector<std::string> v;
    for (const auto& p : data_->list) v.push_back(p.spec().path);
    return v;
  }

 private:
  struct Data {
    std::string what;
    std::vector<Parameter<T>> list;
    T defaults;
  };

  static T read_given(const Data& d, const Scenario& sc) {
    T t = d.defaults;
    for (const auto& p : d.list) {
      const std::string& key = p.spec().path;
      if (std::optional<double>* o = p.optional(t)) {
        *o = sc.optional_real(key);
      } else if (!sc.has(key)) {
        continue;  // a derived value not yet computed, or a key kept or left unset when absent
      } else if (double* r = p.real(t)) {
        *r = sc.real(key);
      } else if (std::vector<double>* l = p.list(t)) {
        *l = sc.real_list(key);
      }
    }
    return t;
  }

  const Parameter<T>& find(const std::string& name) const {
    return data_->list[parameters_detail::find_name(paths(), name, data_->what)];
  }

  std::shared_ptr<const Data> data_;
};

}  // namespace rollsim
