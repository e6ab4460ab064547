#pragma once
/// \file The short-time growth-rate check: the linear model's eigenvalues against the nonlinear model.
/// For each real eigenvalue and each oscillatory pair, the nonlinear model starts at the operating point plus
/// epsilon times the mode shape (the real part for a pair), runs a short window, and the modal coordinate
/// q(t) = [V^-1 (x(t) - x0)]_k is fitted by least squares: log|q| against t gives the real part, the unwrapped
/// arg q against t the imaginary part. The relative error |measured - lambda| / |lambda| should fall with
/// epsilon until the integration error is reached.
#include <complex>
#include <string>
#include <vector>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim {

struct GrowthOptions {
  std::vector<double> epsilons{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
  double tolerance = 1e-5;      ///< the largest relative error allowed for small epsilon
  double small_epsilon = 1e-6;  ///< epsilons up to this must meet the tolerance
  double window_scale = 1.0;    ///< window = scale x (1/|lambda| for a real root, 2 periods for a pair)
  long samples = 400;           ///< samples in the window, used by the fit
  double rtol = 1e-12;
};

struct GrowthRow {
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
  double order = NAN;  ///< slope of log(error) against log(epsilon) where nonlinearity dominates
};

struct GrowthResult {
  std::vector<GrowthRow> rows;
  std::vector<GrowthOrder> orders;
  bool passed = true;  ///< every small-epsilon row within tolerance
};

std::vector<KeySpec> growth_keys();
GrowthOptions growth_options(const Scenario& sc);

/// Run the check. `scenario_path` and `overrides` rebuild each perturbed run through the scenario loader
/// (initial.<state> keys), so every run is validated like a user's.
GrowthResult check_growth(const Scenario& sc, const LinearResult& lin, const GrowthOptions& opt);

}  // namespace rollsim
