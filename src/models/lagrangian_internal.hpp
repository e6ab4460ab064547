#pragma once
// The user model's compiled form and the evaluations its systems share (private to src/models/lagrangian*.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/models/lagrangian.hpp"
#include "rollsim/symbolic/codegen.hpp"
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
  bool has_contact = false, has_forces = false, explicit_time = false, friction_dissipates = false;
  std::vector<std::string> coordinates, units, constraint_names;
  std::vector<Signal> user_outputs;
  std::vector<EventSpec> events;
  std::vector<double> p;  ///< parameter values
  double alpha = kDefaultBaumgarte;
  std::shared_ptr<symbolic::CompiledKernels> lib;
  KernelFunction dyn = nullptr, jac = nullptr, extra = nullptr, energy = nullptr, contact = nullptr, outputs = nullptr,
                 outputs_jac = nullptr, witnesses = nullptr, contacts = nullptr, dae = nullptr, dae_jac = nullptr, constraints = nullptr,
                 contact_constraints = nullptr, dae_extra = nullptr, dae_extra_jac = nullptr;
  std::size_t in_size = 0, in_a = 0, in_p = 0, in_lambda = 0, in_s = 0, in_alpha = 0;
  SetupTimes setup;
};

/// Per-thread scratch: no heap allocation once the sizes are reached.
struct Scratch {
  std::vector<double> in, dyn, jac, out, tmp;
  Eigen::MatrixXd M;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  Eigen::VectorXd rhs, sol;
  void ensure(const Compiled& c) {
    const std::size_t n = c.n, N = 2 * n + c.nc + c.n_extra + 4;
    auto grow = [](std::vector<double>& v, std::size_t k) {
      if (v.size() < k) v.assign(k, 0.0);
    };
    grow(in, c.in_size);
    grow(dyn, n * n + n);
    grow(jac, (n + c.n_extra + c.nc + n) * (3 * n + c.nc) + N);
    grow(out, std::max<std::size_t>({c.n_user_outputs * 3 * n + c.n_user_outputs + c.n_events + 4 * n + 8,
                                     c.n_contacts * symbolic::KernelNames::contact_stride(n),
                                     c.nc * symbolic::KernelNames::constraint_stride(n),
                                     c.n_dae_extra * (2 * n + c.nc + 1), 16}));
    grow(tmp, 4 * N + 8);
    if (static_cast<std::size_t>(M.rows()) != n + c.nc) {
      M.resize(static_cast<Eigen::Index>(n + c.nc), static_cast<Eigen::Index>(n + c.nc));
      lu = Eigen::PartialPivLU<Eigen::MatrixXd>(static_cast<Eigen::Index>(n + c.nc));
      rhs.resize(static_cast<Eigen::Index>(n + c.nc));
      sol.resize(static_cast<Eigen::Index>(n + c.nc));
    }
  }
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
  auto M = w.M.topLeftCorner(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) M(i, j) = w.dyn[static_cast<std::size_t>(i + n * j)];
  w.lu.compute(w.M);  // the ODE forms only (nc = 0): M is n x n
  for (Eigen::Index i = 0; i < n; ++i) w.rhs(i) = w.dyn[static_cast<std::size_t>(n * n + i)];
  w.sol.head(n) = w.lu.solve(w.rhs.head(n));
  bool ok = true;
  for (Eigen::Index i = 0; i < n; ++i) {
    a[i] = w.sol(i);
    ok = ok && std::isfinite(a[i]);
    in[c.in_a + static_cast<std::size_t>(i)] = a[i];
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
  const auto ni = static_cast<Eigen::Index>(n);
  for (std::size_t k = 0; k < 2 * n; ++k) {
    for (std::size_t i = 0; i < n; ++i) w.rhs(static_cast<Eigen::Index>(i)) = w.jac[i + n * k];
    w.sol.head(ni) = w.lu.solve(w.rhs.head(ni));
    for (std::size_t i = 0; i < n; ++i) J[n + i + N * k] = -w.sol(static_cast<Eigen::Index>(i));
    for (std::size_t e = 0; e < c.n_extra; ++e) J[2 * n + e + N * k] = w.jac[n * 2 * n + e + c.n_extra * k];
  }
}

// ---- signals --------------------------------------------------------------------------------------------

inline Signals state_signals(const Compiled& c) {
  Signals s;
  for (std::size_t i = 0; i < c.n; ++i) s.push_back({c.coordinates[i], c.units[i], "generalized coordinate"});
  for (std::size_t i = 0; i < c.n; ++i)
    s.push_back({"der_" + c.coordinates[i], c.units[i].empty() ? "1/s" : c.units[i] + "/s", "rate of " + c.coordinates[i]});
  return s;
}

inline void add_extra_states(const Compiled& c, Signals& s) {
  if (c.has_forces) s.push_back({"work_forces", "J", "work done by the generalized forces Q since the start"});
  if (c.has_contact)
    s.push_back({"dissipated_friction", "J", "energy taken by Coulomb friction since the start (s mu N dw/dq'.q')"});
  if (c.explicit_time) s.push_back({"work_explicit_time", "J", "integral of dL/dt (a Lagrangian with explicit time)"});
}

/// Built-in outputs first (energies), then the contact's, then the user's.
inline Signals output_signals(const Compiled& c) {
  Signals s{{"kinetic_energy", "J", "kinetic energy T"},
            {"potential_energy", "J", "potential energy V"},
            {"energy", "J", "Jacobi energy h = q'.dL/dq' - L (T + V for a natural system)"}};
  if (c.nc == 0)
    s.push_back({"energy_balance", "J", "h - work_forces + dissipated_friction + work_explicit_time: constant"});
  else
    s.push_back({"energy_balance", "J", "h - work_forces + work_explicit_time - work_constraints: constant"});
  if (c.has_contact) {
    s.push_back({"slip_velocity", "m/s", "the contact's slip velocity w"});
    s.push_back({"normal_force", "N", "the contact's normal force N"});
  }
  for (const auto& n : c.constraint_names) s.push_back({"constraint_" + n, "", "residual of constraint " + n});
  for (const auto& o : c.user_outputs) s.push_back(o);
  return s;
}

/// The energy scale of the ODE forms' ledger (EnergyLedger::scale): max(|h|, |T| + |V|) plus the magnitudes of the
/// extra states (W_Q, D, P), from the state x and the outputs y (y[0] = T, y[1] = V, y[2] = h).
inline double ledger_scale(const Compiled& c, const double* x, const double* y) {
  double s = std::max(std::abs(y[2]), std::abs(y[0]) + std::abs(y[1]));
  for (std::size_t k = 2 * c.n; k < 2 * c.n + c.n_extra; ++k) s += std::abs(x[k]);
  return s;
}

/// The energy balance's drift (the symbols and mode counts of a contact come from the Filippov engine), relative
/// to the largest energy scale of the run (ledger_scale): never to |h| alone, which stays 0 for a pendulum released
/// at the height of its pivot and for a forced system from rest.
class EnergySummarizer : public Summarizer {
 public:
  explicit EnergySummarizer(std::shared_ptr<const Compiled> c) : c_(std::move(c)) {}
  void on_point(double, const double* x, const double* y, int) override {
    if (!have_) {
      e0_ = y[3];
      have_ = true;
    }
    drift_ = std::max(drift_, std::abs(y[3] - e0_));
    scale_ = std::max(scale_, ledger_scale(*c_, x, y));
  }
  std::vector<SummaryItem> items() const override {
    // |balance| <= the scale at every point, so the drift is at most twice the largest scale: 0 when it is 0.
    return {{"energy_initial", e0_, "", "J", "initial energy balance h - W_Q + D + P", false},
            {"energy_drift_abs", drift_, "", "J", "largest drift of the energy balance", false},
            {"energy_drift_rel", scale_ > 0 ? drift_ / scale_ : 0.0, "", "1",
             "largest drift, relative to the largest max(|h|, |T| + |V|) + |W_Q| + |D| + |P|", false}};
  }

 private:
  std::shared_ptr<const Compiled> c_;
  bool have_ = false;
  double e0_ = 0, drift_ = 0, scale_ = 0;
};

/// Outputs of the ODE forms at (t, x) in mode sign s: energies, balance, contact, user outputs.
inline void ode_outputs(const Compiled& c, double t, const double* x, double s, double* y) {
  Scratch& w = scratch(c);
  double* a = w.tmp.data();
  accelerations(c, w, t, x, s, a);
  double e[3];
  c.energy(w.in.data(), e);
  y[0] = e[1];
  y[1] = e[2];
  y[2] = e[0];
  double balance = e[0];
  std::size_t k = 2 * c.n;
  if (c.has_forces) balance -= x[k++];
  if (c.has_contact) balance += x[k++];
  if (c.explicit_time) balance += x[k++];
  y[3] = balance;
  std::size_t o = 4;
  if (c.has_contact) {
    double* ct = w.out.data();
    c.contact(w.in.data(), ct);
    y[o++] = ct[0];
    y[o++] = ct[1 + 2 * c.n];
  }
  if (c.n_user_outputs) c.outputs(w.in.data(), y + o);
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

}  // namespace rollsim::lagrangian::detail
