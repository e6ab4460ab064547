#pragma once
/// \file The directions of each mode's witnesses, for the integrators that hand them to a root finder.
#include <utility>
#include <vector>

#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// Asks a system for a mode's witnesses once per mode (a Filippov model has three) and keeps their directions, so
/// that a restart at an event allocates nothing: WitnessSystem::witnesses returns a new list of named witnesses.
/// clear() when the integrator is bound to another system.
class ModeDirections {
 public:
  const std::vector<int>& of(const WitnessSystem& sys, int mode) {
    for (const auto& [m, d] : modes_)
      if (m == mode) return d;
    std::vector<int> d;
    for (const auto& w : sys.witnesses(mode)) d.push_back(w.direction);
    modes_.emplace_back(mode, std::move(d));
    return modes_.back().second;
  }
  void clear() { modes_.clear(); }

 private:
  std::vector<std::pair<int, std::vector<int>>> modes_;
};

}  // namespace rollsim
