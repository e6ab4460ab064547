#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace rollsim {

/// What a signal is to a reader of the result file: written as the `role` attribute of its dataset
/// (docs/python.md, "Signal roles"), so that plots and reports never guess from names.
enum class Role {
  Plain,            ///< what its place makes it: "state" in a system's states, "output" in its outputs
  State,            ///< a state that is a coordinate (or any other state without a more special role)
  Rate,             ///< a state that is the rate of a coordinate
  Output,           ///< an output without a more special role
  KineticEnergy,    ///< the kinetic energy T
  PotentialEnergy,  ///< the potential energy V
  TotalEnergy,      ///< the stored energy: T + V, or the Jacobi energy h
  Ledger,           ///< the balance E + D itself, constant in an exact motion
  InputWork,        ///< work done on the system by its inputs (forces, torques) since the start
  ConstraintWork,   ///< work done by constraint forces or moving surfaces since the start
  Dissipation,      ///< energy dissipated since the start (friction, impacts, dampers)
  NormalForce,      ///< a contact's normal force
  TangentialForce,  ///< a contact's tangential (friction) force
  Gap,              ///< a contact's gap
  GapRate,          ///< the rate of a contact's gap
  SlipVelocity,     ///< a contact's slip velocity
  Mode,             ///< the mode of the hybrid system
  Time,             ///< the independent variable
  EventValue,       ///< a value an event's handler records (/events only: an impulse, a loss)
  EventKind,        ///< the kind of an event (/events only)
};

/// The role as the result file writes it, e.g. "energy.kinetic", "contact.gap".
constexpr std::string_view role_name(Role r) {
  switch (r) {
    case Role::Plain: return "output";
    case Role::State: return "state";
    case Role::Rate: return "rate";
    case Role::Output: return "output";
    case Role::KineticEnergy: return "energy.kinetic";
    case Role::PotentialEnergy: return "energy.potential";
    case Role::TotalEnergy: return "energy.total";
    case Role::Ledger: return "energy.ledger";
    case Role::InputWork: return "work.input";
    case Role::ConstraintWork: return "work.constraint";
    case Role::Dissipation: return "dissipation";
    case Role::NormalForce: return "contact.normal_force";
    case Role::TangentialForce: return "contact.tangential_force";
    case Role::Gap: return "contact.gap";
    case Role::GapRate: return "contact.gap_rate";
    case Role::SlipVelocity: return "contact.slip_velocity";
    case Role::Mode: return "mode";
    case Role::Time: return "time";
    case Role::EventValue: return "event.value";
    case Role::EventKind: return "event.kind";
  }
  return "output";
}

/// The sign a signal of role r enters the energy ledger E + D with: +1 for the stored energy and the dissipated
/// energies, -1 for the works done on the system, 0 for the rest (T and V are parts of the total, not terms).
constexpr int ledger_sign(Role r) {
  switch (r) {
    case Role::TotalEnergy:
    case Role::Dissipation: return 1;
    case Role::InputWork:
    case Role::ConstraintWork: return -1;
    default: return 0;
  }
}

/// A named quantity of a model: a state or an output. Every column written to HDF5 is one.
struct Signal {
  std::string name;
  std::string unit;
  std::string description;
  Role role = Role::Plain;
  /// The sign this signal enters the energy ledger E + D with (+1 or -1), 0 when it is no term of it. The ledger
  /// is the sum of sign times value over the signals with a sign (EnergyLedger, docs/python.md).
  int ledger = 0;
  std::string contact{};  ///< a contact quantity's contact (the NAME of [contacts.NAME]); empty otherwise

  /// This signal with the role r and r's ledger sign (ledger_sign).
  Signal as(Role r) const { return as(r, ledger_sign(r)); }
  /// This signal with the role r and an explicit ledger sign (e.g. +1 for the integral of dL/dt, a work that
  /// enters the balance with the sign opposite to a work done on the system).
  Signal as(Role r, int sign) const {
    Signal s = *this;
    s.role = r;
    s.ledger = sign;
    return s;
  }
  /// This signal as the quantity r of the contact `name`.
  Signal of_contact(Role r, std::string name) const {
    Signal s = as(r);
    s.contact = std::move(name);
    return s;
  }
};

using Signals = std::vector<Signal>;

/// The role a signal is written with: one of role Plain is a state among a system's states, else an output.
constexpr Role written_role(const Signal& s, bool state) {
  return s.role != Role::Plain ? s.role : state ? Role::State : Role::Output;
}

}  // namespace rollsim
