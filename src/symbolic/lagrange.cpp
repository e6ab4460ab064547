#include "rollsim/symbolic/lagrange.hpp"
#include "rollsim/symbolic/expression.hpp"
#include "rollsim/symbolic/nonholonomic.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace rollsim::symbolic {

using GiNaC::ex;

namespace {

/// A function's partial derivative by its argument i: GiNaC's function::pderivative, protected, reached through a
/// pointer to member named in a derived class (never instantiated).
struct FunctionAccess : GiNaC::function {
  static ex partial(const GiNaC::function& f, unsigned i) {
    constexpr auto pderivative = &FunctionAccess::pderivative;
    return (f.*pderivative)(i);
  }
};

/// A sum's terms as GiNaC keeps them, (rest, numeric coefficient) pairs (expairseq::seq, protected, reached the
/// same way): its derivative is the pairs (D(rest), coefficient), as GiNaC's add::derivative forms it, without
/// building each term rest * coefficient to differentiate it.
struct PairAccess : GiNaC::expairseq {
  static const GiNaC::epvector& pairs(const GiNaC::expairseq& e) {
    constexpr auto seq = &PairAccess::seq;
    return e.*seq;
  }
};

/// Whether the chain rule through the partial derivatives is GiNaC's derivative of f: the elementary functions
/// have derivative functions and no explicit derivative (abs has one: it goes to ex::diff).
bool by_chain_rule(const GiNaC::function& f) {
  static const std::vector<unsigned> serials{
      GiNaC::sin_SERIAL::serial,  GiNaC::cos_SERIAL::serial,  GiNaC::tan_SERIAL::serial,  GiNaC::asin_SERIAL::serial,
      GiNaC::acos_SERIAL::serial, GiNaC::atan_SERIAL::serial, GiNaC::atan2_SERIAL::serial, GiNaC::sinh_SERIAL::serial,
      GiNaC::cosh_SERIAL::serial, GiNaC::tanh_SERIAL::serial, GiNaC::exp_SERIAL::serial,  GiNaC::log_SERIAL::serial,
      step_function_serial()};
  return std::find(serials.begin(), serials.end(), f.get_serial()) != serials.end();
}

}  // namespace

ex Differentiator::operator()(const ex& e, const ex& x) {
  return derivative(e, GiNaC::ex_to<GiNaC::symbol>(x), memo_[x]);
}

ex Differentiator::derivative(const ex& e, const GiNaC::symbol& x, std::unordered_map<ex, ex>& memo) {
  if (GiNaC::is_a<GiNaC::symbol>(e)) return e.is_equal(x) ? 1 : 0;
  if (GiNaC::is_a<GiNaC::numeric>(e) || GiNaC::is_a<GiNaC::constant>(e)) return 0;
  const auto found = memo.find(e);
  if (found != memo.end()) return found->second;
  ex r = 0;
  if (GiNaC::is_exactly_a<GiNaC::add>(e)) {
    GiNaC::epvector terms;
    for (const auto& pair : PairAccess::pairs(GiNaC::ex_to<GiNaC::add>(e))) {
      ex t = derivative(pair.rest, x, memo);
      if (!t.is_zero()) terms.emplace_back(std::move(t), pair.coeff);
    }
    if (!terms.empty()) r = GiNaC::dynallocate<GiNaC::add>(std::move(terms), ex(0));
  } else if (GiNaC::is_exactly_a<GiNaC::mul>(e)) {
    // D(a b c) = D(a) b c + a D(b) c + a b D(c).
    const std::size_t n = e.nops();
    GiNaC::exvector factors(n), terms;
    for (std::size_t i = 0; i < n; ++i) factors[i] = e.op(i);
    for (std::size_t i = 0; i < n; ++i) {
      ex di = derivative(factors[i], x, memo);
      if (di.is_zero()) continue;
      GiNaC::exvector product;
      product.reserve(n);
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) product.push_back(factors[j]);
      product.push_back(std::move(di));
      terms.push_back(GiNaC::dynallocate<GiNaC::mul>(std::move(product)));
    }
    if (!terms.empty()) r = GiNaC::dynallocate<GiNaC::add>(std::move(terms));
  } else if (GiNaC::is_exactly_a<GiNaC::power>(e)) {
    const ex &b = e.op(0), &p = e.op(1);
    const ex db = derivative(b, x, memo);
    if (GiNaC::is_a<GiNaC::numeric>(p)) {
      if (!db.is_zero()) r = p * GiNaC::pow(b, p - 1) * db;  // D(b^r) = r b^(r-1) D(b)
    } else {
      r = e * (derivative(p, x, memo) * GiNaC::log(b) + p * db * GiNaC::pow(b, -1));
    }
  } else if (GiNaC::is_exactly_a<GiNaC::function>(e) && by_chain_rule(GiNaC::ex_to<GiNaC::function>(e))) {
    const auto& f = GiNaC::ex_to<GiNaC::function>(e);
    for (std::size_t i = 0; i < e.nops(); ++i) {
      const ex da = derivative(e.op(i), x, memo);
      if (!da.is_zero()) r += FunctionAccess::partial(f, static_cast<unsigned>(i)) * da;
    }
  } else {
    r = e.diff(x);
  }
  memo.emplace(e, r);
  return r;
}

ex d(const ex& e, const ex& x) { return Differentiator()(e, x); }

void LagrangeModel::make_symbols(std::size_t nc) {
  t = GiNaC::realsymbol("t");
  s = GiNaC::realsymbol("s_friction");
  alpha = GiNaC::realsymbol("alpha_baumgarte");
  p.clear();
  q.clear();
  qd.clear();
  a.clear();
  lambda.clear();
  for (const auto& n : parameters) p.push_back(GiNaC::realsymbol(n));
  for (const auto& c : coordinates) {
    q.push_back(GiNaC::realsymbol(c));
    qd.push_back(GiNaC::realsymbol("der_" + c));
    a.push_back(GiNaC::realsymbol("der2_" + c));
  }
  for (std::size_t k = 0; k < nc; ++k) lambda.push_back(GiNaC::realsymbol("lambda_" + std::to_string(k)));
}

std::vector<ex> LagrangeModel::inputs() const {
  std::vector<ex> v{t};
  for (const auto* block : {&q, &qd, &a, &p, &lambda}) v.insert(v.end(), block->begin(), block->end());
  v.push_back(s);
  v.push_back(alpha);
  return v;
}

InputLayout::InputLayout(const LagrangeModel& m) {
  const std::size_t n = m.n();
  qd = q + n;
  a = qd + n;
  p = a + n;
  lambda = p + m.p.size();
  s = lambda + m.lambda.size();
  alpha = s + 1;
  size = alpha + 1;
}

namespace {

/// Total time derivative of e(t, q) along q' (and, for e with rates, along a).
ex total_derivative(Differentiator& D, const LagrangeModel& m, const ex& e) {
  ex r = D(e, m.t);
  for (std::size_t i = 0; i < m.n(); ++i) r += D(e, m.q[i]) * m.qd[i] + D(e, m.qd[i]) * m.a[i];
  return r;
}

/// Columns d rows / d x for each x in `by`, appended column-major (rows.size() x by.size()).
void append_jacobian(Differentiator& D, std::vector<ex>& out, const std::vector<ex>& rows, const std::vector<ex>& by) {
  for (const auto& x : by)
    for (const auto& r : rows) out.push_back(D(r, x));
}

std::vector<ex> concat(std::initializer_list<const std::vector<ex>*> parts) {
  std::vector<ex> v;
  for (const auto* p : parts) v.insert(v.end(), p->begin(), p->end());
  return v;
}

}  // namespace

Derivation derivation_flags(const LagrangeModel& m) {
  Derivation out;
  out.explicit_time = (m.kinetic - m.potential).has(m.t);
  for (const auto& f : m.forces) out.has_forces = out.has_forces || !f.is_zero();
  if (m.has_contact) {
    GiNaC::exmap zero_rates;
    for (const auto& v : m.qd) zero_rates[v] = 0;
    out.friction_dissipates = m.slip_velocity.subs(zero_rates).normal().is_zero();
  }
  out.n_extra = (out.has_forces ? 1 : 0) + (m.has_contact ? 1 : 0) + (out.explicit_time ? 1 : 0);
  return out;
}

Derivation derive(const LagrangeModel& m) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = m.n(), nc = m.constraints.size();
  Differentiator D;  // one for the whole derivation: each shared subexpression is differentiated once per symbol
  Derivation out = derivation_flags(m);
  const ex L = m.kinetic - m.potential;
  // With 3-D bodies, Lagrange's terms are formed for L less the bodies' T3, whose part is the Kane-form
  // inertia_residual (lagrange.hpp); the energy h below keeps the whole L.
  const bool kane = !m.inertia_residual.empty();
  const ex Lr = kane ? L - m.kinetic_3d : L;
  std::vector<ex> dL_dqd(n), dL_dq(n);
  for (std::size_t i = 0; i < n; ++i) {
    dL_dqd[i] = D(Lr, m.qd[i]);
    dL_dq[i] = D(Lr, m.q[i]);
  }
  // R (without friction): d/dt dL/dq' - dL/dq - Q, linear in a.
  std::vector<ex> R(n), Rs(n), J(n), f(n), M;
  for (std::size_t i = 0; i < n; ++i) R[i] = total_derivative(D, m, dL_dqd[i]) - dL_dq[i] - m.forces[i];
  if (kane)
    for (std::size_t i = 0; i < n; ++i) R[i] += m.inertia_residual[i];
  ex w_power = 0;
  if (m.has_contact) {
    for (std::size_t i = 0; i < n; ++i) J[i] = D(m.slip_velocity, m.qd[i]);
    for (std::size_t i = 0; i < n; ++i) w_power += J[i] * m.qd[i];
  }
  for (std::size_t i = 0; i < n; ++i)
    Rs[i] = m.has_contact ? R[i] + m.s * m.friction_coefficient * m.normal_force * J[i] : R[i];
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i)
      M.push_back(kane ? D(dL_dqd[i], m.qd[j]) + D(m.inertia_residual[i], m.a[j]) : D(dL_dqd[i], m.qd[j]));
  GiNaC::exmap zero_a;
  for (const auto& ai : m.a) zero_a[ai] = 0;
  for (std::size_t i = 0; i < n; ++i) f[i] = -Rs[i].subs(zero_a);
  out.kernels.push_back({KernelNames::dyn, concat({&M, &f})});

  // The extra states' rates.
  std::vector<ex> extra;
  if (out.has_forces) {
    ex pw = 0;
    for (std::size_t i = 0; i < n; ++i) pw += m.forces[i] * m.qd[i];
    extra.push_back(pw);
  }
  if (m.has_contact) {
    extra.push_back(m.s * m.friction_coefficient * m.normal_force * w_power);
  }
  if (out.explicit_time) extra.push_back(D(L, m.t));
  out.kernels.push_back({KernelNames::extra, extra});

  std::vector<ex> jac;
  const std::vector<ex> x = concat({&m.q, &m.qd});
  append_jacobian(D, jac, Rs, x);
  append_jacobian(D, jac, extra, x);
  out.kernels.push_back({KernelNames::jac, jac});

  ex h = -L;
  for (std::size_t i = 0; i < n; ++i) h += m.qd[i] * (kane ? D(L, m.qd[i]) : dL_dqd[i]);
  out.kernels.push_back({KernelNames::energy, {h, m.kinetic, m.potential}});
  // Velocity (nonholonomic) rows: the kernels of the independent-speed form (symbolic/nonholonomic.hpp).
  append_nonholonomic_kernels(D, m, out.kernels);
  if (!m.charts.empty()) {
    std::vector<ex> charts;
    for (const auto& c : m.charts) charts.push_back(c.determinant);
    out.kernels.push_back({KernelNames::charts, charts});
  }

  if (m.has_contact) {
    std::vector<ex> c{m.slip_velocity};
    for (std::size_t i = 0; i < n; ++i) c.push_back(D(m.slip_velocity, m.q[i]));
    c.insert(c.end(), J.begin(), J.end());
    c.push_back(m.normal_force);
    c.push_back(m.friction_coefficient);
    out.kernels.push_back({KernelNames::contact, c});
  }
  if (!m.contacts.empty()) {
    std::vector<ex> c;
    for (const auto& k : m.contacts) {
      // g'' = dg/dq.a + sum_j D(g')/dq_j q'_j (g has no explicit t); likewise w' for w = W_t(q) q' + w0(q).
      ex gp = 0;
      for (std::size_t i = 0; i < n; ++i) gp += D(k.gap, m.q[i]) * m.qd[i];
      ex gbias = 0, wbias = 0;
      for (std::size_t j = 0; j < n; ++j) {
        gbias += D(gp, m.q[j]) * m.qd[j];
        wbias += D(k.slip_velocity, m.q[j]) * m.qd[j];
      }
      c.push_back(k.gap);
      for (std::size_t i = 0; i < n; ++i) c.push_back(D(k.gap, m.q[i]));
      c.push_back(gbias);
      c.push_back(k.slip_velocity);
      for (std::size_t i = 0; i < n; ++i) c.push_back(D(k.slip_velocity, m.qd[i]));
      c.push_back(wbias);
      c.push_back(k.friction_coefficient);
      c.push_back(k.restitution);
      c.push_back(k.normal_force);
      // The sticking bound: the static coefficient, or the kinetic one where none is given.
      c.push_back(k.static_friction_coefficient.is_zero() ? k.friction_coefficient : k.static_friction_coefficient);
    }
    out.kernels.push_back({KernelNames::contacts, c});
  }
  if (!m.cone_contacts.empty()) {
    // For e = W(t, q) q' + e0(t, q): e' - W.a = sum_j de/dq_j q'_j + de/dt; the gap's rate is such an e.
    auto bias = [&](const ex& e) {
      ex r = D(e, m.t);
      for (std::size_t j = 0; j < n; ++j) r += D(e, m.q[j]) * m.qd[j];
      return r;
    };
    std::vector<ex> c;
    for (const auto& k : m.cone_contacts) {
      c.push_back(k.gap);
      for (std::size_t i = 0; i < n; ++i) c.push_back(D(k.gap, m.q[i]));
      c.push_back(bias(bias(k.gap)));
      for (const ex* e : {&k.slip[0], &k.slip[1], &k.spin}) {
        c.push_back(*e);
        for (std::size_t i = 0; i < n; ++i) c.push_back(D(*e, m.qd[i]));
        c.push_back(bias(*e));
      }
      c.push_back(k.friction_coefficient);
      c.push_back(k.static_friction_coefficient.is_zero() ? k.friction_coefficient : k.static_friction_coefficient);
      c.push_back(k.restitution);
      c.push_back(k.spin_friction ? k.spin_radius : ex(0));
    }
    out.kernels.push_back({KernelNames::cone_contacts, c});
  }
  out.kernels.push_back({KernelNames::outputs, m.outputs});
  std::vector<ex> ojac;
  append_jacobian(D, ojac, m.outputs, concat({&m.q, &m.qd, &m.a}));
  out.kernels.push_back({KernelNames::outputs_jac, ojac});
  out.kernels.push_back({KernelNames::events, m.events});
  out.kernels.push_back({KernelNames::scene, m.scene});

  if (nc > 0) {
    // C' and C'' as total time derivatives (C has no rates, so C'' is linear in a with the coefficients G).
    std::vector<ex> C1(nc), C2(nc);
    for (std::size_t k = 0; k < nc; ++k) {
      C1[k] = total_derivative(D, m, m.constraints[k]);
      C2[k] = total_derivative(D, m, C1[k]);
    }
    out.kernels.push_back({KernelNames::constraints, concat({&m.constraints, &C1})});
    if (!m.contacts.empty()) {
      // The contact engine holds the constraints: C, C', G, C'' - G.a per constraint.
      std::vector<ex> c;
      for (std::size_t k = 0; k < nc; ++k) {
        c.push_back(m.constraints[k]);
        c.push_back(C1[k]);
        for (std::size_t i = 0; i < n; ++i) c.push_back(D(m.constraints[k], m.q[i]));
        c.push_back(C2[k].subs(zero_a));
      }
      out.kernels.push_back({KernelNames::contact_constraints, c});
    } else {
      // x = [q, v, lambda, extras]; v is q' (the symbols qd), v' is a.
      std::vector<ex> res(n + nc);
      ex constraint_power = 0;
      for (std::size_t i = 0; i < n; ++i) {
        res[i] = R[i];
        for (std::size_t k = 0; k < nc; ++k) {
          res[i] -= D(m.constraints[k], m.q[i]) * m.lambda[k];
          constraint_power += D(m.constraints[k], m.q[i]) * m.lambda[k] * m.qd[i];
        }
      }
      for (std::size_t k = 0; k < nc; ++k)
        res[n + k] = C2[k] + 2 * m.alpha * C1[k] + m.alpha * m.alpha * m.constraints[k];
      out.kernels.push_back({KernelNames::dae, res});
      std::vector<ex> djac;
      append_jacobian(D, djac, res, concat({&m.q, &m.qd, &m.lambda, &m.a}));
      out.kernels.push_back({KernelNames::dae_jac, djac});
      // The extra states' rates: W_Q', P' (as the ODE's) and W_C'.
      std::vector<ex> dextra;
      if (out.has_forces) {
        ex pw = 0;
        for (std::size_t i = 0; i < n; ++i) pw += m.forces[i] * m.qd[i];
        dextra.push_back(pw);
      }
      if (out.explicit_time) dextra.push_back(D(L, m.t));
      dextra.push_back(constraint_power);
      out.kernels.push_back({KernelNames::dae_extra, dextra});
      std::vector<ex> dejac;
      append_jacobian(D, dejac, dextra, concat({&m.q, &m.qd, &m.lambda}));
      out.kernels.push_back({KernelNames::dae_extra_jac, dejac});
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace rollsim::symbolic
