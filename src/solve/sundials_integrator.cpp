#include "sundials_integrator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <typeinfo>

#include <nvector/nvector_serial.h>

#include "rollsim/core/error.hpp"
#include "rollsim/solve/integrator.hpp"

namespace rollsim::sundials {

void Counts::set(std::initializer_list<std::pair<const char*, long>> list) {
  if (values.size() != list.size()) {
    values.clear();
    for (const auto& [name, v] : list) values.emplace_back(name, v);
    return;
  }
  std::size_t i = 0;
  for (const auto& item : list) values[i++].second = item.second;
}

void Counts::accumulate(const Counts& more) {
  if (values.empty()) {
    values = more.values;
    return;
  }
  for (size_t i = 0; i < values.size() && i < more.values.size(); ++i) values[i].second += more.values[i].second;
}

SundialsIntegrator::SundialsIntegrator(const HybridSystem& sys, const SolverOptions& opt, const SolverApi& api,
                                       std::string method)
    : system_type_(&typeid(sys)),
      opt_(opt),
      api_(api),
      n_(static_cast<long>(sys.size())),
      ctx_(make_context()),
      mem_(nullptr, SolverMemoryDeleter{api.free}),
      method_(std::move(method)) {
  bind(sys);
  y_ = make_vector(n_, ctx_.get());
  dky_.reset(N_VMake_Serial(n_, N_VGetArrayPointer(y_.get()), ctx_.get()));
  check_ptr(dky_.get(), "N_VMake_Serial");
  atol_ = make_vector(n_, ctx_.get());
  set_atol();
  N_VConst(0.0, y_.get());
}

void SundialsIntegrator::bind(const HybridSystem& sys) {
  sys_ = &sys;
  ode_ = facet<OdeSystem>(sys);
  dae_ = facet<DaeSystem>(sys);
  witnesses_ = facet<WitnessSystem>(sys);
}

void SundialsIntegrator::created(void* mem, const char* fn) {
  mem_.reset(mem);
  check_ptr(mem, fn);
}

void SundialsIntegrator::set_atol() { absolute_tolerances(*sys_, opt_, N_VGetArrayPointer(atol_.get())); }

bool SundialsIntegrator::rebind(const HybridSystem& sys, const SolverOptions& opt) {
  // The bound system may be gone by now (a finished sweep point): only its class is compared.
  if (typeid(sys) != *system_type_ || static_cast<long>(sys.size()) != n_ || opt.method != opt_.method) return false;
  if (!rebind_solver(sys)) return false;
  const bool had_max_step = opt_.max_step_size > 0;
  bind(sys);
  system_type_ = &typeid(sys);
  opt_ = opt;
  set_atol();
  configure();
  if (had_max_step && !(opt_.max_step_size > 0))
    call(api_.set_max_step.fn(mem_.get(), 0.0), api_.set_max_step.name);  // 0: no limit again
  total_ = Counts{};
  restarts_ = 0;
  started_ = false;
  stop_set_ = false;
  pending_ = nullptr;
  last_error_.clear();
  t_ = 0;
  mode_ = 0;
  mode_directions_.clear();
  root_capacity_ = -1;  // the solver's root functions are sized again at the next reset
  return true;
}

void SundialsIntegrator::configure() {
  call(api_.set_user_data.fn(mem_.get(), user_data()), api_.set_user_data.name);
  call(api_.set_err_handler_fn.fn(mem_.get(), &SundialsIntegrator::error_handler, user_data()),
       api_.set_err_handler_fn.name);
  call(api_.sv_tolerances.fn(mem_.get(), opt_.rtol, atol_.get()), api_.sv_tolerances.name);
  call(api_.set_max_num_steps.fn(mem_.get(), api_.max_num_steps), api_.set_max_num_steps.name);
  if (opt_.max_step_size > 0) call(api_.set_max_step.fn(mem_.get(), opt_.max_step_size), api_.set_max_step.name);
}

void SundialsIntegrator::reset(double t, const double* x, int mode) {
  if (started_) {
    current(restart_counts_);
    total_.accumulate(restart_counts_);
    ++restarts_;
  }
  started_ = true;
  mode_ = mode;
  std::memcpy(N_VGetArrayPointer(y_.get()), x, sizeof(double) * static_cast<size_t>(n_));
  reinit(t);
  static const std::vector<int> none;
  const std::vector<int>& dir = witnesses_ ? mode_directions_.of(*witnesses_, mode) : none;
  nw_ = static_cast<int>(dir.size());
  if (nw_ > root_capacity_) {
    root_capacity_ = nw_;
    root_init(root_capacity_);
  }
  roots_.assign(static_cast<std::size_t>(root_capacity_), 0);
  if (root_capacity_ > 0) {
    root_directions_.assign(static_cast<std::size_t>(root_capacity_), 0);
    std::copy(dir.begin(), dir.end(), root_directions_.begin());
    call(api_.set_root_direction.fn(mem_.get(), root_directions_.data()), api_.set_root_direction.name);
  }
  t_ = t;
  stop_set_ = false;
}

Integrator::Status SundialsIntegrator::step(double t_stop) {
  if (!stop_set_ || t_stop != stop_) {
    call(api_.set_stop_time.fn(mem_.get(), t_stop), api_.set_stop_time.name);
    stop_ = t_stop;
    stop_set_ = true;
  }
  double tret = t_;
  const int flag = advance(t_stop, &tret);
  rethrow_pending();
  if (flag < 0) fail(api_.step_name, flag);
  t_ = tret;
  if (flag == api_.root_return) {
    call(api_.get_root_info.fn(mem_.get(), roots_.data()), api_.get_root_info.name);
    return Status::Root;
  }
  if (flag == api_.tstop_return) {
    stop_set_ = false;  // whether or not the solver cleared it (CVODE does)
    return Status::StopTime;
  }
  return Status::Step;
}

void SundialsIntegrator::dky(double t, int k, double* out) const {
  N_VSetArrayPointer(out, dky_.get());
  const int flag = api_.get_dky.fn(mem_.get(), t, k, dky_.get());
  call(flag, api_.get_dky.name);
}

void SundialsIntegrator::state_at(double t, double* x) const { dky(t, 0, x); }

void SundialsIntegrator::derivative_at(double t, double* xdot) const { dky(t, 1, xdot); }

double SundialsIntegrator::last_step_size() const {
  double h = 0;
  api_.get_last_step(mem_.get(), &h);
  return h;
}

void SundialsIntegrator::error_scale(const double* x, double* err) const {
  for (long i = 0; i < n_; ++i) err[i] = opt_.rtol * std::abs(x[i]) + NV_Ith_S(atol_.get(), i);
}

SolverStats SundialsIntegrator::stats() const {
  SolverStats s;
  s.method = method_;
  s.rtol = opt_.rtol;
  s.atol = opt_.atol;
  Counts c;
  current(c);
  c.accumulate(total_);
  s.counts = std::move(c.values);
  s.counts.emplace_back("n_restarts", restarts_);
  return s;
}

void SundialsIntegrator::fail(const char* fn, int flag) const {
  char* name = api_.return_flag_name(flag);
  std::string flag_name = name ? name : "?";
  std::free(name);
  double h = 0, tc = t_;
  api_.get_current_step(mem_.get(), &h);
  api_.get_current_time(mem_.get(), &tc);
  std::string hint;
  for (const FlagHint& fh : api_.hints)
    if (fh.flag == flag) {
      hint = fh.hint;
      break;
    }
  if (!last_error_.empty()) hint += (hint.empty() ? "" : "; ") + std::string(api_.solver) + " says: " + last_error_;
  throw SolverError(fn, flag, flag_name, tc, h, sys_->mode_name(mode_), hint);
}

void SundialsIntegrator::rethrow_pending() {
  if (pending_) {
    auto e = pending_;
    pending_ = nullptr;
    std::rethrow_exception(e);
  }
}

int SundialsIntegrator::ode_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void* user_data) {
  return guarded<OdeSystem>(user_data, [&](const OdeSystem& sys, int mode) {
    sys.rhs(t, N_VGetArrayPointer(y), mode, N_VGetArrayPointer(ydot));
  });
}

int SundialsIntegrator::ode_witnesses(sunrealtype t, N_Vector y, sunrealtype* g, void* user_data) {
  const auto* self = static_cast<const SundialsIntegrator*>(user_data);
  return guarded<WitnessSystem>(user_data, [&](const WitnessSystem& sys, int mode) {
    sys.witness_values(t, N_VGetArrayPointer(y), mode, g);
    for (int i = self->nw_; i < self->root_capacity_; ++i) g[i] = 1.0;  // no witness of this mode: never a root
  });
}


int SundialsIntegrator::dae_witnesses(sunrealtype t, N_Vector y, N_Vector, sunrealtype* g, void* user_data) {
  return ode_witnesses(t, y, g, user_data);
}

void SundialsIntegrator::error_handler(int, const char*, const char* function, char* msg, void* user_data) {
  auto* self = static_cast<SundialsIntegrator*>(user_data);
  self->last_error_ = std::string(function ? function : "") + ": " + (msg ? msg : "");
}

}  // namespace rollsim::sundials
