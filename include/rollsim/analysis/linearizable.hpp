#pragma once
/// \file What a smooth model offers the linear analysis: its right-hand side and its signals evaluated with
/// automatic-differentiation scalars, and its inputs. A system that implements this besides HybridSystem can
/// be linearised (`rollsim linearize`) and checked against its nonlinear self (`rollsim check growth`).
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "rollsim/core/signal.hpp"
#include "rollsim/hybrid/system.hpp"

namespace rollsim {

class Linearizable {
 public:
  using AD = Eigen::AutoDiffScalar<Eigen::VectorXd>;
  virtual ~Linearizable() = default;
  /// The model's inputs (e.g. the table torque) and their values in the scenario (the operating point).
  virtual const Signals& inputs() const = 0;
  virtual std::vector<double> input_values() const = 0;
  /// x' = f(x, u). \param x dim states(); \param u dim inputs(); \param xdot out, dim states().
  virtual void rhs_ad(const AD* x, const AD* u, AD* xdot) const = 0;
  /// Every signal that can be chosen as an output: the states first, then the outputs, in the HybridSystem's
  /// order. \param y out, dim states().size() + outputs().size().
  virtual void signals_ad(const AD* x, const AD* u, AD* y) const = 0;
  /// Number of second-order degrees of freedom (states / 2 for a mechanical model).
  virtual int degrees_of_freedom() const = 0;
  /// Independently known eigenvalues for these parameters (a closed form from the literature), if any, with
  /// a label naming the source; empty when none applies.
  virtual std::vector<std::complex<double>> reference_eigenvalues(std::string& /*label*/) const { return {}; }
  /// The outputs a linearisation uses by default (signal names).
  virtual std::vector<std::string> default_linear_outputs() const = 0;
  /// Position-level constraints g(x) = 0 that the motion keeps (a holonomic constraint carried as a velocity row,
  /// as in a nonholonomic model integrated in independent speeds): their Jacobian dg/dx at x, one row per
  /// constraint, dim states() columns; an empty matrix when there are none. The linearisation about a steady motion
  /// restricts A to the tangent space of these constraints (their drift is a neutral direction, not a mode).
  virtual Eigen::MatrixXd state_constraint_jacobian(const double* /*x*/) const { return {}; }
};

}  // namespace rollsim
