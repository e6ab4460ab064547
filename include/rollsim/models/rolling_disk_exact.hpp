#pragma once
/// \file Exact (closed-form) propagator for the Coulomb rolling/sliding disk, docs/equations.md §2-3
/// (Antali & Stepan). Every mode of the dimensionless Filippov system is a linear ODE with an
/// explicit solution; events are located by analytic root isolation and polished to machine
/// precision, never by sampling a trajectory.
///
/// Dimensionless state (x, y, z), all [-]: x = u/U (spring displacement), y = dx/dtau (centre
/// velocity), z = w/W (contact-point slip velocity); time tau = t * Omega0 [-]. j = J/(m r^2) > 0.
///
///     mode +1 (F+, z > 0):  x' = y,  y' = -(1+j) x - j,  z' = -(1+j)(x + 1)
///     mode -1 (F-, z < 0):  x' = y,  y' = -(1+j) x + j,  z' = -(1+j)(x - 1)
///     mode  0 (rolling on z = 0, |x| < 1):  x' = y,  y' = -x,  z' = 0
///
/// Transitions: a sliding orbit reaching z = 0 with |x| > 1 reverses (+1 <-> -1), with |x| < 1 it
/// sticks (-> 0); a rolling orbit reaching x = +1 slips into -1, x = -1 into +1. Rolling orbits are
/// circles x^2 + y^2 = R^2; a circle with R <= 1 never leaves (permanent rolling).
///
/// Decisions on the boundary (documented in docs/rolling_disk_exact.md and in the .cpp):
///  - initial mode (initial_mode): z0 > 0 -> +1, z0 < 0 -> -1. On z0 == 0: rolling if |x0| < 1, or
///    if |x0| == 1 and x0*y0 <= 0 (on the rim of the rolling strip, moving inwards or at rest);
///    otherwise (|x0| > 1, or |x0| == 1 moving outwards) sliding in mode -sign(x0), the side into
///    which both F+ and F- (or, at |x0| == 1, the non-tangent field) point.
///  - grazing (a sliding orbit touching z = 0 at a local extremum of z, which happens at x = -s):
///    when |z| at the extremum is within round-off (64 eps times the size of the terms of z), the
///    touch is counted in ExactResult::grazings and the mode does not change (touch and go; the
///    exact orbit there continues in the same sliding mode).
///  - a sliding orbit reaching z = 0 with |x| within 8 eps of 1 (the corner x = s, where the
///    opposite field is tangent): stick if s*y <= 8 eps (moving into the rolling strip or at rest),
///    reversal otherwise.
///  - a rolling circle with R^2 - 1 <= 16 eps counts as R <= 1 (permanent rolling): a slip from it
///    would start a slide shorter than 1e-7 whose outcome only round-off decides.
///  - more than 8 consecutive zero-length segments throw SolverError instead of looping.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rollsim::rolling_disk {

/// Dimensionless state, all [-].
struct State {
  double x = 0.0;  ///< spring displacement u/U
  double y = 0.0;  ///< centre velocity v/(U Omega0)
  double z = 0.0;  ///< contact-point velocity w/W (W = U Omega0)
};

/// Event kinds of the disk.
enum class EventKind : std::uint8_t {
  stick,     ///< sliding -> rolling (z reaches 0 with |x| < 1)
  slip,      ///< rolling -> sliding (|x| reaches 1)
  reversal,  ///< sliding -> sliding in the opposite direction (z crosses 0 with |x| > 1)
};

/// "stick", "slip" or "reversal".
const char* to_string(EventKind kind);

/// Mode symbol: '+' (+1), '0' (0), '-' (-1).
char mode_symbol(int mode);

/// One transition. State at the event: z is exactly 0, and at a slip x is exactly +-1.
struct ExactEvent {
  double tau = 0.0;  ///< event time [-]
  EventKind kind = EventKind::stick;
  int mode_before = 0;
  int mode_after = 0;
  double x = 0.0, y = 0.0, z = 0.0;
};

/// Options of propagate_exact.
struct ExactOptions {
  std::size_t max_events = 1000000;  ///< stop after this many events (ExactResult::truncated)
  int cycle_repetitions = 3;         ///< type 'B' needs the tail "+0-0" repeated at least this often
  std::size_t reserve_events = 0;    ///< capacity to reserve in the event vector up front
};

/// Outcome of propagate_exact.
struct ExactResult {
  double j = 0.0;                    ///< inertia ratio used
  State initial;                     ///< initial state as given
  int initial_mode = 0;              ///< see initial_mode()
  std::vector<ExactEvent> events;    ///< every transition, in time order
  std::string symbols;               ///< modes visited: initial mode, then each event's mode_after
  State final_state;                 ///< state at final_tau
  int final_mode = 0;
  double final_tau = 0.0;            ///< tau_end, or the time of the last event when truncated
  bool truncated = false;            ///< true when max_events stopped the run before tau_end
  bool permanent_rolling = false;    ///< the final mode is rolling on a circle R <= 1 (never leaves)
  double last_rolling_radius = std::numeric_limits<double>::quiet_NaN();  ///< NaN if never rolled
  std::size_t n_stick = 0, n_slip = 0, n_reversal = 0;
  std::size_t grazings = 0;          ///< tangential touches of z = 0 without a mode change
  std::size_t n_segments = 0;        ///< events.size() + 1
  double dissipated = 0.0;           ///< total dissipated energy j * integral |z| dtau over [0, final_tau]
  char classification = 'U';         ///< 'A', 'B' or 'U', see classify()
};

/// Closed-form state after time tau (may be negative) in mode `mode` (+1, 0, -1) from `start`.
/// In mode 0 the z component is carried unchanged (it is 0 on the rolling strip).
State mode_state(double j, int mode, const State& start, double tau);

/// Time derivative (x', y', z') of the given mode's field at `s`.
State mode_rate(double j, int mode, const State& s);

/// Dimensionless energy E = 1/2 [(1+j) x^2 + y^2 + j (y - z)^2] = E_phys / (m U^2 Omega0^2).
double energy(double j, const State& s);

/// Energy dissipated over [0, tau] of a segment in mode `mode` started at `start`, tau >= 0:
/// j * integral |z| dtau (closed form; 0 in rolling). Valid while z keeps the sign of the mode.
double dissipated(double j, int mode, const State& start, double tau);

/// mode_state and dissipated together, from one sine and cosine (the same numbers as the two calls).
State mode_state(double j, int mode, const State& start, double tau, double& dissipated);

/// Initial mode of a state (rule in the file comment).
int initial_mode(const State& s);

/// Result of the sliding event search.
struct SlidingHit {
  double tau = 0.0;        ///< first time > 0 at which z returns to 0 (always finite)
  std::size_t grazings = 0;  ///< tangential touches skipped before it
};

/// First return of z to 0 in sliding mode s (+1 or -1) from `start` (s*start.z >= 0), by analytic
/// isolation of the monotone pieces of z and a safeguarded Halley polish (polish_root in the .cpp).
SlidingHit sliding_event_time(double j, int s, const State& start);

/// Time until a rolling orbit from `start` reaches |x| = 1 moving outwards; +infinity when the
/// rolling circle has R <= 1. Also returns the exit side (+1 or -1) when finite.
double rolling_exit_time(const State& start, int* exit_side = nullptr);

/// Propagate from (x0, y0, z0) to tau_end (>= 0) with exact transitions. Throws InputError for a
/// non-positive or non-finite j, a non-finite state or a negative or non-finite tau_end.
ExactResult propagate_exact(double j, double x0, double y0, double z0, double tau_end,
                            const ExactOptions& options = {});

/// Dense output: the state at time tau in [0, result.final_tau], from the stored events (no
/// re-integration). Throws InputError outside that range.
State state_at(const ExactResult& result, double tau);

/// Dense output on a grid (any order; sorted grids are handled in one sweep). Each state is
/// reported with its mode through `modes` when non-null.
std::vector<State> sample(const ExactResult& result, const std::vector<double>& taus,
                          std::vector<int>* modes = nullptr);

/// Rolling radius of every rolling segment, in order (from each stick, and from a rolling start).
std::vector<double> rolling_radii(const ExactResult& result);

/// Classification of a finished result: 'A' permanent rolling (circle R <= 1); 'B' the symbol tail
/// is the cycle +0-0 repeated at least `cycle_repetitions` times (as 4*cycle_repetitions symbols
/// alternating sliding/rolling with alternating sliding directions), the last rolling radius R is
/// > 1, and one further step of the return map (slip_return_radius) from R sticks on a circle in
/// (1, R); 'U' otherwise.
char classify(const ExactResult& result, int cycle_repetitions);

/// One step of the type-B return map: rolling radius after a slip from the circle R (> 1),
/// sliding until z returns to 0. Sets *stuck = false if that return is a reversal (|x| > 1).
/// The map depends on j only, since a slip state is (+-1, +-sqrt(R^2-1), 0).
double slip_return_radius(double j, double R, bool* stuck = nullptr);

}  // namespace rollsim::rolling_disk
