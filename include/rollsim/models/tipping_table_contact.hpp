#pragma once
/// \file The wheel on the tipping table with real contact (formulation = "contact"): the wheel is a free planar
/// body held by a unilateral contact with Coulomb friction and Newton's restitution (the contact engine,
/// rollsim/hybrid/contacts.hpp), so a run goes on past lift-off and over the table's edge. docs/equations.md §1c
/// derives the equations.
///
/// Coordinates q = (theta1, s, d, theta2): the table angle; the wheel centre along the table (s) and above the
/// table's surface line (d), in the table's frame; the wheel's absolute rotation (the benchmark's theta2). The
/// gap is the distance from the rim to the table, a segment from s = -l/2 to l/2 with its corners; the slip
/// velocity the rim's velocity against the table along the contact tangent (s' + r (theta2' - theta1') on the
/// top face, so that rolling keeps s = r (theta1 - theta2) as in the benchmark).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/tipping_table.hpp"
#include "rollsim/scenario/scenario.hpp"

namespace rollsim::tipping_table {

/// What the contact formulation adds to the benchmark's parameters and initial state.
struct ContactOptions {
  double restitution = 0;      ///< Newton's e at an impact of wheel and table
  double pivot_stiffness = 0;  ///< a torsional spring at the pivot [N m/rad] (0: the benchmark's free table)
  double height = 0;           ///< the wheel's rim above the table at the start [m]
  double slip = 0;             ///< the initial slip velocity [m/s] (0: rolling)
  double normal_rate = 0;      ///< the initial rate d' of the centre's height over the table [m/s]
  bool stop_at_edge = false;   ///< events.table_edge = "stop"
  ContactSettings settings;
};

/// The keys of formulation = "contact" (the contact.*, [nonsmooth] and the added [initial] keys).
std::vector<KeySpec> contact_formulation_keys();
ContactOptions contact_options_from(const Scenario& sc);

/// The system from the benchmark's parameters and initial state [theta1, theta2, omega1, omega2]: the wheel at
/// s = r (theta1 - theta2), height d = r + o.height, with s' = r (omega1 - omega2) + o.slip and d' = o.normal_rate.
std::unique_ptr<HybridSystem> make_contact_system(const Scenario& sc, const Params& p, const double* x0,
                                                  const ContactOptions& o);

}  // namespace rollsim::tipping_table
