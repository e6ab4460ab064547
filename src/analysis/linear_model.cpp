#include "rollsim/analysis/linear_model.hpp"

#include <cmath>

#include "rollsim/analysis/growth.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/core/error.hpp"

namespace rollsim {

const Parameters<LinearOptions>& linear_parameters() {
  using O = LinearOptions;
  static const Parameters<O> list = [] {
    std::vector<Parameter<O>> v{
        param(&O::outputs, string_list_key("linear.outputs",
                                           "output signals of the state space (states or outputs); default: the model's")),
        param(&O::ignorable, string_list_key("linear.ignorable",
                                             "states nothing depends on (a steady motion's ignorable coordinates), "
                                             "dropped with their rows; their columns of A must be zero")),
        param(&O::steady, string_list_key("linear.steady",
                                          "states held constant along the steady motion, dropped with their rows "
                                          "and columns")),
        param(&O::f_min, real_key("linear.f_min", "Hz", "lowest frequency of the frequency response").positive()),
        param(&O::f_max, real_key("linear.f_max", "Hz", "highest frequency of the frequency response").positive()),
        param(&O::equilibrium_tolerance,
              real_key("linear.equilibrium_tolerance", "1",
                       "largest |x_i'| of a kept state, relative to 1 + sum_j |A_ij x0_j| (at x0 = 0: state units/s)")
                  .positive()),
    };
    for (auto& p : within(&O::tolerances, Parameters<linear::Tolerances>(
                                              "linear tolerances",
                                              {
                                                  param(&linear::Tolerances::abs,
                                                        real_key("linear.tolerance_abs", "rad/s",
                                                                 "roots with |lambda| below this are rigid-body modes")
                                                            .non_negative()),
                                                  param(&linear::Tolerances::rel,
                                                        real_key("linear.tolerance_rel", "1",
                                                                 "relative threshold for zero real or imaginary parts")
                                                            .non_negative()),
                                              })))
      v.push_back(std::move(p));
    v.push_back(param(&O::n_frequencies,
                      integer_option("linear.n_frequencies", "points of the logarithmic frequency grid").range(1, 1e7)));
    return Parameters<O>("[linear] keys", std::move(v));
  }();
  return list;
}

std::vector<KeySpec> linear_keys() { return linear_parameters().keys(); }

std::vector<KeySpec> smooth_model_keys() {
  std::vector<KeySpec> v = linear_keys();
  for (auto& k : growth_keys()) v.push_back(std::move(k));
  return v;
}

const Linearizable& linearizable(const HybridSystem& system, const Scenario& sc) {
  if (system.formulation() == Formulation::Dae) {
    const auto given = formulation_of(sc);
    std::string msg = "formulation = \"" + formulation_name(given.value_or(FormulationChoice::Dae)) +
                      "\" of model \"" + system.model_name() +
                      "\" is a constrained system (redundant coordinates held by constraints, and their multipliers), "
                      "which rollsim does not linearise";
    bool has_ode = false;
    for (const auto& k : sc.schema)
      if (k.path == "formulation")
        for (const auto& c : k.choices) has_ode = has_ode || c == "ode";
    msg += has_ode ? "; use its minimal form: formulation = \"ode\" (--set formulation=ode)"
                   : "; the model has no minimal (ODE) form to linearise";
    sc.fail("formulation", msg);
  }
  const auto* lin = dynamic_cast<const Linearizable*>(&system);
  if (!lin)
    sc.fail("model", "the model \"" + system.model_name() +
                         "\" is nonsmooth (a Filippov system): its right-hand side switches across a surface, so it has "
                         "no Jacobian there and no linearisation or growth rates; simulate it with `rollsim run`");
  return *lin;
}

LinearOptions linear_options(const Scenario& sc) {
  const LinearOptions o = linear_parameters().read(sc);
  if (o.f_max < o.f_min)
    sc.fail("linear.f_max", "linear.f_max = " + to_string(sc.values.at("linear.f_max").value) +
                                " Hz is below linear.f_min; allowed range [f_min, inf)");
  return o;
}

LinearResult linearize_system(const HybridSystem& system, const LinearOptions& opt, const Scenario& sc) {
  const Linearizable* lin = &linearizable(system, sc);
  LinearResult r;
  const auto& states = system.states();
  const auto& outs = system.outputs();
  const auto n = static_cast<Eigen::Index>(states.size());
  Signals all(states.begin(), states.end());
  all.insert(all.end(), outs.begin(), outs.end());
  for (const auto& s : states) {
    r.states.names.push_back(s.name);
    r.states.units.push_back(s.unit);
  }
  for (const auto& s : lin->inputs()) {
    r.input_names.push_back(s.name);
    r.input_units.push_back(s.unit);
  }
  const std::vector<std::string> wanted = opt.outputs.empty() ? lin->default_linear_outputs() : opt.outputs;
  std::vector<Eigen::Index> pick;
  for (const auto& name : wanted) {
    Eigen::Index k = -1;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].name == name) k = static_cast<Eigen::Index>(i);
    if (k < 0) {
      std::string list;
      for (const auto& s : all) list += (list.empty() ? "" : ", ") + s.name;
      sc.fail("linear.outputs", "linear.outputs: unknown signal \"" + name + "\"; allowed: " + list);
    }
    pick.push_back(k);
  }

  std::vector<double> x0(states.size());
  system.initial_state(x0.data());
  r.states.x0 = Eigen::Map<Eigen::VectorXd>(x0.data(), n);
  const auto u0 = lin->input_values();
  r.u0 = Eigen::Map<const Eigen::VectorXd>(u0.data(), static_cast<Eigen::Index>(u0.size()));
  const std::size_t n_all = all.size();

  auto f = [&](const linear::Vec<linear::AD>& x, const linear::Vec<linear::AD>& u) {
    linear::Vec<linear::AD> xd(n);
    lin->rhs_ad(x.data(), u.data(), xd.data());
    return xd;
  };
  // Every signal: the outputs are chosen after the reduction (a default output of an ignorable state is left out).
  auto h = [&](const linear::Vec<linear::AD>& x, const linear::Vec<linear::AD>& u) {
    linear::Vec<linear::AD> y(static_cast<Eigen::Index>(n_all));
    lin->signals_ad(x.data(), u.data(), y.data());
    return y;
  };
  const linear::StateSpace full = linear::linearize(f, h, r.states.x0, r.u0);
  const Eigen::MatrixXd G = lin->state_constraint_jacobian(x0.data());
  reduce_linearization(full, G, opt, all, pick, opt.outputs.empty(), sc, r);

  r.eig = linear::eigen_analysis(r.ss.A, opt.tolerances);
  const double real_floor = linear::real_part_floor(r.ss.A);
  r.modal = linear::modal_table(r.eig.values, opt.tolerances, real_floor);
  r.modal.counts.degrees_of_freedom =
      r.states.reduced() ? static_cast<int>(r.states.kept.size() / 2) : lin->degrees_of_freedom();
  r.rule = linear::classification_rule(opt.tolerances, real_floor);
  r.poles = linear::poles(r.ss, opt.tolerances);
  if (r.ss.inputs() == r.ss.outputs() && r.ss.inputs() > 0) r.zeros = linear::transmission_zeros(r.ss);
  r.gain = linear::steady_state_gain(r.ss);
  if (r.ss.inputs() > 0 && r.ss.outputs() > 0)
    r.response = linear::frequency_response(
        r.ss, linear::log_grid(opt.f_min, opt.f_max, static_cast<std::size_t>(opt.n_frequencies)));
  // A model's reference eigenvalues are those of its full state at an equilibrium.
  if (!r.states.reduced()) r.reference = lin->reference_eigenvalues(r.reference_label);
  if (!r.reference.empty()) {
    std::vector<std::complex<double>> computed(r.eig.values.data(), r.eig.values.data() + r.eig.values.size());
    r.reference_error = linear::iftomm_error(computed, r.reference, opt.tolerances);
  }
  return r;
}

}  // namespace rollsim
