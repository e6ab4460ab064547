// The user model's system with rolling contacts that slip: the Coulomb cone's engine (hybrid/cone_engine.hpp) on
// the compiled kernels. The model gives the engine M and f (rs_dyn), each contact's gap, slip and spin with their
// rows and biases and its coefficients (rs_cone_contacts), the energies, its extra states' rates, its outputs and
// witnesses (the user's events, then the orientation charts').
#include <algorithm>

#include "rollsim/hybrid/cone_engine.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "lagrangian_engine_model.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian {

namespace {

using namespace detail;

class UserConeSystem final : public UserEngineModel<ConeEngine> {
 public:
  UserConeSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0, std::vector<ConeContactSpec> specs,
                 ContactSettings settings)
      : UserEngineModel(std::move(c), x0.data()) {
    configure(c_->n, std::move(specs), base_states(), std::move(x0), c_->user_outputs, model_witnesses(), settings);
  }

 protected:
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
};

}  // namespace

namespace detail {

std::unique_ptr<HybridSystem> user_cone_system(std::shared_ptr<const Compiled> c, std::vector<double> x0,
                                               std::vector<ConeContactSpec> specs, const ContactSettings& settings) {
  return std::make_unique<UserConeSystem>(std::move(c), std::move(x0), std::move(specs), settings);
}

}  // namespace detail

}  // namespace rollsim::lagrangian
