#pragma once
/// \file The summary of a run of a contact engine (the planar one, contacts.hpp, and the cone engine,
/// cone_engine.hpp): each contact's modes in order as symbols, the counts of the events by kind, and the drift of
/// the energy balance relative to the ledger's scale. Internal to the hybrid layer.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"

namespace rollsim {

class ContactSummarizer final : public Summarizer {
 public:
  /// The symbol of contact k's mode in a system mode.
  using Symbol = char (*)(int mode, std::size_t k);
  /// The family an event kind is counted under (n_FAMILY).
  using Family = std::function<std::string(const std::string&)>;
  ContactSummarizer(const HybridSystem& sys, std::vector<std::string> contacts, Symbol symbol, std::string legend,
                    std::vector<std::string> kinds, Family family)
      : contacts_(std::move(contacts)), symbol_(symbol), legend_(std::move(legend)), kinds_(std::move(kinds)),
        family_(std::move(family)), symbols_(contacts_.size()) {
    const Signals& st = sys.states();
    for (std::size_t i = 0; i < st.size(); ++i) {
      if (st[i].name == "dissipated_friction") d_friction_ = i;
      if (st[i].name == "dissipated_impact") d_impact_ = i;
      if (st[i].name == "work_constraints") w_constraints_ = static_cast<int>(i);
      if (st[i].name == "work_surfaces") w_surfaces_ = static_cast<int>(i);
    }
    const Signals& out = sys.outputs();
    t_ = signal_index(out, "kinetic_energy", "contact summary");
    v_ = signal_index(out, "potential_energy", "contact summary");
    h_ = signal_index(out, "energy", "contact summary");
    balance_ = signal_index(out, "energy_balance", "contact summary");
  }
  void on_point(double, const double* x, const double* y, int mode) override {
    if (!y) {  // no energy item selected (select)
      note(mode);
      return;
    }
    if (!have_) {
      e0_ = y[balance_];
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(y[balance_] - e0_));
    // The ledger's scale (ContactEngine::energy_ledger) from the outputs T, V, h, the balance
    // E - W_C - W_S + D, and the engine's states: the dissipated energies and the works of the constraints and of
    // the moving surfaces. The model's works E - h are what the balance holds beyond them.
    const double d_friction = x[d_friction_], d_impact = x[d_impact_];
    const double w_c = w_constraints_ >= 0 ? x[static_cast<std::size_t>(w_constraints_)] : 0.0;
    const double w_s = w_surfaces_ >= 0 ? x[static_cast<std::size_t>(w_surfaces_)] : 0.0;
    const double works = y[balance_] - d_friction - d_impact + w_c + w_s - y[h_];
    scale_ = std::max(scale_, std::max(std::abs(y[h_]), std::abs(y[t_]) + std::abs(y[v_])) + std::abs(works) +
                                  std::abs(w_c) + std::abs(w_s) + std::abs(d_friction) + std::abs(d_impact));
    note(mode);
  }
  void on_event(double, const std::string& kind, int, int after, const double*) override {
    ++counts_[family_(kind)];
    note(after);
  }
  std::vector<SummaryItem> items() const override {
    std::vector<SummaryItem> v;
    for (std::size_t k = 0; k < symbols_.size(); ++k)
      v.push_back({"symbols_" + contacts_[k], 0, symbols_[k], "",
                   "modes of contact " + contacts_[k] + " in order (" + legend_ + ")", false});
    for (const std::string& kind : kinds_) {
      auto it = counts_.find(kind);
      v.push_back({std::string("n_") + kind, it == counts_.end() ? 0.0 : static_cast<double>(it->second), "", "",
                   std::string("events of kind ") + kind, true});
    }
    v.push_back({kEnergyDriftKeys[0], e0_, "", "J", "initial energy balance", false});
    v.push_back({kEnergyDriftKeys[1], drift_, "", "J", "largest drift of the energy balance", false});
    // Relative to the largest energy scale, never to |h| alone (0 for a start at rest at zero potential); the
    // balance is within the scale at every point, so the drift is 0 when the scale stays 0.
    v.push_back({kEnergyDriftKeys[2], scale_ > 0 ? drift_ / scale_ : 0.0, "", "1",
                 "largest drift, relative to the largest max(|h|, |T| + |V|) + |works| + |D|", false});
    return v;
  }
  /// Only the energy items read the outputs; the symbols and counts come from the modes and events.
  void select(const std::vector<std::string>& keys) override { reads_outputs_ = names_any(keys, kEnergyDriftKeys); }
  bool reads_outputs() const override { return reads_outputs_; }
  /// A sample within a step has the mode its start noted: without the energy items it changes nothing.
  bool reads_samples() const override { return reads_outputs_; }

 private:
  void note(int mode) {
    for (std::size_t k = 0; k < symbols_.size(); ++k) {
      const char c = symbol_(mode, k);
      std::string& s = symbols_[k];
      if (s.size() < kMaxSymbols && (s.empty() || s.back() != c)) s.push_back(c);
      else if (s.size() == kMaxSymbols && s.back() != c) s += "...";
    }
  }
  static constexpr std::size_t kMaxSymbols = 200;
  std::vector<std::string> contacts_;
  Symbol symbol_;
  std::string legend_;
  std::vector<std::string> kinds_;
  Family family_;
  std::vector<std::string> symbols_;
  std::map<std::string, long> counts_;
  bool have_ = false, reads_outputs_ = true;
  double e0_ = 0, drift_ = 0, scale_ = 0;
  std::size_t d_friction_ = 0, d_impact_ = 0;  ///< where the engine's dissipation states are in x
  int w_constraints_ = -1, w_surfaces_ = -1;   ///< and its work states, -1 where it has none
  std::size_t t_ = 0, v_ = 0, h_ = 0, balance_ = 0;  ///< the columns of T, V, h and the balance in y
};


}  // namespace rollsim
