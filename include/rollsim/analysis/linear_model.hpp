#pragma once
/// \file Linear analysis of a model at its scenario's operating point: the state space with exact AD
/// Jacobians, eigenvalues and the EoM-style modal table, poles, zeros, gain and frequency response.
#include <string>
#include <vector>

#include "rollsim/analysis/linear.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/scenario/parameters.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

class Linearizable;

struct LinearOptions {
  std::vector<std::string> outputs;  ///< signal names; empty: the model's default
  double f_min = 0.01, f_max = 100;  ///< [Hz]
  long n_frequencies = 200;
  double equilibrium_tolerance = 1e-9;  ///< max |f(x0, u0)| for an equilibrium
  bool allow_non_equilibrium = false;
  linear::Tolerances tolerances;
};

struct LinearResult {
  std::vector<std::string> state_names, state_units, input_names, input_units, output_names, output_units;
  Eigen::VectorXd x0, u0;
  linear::StateSpace ss;
  double equilibrium_residual = 0;  ///< max |f(x0, u0)|
  std::string residual_state;       ///< the state derivative with the largest residual
  linear::EigenResult eig;
  linear::ModalTable modal;
  std::vector<std::complex<double>> poles;
  linear::ZerosResult zeros;
  linear::SteadyStateGain gain;
  linear::FrequencyResponse response;
  std::vector<std::complex<double>> reference;  ///< independently known eigenvalues, if any
  std::string reference_label;
  double reference_error = NAN;                 ///< l2 norm of computed - reference (IFToMM measure)
  std::string rule;                             ///< the classification rule in words
};

/// The [linear] keys, bound to LinearOptions (its default member initializers are the keys' defaults).
const Parameters<LinearOptions>& linear_parameters();
/// The [linear] keys of a schema: linear_parameters().keys().
std::vector<KeySpec> linear_keys();
/// The keys every smooth (linearisable) model's schema appends: [linear] and [growth], declared once here
/// and in growth_keys().
std::vector<KeySpec> smooth_model_keys();

/// The system as a Linearizable, or an InputError (exit 2) that says why it cannot be linearised: a
/// nonsmooth (Filippov) model, at the scenario's `model` key; a constrained (DAE) formulation, at its
/// `formulation` key, naming the minimal form to use instead.
const Linearizable& linearizable(const HybridSystem& system, const Scenario& sc);

/// The [linear] options of a scenario whose system is linearisable (check with `linearizable` first).
LinearOptions linear_options(const Scenario& sc);

/// Linearise the scenario's `system` about its initial state and inputs. Throws InputError if it cannot be
/// linearised (see `linearizable`), or if the point is not an equilibrium and allow_non_equilibrium is false.
LinearResult linearize_system(const HybridSystem& system, const LinearOptions& opt, const Scenario& sc);

}  // namespace rollsim
