#pragma once
/// \file The disk that rolls or slides on level ground under Coulomb friction, tied to a wall by a spring
/// (Antali & Stepan), as a Filippov system in the dimensionless form of docs/equations.md §2:
///
///   F± (z ≷ 0):  x' = y,  y' = -(1+j) x ∓ j,  z' = -(1+j)(x ± 1);   H = z;   rolling: F0 = (y, -x, 0), |x| < 1.
///
/// Scaling (physical → dimensionless): τ = Ω0 t, Ω0 = sqrt(k / (m (1+j))); x = u/U, U = μ g m (1+j) / (k j);
/// y = v/(U Ω0); z = w/W with W = μ g / (j Ω0) = U Ω0. Energies in units of E* = m U² Ω0² (so the
/// dimensionless energy is e = ½[(1+j) x² + y² + j (y - z)²], de/dτ = -j |z| while sliding); forces in units of
/// μ m g. The state vector is (x, y, z, dissipated_energy); in physical units time is t [s] and the
/// dissipated energy is in J (the fields are multiplied by Ω0, the dissipation also by E*).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/model_entry.hpp"
#include "rollsim/scenario/parameters.hpp"

namespace rollsim::rolling_disk {

struct Params {
  double inertia_ratio = 0.5;  ///< j = J/(m r²), > 0
  bool physical = false;       ///< time in s and energies in J (true), or τ and E* units (false)
  double mass = 1, stiffness = 1, friction_coefficient = 1, gravity = 9.81;  ///< kg, N/m, 1, m/s² (physical)
  /// Physical input only: J [kg m²] and r [m] given instead of inertia_ratio (j = J/(m r²)).
  std::optional<double> inertia, radius;
};

/// The [initial] values: u [m], v [m/s], w [m/s] (units = "physical") or x, y, z (units = "dimensionless").
struct InitialValues {
  double u = 0, v = 0, w = 0, x = 0, y = 0, z = 0;
};

/// The [parameters] keys, each declared once and bound to its member of Params: the schema, the reader and
/// typed access by name come from these. They belong to one unit system or both (see the descriptions); the
/// model checks which were given.
const Parameters<Params>& parameters();
/// The [initial] keys, bound to InitialValues (absent ones keep its zeros).
const Parameters<InitialValues>& initial_values();

/// The scales of the nondimensionalisation (all 1 when !p.physical).
struct Scales {
  double omega0 = 1;  ///< [1/s]
  double length = 1;  ///< U [m]
  double speed = 1;   ///< U Ω0 = W [m/s]
  double energy = 1;  ///< E* = m U² Ω0² [J]
  double force = 1;   ///< μ m g [N]
};
Scales scales(const Params& p);

/// Indices of the state vector.
enum StateIndex { kX = 0, kY = 1, kZ = 2, kDissipated = 3, kStates = 4 };

/// The dimensionless field of a mode (+1: F+, -1: F-, 0: F0) for the (x, y, z) core. \param f out, dim 3.
void field(double j, int mode, const double* xyz, double* f);
/// Dimensionless energy e = ½[(1+j) x² + y² + j (y - z)²] and its parts.
double kinetic(double j, const double* xyz);
double potential(double j, const double* xyz);

/// Physical (u [m], v [m/s], w [m/s]) → dimensionless (x, y, z).
void to_dimensionless(const Params& p, double u, double v, double w, double* xyz);

/// The classification of a run (see docs/scenario-keys-disk.md), with R the last rolling radius and
/// `radius_error` the error R carries (round-off for the exact method, the integration error otherwise):
///   "A" the run ends rolling (mode 0) on a circle of radius R <= 1 - radius_error (exact: R <= 1 + radius_error,
///       round-off): it can never leave (|x| <= R);
///   "B" the symbols end in the periodic tail (+0-0 twice, in either phase) and the last three stick radii
///       are > 1 and strictly decreasing;
///   "undetermined" otherwise (a transient, a run too short to tell, or a run that ends rolling with
///       |R - 1| <= radius_error: on R = 1 it rolls for ever, on R = 1 + 1e-12 it slips, and the run cannot
///       tell which).
std::string classify(const std::string& symbols, const std::vector<double>& stick_radii, int final_mode,
                     double final_radius, double radius_error = 0, bool exact = false);


/// Closed-form propagation between events (solver.method = "exact"), behind the Integrator interface.
std::unique_ptr<Integrator> make_exact_integrator(const Params& p, const SolverOptions& options);

/// The runnable system; x0 = (x, y, z) dimensionless, the dissipated energy starts at 0.
std::unique_ptr<HybridSystem> make_system(const Params& p, const double* xyz0);

ModelEntry model_entry();

}  // namespace rollsim::rolling_disk
