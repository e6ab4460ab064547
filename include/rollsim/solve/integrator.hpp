#pragma once
/// \file Choosing the integrator for a system and solver.method: CVODE (adams, bdf), IDA (bdf for a DAE),
/// ARKODE (erk), or the model's own (exact). The interface is hybrid/integrator.hpp.
#include <memory>

#include "rollsim/hybrid/integrator.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// The integrator for a system and method. Throws InputError for a method the system cannot use.
std::unique_ptr<Integrator> make_integrator(const HybridSystem& system, const SolverOptions& options);

}  // namespace rollsim
