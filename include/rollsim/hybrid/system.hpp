#pragma once
/// \file The interface every simulated model presents to the simulate loop: states, outputs, modes,
/// named witness functions with a direction, and what happens at an event.
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rollsim/core/signal.hpp"

namespace rollsim {

class Integrator;
struct SolverOptions;

/// A named, signed, smooth event function. CVODE's root direction: +1 rising, -1 falling, 0 both.
struct Witness {
  std::string name;
  int direction = 0;
  bool terminal = false;  ///< the scenario's choice: stop the run, or only record the event
  /// The mode's region lies on the side the witness leaves (direction -1: g > 0; +1: g < 0): reaching the
  /// other side always ends the mode. The simulate loop then guarantees that no crossing of it is missed and
  /// the self-audit checks that the state never lies beyond it (docs/audit.md).
  bool bounds_region = false;
};

/// How far a state lies outside its mode's region, as the self-audit measures it (docs/audit.md).
struct RegionCheck {
  double excess = 0;     ///< >= 0; 0 inside the region
  double tolerance = 0;  ///< what the integration error allows at this state
  std::string rule;      ///< the rule, in words (e.g. "H >= 0 in mode +1")
  bool violated() const { return excess > tolerance; }
};

/// The self-audit's energy ledger: the stored energy E(t) and the energy dissipated since the start D(t),
/// in the same unit. E + D is conserved, and D never decreases.
struct EnergyLedger {
  double energy = 0;
  double dissipated = 0;
  int dissipated_state = -1;  ///< the state index D is integrated in (its tolerance bounds D's error), or -1
  /// The energy scale: the sum of the magnitudes of the parts E + D is made of, |T| + |V| + |works| + |D| (with
  /// max(|h|, |T| + |V|) for a Jacobi energy h), which the integration error scales with: a body falling freely
  /// has E near 0 and T, V large; a forced oscillator has E = h - W_Q = 0 and h, W_Q growing. The self-audit uses
  /// the running maximum of max(scale, |E| + |D|) (0, the default: |E| + |D|), with an absolute floor from the
  /// states' absolute tolerances under it, so that a start with every part zero is audited too (docs/audit.md).
  double scale = 0;
};

/// What an event handler decided.
struct EventOutcome {
  std::string kind;       ///< the event's name in /events/kind
  int new_mode = 0;
  bool terminal = false;
  bool state_changed = false;  ///< the handler projected or reset the state: the integrator restarts
  std::map<std::string, double> extra;  ///< further values to log (e.g. sigma_plus, residual)
};

/// A key/value found by a run, written to /summary and printed.
struct SummaryItem {
  std::string key;
  double number = 0;
  std::string text;  ///< used instead of number when not empty
  std::string unit;
  std::string label;  ///< for the terminal
  bool is_integer = false;
  /// A class out of a few (a text): a sweep counts its points by it and prints the counts (the disk's orbit type).
  bool tallied = false;
};

/// The attributes /summary holds besides the items (the run's own): no item may take one of these names.
inline constexpr std::string_view kSummaryOwnKeys[] = {"termination", "t_final", "n_samples", "n_events", "message"};

/// The items the simulate loop adds to a model's summary (the self-audit's verdict and its use of the balance
/// tolerance), where the audit applies.
inline constexpr std::string_view kLoopSummaryKeys[] = {"audit", "audit_balance_use"};

/// The energy-drift items that many models' summaries report, reading their energy outputs at every point.
inline constexpr const char* kEnergyDriftKeys[] = {"energy_initial", "energy_drift_abs", "energy_drift_rel"};

/// Whether `keys` (Summarizer::select's) names any of `names`.
inline bool names_any(const std::vector<std::string>& keys, std::span<const char* const> names) {
  for (const auto& k : keys)
    for (const char* n : names)
      if (k == n) return true;
  return false;
}

/// Accumulates a model's summary from the samples, the steps and the events of one run.
class Summarizer {
 public:
  virtual ~Summarizer() = default;
  /// Every internal step, event state, the first state and the last: the state x and the outputs y.
  virtual void on_point(double t, const double* x, const double* y, int mode) = 0;
  /// Every sample on the output grid, interpolated within a step (the step's own end comes to on_point after it):
  /// on_point unless a summarizer needs only the steps (work done per sample that the steps already bound).
  virtual void on_sample(double t, const double* x, const double* y, int mode) { on_point(t, x, y, mode); }
  virtual void on_event(double /*t*/, const std::string& /*kind*/, int /*mode_before*/, int /*mode_after*/,
                        const double* /*x*/) {}
  virtual std::vector<SummaryItem> items() const = 0;
  /// The keys of items that items() reports only after some runs (a note on an undecided answer), which a caller
  /// may still ask for (summary_keys).
  virtual std::vector<std::string> conditional_keys() const { return {}; }
  /// Before the run: the tolerances the answer is computed to (exact: closed-form, to round-off), for rules that
  /// must not decide below them.
  virtual void on_tolerances(double /*rtol*/, double /*atol*/, bool /*exact*/) {}
  /// Before the run, when the caller reads only some items (a sweep's `summary` list), their keys: the summarizer
  /// may skip the work of the others, whose values in items() then mean nothing (the caller drops them).
  virtual void select(const std::vector<std::string>& /*keys*/) {}
  /// Whether on_point and on_sample read the outputs y (asked after select). When not, the loop computes no outputs
  /// for them and passes y = nullptr.
  virtual bool reads_outputs() const { return true; }
  /// The columns of y that on_point and on_sample read, when the summarizer reads only a few (asked after select,
  /// when reads_outputs() is true); empty when it reads any of them. With no one else reading the outputs (no
  /// observer), the loop then computes only these (HybridSystem::compute_output_columns).
  virtual std::vector<std::size_t> output_columns() const { return {}; }
  /// Whether on_sample can change an item (asked after select). When not, and no observer takes samples, the loop
  /// interpolates no state at the grid's times between the steps: it only counts them (n_samples).
  virtual bool reads_samples() const { return true; }
};

/// The formulation a system needs from the integrator.
enum class Formulation { Ode, Dae };

/// A hybrid system as the simulate loop and the writers see it: its states and outputs, its modes, its energy
/// ledger and summary. What moves the state is a facet (below): a system derives from the facets it has, each of
/// which derives virtually from this core, and the integrators and the simulate loop ask for a facet by
/// `facet<F>(system)`:
///
///   OdeSystem      x' = f(t, x, mode) and its Jacobian (CVODE, ARKODE, dopri5, dop853)
///   DaeSystem      F(t, x, x', mode) = 0, its algebraic components, a consistent x' and its iteration matrix (IDA)
///   WitnessSystem  witness functions per mode and what happens when one reaches zero (events)
///   ExactSystem    a closed-form propagation between events (solver.method = "exact")
///
/// The engines provide theirs: a FilippovSystem (hybrid/filippov.hpp) and a ContactEngine (hybrid/contacts.hpp,
/// the contacts) are OdeSystems with witnesses, a mechanics::ConstrainedSystem (models/constrained_mechanics.hpp)
/// is a DaeSystem. A system without witnesses has no events; one without an ODE or a DAE facet cannot be
/// integrated by the general methods (make_integrator says so).
class HybridSystem {
 public:
  virtual ~HybridSystem() = default;
  virtual std::string model_name() const = 0;
  virtual const Signals& states() const = 0;
  virtual const Signals& outputs() const = 0;
  std::size_t size() const { return states().size(); }
  virtual void initial_state(double* x0) const = 0;
  /// Dae when the system has the DAE facet, else Ode.
  Formulation formulation() const;

  /// Modes: a system without modes uses only mode 0.
  virtual bool has_modes() const { return false; }
  /// The largest |mode| the system uses (the trajectory's mode column is int8 up to 127, int32 above).
  virtual int largest_mode() const { return 1; }
  virtual std::string mode_name(int mode) const { return std::to_string(mode); }
  virtual int initial_mode(const double* /*x0*/) const { return 0; }

  /// Output signals at a state. \param y out, dim outputs().size().
  virtual void compute_outputs(double t, const double* x, int mode, double* y) const = 0;
  /// The outputs y[c] for each column c in `columns` (dim outputs().size(); the other columns are left
  /// unspecified), each the value compute_outputs gives, bit for bit. By default all of them.
  virtual void compute_output_columns(double t, const double* x, int mode, std::span<const std::size_t> columns,
                                      double* y) const {
    (void)columns;
    compute_outputs(t, x, mode, y);
  }
  /// The energy ledger at (t, x), or false when the model keeps none.
  virtual bool energy_ledger(double /*t*/, const double* /*x*/, int /*mode*/, EnergyLedger& /*e*/) const {
    return false;
  }
  /// The model's summary of a run; nullptr (the default) when it has none.
  virtual std::unique_ptr<Summarizer> make_summarizer() const { return nullptr; }
  /// Names of the extra values the event handler logs (EventOutcome::extra, and WitnessSystem::event_details), as
  /// /events columns.
  virtual std::vector<std::string> event_extras() const { return {}; }
  /// The independent variable: its unit and meaning ("s" unless the system runs in scaled time).
  virtual Signal time_signal() const { return {"time", "s", "time"}; }
  /// Per-state absolute tolerance scaling (1 by default): atol_i = atol * scale_i.
  virtual std::vector<double> atol_scale() const { return std::vector<double>(size(), 1.0); }
};

/// The facet F of `system` (OdeSystem, DaeSystem, WitnessSystem, ExactSystem), or nullptr when it has none.
template <class F>
const F* facet(const HybridSystem& system) {
  return dynamic_cast<const F*>(&system);
}

/// The ODE facet: x' = f(t, x, mode).
class OdeSystem : public virtual HybridSystem {
 public:
  /// \param x state, dim size(); \param xdot out, dim size().
  virtual void rhs(double t, const double* x, int mode, double* xdot) const = 0;
  /// Optional dense Jacobian J[i + n*j] = d f_i / d x_j (column-major). Returns false if not provided.
  virtual bool jacobian(double /*t*/, const double* /*x*/, int /*mode*/, double* /*J*/) const { return false; }
  /// The method solver.method = "auto" integrates this ODE with (src/solve/auto_integrator.cpp): "dop853", watched by
  /// its stiffness test and handing over to BDF, for a smooth or Filippov system; a system may name another.
  virtual const char* auto_method() const { return "dop853"; }
};

/// The DAE facet: F(t, x, x', mode) = 0.
class DaeSystem : public virtual HybridSystem {
 public:
  /// The residual. \param x, xdot dim size(); \param r out, dim size().
  virtual void residual(double t, const double* x, const double* xdot, int mode, double* r) const = 0;
  /// 1 for a differential component of x, 0 for an algebraic one (e.g. a Lagrange multiplier).
  virtual void differential_ids(double* id) const = 0;
  /// x' at (t, x), exact or a guess that the integrator makes consistent (IDACalcIC).
  virtual void initial_derivative(double t, const double* x, int mode, double* xdot0) const = 0;
  /// Optional iteration matrix J = dF/dx + cj dF/dx' (column-major, n x n). Returns false if not provided.
  virtual bool residual_jacobian(double /*t*/, const double* /*x*/, const double* /*xdot*/, int /*mode*/,
                                 double /*cj*/, double* /*J*/) const {
    return false;
  }
};

/// The witnesses facet: named witness functions per mode, and the events when they reach zero.
class WitnessSystem : public virtual HybridSystem {
 public:
  /// The witnesses active in a mode. The list of a mode must not change during a run: the simulate loop asks for
  /// it once per mode.
  virtual std::vector<Witness> witnesses(int mode) const = 0;
  /// witnesses(mode).size(), for the evaluations that must not allocate; a model overrides it when it keeps the
  /// count.
  virtual std::size_t witness_count(int mode) const { return witnesses(mode).size(); }
  /// The witnesses' values at (t, x). \param g out, dim witness_count(mode).
  virtual void witness_values(double t, const double* x, int mode, double* g) const = 0;
  /// The time derivatives of the witnesses along the motion, used to find their extrema inside a step
  /// (grazing). \param xdot the state's time derivative at (t, x) (from the integrator's dense output).
  /// Default: a forward difference of witness_values along xdot.
  virtual void witness_rates(double t, const double* x, const double* xdot, int mode, double* gdot) const;
  /// How far x lies outside the region of `mode` beyond the region witnesses' signs (e.g. the sliding strip
  /// of a Filippov system). \param err per-component integration error scale rtol |x_i| + atol_i. Default:
  /// the worst region witness on the wrong side, with a tolerance from its gradient and err.
  virtual RegionCheck region_check(double t, const double* x, int mode, const double* err) const;
  /// Handle the witness named `witness` (one of witnesses(mode)) reaching zero at t, crossing in
  /// `crossing_direction` (+1 rising, -1 falling); the state may be projected in place. Default: the event is
  /// logged under the witness's name, the mode and the state are kept.
  virtual EventOutcome on_event(double t, double* x, int mode, const std::string& witness,
                                int crossing_direction) const;
  /// Extra values of an event that only its record needs: called after on_event, with the state after the
  /// handler, only when an observer records the event (a sweep that keeps no trajectory never does), so that a
  /// run nobody reads the events of does not compute them. \param mode the mode the event was found in (as
  /// passed to on_event). Default: none (on_event's EventOutcome::extra is kept either way).
  virtual void event_details(double /*t*/, const double* /*x*/, int /*mode*/, const std::string& /*witness*/,
                             std::map<std::string, double>& /*extra*/) const {}
};

/// The exact-propagation facet: a model-specific integrator (closed-form propagation between events) for
/// solver.method = "exact".
class ExactSystem : public virtual HybridSystem {
 public:
  virtual std::unique_ptr<Integrator> make_exact_integrator(const SolverOptions& options) const = 0;
};

/// The position of the witness `name` in `witnesses` (e.g. an integrator reporting a root it found itself).
/// \throws std::logic_error when there is none.
std::size_t witness_index(const std::vector<Witness>& witnesses, std::string_view name);

/// A time step that moves x along the field f by about `relative` of the state's size (max(1, |x|_inf)), for
/// difference quotients along the flow; 0 where f is zero or not finite.
double flow_step(const double* x, const double* f, std::size_t n, double relative);

/// The integration error a witness value can carry at x: sum over k of |dg/dx_k| err_k (forward differences).
double witness_error_bound(const WitnessSystem& sys, double t, const double* x, int mode, std::size_t index,
                           const double* err);

}  // namespace rollsim
