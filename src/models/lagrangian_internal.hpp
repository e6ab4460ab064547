#pragma once
// The user model's compiled form and the evaluations its systems share (private to src/models/lagrangian*.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/cone_engine.hpp"
#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/lagrangian.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/symbolic/expression.hpp"
#include "rollsim/symbolic/lagrange.hpp"

namespace rollsim::lagrangian::detail {

using symbolic::KernelFunction;

/// The Baumgarte rate's default for constrained user models [1/s] (as the built-in constrained models).
inline constexpr double kDefaultBaumgarte = 10.0;

// ---- the compiled model ---------------------------------------------------------------------------------

struct EventSpec {
  std::string name;
  int direction = 0;
  bool terminal = false;
};

/// Everything the systems share: sizes, names, parameter values and the compiled kernels.
struct Compiled {
  std::size_t n = 0, np = 0, nc = 0, n_extra = 0, n_user_outputs = 0, n_events = 0;
  /// The DAE's extra states (after q, v, lambda): W_Q, P (those present) and W_C (always).
  std::size_t n_dae_extra = 0;
  std::size_t n_contacts = 0;  ///< contacts of the contact engine (hybrid/contacts.hpp)
  std::size_t n_cone_contacts = 0;  ///< contacts with Coulomb friction of the cone's engine (hybrid/cone_engine.hpp)
  /// Orientation charts that can become singular (LagrangeModel::charts): the body and sequence of each.
  std::vector<std::pair<std::string, std::string>> charts;
  bool has_contact = false, has_forces = false, explicit_time = false, friction_dissipates = false;
  std::vector<std::string> coordinates, units, constraint_names;
  std::vector<Signal> user_outputs;
  std::vector<EventSpec> events;
  std::vector<double> p;  ///< parameter values
  double alpha = kDefaultBaumgarte;
  std::shared_ptr<symbolic::CompiledKernels> lib;
  KernelFunction dyn = nullptr, jac = nullptr, extra = nullptr, energy = nullptr, contact = nullptr, outputs = nullptr,
                 outputs_jac = nullptr, witnesses = nullptr, contacts = nullptr, dae = nullptr, dae_jac = nullptr, constraints = nullptr,
                 contact_constraints = nullptr, dae_extra = nullptr, dae_extra_jac = nullptr, chart_determinants = nullptr,
                 cone_contacts = nullptr, scene_values = nullptr;
  /// The drawables of the bodies, contact shapes and [[draw]] entries; their values per sample: `scene_values`.
  Scene scene;
  /// The numbers the scene's expressions took at the parameters' values (a disk's axis), part of the kernels' key.
  std::string scene_key;
  std::size_t in_size = 0, in_a = 0, in_p = 0, in_lambda = 0, in_s = 0, in_alpha = 0;
  SetupTimes setup;
};

/// M a = f for a mass matrix M (n x n, column-major) by LU decomposition with partial pivoting: Eigen's
/// PartialPivLU of a fixed size for n up to kFixedMax, of a dynamic size above. For the few coordinates of most
/// models the dynamic-size decomposition's dispatch and blocking cost many times the model's own kernel (the
/// rolling disk written as a user model: 46 % of a run's instructions in Eigen's LU and its triangular solves).
class MassLu {
 public:
  static constexpr int kFixedMax = 6;

  /// Decomposes M (n x n, column-major).
  void compute(const double* M, Eigen::Index n) {
    n_ = n;
    with_size([&](auto size) {
      constexpr int N = decltype(size)::value;
      factors<N>().compute(Eigen::Map<const Eigen::Matrix<double, N, N>>(M, n, n));
    });
  }
  /// x = M^-1 b for the last M decomposed (b and x of size n).
  void solve(const double* b, double* x) const {
    with_size([&](auto size) {
      constexpr int N = decltype(size)::value;
      Eigen::Map<Eigen::Matrix<double, N, 1>>(x, n_) =
          std::get<Lu<N>>(lu_).solve(Eigen::Map<const Eigen::Matrix<double, N, 1>>(b, n_));
    });
  }

 private:
  template <int N>
  using Lu = Eigen::PartialPivLU<Eigen::Matrix<double, N, N>>;

  /// Calls f with std::integral_constant<int, N>: N = n_ up to kFixedMax, else Eigen::Dynamic.
  template <class F>
  void with_size(F&& f) const {
    switch (n_) {
      case 1: return f(std::integral_constant<int, 1>{});
      case 2: return f(std::integral_constant<int, 2>{});
      case 3: return f(std::integral_constant<int, 3>{});
      case 4: return f(std::integral_constant<int, 4>{});
      case 5: return f(std::integral_constant<int, 5>{});
      case 6: return f(std::integral_constant<int, 6>{});
      default: return f(std::integral_constant<int, Eigen::Dynamic>{});
    }
  }
  template <int N>
  Lu<N>& factors() {
    if (!std::holds_alternative<Lu<N>>(lu_)) {
      if constexpr (N == Eigen::Dynamic) lu_.template emplace<Lu<N>>(n_);
      else lu_.template emplace<Lu<N>>();
    }
    return std::get<Lu<N>>(lu_);
  }

  Eigen::Index n_ = 0;
  std::variant<std::monostate, Lu<1>, Lu<2>, Lu<3>, Lu<4>, Lu<5>, Lu<6>, Lu<Eigen::Dynamic>> lu_;
};
static_assert(MassLu::kFixedMax == 6, "MassLu::with_size names the fixed sizes");

/// Per-thread scratch: no heap allocation once the sizes are reached.
struct Scratch {
  std::vector<double> in, dyn, jac, out, tmp;
  MassLu lu;  ///< of the mass matrix of the last accelerations()
  Eigen::VectorXd sol;  ///< a column of M^-1 (ode_jacobian)
  /// Sized for c; the sizes are worked out only when c's differ from the last model's (every right-hand side of a
  /// user model asks).
  void ensure(const Compiled& c) {
    const std::size_t key[] = {c.n,        c.nc,         c.n_extra,         c.n_user_outputs, c.n_events,
                               c.in_size,  c.n_contacts, c.n_cone_contacts, c.n_dae_extra};
    // Compared one by one to the first difference (std::equal is a call to memcmp, dearer than these compares).
    std::size_t i = 0;
    while (i < std::size(key) && key[i] == sized_for_[i]) ++i;
    if (i == std::size(key)) return;
    std::copy(std::begin(key), std::end(key), sized_for_);
    const std::size_t n = c.n, N = 2 * n + c.nc + c.n_extra + 4;
    auto grow = [](std::vector<double>& v, std::size_t k) {
      if (v.size() < k) v.assign(k, 0.0);
    };
    grow(in, c.in_size);
    grow(dyn, n * n + n);
    grow(jac, (n + c.n_extra + c.nc + n) * (3 * n + c.nc) + N);
    grow(out, std::max<std::size_t>({c.n_user_outputs * 3 * n + c.n_user_outputs + c.n_events + 4 * n + 8,
                                     c.n_contacts * symbolic::KernelNames::contact_stride(n),
                                     c.n_cone_contacts * symbolic::KernelNames::cone_contact_stride(n),
                                     c.nc * symbolic::KernelNames::constraint_stride(n),
                                     c.n_dae_extra * (2 * n + c.nc + 1), 16}));
    grow(tmp, 4 * N + 8);
    if (static_cast<std::size_t>(sol.size()) != n + c.nc) sol.resize(static_cast<Eigen::Index>(n + c.nc));
  }

 private:
  /// The sizes ensure() last worked from (none at first: no model has n = -1).
  std::size_t sized_for_[9] = {~std::size_t{0}};
};

/// Per-thread room for a set of outputs (the energy ledger's), kept between calls.
inline double* output_buffer(std::size_t n) {
  thread_local std::vector<double> y;
  if (y.size() < n) y.assign(n, 0.0);
  return y.data();
}

inline Scratch& scratch(const Compiled& c) {
  thread_local Scratch s;
  s.ensure(c);
  return s;
}

/// Fill the input array: t, q, q' (from x), parameters, friction sign s and the Baumgarte rate.
inline double* fill(const Compiled& c, Scratch& w, double t, const double* x, double s) {
  double* in = w.in.data();
  in[0] = t;
  std::copy(x, x + 2 * c.n, in + 1);
  std::fill(in + c.in_a, in + c.in_p, 0.0);
  std::copy(c.p.begin(), c.p.end(), in + c.in_p);
  std::fill(in + c.in_lambda, in + c.in_s, 0.0);
  in[c.in_s] = s;
  in[c.in_alpha] = c.alpha;
  return in;
}

/// Accelerations a from M a = f_s; also leaves the inputs filled (with a) in w.in. Returns false if M is singular.
inline bool accelerations(const Compiled& c, Scratch& w, double t, const double* x, double s, double* a) {
  double* in = fill(c, w, t, x, s);
  c.dyn(in, w.dyn.data());
  const auto n = static_cast<Eigen::Index>(c.n);
  // rs_dyn's M (n x n, column-major; the ODE forms only, nc = 0), then f.
  w.lu.compute(w.dyn.data(), n);
  w.lu.solve(w.dyn.data() + n * n, a);
  bool ok = true;
  for (std::size_t i = 0; i < c.n; ++i) {
    ok = ok && std::isfinite(a[i]);
    in[c.in_a + i] = a[i];
  }
  return ok;
}

/// xdot = [q', a, extra rates] of the ODE in mode sign s.
inline void ode_rhs(const Compiled& c, double t, const double* x, double s, double* xdot) {
  Scratch& w = scratch(c);
  std::copy(x + c.n, x + 2 * c.n, xdot);
  accelerations(c, w, t, x, s, xdot + c.n);
  if (c.n_extra) c.extra(w.in.data(), xdot + 2 * c.n);
}

/// The ODE's Jacobian (column-major, N x N, N = 2n + n_extra) in mode sign s.
inline void ode_jacobian(const Compiled& c, double t, const double* x, double s, double* J) {
  Scratch& w = scratch(c);
  const std::size_t n = c.n, N = 2 * n + c.n_extra;
  double* a = w.tmp.data();
  accelerations(c, w, t, x, s, a);
  c.jac(w.in.data(), w.jac.data());
  std::fill(J, J + N * N, 0.0);
  for (std::size_t i = 0; i < n; ++i) J[i + N * (n + i)] = 1.0;
  for (std::size_t k = 0; k < 2 * n; ++k) {
    w.lu.solve(w.jac.data() + n * k, w.sol.data());
    for (std::size_t i = 0; i < n; ++i) J[n + i + N * k] = -w.sol(static_cast<Eigen::Index>(i));
    for (std::size_t e = 0; e < c.n_extra; ++e) J[2 * n + e + N * k] = w.jac[n * 2 * n + e + c.n_extra * k];
  }
}

/// M (n x n, column-major) and f (n) of M q'' = f at (t, x), from the kernel rs_dyn: what the contact engines ask of
/// a user model.
inline void kernel_mass_and_forces(const Compiled& c, double t, const double* x, double* M, double* f) {
  Scratch& w = scratch(c);
  c.dyn(fill(c, w, t, x, 0.0), w.dyn.data());
  const std::size_t n = c.n;
  std::copy(w.dyn.begin(), w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n), M);
  std::copy(w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n), w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n + n), f);
}

/// T, V, the Jacobi energy h and E = h - W_Q + P (the extra states present) at (t, x).
inline void kernel_energies(const Compiled& c, double t, const double* x, double& T, double& V, double& h, double& E) {
  Scratch& w = scratch(c);
  double e[3];
  c.energy(fill(c, w, t, x, 0.0), e);
  h = e[0];
  T = e[1];
  V = e[2];
  E = h;
  std::size_t k = 2 * c.n;
  if (c.has_forces) E -= x[k++];
  if (c.explicit_time) E += x[k++];
}

/// The kernels' inputs at (t, x) with the accelerations a (for the outputs, the witnesses and the extra rates).
inline const double* inputs_with_accelerations(const Compiled& c, double t, const double* x, const double* a) {
  Scratch& w = scratch(c);
  double* in = fill(c, w, t, x, 0.0);
  std::copy(a, a + c.n, in + c.in_a);
  return in;
}

// ---- signals --------------------------------------------------------------------------------------------

inline Signals state_signals(const Compiled& c) {
  Signals s;
  for (std::size_t i = 0; i < c.n; ++i) s.push_back({c.coordinates[i], c.units[i], "generalized coordinate"});
  for (std::size_t i = 0; i < c.n; ++i)
    s.push_back(Signal{"der_" + c.coordinates[i], c.units[i].empty() ? "1/s" : c.units[i] + "/s",
                       "rate of " + c.coordinates[i]}
                    .as(Role::Rate));
  return s;
}

/// The energy ledger's states a user system may carry: integrals of powers, which no rate depends on (a
/// linearisation drops them by their roles). Each is declared here once.
enum class LedgerState { WorkForces, DissipatedFriction, WorkExplicitTime, WorkConstraints };
inline constexpr LedgerState kLedgerStates[] = {LedgerState::WorkForces, LedgerState::DissipatedFriction,
                                                LedgerState::WorkExplicitTime, LedgerState::WorkConstraints};
inline Signal ledger_state(LedgerState s) {
  switch (s) {
    case LedgerState::WorkForces:
      return Signal{"work_forces", "J", "work done by the generalized forces Q since the start"}.as(Role::InputWork);
    case LedgerState::DissipatedFriction:
      return Signal{"dissipated_friction", "J", "energy taken by Coulomb friction since the start (s mu N dw/dq'.q')"}
          .as(Role::Dissipation);
    case LedgerState::WorkExplicitTime:
      // dh/dt = Q.q' - dL/dt: the integral of dL/dt enters the balance with the sign opposite to a work done on it.
      return Signal{"work_explicit_time", "J", "integral of dL/dt (a Lagrangian with explicit time)"}.as(Role::InputWork, +1);
    case LedgerState::WorkConstraints:
      return Signal{"work_constraints", "J", "work done by the constraint forces since the start (their power on q'; "
                                             "nonzero for a moving constraint)"}
          .as(Role::ConstraintWork);
  }
  throw std::logic_error("ledger_state");
}

/// The ODE forms' extra states (after q and q'): W_Q, D and P, those the model has.
inline void add_extra_states(const Compiled& c, Signals& s) {
  if (c.has_forces) s.push_back(ledger_state(LedgerState::WorkForces));
  if (c.has_contact) s.push_back(ledger_state(LedgerState::DissipatedFriction));
  if (c.explicit_time) s.push_back(ledger_state(LedgerState::WorkExplicitTime));
}

/// What the user model's outputs are computed from at one point: the kernels' inputs (with the accelerations, and
/// the multipliers of a DAE), the energies and the balance, the contact's values and the constraints' residuals.
struct OutputContext {
  const Compiled& c;
  const double* in;  ///< the kernels' inputs
  double T = 0, V = 0, h = 0, balance = 0;
  double slip = 0, normal = 0;            ///< the contact's slip velocity and normal force (has_contact)
  const double* constraints = nullptr;  ///< the constraints' residuals (nc of them)
};

/// The energies T, V, h (the contact engine's declarations) and the balance (whose meaning is each system's own) of
/// a context C with members T, V, h and balance.
template <class C>
void add_energy_outputs(RuntimeOutputList<C>& out, const std::string& balance_meaning) {
  const Signals engine = ContactEngine::engine_outputs({});
  const auto energy = [&engine](std::string_view name) { return engine[signal_index(engine, name, "user model outputs")]; };
  out.add(energy("kinetic_energy"), [](const C& o) { return o.T; });
  out.add(energy("potential_energy"), [](const C& o) { return o.V; });
  out.add(energy("energy"), [](const C& o) { return o.h; });
  out.add(Signal{"energy_balance", "J", balance_meaning}.as(Role::Ledger), [](const C& o) { return o.balance; });
}

/// The user model's outputs, declared once with their compute functions: the energies and the balance, then the
/// contact's, the constraints' residuals and the user's (their kernel, as one block).
inline RuntimeOutputList<OutputContext> output_list(const Compiled& c) {
  using C = OutputContext;
  RuntimeOutputList<C> out;
  add_energy_outputs(out, c.nc == 0 ? "h - work_forces + dissipated_friction + work_explicit_time: constant"
                                    : "h - work_forces + work_explicit_time - work_constraints: constant");
  if (c.has_contact) {
    out.add(Signal{"slip_velocity", "m/s", "the contact's slip velocity w"}.of_contact(Role::SlipVelocity, "contact"),
            [](const C& o) { return o.slip; });
    out.add(Signal{"normal_force", "N", "the contact's normal force N"}.of_contact(Role::NormalForce, "contact"),
            [](const C& o) { return o.normal; });
  }
  for (std::size_t k = 0; k < c.constraint_names.size(); ++k)
    out.add({"constraint_" + c.constraint_names[k], "", "residual of constraint " + c.constraint_names[k]},
            [k](const C& o) { return o.constraints[k]; });
  out.add_block(c.user_outputs, [](const C& o, double* y) { o.c.outputs(o.in, y); });
  return out;
}

inline Signals output_signals(const Compiled& c) { return output_list(c).signals(); }

/// The columns of the energies and the balance among the outputs, found by name once.
struct EnergyColumns {
  explicit EnergyColumns(const Signals& outputs)
      : T(signal_index(outputs, "kinetic_energy", "user model outputs")),
        V(signal_index(outputs, "potential_energy", "user model outputs")),
        h(signal_index(outputs, "energy", "user model outputs")),
        balance(signal_index(outputs, "energy_balance", "user model outputs")) {}
  std::size_t T, V, h, balance;
};

/// The energy scale of the ODE forms' ledger (EnergyLedger::scale): max(|h|, |T| + |V|) plus the magnitudes of the
/// extra states (W_Q, D, P), from the state x and the outputs y.
inline double ledger_scale(const Compiled& c, const EnergyColumns& e, const double* x, const double* y) {
  double s = std::max(std::abs(y[e.h]), std::abs(y[e.T]) + std::abs(y[e.V]));
  for (std::size_t k = 2 * c.n; k < 2 * c.n + c.n_extra; ++k) s += std::abs(x[k]);
  return s;
}

/// The energy balance's drift (the symbols and mode counts of a contact come from the Filippov engine), relative
/// to the largest energy scale of the run (ledger_scale): never to |h| alone, which stays 0 for a pendulum released
/// at the height of its pivot and for a forced system from rest.
class EnergySummarizer : public Summarizer {
 public:
  EnergySummarizer(std::shared_ptr<const Compiled> c, EnergyColumns columns) : c_(std::move(c)), e_(columns) {}
  void on_point(double, const double* x, const double* y, int) override {
    if (!y) return;  // no item selected (select)
    if (!have_) {
      e0_ = y[e_.balance];
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(y[e_.balance] - e0_));
    scale_ = std::max(scale_, ledger_scale(*c_, e_, x, y));
  }
  std::vector<SummaryItem> items() const override {
    // |balance| <= the scale at every point, so the drift is at most twice the largest scale: 0 when it is 0.
    return {{kEnergyDriftKeys[0], e0_, "", "J", "initial energy balance h - W_Q + D + P", false},
            {kEnergyDriftKeys[1], drift_, "", "J", "largest drift of the energy balance", false},
            {kEnergyDriftKeys[2], scale_ > 0 ? drift_ / scale_ : 0.0, "", "1",
             "largest drift, relative to the largest max(|h|, |T| + |V|) + |W_Q| + |D| + |P|", false}};
  }
  /// Every item reads the outputs: none selected, none are computed.
  void select(const std::vector<std::string>& keys) override { reads_outputs_ = names_any(keys, kEnergyDriftKeys); }
  bool reads_outputs() const override { return reads_outputs_; }
  bool reads_samples() const override { return reads_outputs_; }

 private:
  bool reads_outputs_ = true;
  std::shared_ptr<const Compiled> c_;
  EnergyColumns e_;
  bool have_ = false;
  double e0_ = 0, drift_ = 0, scale_ = 0;
};

/// The outputs' context of the ODE forms at (t, x) in mode sign s (the inputs in this thread's scratch).
inline OutputContext ode_output_context(const Compiled& c, double t, const double* x, double s) {
  Scratch& w = scratch(c);
  accelerations(c, w, t, x, s, w.tmp.data());
  double e[3];
  c.energy(w.in.data(), e);
  OutputContext o{c, w.in.data()};
  o.h = e[0];
  o.T = e[1];
  o.V = e[2];
  o.balance = e[0];
  std::size_t k = 2 * c.n;
  if (c.has_forces) o.balance -= x[k++];
  if (c.has_contact) o.balance += x[k++];
  if (c.explicit_time) o.balance += x[k++];
  if (c.has_contact) {
    double* ct = w.out.data();
    c.contact(w.in.data(), ct);
    o.slip = ct[0];
    o.normal = ct[1 + 2 * c.n];
  }
  return o;
}

inline void witness_eval(const Compiled& c, double t, const double* x, double s, double* g) {
  if (!c.n_events) return;
  Scratch& w = scratch(c);
  accelerations(c, w, t, x, s, w.tmp.data());
  c.witnesses(w.in.data(), g);
}

inline std::vector<Witness> user_witnesses(const Compiled& c) {
  std::vector<Witness> v;
  for (const auto& e : c.events) v.push_back({e.name, e.direction, e.terminal});
  return v;
}

// ---- orientation charts ---------------------------------------------------------------------------------

/// |det| of a rotation sequence's map from angle rates to the angular velocity at which a run stops (its witness
/// reaches zero) and below which a start is refused: 1e-3, 0.06 degrees from a Tait-Bryan sequence's singular
/// attitude, where the angle rates are 1000 times the angular velocity.
inline constexpr double kChartLimit = 1e-3;

/// One witness per chart, "chart_BODY", falling through zero where |det| reaches kChartLimit (chart_event throws).
inline std::vector<Witness> chart_witnesses(const Compiled& c) {
  std::vector<Witness> v;
  for (const auto& [body, sequence] : c.charts) v.push_back({"chart_" + body, -1, true});
  return v;
}
/// The charts' witnesses s_k det_k - kChartLimit at time t and coordinates q (n of them), with s_k the sign of det_k
/// at the start (chart_signs): a determinant keeps its sign until it passes 0, so the witness changes sign across
/// any step that reaches the limit, however long (|det| - kChartLimit would not, over a step that jumps the window
/// |det| < kChartLimit).
inline void chart_values(const Compiled& c, double t, const double* q, const std::vector<double>& signs, double* g) {
  if (c.charts.empty()) return;
  Scratch& w = scratch(c);
  thread_local std::vector<double> x;
  x.assign(2 * c.n, 0.0);
  std::copy(q, q + c.n, x.begin());
  c.chart_determinants(fill(c, w, t, x.data(), 0.0), g);
  for (std::size_t k = 0; k < c.charts.size(); ++k) g[k] = (signs.empty() ? 1.0 : signs[k]) * g[k] - kChartLimit;
}
/// The same as |det_k| - kChartLimit, which a long step can jump over without a sign change: prefer the signed form.
inline void chart_values(const Compiled& c, double t, const double* q, double* g) {
  chart_values(c, t, q, {}, g);
  for (std::size_t k = 0; k < c.charts.size(); ++k) g[k] = std::abs(g[k] + kChartLimit) - kChartLimit;
}
/// The signs of the charts' determinants at the coordinates q (the start's).
inline std::vector<double> chart_signs(const Compiled& c, const double* q) {
  std::vector<double> g(c.charts.size());
  chart_values(c, 0.0, q, {}, g.data());
  for (auto& v : g) v = v + kChartLimit < 0 ? -1.0 : 1.0;
  return g;
}
/// Whether `witness` is a chart's; if it is, the run cannot go on in these coordinates: a SolverError (exit 3)
/// naming the body, the sequence and the time.
inline bool is_chart_witness(const Compiled& c, const std::string& witness) {
  for (const auto& [body, sequence] : c.charts)
    if (witness == "chart_" + body) return true;
  return false;
}
[[noreturn]] inline void chart_singular(const Compiled& c, const std::string& witness, double t) {
  for (const auto& [body, sequence] : c.charts)
    if (witness == "chart_" + body) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.10g", t);
      throw SolverError("the orientation of body " + body + " reaches the singular attitude of its rotation sequence " +
                        sequence + " at t = " + buf + " (gimbal lock: the determinant of the map from the angle rates to "
                        "the angular velocity fell to " + std::to_string(kChartLimit) + "); its angles cannot describe the "
                        "motion there: choose a sequence whose singular attitude the motion avoids (e.g. another order "
                        "of the axes), or start elsewhere");
    }
  throw SolverError("unknown chart witness " + witness);
}

/// The orientation charts' witnesses of one system, placed after its other witnesses: every user system (smooth,
/// Filippov, contact engine, DAE) takes them from here, so each stops at a chart singularity with the same message.
class ChartWitnesses {
 public:
  /// `q0`: the coordinates at the start (the first n entries of every user system's state).
  ChartWitnesses(std::shared_ptr<const Compiled> c, const double* q0) : c_(std::move(c)), signs_(chart_signs(*c_, q0)) {}
  std::size_t count() const { return c_->charts.size(); }
  /// `v` with the charts' witnesses appended.
  std::vector<Witness> after(std::vector<Witness> v) const {
    for (auto& w : chart_witnesses(*c_)) v.push_back(std::move(w));
    return v;
  }
  /// The witnesses' values at (t, x) into g (count() of them).
  void values(double t, const double* x, double* g) const { chart_values(*c_, t, x, signs_, g); }
  /// At an event of `witness`: a chart's ends the run (a SolverError, exit 3, with the body, sequence and time).
  void on_event(const std::string& witness, double t) const {
    if (is_chart_witness(*c_, witness)) chart_singular(*c_, witness, t);
  }

 private:
  std::shared_ptr<const Compiled> c_;
  std::vector<double> signs_;  ///< the signs of the charts' determinants at the start
};

}  // namespace rollsim::lagrangian::detail

// ---- the systems (lagrangian.cpp, lagrangian_dae.cpp, lagrangian_nonholonomic.cpp) ------------------------------

namespace rollsim::lagrangian::detail {

/// Builds the user model's system (ModelEntry::make_system, under the lock of GiNaC; lagrangian_build.cpp).
std::unique_ptr<HybridSystem> make_system_unlocked(const Scenario& sc);

/// The systems (lagrangian.cpp), built from the compiled model and the initial state.
std::unique_ptr<HybridSystem> smooth_system(std::shared_ptr<const Compiled> c, std::vector<double> x0);
std::unique_ptr<HybridSystem> filippov_contact_system(std::shared_ptr<const Compiled> c, std::vector<double> x0);
std::unique_ptr<HybridSystem> user_contact_system(std::shared_ptr<const Compiled> c, std::vector<double> x0,
                                                  std::vector<ContactSpec> specs, const ContactSettings& settings,
                                                  const std::vector<std::string>& constraint_names);
/// The system of a model with rolling contacts that slip: the Coulomb cone's engine (lagrangian_cone.cpp); x0 holds
/// q, q' and the extra states, to which the engine appends its own.
std::unique_ptr<HybridSystem> user_cone_system(std::shared_ptr<const Compiled> c, std::vector<double> x0,
                                               std::vector<ConeContactSpec> specs, const ContactSettings& settings);
/// The system of a model with velocity constraint rows, in independent speeds (lagrangian_nonholonomic.cpp); x0
/// holds q and q' as the scenario gives them, `rate_given` which rates it gives.
std::unique_ptr<HybridSystem> nonholonomic_system(std::shared_ptr<const Compiled> c, const symbolic::LagrangeModel& m,
                                                  const Scenario& sc, const std::vector<double>& x0,
                                                  const std::vector<bool>& rate_given);
/// The DAE's system (lagrangian_dae.cpp); x0 holds q and v, and gets the multipliers consistent with them and zero
/// extra states.
std::unique_ptr<HybridSystem> constrained_system(std::shared_ptr<const Compiled> c, std::vector<double> x0);

}  // namespace rollsim::lagrangian::detail


#include "lagrangian_keys.hpp"  // the scenario's keys, which the build and the 3-D reading use
