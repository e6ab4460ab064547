#pragma once
/// \file The user model (model = "lagrangian"): a Lagrangian, planar bodies, generalized forces, holonomic
/// constraints, one Coulomb contact, outputs and events written in the scenario, derived with GiNaC
/// (symbolic/lagrange.hpp) and compiled (symbolic/codegen.hpp). docs/user-models.md is the reference.
#include <string>

#include "rollsim/models/model_entry.hpp"

namespace rollsim::lagrangian {

ModelEntry model_entry();

/// What setting up a user model took, in wall-clock seconds: deriving its equations (GiNaC), writing the
/// kernels' C++ source, and compiling it (0 when the library came from the cache). For the terminal only: these
/// vary from run to run, so they are never written into a result file.
struct SetupTimes {
  double derive_seconds = 0;
  double generate_seconds = 0;
  double compile_seconds = 0;
  bool from_cache = false;
  /// Built from this thread's prototype of the same model (a sweep point after the thread's first): no GiNaC, no
  /// lock; the times above are the prototype's.
  bool from_prototype = false;
  std::string library;  ///< the compiled kernels' shared object
};

/// Implemented by the systems of the user model (find it with dynamic_cast on a HybridSystem).
class UserModel {
 public:
  virtual ~UserModel() = default;
  virtual const SetupTimes& setup_times() const = 0;
};

}  // namespace rollsim::lagrangian
