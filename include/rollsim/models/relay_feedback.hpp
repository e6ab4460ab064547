#pragma once
/// \file A relay feedback system, x' = A x + B u with u = -sgn(C x), as a Filippov system through the same
/// engine as the disk: H = C x, F+ = A x - B (C x > 0), F- = A x + B (C x < 0); σ± = C A x ∓ C B, so the
/// sliding region (C B > 0) is |C A x| < C B, with the equivalent control u_eq = -C A x / C B and the sliding
/// field F0 = (I - B C / C B) A x. Test problem of the kind used by Piiroinen & Kuznetsov (2008) for
/// event-driven Filippov solvers; every mode is linear, so it has a closed form (matrix exponentials).
#include <memory>
#include <vector>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/scenario/parameters.hpp"

namespace rollsim::relay_feedback {

struct Params {
  int n = 3;
  std::vector<double> A;  ///< n x n, row-major
  std::vector<double> B;  ///< n
  std::vector<double> C;  ///< n
};

/// The [initial] value: x(0), n numbers.
struct InitialValues {
  std::vector<double> x;
};

/// The [parameters] keys A, B, C (required lists; n is the length of C), declared once and bound to Params.
const Parameters<Params>& parameters();
/// The [initial] key x.
const Parameters<InitialValues>& initial_values();

/// The third-order family A = [[-(2ζω+λ), 1, 0], [-(2ζωλ+ω²), 0, 1], [-λω², 0, 0]], B = (1, -2s, 1), C = (1, 0, 0).
Params third_order(double zeta, double omega, double lambda, double s);

/// The runnable system from x0 (dim n). Throws InputError if the sizes do not match.
std::unique_ptr<HybridSystem> make_system(const Params& p, const std::vector<double>& x0);

ModelEntry model_entry();

}  // namespace rollsim::relay_feedback
