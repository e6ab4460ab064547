// The user model's checks at the initial state: a regular mass matrix, constraints satisfied and independent.
#include <cmath>
#include <sstream>

#include <Eigen/Dense>

#include "rollsim/core/error.hpp"
#include "lagrangian_build.hpp"

namespace rollsim::lagrangian::detail {

namespace {

/// Refuses constraints that are dependent: `G` holds their gradients dC/dq, each row scaled to unit length.
void check_gradients_independent(const Scenario& sc, const Compiled& c, const Eigen::MatrixXd& G) {
  const std::size_t n = c.n, nc = c.nc;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(G, Eigen::ComputeFullU);
  const auto& sv = svd.singularValues();
  Eigen::Index rank = 0;
  for (Eigen::Index i = 0; i < sv.size(); ++i)
    if (sv(i) > 1e-8) ++rank;
  if (rank == static_cast<Eigen::Index>(nc)) return;
  // A left null vector of G: the constraints with a weight in it are the dependent ones.
  const Eigen::VectorXd u = svd.matrixU().col(static_cast<Eigen::Index>(nc) - 1);
  std::vector<std::size_t> dependent;
  for (std::size_t k = 0; k < nc; ++k)
    if (std::abs(u(static_cast<Eigen::Index>(k))) > 1e-6) dependent.push_back(k);
  std::ostringstream os;
  os.precision(3);
  os << "the constraints";
  for (std::size_t i = 0; i < dependent.size(); ++i)
    os << (i == 0 ? " " : i + 1 == dependent.size() ? " and " : ", ") << c.constraint_names[dependent[i]];
  os << " are dependent at the initial state: their gradients dC/dq are linearly dependent (" << nc
     << " constraints of rank " << rank << ", " << n << " coordinates; smallest singular value of the gradients scaled "
     << "to unit length " << (sv.size() < static_cast<Eigen::Index>(nc) ? 0.0 : sv.minCoeff())
     << "), so their multipliers are not determined; remove the redundant constraint, or start where they are independent";
  sc.fail("constraints." + c.constraint_names[dependent.back()] + ".expression", os.str());
}

/// The constraints' gradients G = dC/dq at the initial state must be independent: otherwise the multipliers are not
/// determined and the DAE solver's initial condition fails without saying why. G's column j is C' at the rate e_j
/// less C' at rate 0 (C' = G q' + dC/dt is affine in the rates); each row is scaled to unit length, so that a
/// constraint written twice with different factors is seen as the same one.
void check_constraints_independent(const Scenario& sc, const Compiled& c, const std::vector<double>& x0) {
  const std::size_t n = c.n, nc = c.nc;
  if (!nc || !c.constraints) return;
  Scratch& w = scratch(c);
  std::vector<double> x(x0.begin(), x0.begin() + static_cast<std::ptrdiff_t>(2 * n)), base(2 * nc), col(2 * nc);
  for (std::size_t i = 0; i < n; ++i) x[n + i] = 0.0;
  c.constraints(fill(c, w, 0.0, x.data(), 0.0), base.data());
  Eigen::MatrixXd G(static_cast<Eigen::Index>(nc), static_cast<Eigen::Index>(n));
  for (std::size_t j = 0; j < n; ++j) {
    x[n + j] = 1.0;
    c.constraints(fill(c, w, 0.0, x.data(), 0.0), col.data());
    x[n + j] = 0.0;
    for (std::size_t k = 0; k < nc; ++k)
      G(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = col[nc + k] - base[nc + k];
  }
  for (std::size_t k = 0; k < nc; ++k) {
    const double norm = G.row(static_cast<Eigen::Index>(k)).norm();
    if (!(norm > 0) || !std::isfinite(norm))
      sc.fail("constraints." + c.constraint_names[k] + ".expression",
              "the gradient dC/dq of constraint " + c.constraint_names[k] + " is " +
                  (std::isfinite(norm) ? "zero" : "not finite") +
                  " at the initial state, so its multiplier is not determined (a constraint written as a square, such "
                  "as (x^2 + y^2 - l^2)^2, has a zero gradient on its own surface): write it so that its gradient is "
                  "not zero there");
    G.row(static_cast<Eigen::Index>(k)) /= norm;
  }
  check_gradients_independent(sc, c, G);
}

/// Why the mass matrix M (finite, singular) is singular: the coordinate that moves without inertia is the largest
/// component of the right singular vector of the smallest singular value. Whether its kinetic term d2T/dder(q_i)2
/// is zero everywhere, or only here (a chart singular at this point, such as the spherical pendulum's azimuth at
/// the pole), tells the remedy.
void explain_singular_mass(const symbolic::LagrangeModel& m, const Eigen::MatrixXd& M, double smax, std::ostream& os) {
  const Eigen::Index n = M.rows();
  Eigen::JacobiSVD<Eigen::MatrixXd> full(M, Eigen::ComputeFullV);
  Eigen::Index i = 0;
  full.matrixV().col(n - 1).cwiseAbs().maxCoeff(&i);
  const std::string& q = m.coordinates[static_cast<std::size_t>(i)];
  const ex mii = symbolic::d(symbolic::d(m.kinetic, m.qd[static_cast<std::size_t>(i)]), m.qd[static_cast<std::size_t>(i)]);
  if (M(i, i) > 1e-12 * smax) {
    // Every coordinate has inertia of its own, but a combination of rates has none.
    os << ": the combination of rates";
    const Eigen::VectorXd nv = full.matrixV().col(n - 1);
    for (Eigen::Index j = 0; j < n; ++j)
      if (std::abs(nv(j)) > 1e-6) os << " " << (nv(j) >= 0 ? "+" : "-") << std::abs(nv(j)) << " der(" << m.coordinates[static_cast<std::size_t>(j)] << ")";
    os << " has no inertia: the kinetic energy depends on these rates through fewer combinations than "
       << "coordinates; give every coordinate a kinetic energy term of its own, or remove one";
  } else if (!mii.normal().is_zero()) {
    os << " (coordinate " << q << ": its kinetic term vanishes there; the coordinates are singular at this point, "
       << "like a spherical pendulum at the pole): start away from it or choose other coordinates";
  } else {
    os << ": coordinate " << q << " has no inertia (d2T/dder(" << q << ")2 = 0 everywhere); give every coordinate "
       << "a kinetic energy term";
  }
}

/// Where the kinetic energy is written: [lagrangian] kinetic, or the first body's mass.
std::string kinetic_key(const Build& b) {
  return b.sc.string("lagrangian.kinetic") != "0" || b.bodies.empty() ? "lagrangian.kinetic"
                                                                      : "bodies." + b.bodies.front() + ".mass";
}

}  // namespace

MassAtStart mass_at_start(const Compiled& c, const double* x0) {
  Scratch& w = scratch(c);
  c.dyn(fill(c, w, 0.0, x0, 0.0), w.dyn.data());
  const auto n = static_cast<Eigen::Index>(c.n);
  MassAtStart s;
  s.M.resize(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) s.M(i, j) = w.dyn[static_cast<std::size_t>(i + n * j)];
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(s.M);
  const auto& sv = svd.singularValues();
  s.smax = sv.maxCoeff();
  s.smin = sv.minCoeff();
  s.regular = std::isfinite(s.smax) && s.smin > 1e-12 * s.smax;
  s.forces_finite = true;
  for (std::size_t i = 0; i < c.n; ++i) s.forces_finite = s.forces_finite && std::isfinite(w.dyn[c.n * c.n + i]);
  return s;
}

/// The mass matrix d2T/dder(q)2 must be regular at the initial state.
void check_mass_matrix(const Build& b, const std::vector<double>& x0) {
  const MassAtStart s = mass_at_start(*b.c, x0.data());
  const Eigen::MatrixXd& M = s.M;
  const double smax = s.smax, smin = s.smin;
  if (s.regular) return;
  std::ostringstream os;
  os.precision(6);
  os << "the mass matrix d2T/dder(q)2 is singular at the initial state (singular values from " << smax << " down to "
     << smin << ")";
  const std::string key = kinetic_key(b);
  if (std::isfinite(smax))
    explain_singular_mass(b.m, M, smax, os);
  else
    os << ": give every coordinate a kinetic energy term";
  b.sc.fail(key, os.str());
}

/// The equations of motion M q'' = f must be finite at the initial state: a generalized force that is not (a square
/// root of a negative number, a division by zero at these values) is refused at its key, not met by the solver as
/// a failure at t = 0. Reads f from the evaluation check_mass_matrix made.
void check_forces_finite(const Build& b) {
  const Compiled& c = *b.c;
  const Scratch& w = scratch(c);
  for (std::size_t i = 0; i < c.n; ++i) {
    const double f = w.dyn[c.n * c.n + i];
    if (std::isfinite(f)) continue;
    const std::string& q = b.m.coordinates[i];
    const std::string force_key = "lagrangian.forces." + q;
    std::ostringstream os;
    os << "the equation of motion of coordinate " << q << " is not finite at the initial state (its generalized "
       << "force is " << f << ")";
    if (b.rd.given(force_key)) {
      os << "; its force " << force_key << " = \"" << b.sc.string(force_key) << "\" is evaluated there with the "
         << "parameters' values and [initial]: change them so that it is a finite real number (not the square root of "
         << "a negative number, nor a division by zero)";
      b.sc.fail(force_key, os.str());
    }
    os << ": the kinetic or potential energy's terms are not finite there (a division by zero, a logarithm of "
       << "zero); change the parameters or [initial]";
    b.sc.fail(b.rd.given("lagrangian.potential") ? "lagrangian.potential" : kinetic_key(b), os.str());
  }
}

/// The constraints at the initial state: satisfied, with their rates, and independent.
void check_constraints_at_start(const Build& b, const std::vector<double>& x0) {
  const Compiled& c = *b.c;
  Scratch& w = scratch(c);
  std::vector<double> cons(2 * c.nc);
  c.constraints(fill(c, w, 0.0, x0.data(), 0.0), cons.data());
  for (std::size_t k = 0; k < c.nc; ++k) {
    double largest = 1.0;  // the scale of the coordinates
    for (std::size_t i = 0; i < c.n; ++i) largest = std::max(largest, std::abs(x0[i]));
    const double scale = 1e-9 * largest;
    if (std::abs(cons[k]) > scale || std::abs(cons[c.nc + k]) > scale) {
      std::ostringstream os;
      os.precision(10);
      os << "constraint " << b.m.constraint_names[k] << " is violated at the initial state: residual " << cons[k]
         << ", its rate " << cons[c.nc + k] << " (allowed: |residual| <= " << scale
         << "); give [initial] and [initial_rates] values that satisfy it";
      b.sc.fail("constraints." + b.m.constraint_names[k] + ".expression", os.str());
    }
  }
  check_constraints_independent(b.sc, c, x0);
}

/// The initial state (q, q') and the checks at it, then the system of the model's form.
}  // namespace rollsim::lagrangian::detail
