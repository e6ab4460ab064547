#include "rollsim/app/formulations.hpp"

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim {

FormulationScenarios formulation_scenarios(const std::string& path, const std::vector<std::string>& overrides) {
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> o = overrides;
    o.insert(o.end(), extra.begin(), extra.end());
    return o;
  };
  try {
    Scenario ode = load_scenario(path, with({"formulation=ode"}));
    if (!formulation_of(ode))
      throw InputError(Origin{path, 0, 0}, "the model \"" + ode.model + "\" has one formulation only; nothing to compare");
    Scenario dae = load_scenario(path, with({"formulation=dae", "solver.method=bdf"}));
    return {std::move(ode), std::move(dae)};
  } catch (const InputError&) {
    // A scenario of the contact formulation has keys the rolling formulations do not take: say that, rather
    // than name its first such key as unknown.
    bool contact = false;
    try {
      const Scenario as_given = load_scenario(path, overrides);
      contact = formulation_of(as_given) == FormulationChoice::Contact;
      if (contact)
        as_given.fail("formulation", "check formulations compares the rolling formulations (ode, dae) of one run; "
                                     "formulation = \"contact\" is another system (the wheel free on the table): run "
                                     "it with `rollsim run`");
    } catch (const InputError&) {
      if (contact) throw;
    }
    throw;
  }
}

FormulationCheck check_formulations(const FormulationScenarios& s) {
  FormulationCheck fc;
  fc.tol = formulation_check_parameters().read(s.ode);
  auto sys_ode = build_system(s.ode);
  auto sys_dae = build_system(s.dae);
  const RunResult ra = simulate(*sys_ode, simulation_options(s.ode), {&fc.ode});
  const RunResult rb = simulate(*sys_dae, simulation_options(s.dae), {&fc.dae});
  fc.comparison = compare_runs(fc.ode, fc.dae, fc.tol);
  if (!ra.completed()) fc.comparison.problems.insert(fc.comparison.problems.begin(), "the ODE run failed: " + ra.message);
  if (!rb.completed()) fc.comparison.problems.insert(fc.comparison.problems.begin(), "the DAE run failed: " + rb.message);
  if (ra.termination != rb.termination)
    fc.comparison.problems.push_back("the runs end differently: " + ra.termination + " (ODE), " + rb.termination + " (DAE)");
  fc.comparison.passed = fc.comparison.problems.empty();
  return fc;
}

FormulationCheck check_formulations(const std::string& path, const std::vector<std::string>& overrides) {
  return check_formulations(formulation_scenarios(path, overrides));
}

}  // namespace rollsim
