#include "rollsim/analysis/simulation_keys.hpp"

#include <filesystem>

#include "rollsim/solve/integrator.hpp"

namespace rollsim {

namespace {

/// `key` with the text a key table shows as its default, where the value (an empty string) would say less.
KeySpec shown_default(KeySpec key, std::string text) {
  key.default_text = std::move(text);
  return key;
}

/// The title's default: the scenario file's name without its extension.
Value title_of_path(const Scenario& sc) {
  // Derived again at every sweep point, from the same path: the last path's stem is kept per thread.
  thread_local std::string path, stem;
  thread_local bool known = false;
  if (!known || path != sc.path) {
    stem = std::filesystem::path(sc.path).stem().string();
    path = sc.path;
    known = true;
  }
  return stem;
}

}  // namespace

const Parameters<SolverOptions>& solver_parameters() {
  using S = SolverOptions;
  static const Parameters<S> list{
      "solver keys",
      {
          param(&S::method,
                string_option("solver.method", solver_method_names(MethodFacet::Ode),
                              "auto (the default): the model's closed-form propagation where it has one (exact), IDA "
                              "for a DAE, CVODE's Adams for the contact engines, otherwise dop853 watched by "
                              "Hairer's stiffness test, handing over to BDF for the rest of the run where it finds "
                              "the problem stiff, its largest step a tenth of the run unless solver.max_step is given "
                              "(the file's /solver method says what ran); CVODE's Adams-Moulton with fixed-point iteration, or BDF with Newton "
                              "and a dense "
                              "Jacobian; ARKODE's explicit Runge-Kutta of order 8 (erk, Fehlberg 13(7)8); Boost.Odeint's "
                              "Dormand-Prince 5(4) (dopri5) with its dense output (order 4), CVODE's error test "
                              "(weighted RMS norm, weights 1/(rtol |x_i| + atol_i)) and the witnesses located on the "
                              "dense output: the cheapest step for a small smooth nonstiff model; Dormand-Prince "
                              "8(5,3) (dop853, Hairer, Norsett and Wanner) with its dense output of order 7, the same "
                              "error test and event location: the fewest steps for a small smooth nonstiff model at "
                              "a tight tolerance")),
          param(&S::rtol, real_key("solver.rtol", "1",
                                   "relative tolerance (below 1e-15 double precision cannot deliver it)")
                              .range(1e-15, 1, false, true)),
          by_name(&S::atol, &S::atol_by_state,
                  real_key("solver.atol", "state units",
                           "absolute tolerance: one number for every state, or a table by state name, e.g. "
                           "{ theta1 = 1e-12, omega1 = 1e-10 } (states not named take {default}); a name that is not "
                           "a state is an input error that lists the states; --set solver.atol.theta1=1e-9 sets one "
                           "entry")
                      .positive()),
          param(&S::max_step_size,
                real_key("solver.max_step", "s", "largest internal step (in the system's time unit); 0: no limit")
                    .non_negative()),
          param(&S::max_steps, integer_option("solver.max_steps",
                                              "internal steps allowed for the whole run; past it the run fails "
                                              "with exit 3 and keeps its data")
                                   .range(1, 1e12)),
      }};
  return list;
}

const Parameters<SimulationOptions>& simulation_parameters() {
  using O = SimulationOptions;
  static const Parameters<O> list = [] {
    std::vector<Parameter<O>> v{
        param(&O::t_end, real_key("simulation.t_end", "s", "end time").positive()),
        param(&O::output_dt, real_key("simulation.output_dt", "s",
                                      "sample spacing; samples at k output_dt from the integrator's dense output, "
                                      "plus every event instant and the final instant")
                                 .positive()),
    };
    for (auto& p : within(&O::solver, solver_parameters())) v.push_back(std::move(p));
    return Parameters<O>("simulation and solver keys", std::move(v));
  }();
  return list;
}

const Parameters<OutputOptions>& output_parameters() {
  using O = OutputOptions;
  static const Parameters<O> list{
      "output keys",
      {
          param(&O::file, shown_default(string_option("output.file", {},
                                                      "HDF5 result file, relative to the working directory; the "
                                                      "command's -o overrides it"),
                                        "the scenario's name + .h5")),
          param(&O::warn_size, boolean_option("output.warn_size",
                                              "warn on stderr before a run whose samples would exceed 1 GiB "
                                              "before compression (samples x (time, states, outputs and the "
                                              "values of /scene) x 8 bytes); false: do not warn")),
          param(&O::scene, boolean_option("output.scene",
                                          "write the model's drawing, its bodies' poses and drawn points per sample, "
                                          "as /scene (docs/scene.md); false: none (a sweep writes none)")),
          param(&O::title, shown_default(string_option("title", {},
                                                       "a title for plots and reports (the default is written into "
                                                       "/scenario/resolved too)")
                                             .derived(title_of_path),
                                         "the scenario file's name without .toml")),
      }};
  return list;
}

namespace {

const std::vector<std::pair<std::string, FormulationChoice>>& formulation_names() {
  static const std::vector<std::pair<std::string, FormulationChoice>> names = {
      {"ode", FormulationChoice::Ode}, {"dae", FormulationChoice::Dae}, {"contact", FormulationChoice::Contact}};
  return names;
}

}  // namespace

const Parameters<FormulationOption>& formulation_parameters() {
  static const Parameters<FormulationOption> list{
      "formulation key",
      {choice(&FormulationOption::formulation,
              choice_option("formulation", "ode: minimal coordinates on CVODE; dae: body coordinates with constraints "
                                           "on IDA; contact: free bodies with unilateral contacts"),
              formulation_names())}};
  return list;
}

std::optional<FormulationChoice> formulation_of(const Scenario& sc) {
  const std::string path = formulation_parameters().paths().front();
  for (const auto& k : sc.schema)
    if (k.path == path) return formulation_parameters().read(sc).formulation;
  return std::nullopt;
}

std::string formulation_name(FormulationChoice f) {
  for (const auto& [name, value] : formulation_names())
    if (value == f) return name;
  return "?";
}

const Parameters<DaeOptions>& dae_parameters() {
  static const Parameters<DaeOptions> list{
      "[dae] keys",
      {param(&DaeOptions::stabilization_rate,
             real_key("dae.stabilization_rate", "1/s", "Baumgarte rate a: C'' + 2 a C' + a^2 C = 0").non_negative())}};
  return list;
}

KeySpec dae_solver_method_key(const std::string& when) {
  return KeyVariant(solver_parameters().key("solver.method"))
      .only_choices(solver_method_names(MethodFacet::Dae))
      .with_description("IDA integrates with variable-order BDF (the only choice" + (when.empty() ? "" : " " + when) +
                        ")");
}

KeySpec exact_solver_method_key(const std::string& meaning) {
  return KeyVariant(solver_parameters().key("solver.method")).adding_choices(solver_method_names(MethodFacet::Exact), meaning);
}

}  // namespace rollsim
