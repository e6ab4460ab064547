#include "rollsim/models/tipping_table_system.hpp"

#include "rollsim/models/tipping_table_contact.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <sstream>
#include <type_traits>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "rollsim/analysis/linear.hpp"
#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/core/crossing.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/models/tipping_table_dae.hpp"

namespace rollsim::tipping_table {

const Signals& state_signals() {
  static const Signals s{
      {"theta1", "rad", "table angle from level"},
      {"theta2", "rad", "absolute wheel rotation"},
      Signal{"omega1", "rad/s", "table angular velocity"}.as(Role::Rate),
      Signal{"omega2", "rad/s", "wheel angular velocity"}.as(Role::Rate),
  };
  return s;
}

const Outputs& outputs() {
  using O = Outputs;
  static const O list{{
      O::output("contact_position", "m", "contact point along the table from the pivot, s = r (theta1 - theta2)",
                [](const auto& c) { return c.s; }),
      O::output("normal_force", "N", "contact force on the wheel along the table normal",
                [](const auto& c) { return c.normal; })
          .of_contact(Role::NormalForce, "table"),
      O::output("tangential_force", "N", "contact force on the wheel along the table, towards increasing s",
                [](const auto& c) { return c.tangential; })
          .of_contact(Role::TangentialForce, "table"),
      O::output("friction_demand", "1",
                "|tangential_force| / normal_force, the friction coefficient needed to roll, while normal_force > 0; "
                "NaN where normal_force <= 0 (no contact: the ratio means nothing)",
                [](const auto& c) {
                  using S = std::decay_t<decltype(c.s)>;
                  if constexpr (std::is_same_v<S, double>)
                    return c.normal > 0 ? std::abs(c.tangential) / c.normal : NAN;
                  else
                    return S(c.tangential / c.normal);  // signed for the linearisation: |.| is not differentiable at 0
                }),
      O::output("kinetic_energy", "J", "kinetic energy T", [](const auto& c) { return c.kinetic; })
          .as(Role::KineticEnergy),
      O::output("potential_energy", "J", "potential energy V", [](const auto& c) { return c.potential; })
          .as(Role::PotentialEnergy),
      O::output("total_energy", "J", "T + V", [](const auto& c) { return c.kinetic + c.potential; })
          .as(Role::TotalEnergy),
      O::output("input_work", "J", "work done by the table torque since the start, tau (theta1 - theta1(0))",
                [](const auto& c) { return c.input_work; })
          .as(Role::InputWork),
  }};
  return list;
}

namespace {

/// Kept per thread for the last (x, v) (every input bit for bit): at a step's end the witness rates of the step
/// search and the friction demand's rate ask for the same derivative.
ForceRates forces_along(const Params& p, const double* x, const double* v) {
  const double key[] = {x[0], x[1], x[2], x[3], v[0], v[1], v[2], v[3], p.table_torque, p.wheel_mass,
                        p.wheel_radius, p.gravity, p.wheel_inertia, p.table_inertia};
  thread_local LastInputs<std::size(key)> last;
  thread_local ForceRates r;
  if (!last.same_or_keep(key)) r = contact_force_rates(p, x, v, p.table_torque);
  return r;
}

/// The friction demand's extremes over the contact phase, independent of the sampling. The summarizer reports
/// every internal step and event state (in time order), not the samples between them; between two consecutive
/// points the tracker
/// finds, by integrating the minimal equations from the earlier point (classical Runge-Kutta, 32 substeps
/// per interval: over an interval the integrator took as one step, their error is far below the integrator's
/// own; 256 gave the benchmark's friction_demand_max_loaded to the same 3e-15 relative at 1.2 times the cost
/// of a sweep point) and bisecting, each maximum of D = |T_c|/N (dD/dt falling through 0) and each crossing of
/// N = N_w, so the extremes are those of the trajectory, not of its samples. (Two extrema of D within one
/// interval, a sign change of dD/dt the endpoints cannot see, would be missed.) The contact phase ends at the
/// first lift_off event: there N = 0, so D's supremum is +inf unless T_c = 0 at that instant.
class DemandTracker {
 public:
  /// \param n_window the window's lower bound on N [N]
  DemandTracker(const Params& p, double n_window) : p_(p), n_w_(n_window) {}

  void point(double t, const double* x) {
    if (ended_) return;
    // The forces and dD/dt at this point are worked out once: they serve as the right end of this interval
    // and the left end of the next.
    Ends now;
    contact_forces(p_, x, p_.table_torque, now.n, now.t);
    // dD/dt here now, while forces_along still holds this state's rates (the step search's witness rates have just
    // asked for them): asked for later, as an interval's left end, it would be worked out again.
    if (now.n > 0) rate_at(x, now);
    if (have_prev_ && t > t_prev_) interval(t_prev_, x_prev_, prev_, t, x, now);
    take(now.n, now.t);
    t_prev_ = t;
    std::copy(x, x + kStates, x_prev_);
    prev_ = now;
    have_prev_ = true;
  }

  /// The first lift-off ends the contact phase.
  void lift_off(const double* x) {
    if (ended_) return;
    ended_ = true;
    double n, t;
    contact_forces(p_, x, p_.table_torque, n, t);
    sup_ = t != 0 ? INFINITY : std::max(sup_, 0.0);
    unbounded_ = t != 0;
  }

  double sup() const { return sup_; }
  double window_max() const { return window_max_; }
  bool unbounded() const { return unbounded_; }
  double n_window() const { return n_w_; }

 private:
  /// The normal and tangential force at a point, and dD/dt there once it is asked for.
  struct Ends {
    double n = 0, t = 0;
    double rate = 0;
    bool rate_known = false;
  };

  double rate_at(const double* x, Ends& e) const {
    if (!e.rate_known) {
      e.rate = demand_rate(x);
      e.rate_known = true;
    }
    return e.rate;
  }

  void take(double n, double t) {
    if (n > 0) sup_ = std::max(sup_, std::abs(t) / n);
    if (n >= n_w_) window_max_ = std::fmax(window_max_, std::abs(t) / n);
  }

  void take(const double* x) {
    double n, t;
    contact_forces(p_, x, p_.table_torque, n, t);
    take(n, t);
  }

  /// dD/dt along the motion x' = f(x), from the forces' rates in that direction (contact_force_rates).
  double demand_rate(const double* x) const {
    double f[kStates];
    rhs(p_, x, p_.table_torque, f);
    const ForceRates r = forces_along(p_, x, f);
    return (r.t < 0 ? -1.0 : 1.0) * (r.t_rate * r.n - r.t * r.n_rate) / (r.n * r.n);
  }

  double normal_margin(const double* x) const {
    double n, t;
    contact_forces(p_, x, p_.table_torque, n, t);
    return n - n_w_;
  }

  /// Advance x from t0 to t1 by classical Runge-Kutta in `steps` equal substeps.
  void advance(double* x, double t0, double t1, int steps) const {
    const double h = (t1 - t0) / steps;
    double k1[kStates], k2[kStates], k3[kStates], k4[kStates], xt[kStates];
    for (int s = 0; s < steps; ++s) {
      rhs(p_, x, p_.table_torque, k1);
      for (int i = 0; i < kStates; ++i) xt[i] = x[i] + 0.5 * h * k1[i];
      rhs(p_, xt, p_.table_torque, k2);
      for (int i = 0; i < kStates; ++i) xt[i] = x[i] + 0.5 * h * k2[i];
      rhs(p_, xt, p_.table_torque, k3);
      for (int i = 0; i < kStates; ++i) xt[i] = x[i] + h * k3[i];
      rhs(p_, xt, p_.table_torque, k4);
      for (int i = 0; i < kStates; ++i) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
  }

  /// The state where g changes sign between (ta, xa) and tb, given g_a = g(xa) and g_b, g at tb, of opposite
  /// signs (g_b may be 0): located (core/crossing.hpp) on states integrated from the bracket's left end, which
  /// moves with each trial time that has not yet crossed; the state at the final left end.
  template <class G>
  void locate(double ta, const double* xa, double g_a, double tb, double g_b, G g, double* x_root) const {
    constexpr int kSubsteps = 32;
    const double span = tb - ta;
    double lo = ta, x_lo[kStates];
    std::copy(xa, xa + kStates, x_lo);
    // Signed so that the crossing turns it from negative to non-negative (g > 0 at ta) or positive (g <= 0).
    const bool sign_lo = g_a > 0;
    const double s = sign_lo ? -1.0 : 1.0;
    locate_crossing(
        ta, tb, s * g_a, s * g_b,
        [&](double t) {
          double xm[kStates];
          std::copy(x_lo, x_lo + kStates, xm);
          advance(xm, lo, t, std::max(2, static_cast<int>(std::ceil(kSubsteps * (t - lo) / span))));
          const double gm = g(xm);
          if ((gm > 0) == sign_lo) {  // not crossed yet: the bracket's left end moves here
            lo = t;
            std::copy(xm, xm + kStates, x_lo);
          }
          return s * gm;
        },
        /*zero_beyond=*/sign_lo, 1e-15 * std::max(1.0, std::abs(tb)) + 1e-12 * span);
    std::copy(x_lo, x_lo + kStates, x_root);
  }

  void interval(double ta, const double* xa, Ends& a, double tb, const double* xb, Ends& b) {
    const double n_a = a.n, n_b = b.n;
    if (n_a > 0 && n_b > 0 && rate_at(xa, a) > 0 && rate_at(xb, b) < 0) {
      double xr[kStates];
      locate(ta, xa, a.rate, tb, b.rate, [this](const double* x) { return demand_rate(x); }, xr);
      take(xr);
    }
    if ((n_a >= n_w_) != (n_b >= n_w_)) {
      double xr[kStates];
      locate(ta, xa, n_a - n_w_, tb, n_b - n_w_, [this](const double* x) { return normal_margin(x); }, xr);
      double n, t;
      contact_forces(p_, xr, p_.table_torque, n, t);
      if (n > 0) window_max_ = std::fmax(window_max_, std::abs(t) / n_w_);  // D on the window's edge N = N_w
      take(xr);
    }
  }

  Params p_;
  double n_w_;
  bool have_prev_ = false, ended_ = false, unbounded_ = false;
  double t_prev_ = 0, x_prev_[kStates] = {};
  Ends prev_;
  double sup_ = 0, window_max_ = NAN;
};

/// Running extremes over every sample and internal step; the friction demand's located exactly (DemandTracker).
/// \param minimal where theta1, theta2, omega1, omega2 sit in the system's state.
class TableSummarizer final : public Summarizer {
 public:
  TableSummarizer(const Params& p, const std::array<int, kStates>& minimal, const Signals& outputs)
      : mu_(p.friction_coefficient ? *p.friction_coefficient : NAN),
        minimal_(minimal),
        total_(signal_index(outputs, "total_energy", "tipping table summary")),
        kinetic_(signal_index(outputs, "kinetic_energy", "tipping table summary")),
        potential_(signal_index(outputs, "potential_energy", "tipping table summary")),
        work_(signal_index(outputs, "input_work", "tipping table summary")),
        normal_(signal_index(outputs, "normal_force", "tipping table summary")),
        demand_(p, kDemandWindowFraction * p.wheel_mass * p.gravity) {
    selected_.fill(true);  // every item, until select() names some
  }
  void on_point(double t, const double* x, const double* y, int mode) override {
    on_sample(t, x, y, mode);
    if (!track_demand_) return;
    double xm[kStates];
    minimal_state(x, xm);
    demand_.point(t, xm);
  }
  /// Only what the selected items need (kKeys): the outputs at every point, the friction demand's tracker, or
  /// neither (the event times).
  /// items() then builds the selected items alone (their labels are texts: 3 % of a point of a sweep of the default
  /// method with the event times only).
  void select(const std::vector<std::string>& keys) override {
    reads_outputs_ = track_demand_ = false;
    selected_.fill(false);
    for (const auto& k : keys)
      for (std::size_t i = 0; i < kItems; ++i)
        if (k == kKeys[i].key) {
          reads_outputs_ = reads_outputs_ || kKeys[i].outputs;
          track_demand_ = track_demand_ || kKeys[i].tracker;
          selected_[i] = true;
        }
  }
  bool reads_outputs() const override { return reads_outputs_; }
  bool reads_samples() const override { return reads_outputs_; }
  /// A sample within a step: the energy drift and the smallest normal force take it; the friction demand's tracker
  /// does not (it locates the extremes between the steps' ends, which bound every sample).
  void on_sample(double, const double*, const double* y, int) override {
    if (!reads_outputs_) return;
    const double e = y[total_] - y[work_];
    if (!have_e0_) {
      e0_ = e;
      have_e0_ = true;
    }
    drift_ = std::max(drift_, std::abs(e - e0_));
    // The energy scale of the drift: the sum of the magnitudes of the parts, never |T + V - W| alone (0 for a start
    // at rest at the zero of V).
    scale_ = std::max(scale_, std::abs(y[kinetic_]) + std::abs(y[potential_]) + std::abs(y[work_]));
    min_n_ = std::min(min_n_, y[normal_]);
  }
  void on_event(double t, const std::string& kind, int, int, const double* x) override {
    if (kind == "table_edge" && std::isnan(t_edge_)) t_edge_ = t;
    if (kind == "lift_off" && std::isnan(t_lift_)) {
      t_lift_ = t;
      double xm[kStates];
      minimal_state(x, xm);
      if (track_demand_) demand_.lift_off(xm);
    }
    if (kind == "slip_onset" && std::isnan(t_slip_)) t_slip_ = t;
  }
  std::vector<SummaryItem> items() const override {
    // Each item built in place (an initializer list would copy every string once more: a sweep asks at every point).
    std::vector<SummaryItem> v;
    v.reserve(kItems);
    // The items select() did not name are not built (the caller would drop them).
    auto add = [&](Item i, double value, const char* unit, const char* label) {
      if (selected_[i]) v.push_back({kKeys[i].key, value, "", unit, label, false});
    };
    add(kEnergyInitial, e0_, "J", "initial energy (T + V)");
    add(kDriftAbs, drift_, "J", "largest energy drift");
    add(kDriftRel, scale_ > 0 ? drift_ / scale_ : 0.0, "1", "largest energy drift, relative");
    add(kNormalMin, min_n_, "N", "smallest normal force");
    add(kDemandMax, demand_.sup(), "1",
        demand_.unbounded() ? "sup |T_c|/N over the contact phase (unbounded: N -> 0 at lift-off, T_c != 0)"
                            : "sup |T_c|/N over the contact phase");
    if (selected_[kDemandLoaded]) {
      char window[160];
      std::snprintf(window, sizeof window, "largest |T_c|/N while N >= %g m_w g = %.6g N (contact phase)",
                    kDemandWindowFraction, demand_.n_window());
      add(kDemandLoaded, demand_.window_max(), "1", window);
    }
    add(kTEdge, t_edge_, "s", "time the wheel reaches the table edge");
    add(kTLiftOff, t_lift_, "s", "time the normal force first falls through zero");
    if (!std::isnan(mu_)) add(kTSlipOnset, t_slip_, "s", "time |T_c| first reaches mu N");
    return v;
  }

 private:
  enum Item { kEnergyInitial, kDriftAbs, kDriftRel, kNormalMin, kDemandMax, kDemandLoaded, kTEdge, kTLiftOff,
              kTSlipOnset, kItems };
  /// Each item's key and what it needs at the run's points, written once: items() reports the keys, select()
  /// reads the needs.
  struct Key {
    const char* key;
    bool outputs, tracker;
  };
  static constexpr Key kKeys[kItems] = {
      {kEnergyDriftKeys[0], true, false},   {kEnergyDriftKeys[1], true, false},
      {kEnergyDriftKeys[2], true, false},   {"normal_force_min", true, false},
      {"friction_demand_max", false, true}, {"friction_demand_max_loaded", false, true},
      {"t_edge", false, false},             {"t_lift_off", false, false},
      {"t_slip_onset", false, false}};

  void minimal_state(const double* x, double* xm) const {
    for (int i = 0; i < kStates; ++i) xm[i] = x[minimal_[static_cast<std::size_t>(i)]];
  }

  double mu_;
  std::array<int, kStates> minimal_;
  std::size_t total_, kinetic_, potential_, work_, normal_;
  DemandTracker demand_;
  bool reads_outputs_ = true, track_demand_ = true;  ///< what the selected items need (select)
  std::array<bool, kItems> selected_;  ///< the items items() builds (select)
  bool have_e0_ = false;
  double e0_ = 0, drift_ = 0, scale_ = 0, min_n_ = std::numeric_limits<double>::infinity();
  double t_edge_ = NAN, t_lift_ = NAN, t_slip_ = NAN;
};

class TableSystem final : public OdeSystem, public WitnessSystem, public Linearizable, public RollingTableScene {
 public:
  TableSystem(const Params& p, const double* x0, const EventActions& a)
      : RollingTableScene(p, state_signals(), tipping_table::outputs().signals()), p_(p), a_(a) {
    std::copy(x0, x0 + kStates, x0_);
    witnesses_.push_back({"table_edge", -1, a.stop_at_edge});
    witnesses_.push_back({"lift_off", -1, a.stop_at_lift_off});
    if (p.friction_coefficient) witnesses_.push_back({"slip_onset", -1, a.stop_at_slip_onset});
  }
  std::string model_name() const override { return "tipping_table"; }
  std::string mode_name(int) const override { return "rolling without slip"; }
  const Signals& states() const override { return state_signals(); }
  const Signals& outputs() const override { return tipping_table::outputs().signals(); }
  void initial_state(double* x0) const override { std::copy(x0_, x0_ + kStates, x0); }

  void rhs(double, const double* x, int, double* xdot) const override {
    tipping_table::rhs(p_, x, p_.table_torque, xdot);
  }

  bool jacobian(double, const double* x, int, double* J) const override {
    using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, kStates, 1>>;
    AD xa[kStates], fa[kStates];
    for (int i = 0; i < kStates; ++i) xa[i] = AD(x[i], kStates, i);
    tipping_table::rhs(p_, xa, AD(p_.table_torque), fa);
    for (int i = 0; i < kStates; ++i)
      for (int j = 0; j < kStates; ++j) J[i + kStates * j] = fa[i].derivatives()[j];
    return true;
  }

  std::vector<Witness> witnesses(int) const override { return witnesses_; }
  std::size_t witness_count(int) const override { return witnesses_.size(); }

  void witness_values(double, const double* x, int, double* g) const override {
    const double s = contact_position(p_, x);
    const double half = 0.5 * p_.table_length;
    g[0] = half * half - s * s;  // smooth, positive on the table, falls through 0 at either edge
    double n, t;
    contact_forces(p_, x, p_.table_torque, n, t);
    g[1] = n;
    if (p_.friction_coefficient) g[2] = *p_.friction_coefficient * n - std::abs(t);  // smooth wherever it is ~0 (N>0)
  }

  /// Exact rates along x' = xdot (WitnessSystem's own is a forward difference): -2 s s', N', mu N' - sign(T_c) T_c'.
  void witness_rates(double, const double* x, const double* xdot, int, double* gdot) const override {
    gdot[0] = -2.0 * contact_position(p_, x) * p_.wheel_radius * (xdot[0] - xdot[1]);
    const ForceRates r = forces_along(p_, x, xdot);
    gdot[1] = r.n_rate;
    if (p_.friction_coefficient) gdot[2] = *p_.friction_coefficient * r.n_rate - (r.t < 0 ? -1.0 : 1.0) * r.t_rate;
  }

  void compute_outputs(double, const double* x, int, double* y) const override {
    tipping_table::outputs().compute(context(x, p_.table_torque), y);
  }

  std::unique_ptr<Summarizer> make_summarizer() const override {
    return make_table_summarizer(p_, {0, 1, 2, 3}, outputs());
  }

  // Linearizable: the same templated equations, with AD scalars; the input is the table torque.
  const Signals& inputs() const override {
    static const Signals s{{"table_torque", "N m", "torque on the table, positive increases theta1"}};
    return s;
  }
  std::vector<double> input_values() const override { return {p_.table_torque}; }
  void rhs_ad(const AD* x, const AD* u, AD* xdot) const override { tipping_table::rhs(p_, x, u[0], xdot); }
  void signals_ad(const AD* x, const AD* u, AD* y) const override {
    for (int i = 0; i < kStates; ++i) y[i] = x[i];
    tipping_table::outputs().compute(context(x, u[0]), y + kStates);
  }
  int degrees_of_freedom() const override { return 2; }
  std::vector<std::string> default_linear_outputs() const override { return {"theta2"}; }

  /// (1.7) holds for the benchmark's relations: equal masses, a uniform disk wheel, a thin plate table.
  std::vector<std::complex<double>> reference_eigenvalues(std::string& label) const override {
    auto close = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
    const double m = p_.wheel_mass, r = p_.wheel_radius, l = p_.table_length;
    if (!close(p_.table_mass, m) || !close(p_.wheel_inertia, 0.5 * m * r * r) ||
        !close(p_.table_inertia, p_.table_mass * l * l / 12.0) || x0_[0] != 0 || x0_[1] != 0 || x0_[2] != 0 ||
        x0_[3] != 0 || p_.table_torque != 0)
      return {};
    if (m == 1.0 && r == 0.25 && l == 1.0 && p_.gravity == 9.81) {
      label = "IFToMM benchmark (1.8)-(1.9)";
      return linear::iftomm_benchmark_eigenvalues();
    }
    label = "IFToMM closed form (1.7)";
    return linear::iftomm_eigenvalues(p_.gravity, r, l);
  }

 private:
  /// The outputs' shared values at the minimal state x with table torque tau.
  template <class S>
  OutputContext<S> context(const S* x, S tau) const {
    OutputContext<S> c;
    // Not the per-thread cache of contact_forces: most calls are samples inside a step, each a new state.
    contact_forces<S>(p_, x, tau, c.normal, c.tangential);
    c.s = contact_position(p_, x);
    c.kinetic = kinetic_energy(p_, x);
    c.potential = potential_energy(p_, x);
    c.input_work = tau * (x[0] - x0_[0]);
    return c;
  }

  Params p_;
  EventActions a_;
  double x0_[kStates];
  std::vector<Witness> witnesses_;
};

std::vector<KeySpec> schema(const std::map<std::string, std::string>& raw) {
  std::vector<KeySpec> v = parameters().keys();
  for (auto& k : initial_values().keys()) v.push_back(std::move(k));
  // With real contact (formulation = "contact") the run goes on past the edge and lift-off: the contact
  // engine's events (impact, lift_off, slip, ...) are always recorded, and table_edge by default only recorded.
  const auto f = raw.find("formulation");
  const bool contact = f != raw.end() && f->second == "contact";
  for (auto& k : event_parameters(contact).keys()) v.push_back(std::move(k));
  if (contact)
    for (auto& k : contact_formulation_keys()) v.push_back(std::move(k));
  for (auto& k : smooth_model_keys()) v.push_back(std::move(k));
  v.push_back(output_parameters().key("title"));
  append_formulation_keys(v, raw);
  return v;
}

}  // namespace

const Parameters<Params>& parameters() {
  static const Parameters<Params> list{
      "tipping_table parameters",
      {
          param(&Params::wheel_mass, real_key("parameters.wheel_mass", "kg", "wheel mass m_w").positive()),
          param(&Params::wheel_radius, real_key("parameters.wheel_radius", "m", "wheel radius r").positive()),
          param(&Params::wheel_inertia, real_key("parameters.wheel_inertia", "kg m^2",
                                                 "wheel inertia about its centre; default {default} (uniform disk)")
                                            .positive())
              .derived("1/2 wheel_mass wheel_radius^2",
                       [](const Params& p) { return uniform_disk_inertia(p.wheel_mass, p.wheel_radius); }),
          param(&Params::table_mass,
                real_key("parameters.table_mass", "kg", "table mass (sets the default table_inertia)").positive()),
          param(&Params::table_length,
                real_key("parameters.table_length", "m", "table length l; the wheel leaves at |s| = l/2").positive()),
          param(&Params::table_inertia, real_key("parameters.table_inertia", "kg m^2",
                                                 "table inertia about the pivot; default {default} (thin plate)")
                                            .positive())
              .derived("1/12 table_mass table_length^2",
                       [](const Params& p) { return thin_plate_inertia(p.table_mass, p.table_length); }),
          param(&Params::gravity,
                real_key("parameters.gravity", "m/s^2", "gravitational acceleration g").positive()),
          param(&Params::table_torque, real_key("parameters.table_torque", "N m",
                                                      "constant torque on the table (the input of the linear analysis)")),
          param(&Params::friction_coefficient,
                real_key("parameters.friction_coefficient", "1",
                         "Coulomb friction coefficient mu; enables the slip_onset event, |T_c| = mu N")
                    .positive()),
      }};
  return list;
}

const Parameters<InitialState>& initial_values() {
  static const Parameters<InitialState> list{
      "tipping_table initial values",
      {
          element<InitialState>(0, real_key("initial.theta1", "rad",
                                            "table angle; the wheel starts on the table, |s| < l/2, s = r (theta1 - theta2)")),
          element<InitialState>(1, real_key("initial.theta2", "rad", "wheel angle (|s| < l/2 as for theta1)")),
          element<InitialState>(2, real_key("initial.omega1", "rad/s",
                                            "table angular velocity; the initial normal force must be positive")),
          element<InitialState>(3, real_key("initial.omega2", "rad/s",
                                            "wheel angular velocity; the initial normal force must be positive")),
      }};
  return list;
}

Params params_from(const Scenario& sc) { return parameters().read(sc); }

void initial_from(const Scenario& sc, const Params& p, double* x0) {
  const InitialState given = initial_values().read(sc);
  std::copy(given.begin(), given.end(), x0);
  const double s = contact_position(p, x0);
  if (std::abs(s) >= 0.5 * p.table_length) {
    std::ostringstream os;
    os.precision(10);
    os << "the wheel starts at contact position s = r (theta1 - theta2) = " << s
       << " m, at or beyond the table edge; allowed range (" << -0.5 * p.table_length << ", "
       << 0.5 * p.table_length << ") m";
    const std::string key = sc.is_default("initial.theta1") ? "initial.theta2" : "initial.theta1";
    sc.fail(key, os.str());
  }
  double n, t;
  contact_forces(p, x0, p.table_torque, n, t);
  double xdot[kStates];
  rhs(p, x0, p.table_torque, xdot);
  bool finite = std::isfinite(p.wheel_inertia) && std::isfinite(p.table_inertia);
  for (double v : xdot) finite = finite && std::isfinite(v);
  if (!finite) {
    std::ostringstream os;
    os << "the equations of motion are not finite at the initial state (wheel inertia " << p.wheel_inertia
       << " kg m^2, table inertia " << p.table_inertia << " kg m^2, accelerations " << xdot[2] << ", " << xdot[3]
       << " rad/s^2); the parameters overflow double precision";
    throw InputError(Origin{sc.path, 0, 0}, os.str());
  }
  if (!std::isfinite(n)) {
    std::ostringstream os;
    os << "the normal force at the initial state is " << n
       << "; the parameters and the initial state overflow double precision";
    sc.fail(sc.is_default("initial.omega1") ? "initial.theta1" : "initial.omega1", os.str());
  }
  if (!(n > 0)) {
    std::ostringstream os;
    os << "the normal force at the initial state is " << n
       << " N; the wheel would not stay on the table (allowed: N > 0)";
    sc.fail(sc.is_default("initial.omega1") ? "initial.theta1" : "initial.omega1", os.str());
  }
}

const Parameters<EventActions>& event_parameters(bool contact) {
  auto action = [](bool EventActions::*stop, const std::string& name) {
    return event_action(stop, "events." + name, "at the " + name + " event: stop the run, or only record the event");
  };
  static const Parameters<EventActions> rolling{"tipping_table [events] keys",
                                                {
                                                    action(&EventActions::stop_at_edge, "table_edge"),
                                                    action(&EventActions::stop_at_lift_off, "lift_off"),
                                                    action(&EventActions::stop_at_slip_onset, "slip_onset"),
                                                }};
  // With real contact the engine records its own events; the table's edge is by default only recorded.
  static const Parameters<EventActions> with_contact = [] {
    EventActions d;
    d.stop_at_edge = false;
    return Parameters<EventActions>("tipping_table [events] keys (formulation = \"contact\")", {rolling.list()[0]}, d);
  }();
  return contact ? with_contact : rolling;
}

EventActions actions_from(const Scenario& sc) { return event_parameters(false).read(sc); }

std::unique_ptr<Summarizer> make_table_summarizer(const Params& p, const std::array<int, kStates>& minimal,
                                                  const Signals& outputs) {
  return std::make_unique<TableSummarizer>(p, minimal, outputs);
}

std::unique_ptr<HybridSystem> make_system(const Params& p, const double* x0, const EventActions& actions) {
  return std::make_unique<TableSystem>(p, x0, actions);
}

double energy_with_input(const Params& p, const double* x) {
  return kinetic_energy(p, x) + potential_energy(p, x) - p.table_torque * x[0];
}

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "tipping_table";
  e.description = "wheel rolling without slip on a tipping table (IFToMM benchmark)";
  e.schema = schema;
  e.make_system = [](const Scenario& sc) {
    const Params p = params_from(sc);
    double x0[kStates];
    const auto formulation = formulation_of(sc);
    if (formulation == FormulationChoice::Contact) {
      const InitialState given = initial_values().read(sc);
      return make_contact_system(sc, p, given.data(), contact_options_from(sc));
    }
    initial_from(sc, p, x0);
    if (formulation == FormulationChoice::Dae) return make_dae_system(p, x0, actions_from(sc), dae_options_from(sc));
    return make_system(p, x0, actions_from(sc));
  };
  return e;
}

}  // namespace rollsim::tipping_table
