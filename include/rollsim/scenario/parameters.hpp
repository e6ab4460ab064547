#pragma once
/// \file Scenario keys declared once. A declaration binds one scenario key (its path, unit, description and range
/// or choices, given as a KeyBuilder) to a member of a struct T: a number, an optional number, a list of numbers,
/// a string (free, or one of the key's choices), a boolean, an integer, a list of strings, a choice mapped to
/// values of the member (an enum, or stop/record as a bool), or one number with a table of numbers by name
/// (solver.atol); or to an element of a state vector T = std::array<double, N>. A list of them, Parameters<T>,
/// gives everything else:
///   - the schema's KeySpecs, with each default read off a default-constructed T (the struct's default member
///     initializer is the one place a default is written) or computed by a derived rule on T;
///   - the reader: read(scenario) fills a T from a validated scenario;
///   - typed access by name: set(t, "wheel_mass", 2.0) (checked against the key's range) and get(t, "wheel_mass");
///   - a model's variant of a shared key (KeyVariant, from key(path)): more or fewer choices, another default.
/// A description may hold "{default}", replaced by the default as the key table shows it. The option structs of
/// the layers above (SimulationOptions, GrowthOptions, ...) are declared the same way, with the builders below
/// that take no default (string_option, boolean_option, integer_option, choice_option): the member has it.
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
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

/// The numbers of a key that is one number or a table by name (solver.atol = { theta1 = 1e-9 }), by name.
using NumbersByName = std::vector<std::pair<std::string, double>>;

/// Where a declared key's value lives in a T: a pointer to a member of one of the types a key can hold.
using ValuePlace = std::variant<double*, std::optional<double>*, std::vector<double>*, std::string*, bool*, long*, int*,
                                std::vector<std::string>*>;

/// One declared key bound to a place in T. Build it with param(&T::member, key), element<T>(index, key),
/// choice(&T::member, key, names), by_name(&T::number, &T::table, key), or lift one with within(&T::part, ...).
template <class T>
class Parameter {
 public:
  /// The place of the value in a T; for a choice mapped to other values, the text of the member's value and
  /// the setter from a text instead; for a by-name key, the table beside the number.
  struct Access {
    std::function<ValuePlace(T&)> place;
    std::function<std::string(const T&)> choice_get;
    std::function<void(T&, const std::string&)> choice_set;
    std::function<NumbersByName*(T&)> by_name;
  };

  Parameter(KeySpec spec, Access access) : spec_(std::move(spec)), access_(std::move(access)) {}
  /// A number, an optional number or a list of numbers (the form model parameters are declared in).
  Parameter(KeySpec spec, std::function<double*(T&)> real, std::function<std::optional<double>*(T&)> optional,
            std::function<std::vector<double>*(T&)> list)
      : spec_(std::move(spec)) {
    if (real) access_.place = [real](T& t) -> ValuePlace { return real(t); };
    if (optional) access_.place = [optional](T& t) -> ValuePlace { return optional(t); };
    if (list) access_.place = [list](T& t) -> ValuePlace { return list(t); };
  }

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
  const Access& access() const { return access_; }
  bool is_list() const { return holds<std::vector<double>*>(); }
  bool is_optional() const { return holds<std::optional<double>*>(); }
  double* real(T& t) const { return get<double*>(t); }
  std::optional<double>* optional(T& t) const { return get<std::optional<double>*>(t); }
  std::vector<double>* list(T& t) const { return get<std::vector<double>*>(t); }
  /// The place of the value, when it is not a mapped choice.
  std::optional<ValuePlace> place(T& t) const {
    if (!access_.place) return std::nullopt;
    return access_.place(t);
  }

  /// The same declaration for a struct U that holds a T at `part` (SimulationOptions::solver).
  template <class U>
  Parameter<U> within(T U::*part) const {
    typename Parameter<U>::Access a;
    if (access_.place) a.place = [part, f = access_.place](U& u) { return f(u.*part); };
    if (access_.choice_get) a.choice_get = [part, f = access_.choice_get](const U& u) { return f(u.*part); };
    if (access_.choice_set)
      a.choice_set = [part, f = access_.choice_set](U& u, const std::string& s) { f(u.*part, s); };
    if (access_.by_name) a.by_name = [part, f = access_.by_name](U& u) { return f(u.*part); };
    Parameter<U> p(spec_, std::move(a));
    if (absent_ == Absent::Derived) {
      return std::move(p).derived(derived_text_, [part, r = rule_](const U& u) { return r(u.*part); });
    }
    if (absent_ == Absent::Keep) return std::move(p).keep_when_absent();
    if (absent_ == Absent::Unset) return std::move(p).unset_when_absent();
    return p;
  }

 private:
  template <class P>
  bool holds() const {
    if (!access_.place) return false;
    T probe{};
    return std::holds_alternative<P>(access_.place(probe));
  }
  template <class P>
  P get(T& t) const {
    if (!access_.place) return nullptr;
    const ValuePlace v = access_.place(t);
    const P* p = std::get_if<P>(&v);
    return p ? *p : nullptr;
  }

  KeySpec spec_;
  Access access_;
  Absent absent_ = Absent::Default;
  std::string derived_text_;
  std::function<double(const T&)> rule_;
};

namespace parameters_detail {
/// `description` with "{default}" replaced by `shown`.
std::string with_default_text(const std::string& description, const std::string& shown);
/// A number as scenario text ("9.81", "0").
std::string number_text(double v);
/// The declared name that `name` means ("wheel_mass" or "parameters.wheel_mass"), or an InputError naming
/// the allowed names (and the closest one).
std::size_t find_name(const std::vector<std::string>& paths, const std::string& name, const std::string& what);
/// Throws std::logic_error unless the key's kind is `kind`: a declaration binding a key to a member of another
/// type is a defect of the program, found when the declaration is built.
void check_kind(const KeySpec& spec, Kind kind, const char* member);
/// Throws std::logic_error unless the default `def` of a declared key is one its schema accepts (a number in
/// the range, a string among the choices): a default the loader would refuse is a defect of the program.
void check_default(const KeySpec& spec);
/// The kind of key a member type holds.
template <class M>
constexpr Kind kind_of() {
  if constexpr (std::is_same_v<M, double> || std::is_same_v<M, std::optional<double>>) return Kind::Real;
  else if constexpr (std::is_same_v<M, std::vector<double>>) return Kind::RealList;
  else if constexpr (std::is_same_v<M, std::string>) return Kind::String;
  else if constexpr (std::is_same_v<M, bool>) return Kind::Boolean;
  else if constexpr (std::is_same_v<M, long> || std::is_same_v<M, int>) return Kind::Integer;
  else if constexpr (std::is_same_v<M, std::vector<std::string>>) return Kind::StringList;
  else static_assert(sizeof(M) == 0, "a key binds a double, optional<double>, vector<double>, string, bool, long, int "
                                     "or vector<string> member");
}
}  // namespace parameters_detail

/// A member of one of the types a key can hold (see ValuePlace); the key's kind must match it.
template <class T, class M>
Parameter<T> param(M T::*member, KeySpec key) {
  parameters_detail::check_kind(key, parameters_detail::kind_of<M>(), key.path.c_str());
  typename Parameter<T>::Access a;
  a.place = [member](T& t) -> ValuePlace { return &(t.*member); };
  return Parameter<T>(std::move(key), std::move(a));
}
/// Element `index` of a state vector T = std::array<double, N> (an initial value).
template <class T>
Parameter<T> element(std::size_t index, KeySpec key) {
  static_assert(std::is_same_v<typename T::value_type, double>, "a state vector of doubles");
  parameters_detail::check_kind(key, Kind::Real, key.path.c_str());
  typename Parameter<T>::Access a;
  a.place = [index](T& t) -> ValuePlace { return &t.at(index); };
  return Parameter<T>(std::move(key), std::move(a));
}
/// A string key whose choices stand for values of a member of any type (an enum; a bool such as stop/record):
/// `names` lists each choice with its value, in the order the key's choices show them; they are the key's
/// choices. The default is the name of T{}'s value.
template <class T, class M>
Parameter<T> choice(M T::*member, KeySpec key, std::vector<std::pair<std::string, M>> names) {
  parameters_detail::check_kind(key, Kind::String, key.path.c_str());
  key.choices.clear();
  for (const auto& n : names) key.choices.push_back(n.first);
  typename Parameter<T>::Access a;
  const std::string path = key.path;
  a.choice_get = [member, names, path](const T& t) {
    for (const auto& [name, value] : names)
      if (t.*member == value) return name;
    throw std::logic_error(path + ": the member's value has no name among the key's choices");
  };
  a.choice_set = [member, names](T& t, const std::string& s) {
    for (const auto& [name, value] : names)
      if (s == name) t.*member = value;
  };
  return Parameter<T>(std::move(key), std::move(a));
}
/// One number for everything, or a table of numbers by name (solver.atol = { theta1 = 1e-9 }): `number` holds
/// the one number (the default of the names not in the table), `table` the named numbers.
template <class T>
Parameter<T> by_name(double T::*number, NumbersByName T::*table, KeySpec key) {
  parameters_detail::check_kind(key, Kind::Real, key.path.c_str());
  key.by_name = true;
  typename Parameter<T>::Access a;
  a.place = [number](T& t) -> ValuePlace { return &(t.*number); };
  a.by_name = [table](T& t) { return &(t.*table); };
  return Parameter<T>(std::move(key), std::move(a));
}

/// A string key bound to a member: free text when `choices` is empty; the default is the member's.
KeyBuilder string_option(std::string path, std::vector<std::string> choices, std::string description);
/// A string key whose choices come from choice(...): the default is the name of the member's value.
KeyBuilder choice_option(std::string path, std::string description);
/// A boolean key bound to a member; the default is the member's.
KeyBuilder boolean_option(std::string path, std::string description);
/// An integer key bound to a member; the default is the member's.
KeyBuilder integer_option(std::string path, std::string description);

/// A model's variant of a shared key: the shared declaration (Parameters::key) with the changes one model
/// makes, each named, so that the model states what it changes and takes the rest (the choices it keeps, the
/// range, the unit) from the declaration. Converts to a KeySpec.
class KeyVariant {
 public:
  explicit KeyVariant(KeySpec shared) : spec_(std::move(shared)) {}
  /// More choices after the shared ones; `meaning` is appended to the description ("; " + meaning).
  KeyVariant adding_choices(const std::vector<std::string>& more, const std::string& meaning) &&;
  /// Only these of the shared choices (std::logic_error for one that is not shared); the default becomes the
  /// first kept choice unless the shared default is kept.
  KeyVariant only_choices(const std::vector<std::string>& kept) &&;
  KeyVariant with_default(Value v) &&;  ///< another default (std::logic_error unless the key accepts it)
  KeyVariant with_unit(std::string unit) &&;
  KeyVariant with_description(std::string description) &&;
  operator KeySpec() && { return std::move(spec_); }

 private:
  KeySpec spec_;
};

/// The declarations of one struct, in the order the schema lists them.
template <class T>
class Parameters {
 public:
  /// \param what names the set in messages, e.g. "tipping_table parameters". \param defaults the values of
  /// absent keys (T{} unless a state vector needs other zeros, or a model's variant has other defaults).
  Parameters(std::string what, std::vector<Parameter<T>> list, T defaults = T{})
      : data_(std::make_shared<Data>(Data{std::move(what), std::move(list), std::move(defaults)})) {}

  const std::vector<Parameter<T>>& list() const { return data_->list; }
  const T& defaults() const { return data_->defaults; }
  const std::string& what() const { return data_->what; }

  /// The schema's keys, defaults filled in (see Absent).
  std::vector<KeySpec> keys() const {
    std::vector<KeySpec> out;
    for (const auto& p : data_->list) out.push_back(key_of(p));
    return out;
  }
  /// The schema's key of `path` ("solver.method"), its default filled in; std::logic_error if not declared.
  KeySpec key(const std::string& path) const {
    for (const auto& p : data_->list)
      if (p.spec().path == path) return key_of(p);
    throw std::logic_error(path + " is not one of the " + data_->what);
  }

  /// The values of a validated scenario: every given or defaulted key; absent ones as Absent says.
  T read(const Scenario& sc) const { return read_given(*data_, sc); }

  /// Sets the value of `name` ("wheel_mass" or "parameters.wheel_mass") after checking it against the key's
  /// range. Throws InputError (at "set NAME") for an unknown name, a value out of range, or a key that is not a number.
  void set(T& t, const std::string& name, double value) const {
    const Parameter<T>& p = find(name);
    check_key_value(p.spec(), value, Origin{"set " + name, 0, 0}, parameters_detail::number_text(value));
    if (double* r = p.real(t)) *r = value;
    else if (std::optional<double>* o = p.optional(t)) *o = value;
    else throw InputError(Origin{"set " + name, 0, 0}, p.spec().path + not_a_number(p));
  }
  /// The value of `name`. Throws InputError for an unknown name, an unset optional value or a key that is not a number.
  double get(const T& t, const std::string& name) const {
    const Parameter<T>& p = find(name);
    T& m = const_cast<T&>(t);  // read only
    if (const double* r = p.real(m)) return *r;
    if (const std::optional<double>* o = p.optional(m)) {
      if (*o) return **o;
      throw InputError(Origin{"get " + name, 0, 0}, p.spec().path + " has no value");
    }
    throw InputError(Origin{"get " + name, 0, 0}, p.spec().path + not_a_number(p));
  }
  /// The names a scenario gives in the table of a by-name key (solver.atol = { theta1 = 1e-9 }), each with where
  /// it is written, for the checks that know the allowed names; std::logic_error if `path` is not such a key.
  std::vector<std::pair<std::string, Origin>> names_given(const Scenario& sc, const std::string& path) const {
    for (const auto& p : data_->list) {
      if (p.spec().path != path) continue;
      if (!p.access().by_name) break;
      std::vector<std::pair<std::string, Origin>> v;
      for (const auto& [name, value] : sc.by_name(path)) v.emplace_back(name, value.second);
      return v;
    }
    throw std::logic_error(path + " is not a key of the " + data_->what + " that takes a table by name");
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

  KeySpec key_of(const Parameter<T>& p) const {
    KeySpec k = p.spec();
    T d = data_->defaults;
    std::optional<double> kept;
    if (p.real(d)) kept = *p.real(d);
    switch (p.absent()) {
      case Absent::Default:
        if (p.access().choice_get) k.def = p.access().choice_get(d);
        if (const auto place = p.place(d)) std::visit([&k](auto* v) { set_default(k, *v); }, *place);
        parameters_detail::check_default(k);
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
    return k;
  }

  static void set_default(KeySpec& k, double v) { k.def = v; }
  static void set_default(KeySpec& k, const std::optional<double>& v) {
    if (v) k.def = *v;
  }
  static void set_default(KeySpec& k, const std::vector<double>& v) { k.def_list = v; }
  static void set_default(KeySpec& k, const std::string& v) { k.def = v; }
  static void set_default(KeySpec& k, bool v) { k.def = v; }
  static void set_default(KeySpec& k, long v) { k.def = static_cast<long long>(v); }
  static void set_default(KeySpec& k, int v) { k.def = static_cast<long long>(v); }
  static void set_default(KeySpec& k, const std::vector<std::string>& v) { k.def_strings = v; }

  static void read_into(double* v, const Scenario& sc, const std::string& key) { *v = sc.real(key); }
  static void read_into(std::optional<double>* v, const Scenario& sc, const std::string& key) { *v = sc.real(key); }
  static void read_into(std::vector<double>* v, const Scenario& sc, const std::string& key) { *v = sc.real_list(key); }
  static void read_into(std::string* v, const Scenario& sc, const std::string& key) { *v = sc.string(key); }
  static void read_into(bool* v, const Scenario& sc, const std::string& key) { *v = sc.boolean(key); }
  static void read_into(long* v, const Scenario& sc, const std::string& key) { *v = static_cast<long>(sc.integer(key)); }
  static void read_into(int* v, const Scenario& sc, const std::string& key) { *v = static_cast<int>(sc.integer(key)); }
  static void read_into(std::vector<std::string>* v, const Scenario& sc, const std::string& key) {
    *v = sc.string_list(key);
  }

  static T read_given(const Data& d, const Scenario& sc) {
    T t = d.defaults;
    for (const auto& p : d.list) {
      const std::string& key = p.spec().path;
      if (std::optional<double>* o = p.optional(t)) {
        *o = sc.optional_real(key);
        continue;
      }
      if (!sc.has(key)) continue;  // a derived value not yet computed, or a key kept or left unset when absent
      if (p.access().choice_set) p.access().choice_set(t, sc.string(key));
      if (const auto place = p.place(t)) std::visit([&](auto* v) { read_into(v, sc, key); }, *place);
      if (p.access().by_name) {
        NumbersByName& table = *p.access().by_name(t);
        table.clear();
        for (const auto& [name, value] : sc.by_name(key)) table.emplace_back(name, value.first);
      }
    }
    return t;
  }

  /// Why a key cannot be set or read as a number.
  static std::string not_a_number(const Parameter<T>& p) {
    return p.is_list() ? " is a list of numbers, not a number" : " is not a number";
  }

  const Parameter<T>& find(const std::string& name) const {
    return data_->list[parameters_detail::find_name(paths(), name, data_->what)];
  }

  std::shared_ptr<const Data> data_;
};

/// The declarations of `inner` for a struct U that holds its struct at `part`, to append to U's list.
template <class U, class T>
std::vector<Parameter<U>> within(T U::*part, const Parameters<T>& inner) {
  std::vector<Parameter<U>> out;
  for (const auto& p : inner.list()) out.push_back(p.within(part));
  return out;
}

}  // namespace rollsim
