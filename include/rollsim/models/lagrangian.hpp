#pragma once
/// \file The user model (model = "lagrangian"): a Lagrangian, planar bodies, generalized forces, holonomic
/// constraints, one Coulomb contact, outputs and events written in the scenario, derived with GiNaC
/// (symbolic/lagrange.hpp) and compiled (symbolic/codegen.hpp). docs/user-models.md is the reference.
#include "rollsim/models/model_entry.hpp"

namespace rollsim::lagrangian {

ModelEntry model_entry();

}  // namespace rollsim::lagrangian
