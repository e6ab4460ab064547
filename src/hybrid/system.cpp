#include "rollsim/hybrid/system.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>


namespace rollsim {

Formulation HybridSystem::formulation() const {
  return facet<DaeSystem>(*this) ? Formulation::Dae : Formulation::Ode;
}

EventOutcome WitnessSystem::on_event(double, double*, int mode, const std::string& witness, int) const {
  EventOutcome o;
  o.kind = witness;
  o.new_mode = mode;
  return o;
}

std::size_t witness_index(const std::vector<Witness>& witnesses, std::string_view name) {
  for (std::size_t i = 0; i < witnesses.size(); ++i)
    if (witnesses[i].name == name) return i;
  throw std::logic_error("no witness named " + std::string(name));
}

void WitnessSystem::witness_rates(double t, const double* x, const double* xdot, int mode, double* gdot) const {
  const std::size_t n = size(), m = witness_count(mode);
  if (m == 0) return;
  // Per-thread scratch: no allocation once sized.
  thread_local std::vector<double> xp, g0, gp;
  xp.resize(n);
  g0.resize(m);
  gp.resize(m);
  // A forward difference along the motion, over a displacement of about 1e-7 of the state's size: the rate only
  // has to change sign where the witness has an extremum.
  const double d = flow_step(x, xdot, n, 1e-7);
  if (d == 0) {
    std::fill(gdot, gdot + m, 0.0);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) xp[i] = x[i] + d * xdot[i];
  witness_values(t, x, mode, g0.data());
  witness_values(t + d, xp.data(), mode, gp.data());
  for (std::size_t k = 0; k < m; ++k) gdot[k] = (gp[k] - g0[k]) / d;
}

double flow_step(const double* x, const double* f, std::size_t n, double relative) {
  double xs = 1, fs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    xs = std::max(xs, std::abs(x[i]));
    fs = std::max(fs, std::abs(f[i]));
  }
  if (!(fs > 0) || !std::isfinite(fs)) return 0;
  return relative * xs / fs;
}

double witness_error_bound(const WitnessSystem& sys, double t, const double* x, int mode, std::size_t index,
                           const double* err) {
  const std::size_t n = sys.size(), m = sys.witness_count(mode);
  // Per-thread scratch: no allocation once sized (the step search asks at every event it locates).
  thread_local std::vector<double> xp, g0, g1;
  xp.assign(x, x + n);
  g0.resize(m);
  g1.resize(m);
  sys.witness_values(t, x, mode, g0.data());
  double bound = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double dx = 1e-7 * std::max(1.0, std::abs(x[k]));
    xp[k] = x[k] + dx;
    sys.witness_values(t, xp.data(), mode, g1.data());
    xp[k] = x[k];
    bound += std::abs((g1[index] - g0[index]) / dx) * err[k];
  }
  return bound;
}

RegionCheck WitnessSystem::region_check(double t, const double* x, int mode, const double* err) const {
  const auto ws = witnesses(mode);
  RegionCheck worst;
  if (ws.empty()) return worst;
  std::vector<double> g(ws.size());
  witness_values(t, x, mode, g.data());
  for (std::size_t i = 0; i < ws.size(); ++i) {
    if (!ws[i].bounds_region || ws[i].direction == 0) continue;
    const double excess = ws[i].direction * g[i];
    if (!(excess > 0)) continue;
    RegionCheck c;
    c.excess = excess;
    c.tolerance = witness_error_bound(*this, t, x, mode, i, err);
    c.rule = std::string("witness ") + ws[i].name + (ws[i].direction < 0 ? " >= 0" : " <= 0") + " in mode " +
             mode_name(mode);
    if (worst.rule.empty() || c.excess - c.tolerance > worst.excess - worst.tolerance) worst = c;
  }
  return worst;
}

}  // namespace rollsim
