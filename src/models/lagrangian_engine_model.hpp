#pragma once
// What a user model gives either contact engine (the planar one, hybrid/contacts.hpp, and the Coulomb cone's,
// hybrid/cone_engine.hpp): its states and witnesses at configuration, M and f, the energies, the extra states' rates,
// its outputs and witnesses, from the compiled kernels. The engines' model interfaces share these members, so one
// template serves both; each system adds its contacts' terms.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian::detail {

template <class Engine>
class UserEngineModel : public Engine, public UserModel {
 public:
  std::string model_name() const override { return "lagrangian"; }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    charts_.on_event(witness, t);
    return Engine::on_event(t, x, mode, witness, dir);
  }

 protected:
  UserEngineModel(std::shared_ptr<const Compiled> c, const double* x0) : UserModel(c), c_(std::move(c)), charts_(c_, x0) {}
  /// The model's states (q, q', its extras) for the engine's configure.
  Signals base_states() const {
    Signals base = state_signals(*c_);
    add_extra_states(*c_, base);
    return base;
  }
  /// The model's witnesses: the user's events, then the orientation charts' (a SolverError before gimbal lock).
  std::vector<Witness> model_witnesses() const { return charts_.after(user_witnesses(*c_)); }

  void mass_and_forces(double t, const double* x, double* M, double* f) const override {
    kernel_mass_and_forces(*c_, t, x, M, f);
  }
  void extra_rates(double t, const double* x, const double* a, double* r) const override {
    if (!c_->n_extra) return;
    c_->extra(inputs_with_accelerations(*c_, t, x, a), r);
  }
  void energies(double t, const double* x, double& T, double& V, double& h, double& E) const override {
    kernel_energies(*c_, t, x, T, V, h, E);
  }
  void user_output_values(double t, const double* x, const double* a, double* y) const override {
    c_->outputs(inputs_with_accelerations(*c_, t, x, a), y);
  }
  void user_witness_values(double t, const double* x, const double* a, double* g) const override {
    if (c_->n_events) c_->witnesses(inputs_with_accelerations(*c_, t, x, a), g);
    charts_.values(t, x, g + c_->n_events);
  }

  std::shared_ptr<const Compiled> c_;
  ChartWitnesses charts_;  ///< the orientation charts' witnesses, after the user's
};

}  // namespace rollsim::lagrangian::detail
