#pragma once
/// \file The user model (model = "lagrangian"): a Lagrangian, planar bodies, generalized forces, holonomic
/// constraints, one Coulomb contact, outputs and events written in the scenario, derived with GiNaC
/// (symbolic/lagrange.hpp) and compiled (symbolic/codegen.hpp). docs/user-models.md is the reference.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "rollsim/hybrid/scene.hpp"
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
  /// Built from a prototype of the same model (a sweep point after the process's first; docs/sweep.md): no GiNaC,
  /// no lock; the times above are the prototype's.
  bool from_prototype = false;
  std::string library;  ///< the compiled kernels' shared object
};

/// The number of user models this process has derived in full (GiNaC, under its lock): a sweep of a smooth model
/// derives it once, however many threads run it.
std::size_t full_builds();

/// Drops the prototypes of smooth user models that this process and this thread keep: the next build of each model
/// is in full. (Other threads keep their own copies.) For comparing a point built from a prototype with one built
/// in full.
void forget_prototypes();

namespace detail {
struct Compiled;
}

/// What every system of the user model shares (find it with dynamic_cast on a HybridSystem): its setup times and
/// its scene, the drawables of its bodies, contact shapes and [[draw]] entries (docs/scene.md), whose values per
/// sample come from the compiled kernel rs_scene.
class UserModel : public SceneSystem {
 public:
  const SetupTimes& setup_times() const;
  const Scene& scene() const override;
  void scene_values(double t, const double* x, const double* y, int mode, double* v) const override;

 protected:
  explicit UserModel(std::shared_ptr<const detail::Compiled> compiled) : compiled_(std::move(compiled)) {}

 private:
  std::shared_ptr<const detail::Compiled> compiled_;
};

}  // namespace rollsim::lagrangian
