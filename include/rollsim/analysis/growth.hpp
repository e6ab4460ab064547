#pragma once
/// \file The short-time growth-rate check: the linear model's eigenvalues against the nonlinear model.
/// For each real eigenvalue and each oscillatory pair, the nonlinear model starts at the operating point plus
/// epsilon times the mode shape (the real part for a pair), runs a short window, and the modal coordinate
/// q(t) = [V^-1 (x(t) - x0)]_k is fitted by least squares: log|q| against t gives the real part, the unwrapped
/// arg q against t the imaginary part. The relative error |measured - lambda| / |lambda| falls with epsilon
/// (as epsilon^2 at a symmetric equilibrium, as epsilon where the model has quadratic terms there) until it
/// reaches the integration-error floor, which grows as 1/epsilon (see GrowthRow::floor).
#include <complex>
#include <string>
#include <vector>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim {

struct GrowthOptions {
  std::vector<double> epsilons{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
  double tolerance = 1e-5;      ///< the largest relative error allowed for small epsilon
  double small_epsilon = 1e-6;  ///< epsilons up to this must meet the tolerance
  double window_scale = 1.0;    ///< window = scale x (1/|lambda| for a real root, 2 periods for a pair)
  long samples = 400;           ///< samples in the window, used by the fit
  double rtol = 1e-12;
  /// The order is fitted over rows whose error exceeds this many times their floor (the floor then adds at
  /// most 1/floor_margin to the error); a small-epsilon row whose floor exceeds `tolerance` cannot be judged.
  double floor_margin = 10;
  /// The order is the slope of log(error) over log(epsilon) across the this many smallest epsilons above
  /// the floor: the asymptotic order (larger epsilons add terms of higher order).
  int order_points = 3;
};

struct GrowthRow {
  /// The estimated integration-error floor of rel_error. Each step's error in the perturbation is held to
  /// rtol epsilon + atol (the truncation error scales with the motion, of size epsilon; the constant x0 adds
  /// none), and the state x0 + perturbation is stored and computed to the unit round-off u, an error u |x0|
  /// that does not shrink with epsilon (near x0 = 0 it vanishes). So the modal coordinate q (size ~epsilon)
  /// carries a relative error delta = |V^-1 row|_1 (rtol epsilon + atol + u |x0|) / |q(0)| per step,
  /// sqrt(N) delta after N steps if the step errors are independent, and a least-squares rate over a window T
  /// an error up to 2 sqrt(N) delta / T: floor = 2 sqrt(N) delta / (|lambda| T), with N the run's step count.
  /// Errors below it say nothing about the linearisation.
  double floor = 0;
  int mode = 0;               ///< 1-based, as in the modal table
  std::string label;          ///< e.g. "1: oscillatory pair" or "3: real"
  double epsilon = 0;
  std::complex<double> predicted, measured;
  double rel_error = 0;
  double window = 0;          ///< [s]
  std::string status = "ok";  ///< ok, or why the run or the fit fell short
};

struct GrowthOrder {
  std::string label;
  double order = NAN;  ///< slope of log(error) against log(epsilon), see GrowthOptions::order_points
  int points = 0;      ///< rows used: the smallest epsilons with status ok and rel_error > floor_margin x floor
};

struct GrowthResult {
  std::vector<GrowthRow> rows;
  std::vector<GrowthOrder> orders;
  bool passed = true;  ///< every small-epsilon row that can be judged is within tolerance, and one at least can
  std::vector<std::string> problems;  ///< why the check failed, one line each
  /// The first perturbed run that did not complete (RunResult::status: solver_failure, interrupted), or "".
  /// Such a run is not a failed check: the check could not be carried out.
  std::string run_failure;
  double floor_margin = 0;            ///< GrowthOptions::floor_margin the orders were fitted with
  int order_points = 0;               ///< GrowthOptions::order_points
};

/// The floor's formula in one line, for the printed table and the /growth/floor description.
inline constexpr const char* kGrowthFloorFormula =
    "2 sqrt(n_steps) |V^-1 row|_1 (rtol epsilon + atol + u |x0|) / (|q(0)| |lambda| window), u = 2.2e-16";

/// The [growth] keys, bound to GrowthOptions (its default member initializers are the keys' defaults).
const Parameters<GrowthOptions>& growth_parameters();
/// The [growth] keys of a schema: growth_parameters().keys().
std::vector<KeySpec> growth_keys();
/// The [growth] options of a validated scenario (at least one epsilon).
GrowthOptions growth_options(const Scenario& sc);

/// Run the check. Each perturbed run is the model (a HybridSystem) simulated from x0 + epsilon shape with `base` (the scenario's
/// simulation options), except: t_end = the window, output_dt = window / samples, solver.method = "bdf",
/// solver.rtol = opt.rtol and solver.atol = epsilon rtol 1e-3 (scaled to the perturbation, so the scenario's
/// atol does not matter).
GrowthResult check_growth(const SimulationOptions& base, const Linearizable& model, const LinearResult& lin,
                          const GrowthOptions& opt);

}  // namespace rollsim
