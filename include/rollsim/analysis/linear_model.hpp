#pragma once
/// \file Linear analysis of a model at its scenario's operating point, an equilibrium or a steady motion: the
/// state space with exact AD Jacobians (reduced about a steady motion: ignorable coordinates and states held
/// steady dropped, holonomic constraints carried as rows eliminated), eigenvalues and the EoM-style modal table,
/// poles, zeros, gain and frequency response.
#include <string>
#include <vector>

#include "rollsim/analysis/linear.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/scenario/parameters.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

class Linearizable;

struct LinearOptions {
  std::vector<std::string> outputs;    ///< signal names; empty: the model's default
  std::vector<std::string> ignorable;  ///< states nothing depends on: dropped with their rows (columns checked zero)
  std::vector<std::string> steady;     ///< states held constant along the steady motion: dropped, rows and columns
  double f_min = 0.01, f_max = 100;    ///< [Hz]
  long n_frequencies = 200;
  /// A kept state's rate at the point must satisfy |x_i'| <= equilibrium_tolerance (1 + sum_j |A_ij x0_j|): an
  /// absolute bound at x0 = 0, relative to the size of the rate's linear terms at the point elsewhere.
  double equilibrium_tolerance = 1e-9;
  bool allow_non_equilibrium = false;
  linear::Tolerances tolerances;
};

/// How a state of the model enters a linearisation.
enum class StateTreatment {
  Kept,        ///< a state of A
  Ignorable,   ///< a coordinate nothing depends on (linear.ignorable): dropped with its row
  Steady,      ///< held constant along the steady motion (linear.steady): dropped with its row and column
  Eliminated,  ///< expressed in the kept states by a holonomic constraint carried as a row
};
/// "kept", "ignorable", "steady", "eliminated".
const char* to_string(StateTreatment t);

/// Every state of the model and what the linearisation did with it. Without linear.ignorable, linear.steady and
/// state constraints, every state is kept and A is the full Jacobian.
struct StateReduction {
  std::vector<std::string> names, units;  ///< every state of the model, in its order
  Eigen::VectorXd x0;                     ///< the operating point, every state
  Eigen::VectorXd rate;                   ///< f(x0, u0), every state
  std::vector<StateTreatment> treatment;  ///< per state
  std::vector<Eigen::Index> kept;         ///< A's states: indices into names, in A's order
  std::vector<Eigen::Index> eliminated;   ///< indices into names of the eliminated states
  /// dx_eliminated = elimination * dx_kept (rows: `eliminated`, columns: `kept`), from G dx = 0.
  Eigen::MatrixXd elimination;
  int constraint_rows = 0;         ///< rows of Linearizable::state_constraint_jacobian
  int constraint_rank = 0;         ///< their rank over the states that are neither ignorable nor steady
  double invariance_residual = 0;  ///< max |G [A T, B]| / (|G| |[A T, B]|): A keeps ker G (0 without constraints)
  std::string method;              ///< in words: what was dropped and how the constraints were eliminated
  bool reduced() const { return kept.size() != names.size(); }
};

struct LinearResult {
  /// The states of A (the kept ones; all of them without a reduction), the inputs and the outputs.
  std::vector<std::string> state_names, state_units, input_names, input_units, output_names, output_units;
  Eigen::VectorXd x0, u0;  ///< x0: the kept states' values, in A's order
  StateReduction states;   ///< every state of the model and what became of it
  linear::StateSpace ss;
  double equilibrium_residual = 0;  ///< max over the kept states of |x_i'| / (1 + sum_j |A_ij x0_j|)
  std::string residual_state;       ///< the kept state whose rate is the largest in that measure
  double residual_rate = 0;         ///< its rate x_i'
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
/// linearised (see `linearizable`), if a name in linear.ignorable or linear.steady is not a state, if an ignorable
/// state's column is not zero, if the state constraints are not kept by A, or if the point is not an equilibrium
/// (a steady motion: the kept states' rates vanish) and allow_non_equilibrium is false.
LinearResult linearize_system(const HybridSystem& system, const LinearOptions& opt, const Scenario& sc);

/// Drop the ignorable and steady states of the full linearisation `full` (over every state; C and D over every
/// signal, `signals`) and eliminate the state constraints G (rows over every state; empty: none): fills `r.states`,
/// `r.ss` (C and D over the signals `pick`, indices into `signals`), the state, output names and x0. An output that
/// depends on an ignorable state is an InputError at linear.outputs; a default output that does is left out (the
/// first kept state stands in when none is left). Errors are InputErrors at the keys of `sc`.
/// src/analysis/linear_steady.cpp; linearize_system calls it.
void reduce_linearization(const linear::StateSpace& full, const Eigen::MatrixXd& G, const LinearOptions& opt,
                          const Signals& signals, std::vector<Eigen::Index> pick, bool default_outputs,
                          const Scenario& sc, LinearResult& r);

/// An InputError at linear.ignorable or linear.steady when `r` is a reduced linearisation: the growth check
/// perturbs the full state along A's eigenvectors and cannot follow a steady motion.
void require_full_state(const LinearResult& r, const Scenario& sc, const std::string& what);

}  // namespace rollsim
