/// solver.method = "auto", the default: the method chosen for the system, and for an ODE changed during the run.
///  - a model with a closed-form propagation (ExactSystem, the rolling disk): "exact";
///  - a DAE (DaeSystem): IDA's variable-order BDF;
///  - an ODE: the method the system names (OdeSystem::auto_method: the contact engines keep CVODE's Adams), else
///    DOP853 (order 8 with a dense output of order 7: the fewest and cheapest steps on the small nonstiff
///    models this program is for), watched by Hairer's stiffness test (explicit_rk_integrator.cpp). Where the test
///    finds the problem stiff, or where DOP853 cannot go on (its error test fails down to a round-off step), the
///    run continues from the last point reached with CVODE's BDF (Newton with a dense Jacobian) to its end, as
///    LSODA switches from Adams to BDF; it does not switch back.
/// The result file's /solver `method` says what ran ("auto: dop853", "auto: dop853, then cvode-bdf from t = ...
/// (why)", "auto: ida-bdf", "auto: exact") and so does the summary on the terminal; n_method_switches counts the
/// changes. The work counts are the sums over the methods that ran.
#include <memory>
#include <sstream>
#include <string>
#include <typeinfo>

#include "rollsim/core/error.hpp"
#include "rollsim/solve/integrator.hpp"

namespace rollsim {

std::unique_ptr<Integrator> make_cvode_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_ida_integrator(const HybridSystem& system, const SolverOptions& options);
std::unique_ptr<Integrator> make_dop853_integrator(const HybridSystem& system, const SolverOptions& options);

namespace {

SolverOptions with_method(SolverOptions o, const char* method) {
  o.method = method;
  return o;
}

class AutoIntegrator final : public Integrator {
 public:
  AutoIntegrator(const HybridSystem& sys, const SolverOptions& opt)
      : sys_(&sys), system_type_(&typeid(sys)), size_(sys.size()), opt_(opt) {
    choose_first();
  }

  void reset(double t, const double* x, int mode) override {
    mode_ = mode;
    cur_->reset(t, x, mode);
  }

  Status step(double t_stop) override {
    if (cur_ == first_.get() && explicit_ && first_->stiff())
      switch_to_stiff("stiff: h |lambda| above DOP853's stability boundary 6.1 over 15 steps");
    if (cur_ != first_.get() || !explicit_) return cur_->step(t_stop);
    try {
      return cur_->step(t_stop);
    } catch (const StepSizeError& e) {
      // DOP853's error test failed down to a round-off step: BDF goes on from the last point it reached. Not where
      // the model itself could not be evaluated (a SolverError of another kind: no method can go on there).
      switch_to_stiff(std::string("dop853 failed: ") + e.what());
      return cur_->step(t_stop);
    }
  }

  double t() const override { return cur_->t(); }
  const double* x() const override { return cur_->x(); }
  void state_at(double t, double* x) const override { cur_->state_at(t, x); }
  void derivative_at(double t, double* xdot) const override { cur_->derivative_at(t, xdot); }
  const std::vector<int>& roots() const override { return cur_->roots(); }
  const double* witness_values() const override { return cur_->witness_values(); }
  double last_step_size() const override { return cur_->last_step_size(); }
  void error_scale(const double* x, double* err) const override { cur_->error_scale(x, err); }
  bool locates_events_exactly() const override { return cur_->locates_events_exactly(); }
  bool stiff() const override { return cur_ == stiff_.get(); }

  SolverStats stats() const override {
    SolverStats s = first_->stats();
    s.method = "auto: " + s.method;
    if (cur_ == stiff_.get()) {
      const SolverStats b = stiff_->stats();
      for (const auto& [name, value] : b.counts) {
        bool found = false;
        for (auto& [n, v] : s.counts)
          if (n == name) v += value, found = true;
        if (!found) s.counts.emplace_back(name, value);
      }
      std::ostringstream os;
      os.precision(10);
      os << ", then " << b.method << " from t = " << switched_at_ << " (" << switch_reason_ << ")";
      s.method += os.str();
    }
    s.counts.emplace_back("n_method_switches", cur_ == stiff_.get() ? 1 : 0);
    return s;
  }

  bool rebind(const HybridSystem& sys, const SolverOptions& opt) override {
    // The bound system may be gone by now (a finished sweep point): only its class and size are compared.
    if (opt.method != "auto" || typeid(sys) != *system_type_ || sys.size() != size_) return false;
    const SolverOptions first_opt = first_method_.empty() ? opt : with_method(opt, first_method_.c_str());
    if (!first_->rebind(sys, first_opt)) return false;
    if (stiff_ && !stiff_->rebind(sys, with_method(opt, "bdf"))) stiff_.reset();
    sys_ = &sys;
    opt_ = opt;
    cur_ = first_.get();
    return true;
  }

 private:
  void choose_first() {
    if (const ExactSystem* exact = facet<ExactSystem>(*sys_)) {
      first_ = exact->make_exact_integrator(opt_);
    } else if (facet<DaeSystem>(*sys_)) {
      first_ = make_ida_integrator(*sys_, opt_);
    } else {
      first_method_ = facet<OdeSystem>(*sys_)->auto_method();
      explicit_ = first_method_ == "dop853";
      first_ = explicit_ ? make_dop853_integrator(*sys_, with_method(opt_, "dop853"))
                         : make_integrator(*sys_, with_method(opt_, first_method_.c_str()));
    }
    cur_ = first_.get();
  }

  /// Continues from the point DOP853 reached (its last step's end, or the event located in it) with CVODE's BDF.
  void switch_to_stiff(std::string why) {
    if (!stiff_) stiff_ = make_cvode_integrator(*sys_, with_method(opt_, "bdf"));
    switched_at_ = first_->t();
    switch_reason_ = std::move(why);
    stiff_->reset(switched_at_, first_->x(), mode_);
    cur_ = stiff_.get();
  }

  const HybridSystem* sys_;
  const std::type_info* system_type_;
  std::size_t size_;
  SolverOptions opt_;
  std::string first_method_;  ///< the ODE's method (OdeSystem::auto_method); empty for exact and IDA
  std::unique_ptr<Integrator> first_, stiff_;
  Integrator* cur_ = nullptr;
  bool explicit_ = false;  ///< first_ is DOP853, which may hand over to BDF
  int mode_ = 0;
  double switched_at_ = 0;
  std::string switch_reason_;
};

}  // namespace

std::unique_ptr<Integrator> make_auto_integrator(const HybridSystem& system, const SolverOptions& options) {
  return std::make_unique<AutoIntegrator>(system, options);
}

}  // namespace rollsim
