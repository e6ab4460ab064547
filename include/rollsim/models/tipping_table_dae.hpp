#pragma once
/// \file The wheel on the tipping table in body coordinates, as a constrained (DAE) system for IDA.
///
/// Coordinates q = [theta1 rad, theta2 rad, px m, py m]: table angle, absolute wheel angle, and the
/// wheel centre in the fixed frame (x right, y up, origin at the pivot). Velocities v = q'
/// [omega1, omega2, vx, vy], multipliers lambda = [N, T_c] [N]: the contact force on the wheel along
/// the table normal e2 and along the table e1 (towards increasing s), as in docs/equations.md §1.
/// State x = [q, v, lambda], dim 10. Two holonomic constraints:
///   contact:   C_n = -px sin theta1 + py cos theta1 - r = 0    (the centre stays r from the table plane)
///   no slip:   the ideal rolling element (ideal_rolling.hpp) between the wheel and the table, with
///              phi = -theta2 (the wheel turned in the rolling direction), phi_support = -theta1,
///              s = p . e1 (the contact point along the table), s_support = 0:
///              C_r = (s - s_support) - r (phi - phi_support) = s - r (theta1 - theta2) = 0,
///              whose time derivative on C_n = 0 is the contact point's tangential velocity relative
///              to the table. The element's force f on the s port is T_c; its torque -r T_c on phi is
///              the moment r T_c on the wheel.
/// The equations are those of constrained_mechanics.hpp (index 1, Baumgarte-stabilised).
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/ideal_rolling.hpp"
#include "rollsim/models/tipping_table.hpp"
#include "rollsim/models/tipping_table_system.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim::tipping_table {

/// The body-coordinate model in the form constrained_mechanics.hpp expects.
struct BodyModel {
  static constexpr int nq = 4, nc = 2;
  Params p;

  ideal_rolling::Element element() const { return {p.wheel_radius}; }

  template <class S>
  ideal_rolling::Ports<S> ports(const S* q) const {
    using std::cos;
    using std::sin;
    return {-q[1], -q[0], q[2] * cos(q[0]) + q[3] * sin(q[0]), S(0.0)};
  }

  template <class S>
  void mass(const S*, S* M) const {
    for (int i = 0; i < nq * nq; ++i) M[i] = S(0.0);
    M[0] = S(p.table_inertia);
    M[1 + nq] = S(p.wheel_inertia);
    M[2 + 2 * nq] = S(p.wheel_mass);
    M[3 + 3 * nq] = S(p.wheel_mass);
  }

  template <class S>
  void applied_forces(double, const S*, const S*, S* Q) const {
    Q[0] = S(p.table_torque);
    Q[1] = S(0.0);
    Q[2] = S(0.0);
    Q[3] = S(-p.wheel_mass * p.gravity);
  }

  template <class S>
  void constraints(const S* q, S* C) const {
    using std::cos;
    using std::sin;
    C[0] = -q[2] * sin(q[0]) + q[3] * cos(q[0]) - p.wheel_radius;
    C[1] = -ideal_rolling::kinematic_residual(element(), ports(q));
  }

  template <class S>
  void constraint_jacobian(const S* q, S* G) const {
    using std::cos;
    using std::sin;
    const S c1 = cos(q[0]), s1 = sin(q[0]);
    // contact
    G[0 + nc * 0] = -q[2] * c1 - q[3] * s1;
    G[0 + nc * 1] = S(0.0);
    G[0 + nc * 2] = -s1;
    G[0 + nc * 3] = c1;
    // rolling: dC_r/dq_k = d(s - s_support)/dq_k - r d(phi - phi_support)/dq_k, which is the element's
    // generalized force per unit f.
    const auto e = element();
    const S one(1.0);
    G[1 + nc * 0] = ideal_rolling::generalized_force(e, one, S(-q[2] * s1 + q[3] * c1), S(1.0));
    G[1 + nc * 1] = ideal_rolling::generalized_force(e, one, S(0.0), S(-1.0));
    G[1 + nc * 2] = ideal_rolling::generalized_force(e, one, c1, S(0.0));
    G[1 + nc * 3] = ideal_rolling::generalized_force(e, one, s1, S(0.0));
  }

  template <class S>
  void constraint_bias(const S* q, const S* v, S* b) const {
    using std::cos;
    using std::sin;
    const S c1 = cos(q[0]), s1 = sin(q[0]);
    const S w1 = v[0], vx = v[2], vy = v[3];
    b[0] = -2.0 * w1 * (vx * c1 + vy * s1) + w1 * w1 * (q[2] * s1 - q[3] * c1);
    b[1] = 2.0 * w1 * (-vx * s1 + vy * c1) - w1 * w1 * (q[2] * c1 + q[3] * s1);
  }
};

inline constexpr int kDaeStates = 10;

/// The body-coordinate state (with consistent multipliers) of a minimal state [theta1, theta2, omega1, omega2].
void body_state(const Params& p, const DaeOptions& o, const double* x_minimal, double* x_body);

/// The constrained system. \param x0 minimal initial state [theta1, theta2, omega1, omega2].
std::unique_ptr<HybridSystem> make_dae_system(const Params& p, const double* x0, const EventActions& actions,
                                              const DaeOptions& options);

/// Scenario keys of the formulation choice, the constrained formulation and `rollsim check formulations`;
/// with formulation = "dae" also solver.method restricted to "bdf".
void append_formulation_keys(std::vector<KeySpec>& keys, const std::map<std::string, std::string>& raw);
DaeOptions dae_options_from(const Scenario& sc);

}  // namespace rollsim::tipping_table
