#pragma once
/// \file The kernels of a user model with velocity (nonholonomic) constraint rows, integrated in independent
/// speeds (docs/nonholonomic.md).
///
/// The rows r(t, q, q') = A(t, q) q' + b(t, q) (m of them: LagrangeModel::velocity_constraints). With the
/// accelerations a = q'', r' = A a + c where c = dr/dq q' + dr/dt (the acceleration term). At each evaluation the
/// runtime solves the saddle-point system
///
///   [M  -A^T] [a     ]   [f ]
///   [A   0  ] [lambda] = [-c]
///
/// (M a = f + A^T lambda, M and f from rs_dyn). Its exact Jacobian differentiates that system implicitly: it needs
/// dR/dq and dR/dq' at the current a (rs_jac), and the derivatives of A, b and c below.
#include <optional>
#include <vector>

#include <ginac/ginac.h>

#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/symbolic/lagrange.hpp"

namespace rollsim::symbolic {

/// The kernels' names and layouts (m rows, n coordinates; matrices column-major).
struct NonholonomicKernels {
  /// A (m x n), b (m), c (m), g (m: each row's position-level residual, 0 for a nonholonomic row), dg/dq (m x n).
  static constexpr const char* rows = "rs_nh";
  /// dr/dq at fixed q' (m x n), db/dq (m x n), dc/dq (m x n), dc/dq' (m x n), then dA/dq as n blocks of m x n
  /// (block i holds dA/dq_i).
  static constexpr const char* jac = "rs_nh_jac";
  /// Names this layout; part of the model's cache key when the model has velocity rows.
  static constexpr const char* layout = "nonholonomic-kernels-1";
  static std::size_t rows_size(std::size_t m, std::size_t n) { return 2 * m * n + 3 * m; }
  static std::size_t jac_size(std::size_t m, std::size_t n) { return 4 * m * n + m * n * n; }
};

/// Appends the two kernels above for the model's velocity rows (nothing when it has none), differentiating with D
/// (the derivation's). Throws std::invalid_argument naming a row that is not linear in the rates.
void append_nonholonomic_kernels(Differentiator& D, const LagrangeModel& m, std::vector<Kernel>& kernels);

/// e as A q' + b with A and b free of the rates q' (`rates`; the model's m.qd), when it has that form: linear in
/// them everywhere, not only piecewise (der(y) step(der(x)) and abs(der(x)) have not). The one test of velocity
/// constraint rows and slip velocities. It is e itself where e's parts can be formed as written, else A q' + b
/// rebuilt from their normal forms (a rate that cancels in a quotient, which would divide 0 by 0 at rest). Empty
/// when e has not that form.
std::optional<GiNaC::ex> linear_form(Differentiator& D, const std::vector<GiNaC::ex>& rates, const GiNaC::ex& e);
/// Whether linear_form gives a form for e in the model's rates m.qd.
bool linear_in_rates(Differentiator& D, const LagrangeModel& m, const GiNaC::ex& e);

}  // namespace rollsim::symbolic
