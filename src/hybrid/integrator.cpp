#include "rollsim/hybrid/integrator.hpp"

namespace rollsim {

long SolverStats::get(const std::string& name) const {
  for (const auto& [k, v] : counts)
    if (k == name) return v;
  return 0;
}

}  // namespace rollsim
