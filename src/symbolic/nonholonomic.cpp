#include "rollsim/symbolic/nonholonomic.hpp"

#include <optional>
#include <stdexcept>

namespace rollsim::symbolic {

using GiNaC::ex;

namespace {

bool has_rate(const ex& e, const std::vector<ex>& rates) {
  for (const auto& v : rates)
    if (e.has(v)) return true;
  return false;
}

}  // namespace

std::optional<ex> linear_form(Differentiator& D, const std::vector<ex>& rates, const ex& e) {
  // e = A der(q) + b exactly: each coefficient A_j = de/d der(q_j) holds no rate, and neither does e - A der(q).
  // Second derivatives by the rates alone would pass a row that is linear only piecewise, as
  // der(y)*step(der(x)) or abs(der(x)): their derivatives vanish wherever they are defined. A part that holds a
  // rate as it is written is brought to its normal form (a rate that cancels in a quotient) before it is refused.
  try {
    bool as_written = true;
    ex rest = e, rebuilt = 0;
    for (const auto& x : rates) {
      ex a = D(e, x);
      if (has_rate(a, rates)) {
        a = a.normal();
        if (has_rate(a, rates)) return std::nullopt;
        as_written = false;
      }
      rest -= a * x;
      rebuilt += a * x;
    }
    ex b = rest.expand();
    if (has_rate(b, rates)) {
      b = rest.normal();
      if (has_rate(b, rates)) return std::nullopt;
      as_written = false;
    }
    if (as_written) {
      // Its value at rest (b), as the derivation and the contacts form it, must be formed from e as written too: a
      // rate that cancels in a quotient divides 0 by 0 there (GiNaC's pole_error).
      GiNaC::exmap at_rest;
      for (const auto& v : rates) at_rest[v] = 0;
      try {
        (void)e.subs(at_rest).expand();
      } catch (const std::exception&) {
        as_written = false;
      }
    }
    return as_written ? e : rebuilt + b;
  } catch (const std::exception&) {
    return std::nullopt;  // a pole on the way: not of that form either
  }
}

bool linear_in_rates(Differentiator& D, const LagrangeModel& m, const ex& e) {
  return linear_form(D, m.qd, e).has_value();
}

void append_nonholonomic_kernels(Differentiator& D, const LagrangeModel& m, std::vector<Kernel>& kernels) {
  const auto& rows = m.velocity_constraints;
  if (rows.empty()) return;
  const std::size_t n = m.n(), nr = rows.size();
  GiNaC::exmap no_rates;
  for (const auto& v : m.qd) no_rates[v] = 0;
  std::vector<ex> A(nr * n), b(nr), c(nr), g(nr), G(nr * n, ex(0));
  std::vector<ex> drdq(nr * n), dbdq(nr * n), dcdq(nr * n), dcdqd(nr * n), dAdq(nr * n * n);
  for (std::size_t k = 0; k < nr; ++k) {
    const ex& r = rows[k].rate;
    if (!linear_in_rates(D, m, r))
      throw std::invalid_argument("the velocity constraint row " + rows[k].name + " (" + rows[k].source +
                                  ") is not linear in the rates der(q)");
    b[k] = r.subs(no_rates);
    c[k] = D(r, m.t);
    for (std::size_t j = 0; j < n; ++j) {
      A[k + nr * j] = D(r, m.qd[j]);
      c[k] += D(r, m.q[j]) * m.qd[j];
    }
    if (rows[k].position) {
      g[k] = *rows[k].position;
      for (std::size_t j = 0; j < n; ++j) G[k + nr * j] = D(g[k], m.q[j]);
    } else {
      g[k] = 0;
    }
    for (std::size_t j = 0; j < n; ++j) {
      drdq[k + nr * j] = D(r, m.q[j]);
      dbdq[k + nr * j] = D(b[k], m.q[j]);
      dcdq[k + nr * j] = D(c[k], m.q[j]);
      dcdqd[k + nr * j] = D(c[k], m.qd[j]);
      for (std::size_t i = 0; i < n; ++i) dAdq[nr * n * i + k + nr * j] = D(A[k + nr * j], m.q[i]);
    }
  }
  std::vector<ex> out;
  out.reserve(NonholonomicKernels::rows_size(nr, n));
  for (const auto* part : {&A, &b, &c, &g, &G}) out.insert(out.end(), part->begin(), part->end());
  kernels.push_back({NonholonomicKernels::rows, std::move(out)});
  std::vector<ex> jac;
  jac.reserve(NonholonomicKernels::jac_size(nr, n));
  for (const auto* part : {&drdq, &dbdq, &dcdq, &dcdqd, &dAdq}) jac.insert(jac.end(), part->begin(), part->end());
  kernels.push_back({NonholonomicKernels::jac, std::move(jac)});
}

}  // namespace rollsim::symbolic
