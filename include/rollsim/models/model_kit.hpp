#pragma once
/// \file The model kit: what every model would otherwise copy from another, derived once.
///
/// - `model_keys(parameters, initial_values, more)`: a model's schema, its [parameters] and [initial] keys (each
///   declared once in its Parameters lists), the title, then `more` (the keys of the analyses it opts into).
/// - `SmoothModel<M>`: a smooth model (an ODE without events, linearisable) from its physics alone. `M` is a struct
///   of static members:
///
///       struct Pendulum {
///         static constexpr const char* name = "double_pendulum";      // the value of `model = "..."`
///         static constexpr const char* description = "...";           // one line for --help
///         using Params = ...;                                         // bound by parameters()
///         using Initial = std::array<double, 4>;                      // bound by initial_values()
///         static constexpr int kStates = 5, kDegreesOfFreedom = 2;
///         static const Parameters<Params>& parameters();
///         static const Parameters<Initial>& initial_values();
///         static const Signals& states();                             // kStates signals
///         static const Signals& inputs();                             // the linearisation's inputs u
///         static std::vector<double> input_values(const Params&);     // u in a run (the operating point)
///         static const Outputs& outputs();                            // an OutputList<Ctx, double, Linearizable::AD>
///         template <class S> static Ctx<S> context(const Params&, const S* x, const S* u);
///         template <class S> static void rhs(const Params&, const S* x, const S* u, S* xdot);
///         static std::vector<std::string> default_linear_outputs();
///         static Scene scene(const Params&);                          // how it looks (hybrid/scene.hpp)
///         static void scene_values(const Params&, const double* x, double* v);  // one sample of it
///         // optional:
///         static void start(const Params&, const Initial&, double* x);  // the state at the start (default: Initial)
///         static bool energy_ledger(const Params&, const double* x, EnergyLedger& e);  // the self-audit's ledger
///       };
///
///   From it come the runnable system (an OdeSystem, Linearizable and a SceneSystem: rhs, outputs, rhs_ad,
///   signals_ad, inputs, degrees of freedom, default outputs, the scene), its schema (model_keys with the linear analyses' keys) and its
///   ModelEntry. The model's file then holds the physics and `ModelEntry model_entry() { return
///   SmoothModel<M>::entry(); }`, and the registry one line, `X(ns)` in ROLLSIM_MODELS (src/app/registry.cpp).
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/scenario/parameters.hpp"

namespace rollsim::kit {

/// A model's schema: the keys of `parameters`, then of `initial`, the title, then `more`.
template <class P, class I>
std::vector<KeySpec> model_keys(const Parameters<P>& parameters, const Parameters<I>& initial,
                                std::vector<KeySpec> more = {}) {
  std::vector<KeySpec> v = parameters.keys();
  for (auto& k : initial.keys()) v.push_back(std::move(k));
  v.push_back(output_parameters().key("title"));
  for (auto& k : more) v.push_back(std::move(k));
  return v;
}

/// The entry of a model whose schema is model_keys of its parameters and initial values, then more() (when given).
template <class P, class I>
ModelEntry model_entry(std::string name, std::string description, const Parameters<P>& (*parameters)(),
                       const Parameters<I>& (*initial)(), decltype(ModelEntry::make_system) make,
                       std::vector<KeySpec> (*more)() = nullptr) {
  ModelEntry e;
  e.name = std::move(name);
  e.description = std::move(description);
  e.schema = [parameters, initial, more](const std::map<std::string, std::string>&) {
    return model_keys(parameters(), initial(), more ? more() : std::vector<KeySpec>{});
  };
  e.make_system = std::move(make);
  return e;
}

/// A smooth model's system, schema and entry from its physics `M` (see the file's description).
template <class M>
class SmoothModel {
 public:
  using Params = typename M::Params;
  using Initial = typename M::Initial;

  /// The runnable system: x' = M::rhs(p, x, u) with u = M::input_values(p), started at M::start.
  class System final : public OdeSystem, public Linearizable, public SceneSystem {
   public:
    System(const Params& p, const Initial& initial) : p_(p), u_(M::input_values(p)), scene_(M::scene(p)) {
      if constexpr (requires(double* x) { M::start(p, initial, x); }) {
        M::start(p, initial, x0_);
      } else {
        static_assert(std::tuple_size_v<Initial> == M::kStates, "an Initial other than the state needs M::start");
        std::copy(initial.begin(), initial.end(), x0_);
      }
    }
    std::string model_name() const override { return M::name; }
    const Signals& states() const override { return M::states(); }
    const Signals& outputs() const override { return M::outputs().signals(); }
    void initial_state(double* x0) const override { std::copy(x0_, x0_ + M::kStates, x0); }
    void rhs(double, const double* x, int, double* xdot) const override { M::rhs(p_, x, u_.data(), xdot); }
    void compute_outputs(double, const double* x, int, double* y) const override {
      M::outputs().compute(M::context(p_, x, u_.data()), y);
    }
    bool energy_ledger(double, const double* x, int, EnergyLedger& e) const override {
      if constexpr (requires { M::energy_ledger(p_, x, e); }) return M::energy_ledger(p_, x, e);
      else return false;
    }
    const Scene& scene() const override { return scene_; }
    void scene_values(double, const double* x, const double*, int, double* v) const override {
      M::scene_values(p_, x, v);
    }

    // Linearizable: the same templated equations with AD scalars.
    const Signals& inputs() const override { return M::inputs(); }
    std::vector<double> input_values() const override { return u_; }
    void rhs_ad(const AD* x, const AD* u, AD* xdot) const override { M::rhs(p_, x, u, xdot); }
    void signals_ad(const AD* x, const AD* u, AD* y) const override {
      for (int i = 0; i < M::kStates; ++i) y[i] = x[i];
      M::outputs().compute(M::context(p_, x, u), y + M::kStates);
    }
    int degrees_of_freedom() const override { return M::kDegreesOfFreedom; }
    std::vector<std::string> default_linear_outputs() const override { return M::default_linear_outputs(); }

   private:
    Params p_;
    std::vector<double> u_;
    Scene scene_;
    double x0_[M::kStates];
  };

  static std::unique_ptr<HybridSystem> make_system(const Params& p, const Initial& initial) {
    return std::make_unique<System>(p, initial);
  }

  /// The entry: the schema has the parameters and initial keys, the title and the linear analyses' keys
  /// (smooth_model_keys()).
  static ModelEntry entry() {
    return model_entry(
        M::name, M::description, M::parameters, M::initial_values,
        [](const Scenario& sc) { return make_system(M::parameters().read(sc), M::initial_values().read(sc)); },
        &smooth_model_keys);
  }
};

}  // namespace rollsim::kit
