#pragma once
/// \file A model's outputs, declared once: each with its signal (name, unit, description) and its own compute
/// function of a per-evaluation context. HybridSystem::outputs() and compute_outputs() derive from the list, and
/// so does the linearisation's signals_ad() when the functions are generic over the scalar.
///
/// A model defines a context `template <class S> struct Ctx` that holds what its outputs share (e.g. the contact
/// forces, computed once per evaluation) and fills it from (t, x, mode); each output is a captureless (generic)
/// lambda of `const Ctx<S>&`. `Scalars` lists the scalar types the functions are compiled for (double, and an
/// automatic-differentiation scalar for a Linearizable model). Evaluating calls one function pointer per output:
/// no allocation.
///
///   template <class S> struct Ctx { S n, t; };
///   using Outputs = OutputList<Ctx, double>;
///   static const Outputs list{{
///       Outputs::output("normal_force", "N", "...", [](const auto& c) { return c.n; }),
///   }};
///
/// A second formulation of the same model extends a list (extended()): it keeps every output of the first, in
/// its order, names and units, and adds its own; index() finds a column by name.
#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rollsim/core/signal.hpp"

namespace rollsim {

/// The position of the signal `name` in `signals`. \throws std::logic_error naming `what` when there is none
/// (a programming error: the names are the model's own).
inline std::size_t signal_index(const Signals& signals, std::string_view name, std::string_view what) {
  for (std::size_t i = 0; i < signals.size(); ++i)
    if (signals[i].name == name) return i;
  throw std::logic_error(std::string(what) + ": no signal named " + std::string(name));
}

template <template <class> class Ctx, class... Scalars>
class OutputList {
 public:
  /// One output: its signal and its compute function for each scalar type.
  struct Output {
    Signal signal;
    std::tuple<Scalars (*)(const Ctx<Scalars>&)...> compute;

    /// This output with the role r (Signal::as): output(...).as(Role::TotalEnergy). Without it, "output".
    Output as(Role r) const { return {signal.as(r), compute}; }
    Output as(Role r, int ledger_sign) const { return {signal.as(r, ledger_sign), compute}; }
    /// This output as the quantity r of the contact `name` (Signal::of_contact).
    Output of_contact(Role r, std::string name) const { return {signal.of_contact(r, std::move(name)), compute}; }
  };

  /// An output from a captureless lambda of `const Ctx<S>&` (generic when there are several scalar types); its
  /// result is converted to S (an expression of AD scalars becomes an AD scalar).
  template <class F>
  static Output output(std::string name, std::string unit, std::string description, F) {
    return {{std::move(name), std::move(unit), std::move(description)}, {&call<F, Scalars>...}};
  }

  OutputList() = default;
  explicit OutputList(std::vector<Output> list) : list_(std::move(list)) {
    for (const auto& o : list_) {
      for (const auto& s : signals_)
        if (s.name == o.signal.name) throw std::logic_error("outputs: the name " + s.name + " is declared twice");
      signals_.push_back(o.signal);
    }
  }

  /// This list followed by `more` (a formulation's own outputs after the shared ones).
  OutputList extended(std::vector<Output> more) const {
    std::vector<Output> all = list_;
    for (auto& o : more) all.push_back(std::move(o));
    return OutputList(std::move(all));
  }

  OutputList extended(const OutputList& more) const { return extended(more.list_); }

  const Signals& signals() const { return signals_; }
  std::size_t size() const { return list_.size(); }
  /// The column of the output `name`; std::logic_error when there is none.
  std::size_t index(std::string_view name) const { return signal_index(signals_, name, "outputs"); }

  /// Every output at the context c. \param y out, dim size().
  template <class S>
  void compute(const Ctx<S>& c, S* y) const {
    for (std::size_t i = 0; i < list_.size(); ++i) y[i] = std::get<S (*)(const Ctx<S>&)>(list_[i].compute)(c);
  }

  /// The outputs of the given columns only (HybridSystem::compute_output_columns): y[k] for each k in `columns`,
  /// the other entries untouched. \throws std::out_of_range for a column past size().
  template <class S>
  void compute_columns(const Ctx<S>& c, std::span<const std::size_t> columns, S* y) const {
    for (const std::size_t k : columns) y[k] = std::get<S (*)(const Ctx<S>&)>(list_.at(k).compute)(c);
  }

 private:
  template <class F, class S>
  static S call(const Ctx<S>& c) {
    return S(F{}(c));  // a captureless lambda is default-constructible
  }

  std::vector<Output> list_;
  Signals signals_;
};

/// Outputs whose list is known only at run time (the contact engine's, a set per contact; a user model's columns):
/// each with its signal and a std::function of a context `Ctx` (what it needs, such as a contact's index, captured),
/// or a block of several outputs that one function computes together (a compiled kernel of the user's outputs).
/// signals(), index() and compute() as for OutputList. Two outputs of one name are refused where the system is
/// built (build_system), with both declarations named.
template <class Ctx>
class RuntimeOutputList {
 public:
  using Compute = std::function<double(const Ctx&)>;
  /// Writes the block's outputs, in the order of its signals, from y on.
  using BlockCompute = std::function<void(const Ctx&, double* y)>;

  /// One output (its role as Signal::as or Signal::of_contact gives it).
  void add(Signal signal, Compute f) {
    entries_.push_back({1, std::move(f), {}});
    signals_.push_back(std::move(signal));
  }
  /// Outputs computed together; nothing for an empty block.
  void add_block(Signals signals, BlockCompute f) {
    if (signals.empty()) return;
    entries_.push_back({signals.size(), {}, std::move(f)});
    for (auto& s : signals) signals_.push_back(std::move(s));
  }

  const Signals& signals() const { return signals_; }
  std::size_t size() const { return signals_.size(); }
  /// The column of the output `name`; std::logic_error when there is none.
  std::size_t index(std::string_view name) const { return signal_index(signals_, name, "outputs"); }

  /// Every output at the context c. \param y out, dim size().
  void compute(const Ctx& c, double* y) const {
    for (const auto& e : entries_) {
      if (e.one) {
        *y++ = e.one(c);
      } else {
        e.block(c, y);
        y += e.count;
      }
    }
  }

 private:
  struct Entry {
    std::size_t count;
    Compute one;
    BlockCompute block;
  };
  std::vector<Entry> entries_;
  Signals signals_;
};

}  // namespace rollsim
