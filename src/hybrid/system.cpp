#include "rollsim/hybrid/system.hpp"

#include "rollsim/solve/integrator.hpp"

namespace rollsim {

std::unique_ptr<Integrator> HybridSystem::make_exact_integrator(const SolverOptions&) const { return nullptr; }

}  // namespace rollsim
