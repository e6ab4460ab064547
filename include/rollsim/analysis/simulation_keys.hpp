#pragma once
/// \file The keys of a run that every model shares, declared once: [simulation] and [solver] bound to
/// SimulationOptions (and its SolverOptions), [output] and `title` bound to OutputOptions. The app's
/// common_keys() lists them, simulation_options() and output_options() read them, and a model that narrows one
/// (the rolling disk's solver.method with "exact" and its own end time, a DAE's "bdf" only) builds its variant
/// from the declaration here with KeyVariant. They sit in this layer, below the models and above solve, because
/// the models derive their variants from them and SimulationOptions is a type of solve.
#include <optional>
#include <string>

#include "rollsim/hybrid/integrator.hpp"
#include "rollsim/scenario/parameters.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim {

/// The [output] keys and the title of a scenario.
struct OutputOptions {
  std::string file;        ///< the result file; empty: the scenario's name with .h5, in the working directory
  bool warn_size = true;   ///< warn before a run whose result would exceed 1 GiB
  bool scene = true;       ///< write the model's drawables per sample (/scene, docs/scene.md)
  std::string title;       ///< for plots and reports; the loader derives it from the file name when not given
};

/// solver.method, solver.rtol, solver.atol (one number or a table by state name), solver.max_step,
/// solver.max_steps, bound to SolverOptions.
const Parameters<SolverOptions>& solver_parameters();
/// simulation.t_end, simulation.output_dt and the solver's keys, bound to SimulationOptions.
const Parameters<SimulationOptions>& simulation_parameters();
/// output.file, output.warn_size, output.scene and title, bound to OutputOptions.
const Parameters<OutputOptions>& output_parameters();

/// The forms a model with more than one may be integrated in: its minimal coordinates (an ODE), body coordinates
/// held by constraints (a DAE), or bodies free under unilateral contacts.
enum class FormulationChoice { Ode, Dae, Contact };
/// The `formulation` key's value.
struct FormulationOption {
  FormulationChoice formulation = FormulationChoice::Ode;
};
/// `formulation` with every form's name; a model's variant keeps the forms it has (KeyVariant::only_choices),
/// its default and its description.
const Parameters<FormulationOption>& formulation_parameters();
/// The formulation of a validated scenario; none when its model has one form only (no `formulation` key).
std::optional<FormulationChoice> formulation_of(const Scenario& sc);
/// The name the key gives a formulation ("ode", "dae", "contact").
std::string formulation_name(FormulationChoice f);

/// An [events] key (`path`, e.g. "events.rod_slack"): "stop" ends the run at the event, "record" only records it;
/// bound to a bool member, true for "stop", whose default member initializer is the key's default.
template <class T>
Parameter<T> event_action(bool T::*stop, std::string path, std::string description) {
  return choice(stop, choice_option(std::move(path), std::move(description)),
                std::vector<std::pair<std::string, bool>>{{"stop", true}, {"record", false}});
}

/// The [dae] keys of a constrained formulation (body coordinates held by constraints, on IDA): the tipping
/// table's and the carriage pendulum's DAEs read them; the user model narrows the key (its own default) with
/// KeyVariant.
struct DaeOptions {
  double stabilization_rate = 20.0;  ///< Baumgarte rate a [1/s]
};
/// dae.stabilization_rate, bound to DaeOptions.
const Parameters<DaeOptions>& dae_parameters();

/// solver.method of a constrained (DAE) formulation: "bdf" only, IDA's variable-order BDF; `when` (e.g. "for
/// formulation = \"dae\"") says when in the description, empty for a model that is a DAE only.
KeySpec dae_solver_method_key(const std::string& when);

/// solver.method of a model that brings its own closed-form propagation (an ExactSystem): the shared choices and the
/// methods of make_integrator's table that integrate it ("exact"), whose meaning the description adds.
KeySpec exact_solver_method_key(const std::string& meaning);

}  // namespace rollsim
