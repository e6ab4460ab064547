// The user model's system with rolling contacts that slip: the Coulomb cone's engine (hybrid/cone_engine.hpp) on
// the compiled kernels. The model gives the engine M and f (rs_dyn), each contact's gap, slip and spin with their
// rows and biases and its coefficients (rs_cone_contacts), the energies, its extra states' rates, its outputs and
// witnesses (the user's events, then the orientation charts').
#include <algorithm>

#include "rollsim/hybrid/cone_engine.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian {

namespace {

using namespace detail;

class UserConeSystem final : public ConeEngine, public UserModel {
 public:
  UserConeSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0, std::vector<ConeContactSpec> specs,
                 ContactSettings settings)
      : c_(std::move(c)), charts_(c_, x0.data()) {
    Signals base = state_signals(*c_);
    add_extra_states(*c_, base);
    // The model's witnesses: the user's events, then the orientation charts' (a SolverError before gimbal lock).
    configure(c_->n, std::move(specs), std::move(base), std::move(x0), c_->user_outputs, charts_.after(user_witnesses(*c_)),
              settings);
  }
  std::string model_name() const override { return "lagrangian"; }
  const SetupTimes& setup_times() const override { return c_->setup; }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    charts_.on_event(witness, t);
    return ConeEngine::on_event(t, x, mode, witness, dir);
  }

 protected:
  void mass_and_forces(double t, const double* x, double* M, double* f) const override {
    Scratch& w = scratch(*c_);
    c_->dyn(fill(*c_, w, t, x, 0.0), w.dyn.data());
    const std::size_t n = c_->n;
    std::copy(w.dyn.begin(), w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n), M);
    std::copy(w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n), w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n + n), f);
  }
  void cone_terms(double t, const double* x, ConeTerms* terms) const override {
    Scratch& w = scratch(*c_);
    c_->cone_contacts(fill(*c_, w, t, x, 0.0), w.out.data());
    const std::size_t n = c_->n, stride = symbolic::KernelNames::cone_contact_stride(n);
    for (std::size_t k = 0; k < c_->n_cone_contacts; ++k) {
      // g, dg/dq, bias; then u1, u2 and w_n, each with its row and bias; then mu, mu_s, e, R.
      const double* o = w.out.data() + k * stride;
      ConeTerms& ct = terms[k];
      for (auto* row : {&ct.Wn, &ct.Wt1, &ct.Wt2, &ct.Ws}) row->resize(n);
      ct.gap = o[0];
      std::copy(o + 1, o + 1 + n, ct.Wn.begin());
      ct.gap_bias = o[1 + n];
      const double* u = o + 2 + n;  // three blocks of n + 2: value, row, bias
      ct.slip[0] = u[0];
      std::copy(u + 1, u + 1 + n, ct.Wt1.begin());
      ct.slip_bias[0] = u[1 + n];
      u += n + 2;
      ct.slip[1] = u[0];
      std::copy(u + 1, u + 1 + n, ct.Wt2.begin());
      ct.slip_bias[1] = u[1 + n];
      u += n + 2;
      ct.spin = u[0];
      std::copy(u + 1, u + 1 + n, ct.Ws.begin());
      ct.spin_bias = u[1 + n];
      const double* coefficients = u + n + 2;
      ct.mu = coefficients[0];
      ct.mu_static = coefficients[1];
      ct.restitution = coefficients[2];
      ct.spin_radius = coefficients[3];
    }
  }
  void extra_rates(double t, const double* x, const double* a, double* r) const override {
    if (!c_->n_extra) return;
    c_->extra(with_accelerations(t, x, a), r);
  }
  void energies(double t, const double* x, double& T, double& V, double& h, double& E) const override {
    Scratch& w = scratch(*c_);
    double e[3];
    c_->energy(fill(*c_, w, t, x, 0.0), e);
    h = e[0];
    T = e[1];
    V = e[2];
    E = h;
    std::size_t k = 2 * c_->n;
    if (c_->has_forces) E -= x[k++];
    if (c_->explicit_time) E += x[k++];
  }
  void user_output_values(double t, const double* x, const double* a, double* y) const override {
    c_->outputs(with_accelerations(t, x, a), y);
  }
  void user_witness_values(double t, const double* x, const double* a, double* g) const override {
    if (c_->n_events) c_->witnesses(with_accelerations(t, x, a), g);
    charts_.values(t, x, g + c_->n_events);
  }

 private:
  const double* with_accelerations(double t, const double* x, const double* a) const {
    Scratch& w = scratch(*c_);
    double* in = fill(*c_, w, t, x, 0.0);
    std::copy(a, a + c_->n, in + c_->in_a);
    return in;
  }
  std::shared_ptr<const Compiled> c_;
  ChartWitnesses charts_;  ///< the orientation charts' witnesses, after the user's
};

}  // namespace

namespace detail {

std::unique_ptr<HybridSystem> user_cone_system(std::shared_ptr<const Compiled> c, std::vector<double> x0,
                                               std::vector<ConeContactSpec> specs, const ContactSettings& settings) {
  return std::make_unique<UserConeSystem>(std::move(c), std::move(x0), std::move(specs), settings);
}

}  // namespace detail

}  // namespace rollsim::lagrangian
