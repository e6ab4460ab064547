#include "rollsim/models/lagrangian.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <Eigen/Dense>

#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/linearizable.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/contacts.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/models/contact_keys.hpp"
#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/symbolic/expression.hpp"
#include "rollsim/symbolic/lagrange.hpp"
#include "lagrangian_internal.hpp"

namespace rollsim::lagrangian {

namespace {

using GiNaC::ex;
using symbolic::KernelNames;

using namespace detail;

// ---- names in the scenario ------------------------------------------------------------------------------

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// The distinct second components of raw keys "section.NAME[.rest]".
std::vector<std::string> names_in(const std::map<std::string, std::string>& raw, const std::string& section) {
  std::set<std::string> out;
  const std::string prefix = section + ".";
  for (const auto& [k, v] : raw)
    if (k.rfind(prefix, 0) == 0) {
      const std::string rest = k.substr(prefix.size());
      out.insert(rest.substr(0, rest.find('.')));
    }
  return {out.begin(), out.end()};
}

/// The names of a section in the order the scenario gives them (by origin; overrides last).
std::vector<std::string> ordered(const Scenario& sc, const std::string& section, const std::string& leaf = "") {
  std::vector<std::pair<std::tuple<int, int, int>, std::string>> v;
  const std::string prefix = section + ".";
  std::set<std::string> seen;
  for (const auto& [k, e] : sc.values) {
    if (k.rfind(prefix, 0) != 0 || e.defaulted) continue;
    std::string rest = k.substr(prefix.size());
    const auto dot = rest.find('.');
    if (leaf.empty() != (dot == std::string::npos)) continue;
    const std::string name = rest.substr(0, dot);
    if (!seen.insert(name).second) continue;
    const Origin o = e.origin;
    const bool from_file = o.file == sc.path;
    v.push_back({{from_file ? 0 : 1, o.line, o.column}, name});
  }
  std::sort(v.begin(), v.end());
  std::vector<std::string> names;
  for (auto& p : v) names.push_back(p.second);
  return names;
}

/// The keys of a user model. A scenario names its parameters, coordinates, bodies, constraints, contacts, outputs
/// and events, and gets the keys of those names. A key listing (`rollsim keys lagrangian`: its raw keys hold no
/// `model`, which every scenario file has) gets them for the placeholder name NAME of each section, and every
/// optional section's keys, so that the listing and the validation come from these declarations alone.
std::vector<KeySpec> schema(const std::map<std::string, std::string>& raw) {
  const bool listing = raw.count("model") == 0;
  auto names = [&](const std::string& section) {
    auto v = names_in(raw, section);
    if (listing && v.empty()) v.push_back(section == "bodies" ? "N" : "NAME");
    return v;
  };
  std::vector<KeySpec> v;
  for (const auto& p : names("parameters"))
    v.push_back(real_key("parameters." + p, "", "model parameter " + p + " (a number the expressions use)").required());
  auto coords = names("coordinates");
  for (const auto& c : coords)
    v.push_back(string_key("coordinates." + c, "", {}, "unit of the generalized coordinate " + c).required());
  // Without [coordinates], the names [initial], [initial_rates] and [lagrangian.forces] use are declared all the
  // same, so that the model refuses the file for its missing [coordinates] (make_system), not for those keys.
  if (coords.empty()) {
    std::set<std::string> used;
    for (const auto* section : {"initial", "initial_rates", "lagrangian.forces"})
      for (const auto& n : names_in(raw, section)) used.insert(n);
    coords.assign(used.begin(), used.end());
  }
  for (const auto& c : coords) {
    v.push_back(real_key("initial." + c, "coordinate unit", "q(0) of " + c).with_default(0.0));
    v.push_back(real_key("initial_rates." + c, "coordinate unit/s", "q'(0) of " + c).with_default(0.0));
    v.push_back(expression_key("lagrangian.forces." + c, "0", "generalized force Q(t, q, der(q)) on " + c));
  }
  v.push_back(expression_key("lagrangian.kinetic", "0", "kinetic energy T(t, q, der(q))"));
  v.push_back(expression_key("lagrangian.potential", "0", "potential energy V(t, q), no der()"));
  for (const auto& b : names("bodies")) {
    const std::string k = "bodies." + b + ".";
    v.push_back(string_key(k + "name", "body " + b, {}, "the body's name, for messages"));
    v.push_back(expression_key(k + "mass", "", "mass m (t, q)").required());
    v.push_back(expression_key(k + "inertia", "0", "moment of inertia about the centre of mass (t, q)"));
    v.push_back(expression_key(k + "x", "0", "x of the centre of mass (t, q)"));
    v.push_back(expression_key(k + "y", "0", "y of the centre of mass (t, q), up; gravity g along -y"));
    v.push_back(expression_key(k + "angle", "0", "rotation angle of the body (t, q)"));
  }
  const auto constraints = names("constraints");
  for (const auto& c : constraints)
    v.push_back(expression_key("constraints." + c + ".expression", "", "holonomic constraint C(t, q) = 0").required());
  const auto contact_names = names("contacts");
  for (const auto& c : contact_names) {
    const std::string k = "contacts." + c + ".";
    // Optional keys without a value of their own: "" stands for absent (make_system asks whether each is given).
    auto optional = [&](const std::string& leaf, std::string shown_default, std::string description) {
      KeySpec spec = expression_key(k + leaf, "", std::move(description));
      spec.default_text = std::move(shown_default);
      v.push_back(std::move(spec));
    };
    optional("gap", "none", "unilateral contact: the gap g(q) >= 0; its normal force is computed");
    v.push_back(expression_key(k + "restitution", "0", "Newton's restitution e(t, q, der(q)) in [0, 1] at an impact (with a gap)"));
    optional("slip_velocity", "none", "slip velocity w(q, der(q)), linear in der(q)");
    optional("normal_force", "none", "a given normal force N(t, q, der(q)) (without a gap)");
    optional("friction_coefficient", "none",
             "Coulomb friction coefficient mu(t, q, der(q)) >= 0 (with a slip velocity): the sliding one");
    optional("static_friction_coefficient", "friction_coefficient",
             "the bound mu_s >= mu of the friction force while sticking (with friction_coefficient)");
  }
  if (!contact_names.empty())
    for (auto& k : nonsmooth_keys()) v.push_back(std::move(k));
  for (const auto& o : names("outputs")) {
    const std::string k = "outputs." + o + ".";
    v.push_back(expression_key(k + "expression", "", "the output (t, q, der(q), der2(q))").required());
    v.push_back(string_key(k + "unit", "", {}, "its unit"));
    v.push_back(string_key(k + "description", "", {}, "its meaning"));
  }
  for (const auto& e : names("events")) {
    const std::string k = "events." + e + ".";
    v.push_back(expression_key(k + "when", "", "the witness (t, q, der(q), der2(q)); the event is where it crosses zero").required());
    v.push_back(string_key(k + "direction", "both", {"rising", "falling", "both"}, "crossings that count"));
    v.push_back(string_key(k + "action", "record", {"record", "stop"}, "stop the run, or only record the event"));
  }
  // Constraints without contacts: the DAE on IDA. With contacts, the contact engine holds the constraints
  // (nonsmooth.stabilization_rate, any solver.method).
  if (!constraints.empty() && (contact_names.empty() || listing)) {
    v.push_back(real_key("dae.stabilization_rate", "1/s", "Baumgarte rate a of the constraints: C'' + 2 a C' + a^2 C = 0")
                    .with_default(kDefaultBaumgarte)
                    .non_negative());
    v.push_back(string_key("solver.method", "bdf", {"bdf"},
                           "IDA integrates with variable-order BDF (the only choice for a model with constraints)"));
  }
  for (auto& k : smooth_model_keys()) v.push_back(std::move(k));
  v.push_back(string_key("title", "", {}, "a title for plots and reports"));
  return v;
}

// ---- reading the expressions -----------------------------------------------------------------------------

/// Where offset `offset` of the string value of `key` is in the scenario.
Origin origin_in(const Scenario& sc, const std::string& key, std::size_t offset) {
  Origin o = sc.origin(key);
  if (o.file != sc.path || o.line <= 0) return o;
  std::istringstream is(sc.text);
  std::string line;
  for (int i = 0; i < o.line && std::getline(is, line);) ++i;
  const std::size_t col = static_cast<std::size_t>(o.column - 1);
  std::size_t open = 1;
  if (line.compare(col, 3, "\"\"\"") == 0 || line.compare(col, 3, "'''") == 0) open = 3;
  o.column += static_cast<int>(open + offset);
  return o;
}

struct Reader {
  const Scenario& sc;
  symbolic::NameTable names;

  ex parse(const std::string& key, bool rates = true, const std::string& why_no_rates = "", bool accelerations = false) {
    symbolic::NameTable t = names;
    t.rates_allowed = rates;
    t.rates_forbidden_reason = why_no_rates;
    t.accelerations_allowed = accelerations;
    const std::string& text = sc.string(key);
    try {
      return symbolic::parse_expression(text, t);
    } catch (const symbolic::ExpressionError& e) {
      throw InputError(origin_in(sc, key, e.offset),
                       key + " = \"" + text + "\": " + e.what() + " (at character " + std::to_string(e.offset + 1) + ")");
    }
  }
};

bool linear_in(const ex& e, const std::vector<ex>& rates) {
  for (const auto& a : rates)
    for (const auto& b : rates)
      if (!symbolic::d(symbolic::d(e, a), b).normal().is_zero()) return false;
  return true;
}

// ---- the smooth ODE --------------------------------------------------------------------------------------

class SmoothSystem final : public HybridSystem, public Linearizable, public UserModel {
 public:
  SmoothSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0) : c_(std::move(c)), x0_(std::move(x0)) {
    states_ = state_signals(*c_);
    add_extra_states(*c_, states_);
    outputs_ = output_signals(*c_);
    for (std::size_t i = 0; i < c_->n; ++i)
      inputs_.push_back({"force_" + c_->coordinates[i], "generalized force",
                         "generalized force added to Q of " + c_->coordinates[i] + " (0 in a run; a linearisation's input)"});
  }
  std::string model_name() const override { return "lagrangian"; }
  const SetupTimes& setup_times() const override { return c_->setup; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  void rhs(double t, const double* x, int, double* xdot) const override { ode_rhs(*c_, t, x, 0.0, xdot); }
  bool jacobian(double t, const double* x, int, double* J) const override {
    ode_jacobian(*c_, t, x, 0.0, J);
    return true;
  }
  std::vector<Witness> witnesses(int) const override { return user_witnesses(*c_); }
  std::size_t witness_count(int) const override { return c_->n_events; }
  void witness_values(double t, const double* x, int, double* g) const override { witness_eval(*c_, t, x, 0.0, g); }
  bool energy_ledger(double t, const double* x, int, EnergyLedger& e) const override {
    double* y = output_buffer(outputs_.size());
    ode_outputs(*c_, t, x, 0.0, y);
    e.energy = y[3];
    e.dissipated = 0;
    e.scale = ledger_scale(*c_, x, y);
    return true;
  }
  void compute_outputs(double t, const double* x, int, double* y) const override { ode_outputs(*c_, t, x, 0.0, y); }
  std::unique_ptr<Summarizer> make_summarizer() const override { return std::make_unique<EnergySummarizer>(c_); }

  // Linearizable: values from the compiled kernels, first derivatives from their exact Jacobians.
  /// The inputs: a generalized force on each coordinate, added to Q (0 in a run), so that a linearisation has
  /// B = [0; M^-1] (and the frequency response of a force to a coordinate).
  const Signals& inputs() const override { return inputs_; }
  std::vector<double> input_values() const override { return std::vector<double>(c_->n, 0.0); }
  void rhs_ad(const AD* x, const AD* u, AD* xdot) const override {
    const std::size_t N = size(), n = c_->n;
    std::vector<double> xv(N), f(N), J(N * N);
    for (std::size_t i = 0; i < N; ++i) xv[i] = x[i].value();
    rhs(0.0, xv.data(), 0, f.data());
    jacobian(0.0, xv.data(), 0, J.data());
    const Eigen::MatrixXd Minv = mass_inverse(xv.data());
    for (std::size_t i = 0; i < N; ++i) {
      Eigen::VectorXd dv = Eigen::VectorXd::Zero(x[0].derivatives().size());
      for (std::size_t j = 0; j < N; ++j)
        if (J[i + N * j] != 0) dv += J[i + N * j] * x[j].derivatives();
      for (std::size_t j = 0; j < n; ++j) {
        if (i >= n && i < 2 * n) dv += Minv(static_cast<Eigen::Index>(i - n), static_cast<Eigen::Index>(j)) * u[j].derivatives();
        if (c_->has_forces && i == 2 * n) dv += xv[n + j] * u[j].derivatives();  // the input's power in W_Q
      }
      xdot[i] = AD(f[i], dv);
    }
  }
  /// M^-1 at the state x.
  Eigen::MatrixXd mass_inverse(const double* x) const {
    Scratch& w = scratch(*c_);
    c_->dyn(fill(*c_, w, 0.0, x, 0.0), w.dyn.data());
    const auto n = static_cast<Eigen::Index>(c_->n);
    const Eigen::MatrixXd M = Eigen::Map<const Eigen::MatrixXd>(w.dyn.data(), n, n);
    return M.inverse();
  }
  void signals_ad(const AD* x, const AD* u, AD* y) const override;
  int degrees_of_freedom() const override { return static_cast<int>(c_->n); }
  std::vector<std::string> default_linear_outputs() const override { return {c_->coordinates.front()}; }
  std::unique_ptr<HybridSystem> starting_at(const double* x0) const override {
    return std::make_unique<SmoothSystem>(c_, std::vector<double>(x0, x0 + size()));
  }

 private:
  std::shared_ptr<const Compiled> c_;
  std::vector<double> x0_;
  Signals states_, outputs_, inputs_;
};

void SmoothSystem::signals_ad(const AD* x, const AD* u, AD* y) const {
  const Compiled& c = *c_;
  const std::size_t N = size(), n = c.n, m = outputs_.size();
  for (std::size_t i = 0; i < N; ++i) y[i] = x[i];
  std::vector<double> xv(N), yv(m), J(N * N);
  for (std::size_t i = 0; i < N; ++i) xv[i] = x[i].value();
  compute_outputs(0.0, xv.data(), 0, yv.data());
  jacobian(0.0, xv.data(), 0, J.data());
  const Eigen::Index k = x[0].derivatives().size();
  // dx/dseed, and da/dseed = J's acceleration rows times it.
  std::vector<Eigen::VectorXd> dx(N), da(n);
  for (std::size_t j = 0; j < N; ++j) dx[j] = x[j].derivatives();
  const Eigen::MatrixXd Minv = mass_inverse(xv.data());
  for (std::size_t i = 0; i < n; ++i) {
    da[i] = Eigen::VectorXd::Zero(k);
    for (std::size_t j = 0; j < N; ++j) da[i] += J[n + i + N * j] * dx[j];
    for (std::size_t j = 0; j < n; ++j) da[i] += Minv(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) * u[j].derivatives();
  }
  // The user's outputs are differentiated exactly (their Jacobian kernel, with da/dx through the accelerations);
  // the built-in ones (energies, contact values) by forward differences of their exact values, which is enough
  // for outputs that are never a linearisation's default.
  const std::size_t first_user = m - c.n_user_outputs;
  Scratch& w = scratch(c);
  accelerations(c, w, 0.0, xv.data(), 0.0, w.tmp.data());
  std::vector<double> oj(c.n_user_outputs * 3 * n);
  if (c.n_user_outputs) c.outputs_jac(w.in.data(), oj.data());
  for (std::size_t o = 0; o < m; ++o) {
    Eigen::VectorXd dv = Eigen::VectorXd::Zero(k);
    if (o >= first_user) {
      const std::size_t r = o - first_user, R = c.n_user_outputs;
      for (std::size_t j = 0; j < 2 * n; ++j) dv += oj[r + R * j] * dx[j];
      for (std::size_t j = 0; j < n; ++j) dv += oj[r + R * (2 * n + j)] * da[j];
    } else {
      for (std::size_t j = 0; j < N; ++j) {
        const double h = 1e-7 * std::max(1.0, std::abs(xv[j]));
        std::vector<double> xp = xv, yp(m);
        xp[j] += h;
        compute_outputs(0.0, xp.data(), 0, yp.data());
        dv += (yp[o] - yv[o]) / h * dx[j];
      }
    }
    y[N + o] = AD(yv[o], dv);
  }
}

// ---- the Coulomb contact (Filippov) ------------------------------------------------------------------------

class ContactSystem final : public FilippovSystem, public UserModel {
 public:
  ContactSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0) : c_(std::move(c)), x0_(std::move(x0)) {
    states_ = state_signals(*c_);
    add_extra_states(*c_, states_);
    outputs_ = output_signals(*c_);
    for (int m : {kMinus, kSliding, kPlus}) engine_count_[m + 1] = FilippovSystem::witnesses(m).size();
    d_index_ = 2 * c_->n + (c_->has_forces ? 1 : 0);
  }
  std::string model_name() const override { return "lagrangian"; }
  const SetupTimes& setup_times() const override { return c_->setup; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  void field_plus(double t, const double* x, double* f) const override { ode_rhs(*c_, t, x, 1.0, f); }
  void field_minus(double t, const double* x, double* f) const override { ode_rhs(*c_, t, x, -1.0, f); }
  bool jacobian_plus(double t, const double* x, double* J) const override {
    ode_jacobian(*c_, t, x, 1.0, J);
    return true;
  }
  bool jacobian_minus(double t, const double* x, double* J) const override {
    ode_jacobian(*c_, t, x, -1.0, J);
    return true;
  }
  double switching(double t, const double* x) const override {
    Scratch& w = scratch(*c_);
    c_->contact(fill(*c_, w, t, x, 0.0), w.out.data());
    return w.out[0];
  }
  void switching_gradient(double t, const double* x, double* grad) const override {
    Scratch& w = scratch(*c_);
    c_->contact(fill(*c_, w, t, x, 0.0), w.out.data());
    std::fill(grad, grad + size(), 0.0);
    std::copy(w.out.data() + 1, w.out.data() + 1 + 2 * c_->n, grad);
  }
  std::string crossing_kind() const override { return "reversal"; }

  std::vector<Witness> witnesses(int mode) const override {
    auto v = FilippovSystem::witnesses(mode);
    for (auto& u : user_witnesses(*c_)) v.push_back(std::move(u));
    return v;
  }
  std::size_t witness_count(int mode) const override { return engine_count_[mode + 1] + c_->n_events; }
  void witness_values(double t, const double* x, int mode, double* g) const override {
    FilippovSystem::witness_values(t, x, mode, g);
    witness_eval(*c_, t, x, sign(t, x, mode), g + engine_count_[mode + 1]);
  }
  void witness_rates(double t, const double* x, const double* xdot, int mode, double* gdot) const override {
    if (c_->n_events) HybridSystem::witness_rates(t, x, xdot, mode, gdot);
    FilippovSystem::witness_rates(t, x, xdot, mode, gdot);
  }
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness, int dir) const override {
    for (const auto& e : c_->events)
      if (e.name == witness) return HybridSystem::on_event(t, x, mode, witness, dir);
    return FilippovSystem::on_event(t, x, mode, witness, dir);
  }
  void event_details(double t, const double* x, int mode, const std::string& witness,
                     std::map<std::string, double>& extra) const override {
    for (const auto& e : c_->events)
      if (e.name == witness) return;  // a user's event: the engine's values are not its own
    FilippovSystem::event_details(t, x, mode, witness, extra);
  }
  bool energy_ledger(double t, const double* x, int mode, EnergyLedger& e) const override {
    double* y = output_buffer(outputs_.size());
    compute_outputs(t, x, mode, y);
    if (c_->friction_dissipates) {
      e.dissipated = x[d_index_];
      e.energy = y[3] - e.dissipated;
      e.dissipated_state = static_cast<int>(d_index_);
    } else {
      e.energy = y[3];
    }
    e.scale = ledger_scale(*c_, x, y);
    return true;
  }
  void compute_outputs(double t, const double* x, int mode, double* y) const override {
    // Sticking: F0 is F_s with the equivalent control's s (sign()).
    ode_outputs(*c_, t, x, sign(t, x, mode), y);
  }
  std::string symbol_legend() const override { return "+ slip forward (w > 0), - slip backward, 0 stick"; }
  std::unique_ptr<Summarizer> make_physics_summarizer(const FilippovRecord&) const override {
    return std::make_unique<EnergySummarizer>(c_);
  }

 private:
  /// The friction sign for outputs and user witnesses: the mode's, or in sticking the equivalent control's
  /// convex weight mapped to [-1, 1].
  double sign(double t, const double* x, int mode) const {
    if (mode != kSliding) return mode;
    double sp, sm;
    sigmas(t, x, sp, sm);
    const double den = sm - sp;
    if (!(den != 0)) return 0.0;
    // F0 = (sm F+ - sp F-)/(sm - sp) and F_s is affine in s: F0 = F_s with s = (sm + sp)/(sm - sp).
    return (sm + sp) / den;
  }

  std::shared_ptr<const Compiled> c_;
  std::vector<double> x0_;
  Signals states_, outputs_;
  std::size_t engine_count_[3] = {1, 2, 1};
  std::size_t d_index_ = 0;
};

// ---- several contacts, unilateral gaps, impacts (the contact engine) ---------------------------------------

class UserContactSystem final : public ContactEngine, public UserModel {
 public:
  UserContactSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0, std::vector<ContactSpec> specs,
                    ContactSettings settings, std::vector<std::string> constraint_names = {})
      : c_(std::move(c)) {
    Signals base = state_signals(*c_);
    add_extra_states(*c_, base);
    configure(c_->n, std::move(specs), std::move(base), std::move(x0), c_->user_outputs, user_witnesses(*c_), settings,
              std::move(constraint_names));
  }
  std::string model_name() const override { return "lagrangian"; }
  const SetupTimes& setup_times() const override { return c_->setup; }

 protected:
  void mass_and_forces(double t, const double* x, double* M, double* f) const override {
    Scratch& w = scratch(*c_);
    c_->dyn(fill(*c_, w, t, x, 0.0), w.dyn.data());
    const std::size_t n = c_->n;
    std::copy(w.dyn.begin(), w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n), M);
    std::copy(w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n), w.dyn.begin() + static_cast<std::ptrdiff_t>(n * n + n), f);
  }
  void contact_terms(double t, const double* x, ContactTerms* terms) const override {
    Scratch& w = scratch(*c_);
    c_->contacts(fill(*c_, w, t, x, 0.0), w.out.data());
    const std::size_t n = c_->n, stride = symbolic::KernelNames::contact_stride(n);
    for (std::size_t k = 0; k < c_->n_contacts; ++k) {
      const double* o = w.out.data() + k * stride;
      ContactTerms& ct = terms[k];
      ct.gap = o[0];
      std::copy(o + 1, o + 1 + n, ct.Wn.begin());
      ct.gap_bias = o[1 + n];
      ct.slip = o[2 + n];
      std::copy(o + 3 + n, o + 3 + 2 * n, ct.Wt.begin());
      ct.slip_bias = o[3 + 2 * n];
      ct.mu = o[4 + 2 * n];
      ct.restitution = o[5 + 2 * n];
      ct.given_normal = o[6 + 2 * n];
      ct.mu_static = o[7 + 2 * n];
    }
  }
  void constraint_terms(double t, const double* x, ConstraintTerms* terms) const override {
    if (!c_->nc) return;
    Scratch& w = scratch(*c_);
    c_->contact_constraints(fill(*c_, w, t, x, 0.0), w.out.data());
    const std::size_t n = c_->n, stride = symbolic::KernelNames::constraint_stride(n);
    for (std::size_t k = 0; k < c_->nc; ++k) {
      const double* o = w.out.data() + k * stride;
      ConstraintTerms& ct = terms[k];
      ct.value = o[0];
      ct.rate = o[1];
      std::copy(o + 2, o + 2 + n, ct.G.begin());
      ct.bias = o[2 + n];
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
    c_->witnesses(with_accelerations(t, x, a), g);
  }

 private:
  const double* with_accelerations(double t, const double* x, const double* a) const {
    Scratch& w = scratch(*c_);
    double* in = fill(*c_, w, t, x, 0.0);
    std::copy(a, a + c_->n, in + c_->in_a);
    return in;
  }
  std::shared_ptr<const Compiled> c_;
};

// ---- holonomic constraints (DAE) -------------------------------------------------------------------------

class ConstrainedUserSystem final : public HybridSystem, public UserModel {
 public:
  ConstrainedUserSystem(std::shared_ptr<const Compiled> c, std::vector<double> x0) : c_(std::move(c)), x0_(std::move(x0)) {
    states_ = state_signals(*c_);
    for (const auto& n : c_->constraint_names)
      states_.push_back({"lambda_" + n, "", "multiplier of constraint " + n + " (its generalized force is G^T lambda)"});
    if (c_->has_forces) states_.push_back({"work_forces", "J", "work done by the generalized forces Q since the start"});
    if (c_->explicit_time)
      states_.push_back({"work_explicit_time", "J", "integral of dL/dt (a Lagrangian with explicit time)"});
    states_.push_back({"work_constraints", "J",
                       "work done by the constraint forces G^T lambda since the start ((G^T lambda).q'; nonzero for "
                       "a moving constraint)"});
    outputs_ = output_signals(*c_);
  }
  std::string model_name() const override { return "lagrangian"; }
  const SetupTimes& setup_times() const override { return c_->setup; }
  Formulation formulation() const override { return Formulation::Dae; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void initial_state(double* x0) const override { std::copy(x0_.begin(), x0_.end(), x0); }
  void rhs(double, const double*, int, double*) const override {
    throw std::logic_error("lagrangian: a constrained model has no explicit right-hand side");
  }
  void residual(double t, const double* x, const double* xdot, int, double* r) const override {
    const std::size_t n = c_->n;
    Scratch& w = scratch(*c_);
    double* in = fill_dae(w, t, x, xdot);
    for (std::size_t i = 0; i < n; ++i) r[i] = xdot[i] - x[n + i];
    c_->dae(in, r + n);
    // The extra states (works): x_e' - rate_e = 0.
    const std::size_t e0 = 2 * n + c_->nc;
    c_->dae_extra(in, r + e0);
    for (std::size_t e = 0; e < c_->n_dae_extra; ++e) r[e0 + e] = xdot[e0 + e] - r[e0 + e];
  }
  void differential_ids(double* id) const override {
    // q, v and the works are differential, lambda algebraic.
    for (std::size_t i = 0; i < size(); ++i) id[i] = i < 2 * c_->n || i >= 2 * c_->n + c_->nc ? 1.0 : 0.0;
  }
  bool residual_jacobian(double t, const double* x, const double* xdot, int, double cj, double* J) const override {
    const std::size_t n = c_->n, nc = c_->nc, N = size(), R = n + nc;
    Scratch& w = scratch(*c_);
    c_->dae_jac(fill_dae(w, t, x, xdot), w.jac.data());
    std::fill(J, J + N * N, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      J[i + N * i] = cj;
      J[i + N * (n + i)] = -1.0;
    }
    // Blocks of rs_dae_jac, columns: q (n), v (n), lambda (nc), a (n); rows R = n + nc.
    for (std::size_t col = 0; col < 2 * n + nc; ++col)
      for (std::size_t r = 0; r < R; ++r) J[n + r + N * col] = w.jac[r + R * col];
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t r = 0; r < R; ++r) J[n + r + N * (n + j)] += cj * w.jac[r + R * (2 * n + nc + j)];
    // The works' rows: cj on their own column, minus their rates' derivatives by q, v and lambda.
    const std::size_t E = c_->n_dae_extra, e0 = 2 * n + nc;
    c_->dae_extra_jac(w.in.data(), w.out.data());
    for (std::size_t e = 0; e < E; ++e) {
      J[e0 + e + N * (e0 + e)] = cj;
      for (std::size_t col = 0; col < 2 * n + nc; ++col) J[e0 + e + N * col] = -w.out[e + E * col];
    }
    return true;
  }
  void initial_derivative(double t, const double* x, int, double* xdot0) const override {
    consistent(t, x, xdot0, nullptr);
  }
  std::vector<Witness> witnesses(int) const override { return user_witnesses(*c_); }
  std::size_t witness_count(int) const override { return c_->n_events; }
  void witness_values(double t, const double* x, int, double* g) const override {
    if (!c_->n_events) return;
    std::vector<double> xd(size());
    consistent(t, x, xd.data(), nullptr);
    Scratch& w = scratch(*c_);
    c_->witnesses(fill_dae(w, t, x, xd.data()), g);
  }
  void compute_outputs(double t, const double* x, int, double* y) const override {
    const std::size_t nc = c_->nc;
    std::vector<double> xd(size());
    consistent(t, x, xd.data(), nullptr);
    Scratch& w = scratch(*c_);
    double* in = fill_dae(w, t, x, xd.data());
    double e[3];
    c_->energy(in, e);
    y[0] = e[1];
    y[1] = e[2];
    y[2] = e[0];
    y[3] = balance(e[0], x);
    std::size_t o = 4;
    std::vector<double> cons(2 * nc);
    c_->constraints(in, cons.data());
    for (std::size_t k = 0; k < nc; ++k) y[o++] = cons[k];
    if (c_->n_user_outputs) c_->outputs(in, y + o);
  }
  std::unique_ptr<Summarizer> make_summarizer() const override { return std::make_unique<ConstraintSummarizer>(*c_); }
  /// E = h - W_Q + P - W_C, conserved (the self-audit checks it); no dissipation.
  bool energy_ledger(double t, const double* x, int, EnergyLedger& e) const override {
    double* y = output_buffer(outputs_.size());
    compute_outputs(t, x, 0, y);
    e.energy = y[3];
    e.dissipated = 0;
    e.scale = std::abs(y[0]) + std::abs(y[1]);
    for (std::size_t k = 2 * c_->n + c_->nc; k < size(); ++k) e.scale += std::abs(x[k]);
    return true;
  }

  /// a and lambda consistent with (t, q, v): the residual is affine in them; solve it. Writes xdot (q' = v, v' = a)
  /// and, if lambda is given, the multipliers.
  void consistent(double t, const double* x, double* xdot, double* lambda) const {
    const std::size_t n = c_->n, nc = c_->nc, R = n + nc;
    std::vector<double> xz(x, x + size()), xdz(size(), 0.0), r0(R), jac(R * (3 * n + nc));
    for (std::size_t k = 0; k < nc; ++k) xz[2 * n + k] = 0.0;
    Scratch& w = scratch(*c_);
    double* in = fill_dae(w, t, xz.data(), xdz.data());
    c_->dae(in, r0.data());
    c_->dae_jac(in, jac.data());
    Eigen::MatrixXd A(R, R);
    Eigen::VectorXd b(R);
    for (std::size_t r = 0; r < R; ++r) {
      b(static_cast<Eigen::Index>(r)) = -r0[r];
      for (std::size_t j = 0; j < n; ++j) A(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = jac[r + R * (2 * n + nc + j)];
      for (std::size_t k = 0; k < nc; ++k)
        A(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(n + k)) = jac[r + R * (2 * n + k)];
    }
    const Eigen::VectorXd sol = A.partialPivLu().solve(b);
    for (std::size_t i = 0; i < n; ++i) {
      xdot[i] = x[n + i];
      xdot[n + i] = sol(static_cast<Eigen::Index>(i));
    }
    for (std::size_t k = 0; k < nc; ++k) {
      xdot[2 * n + k] = 0.0;
      xz[2 * n + k] = sol(static_cast<Eigen::Index>(n + k));
      if (lambda) lambda[k] = xz[2 * n + k];
    }
    // The works' rates at the solved multipliers.
    c_->dae_extra(fill_dae(w, t, xz.data(), xdot), xdot + 2 * n + nc);
  }

 private:
  class ConstraintSummarizer : public Summarizer {
   public:
    explicit ConstraintSummarizer(const Compiled& c) : nc_(c.nc) {}
    void on_point(double, const double*, const double* y, int) override {
      if (!have_) {
        e0_ = y[3];
        have_ = true;
      }
      drift_ = std::max(drift_, std::abs(y[3] - e0_));
      for (std::size_t k = 0; k < nc_; ++k) worst_ = std::max(worst_, std::abs(y[4 + k]));
    }
    std::vector<SummaryItem> items() const override {
      return {{"energy_initial", e0_, "", "J", "initial energy balance h - W_Q + P - W_C", false},
              {"energy_drift_abs", drift_, "", "J", "largest drift of the energy balance h - W_Q + P - W_C", false},
              {"constraint_residual_max", worst_, "", "", "largest |C| over the samples and steps", false}};
    }

   private:
    std::size_t nc_;
    bool have_ = false;
    double e0_ = 0, drift_ = 0, worst_ = 0;
  };

  /// h - W_Q + P - W_C from the extra states of x.
  double balance(double h, const double* x) const {
    std::size_t k = 2 * c_->n + c_->nc;
    double b = h;
    if (c_->has_forces) b -= x[k++];
    if (c_->explicit_time) b += x[k++];
    return b - x[k];
  }

  double* fill_dae(Scratch& w, double t, const double* x, const double* xdot) const {
    const Compiled& c = *c_;
    double* in = fill(c, w, t, x, 0.0);
    std::copy(xdot + c.n, xdot + 2 * c.n, in + c.in_a);
    std::copy(x + 2 * c.n, x + 2 * c.n + c.nc, in + c.in_lambda);
    return in;
  }

  std::shared_ptr<const Compiled> c_;
  std::vector<double> x0_;
  Signals states_, outputs_;
};

// ---- building ---------------------------------------------------------------------------------------------

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> r = [] {
    std::set<std::string> s{"t", "pi"};
    for (const auto& [f, n] : symbolic::functions()) s.insert(f);
    return s;
  }();
  return r;
}

/// Every scenario text that defines the model's equations (not the parameter values or the start).
std::string model_text_key(const Scenario& sc) {
  std::string key;
  for (const auto& [k, e] : sc.values) {
    const bool defining = k.rfind("lagrangian.", 0) == 0 || k.rfind("bodies.", 0) == 0 || k.rfind("constraints.", 0) == 0 ||
                          k.rfind("contacts.", 0) == 0 || k.rfind("outputs.", 0) == 0 || k.rfind("events.", 0) == 0 ||
                          k.rfind("coordinates.", 0) == 0;
    if (defining && std::holds_alternative<std::string>(e.value)) key += k + "=" + std::get<std::string>(e.value) + "\n";
    if (k.rfind("parameters.", 0) == 0) key += k + "\n";
  }
  // The order of the coordinates and parameters (the file's) matters too.
  for (const auto& s : {"coordinates", "parameters", "constraints", "contacts", "outputs", "events"})
    for (const auto& n : ordered(sc, s, s == std::string("coordinates") || s == std::string("parameters") ? "" : "x"))
      key += std::string(s) + ":" + n + "\n";
  return key;
}

struct DerivedModel {
  std::shared_ptr<symbolic::CompiledKernels> lib;
  symbolic::Derivation flags;  ///< without its kernels
  SetupTimes setup;
};

/// The derivation and the compiled kernels of a model, once per process for each model text; the compiled
/// library is cached on disk under the same text, so a run that finds it derives nothing.
DerivedModel derived_model(const std::string& key, const symbolic::LagrangeModel& m, const Scenario& sc) {
  static std::mutex mutex;
  static std::map<std::string, DerivedModel> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  DerivedModel out;
  try {
    out.lib = symbolic::CompiledKernels::find(key);
    if (out.lib) {
      out.flags = symbolic::derivation_flags(m);
    } else {
      out.flags = symbolic::derive(m);
      out.setup.derive_seconds = out.flags.seconds;
      const auto generate_start = std::chrono::steady_clock::now();
      const std::string source = symbolic::generate_source(out.flags.kernels, m.inputs());
      out.setup.generate_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - generate_start).count();
      out.lib = symbolic::CompiledKernels::load(source, key);
    }
  } catch (const IoError&) {
    throw;  // an unsafe or unwritable model cache: exit 4
  } catch (const symbolic::CompileError& e) {
    throw InputError(sc.origin("model"), e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(sc.origin("model"), std::string("the model uses an operation rollsim cannot compile: ") + e.what());
  } catch (const std::exception& e) {
    throw InputError(sc.origin("model"), std::string("deriving the equations of motion failed: ") + e.what());
  }
  out.setup.compile_seconds = out.lib->compile_seconds();
  out.setup.from_cache = out.lib->from_cache();
  out.setup.library = out.lib->library_path();
  out.flags.kernels.clear();
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, out);
  return out;
}

std::vector<ContactSpec> contact_specs(const symbolic::LagrangeModel& m) {
  std::vector<ContactSpec> v;
  GiNaC::exmap at_rest;
  for (const auto& qd : m.qd) at_rest[qd] = 0;
  for (const auto& c : m.contacts)
    v.push_back({c.name, c.unilateral, c.friction, c.friction && !c.slip_velocity.subs(at_rest).expand().is_zero()});
  return v;
}

/// The value of `e` at time 0 with the parameters' values and, if `x0` is given, the coordinates and rates of x0;
/// nothing if it depends on more than that or is not a real number.
std::optional<double> value_of(const ex& e, const symbolic::LagrangeModel& m, const Scenario& sc,
                               const std::vector<double>* x0) {
  GiNaC::exmap values{{m.t, 0}};
  for (std::size_t i = 0; i < m.p.size(); ++i) values[m.p[i]] = GiNaC::numeric(sc.real("parameters." + m.parameters[i]));
  if (x0)
    for (std::size_t i = 0; i < m.n(); ++i) {
      values[m.q[i]] = GiNaC::numeric((*x0)[i]);
      values[m.qd[i]] = GiNaC::numeric((*x0)[m.n() + i]);
    }
  try {
    const ex v = e.subs(values).evalf();
    if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real()) return std::nullopt;
    return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
  } catch (const std::exception&) {
    return std::nullopt;  // e.g. a division by zero at these values: the kernels' evaluation reports it
  }
}

/// Refuses a friction coefficient mu < 0 (or not finite) and a static one mu_s < mu of contact `key` ("contacts.NAME.")
/// with their values; `where` says when they were evaluated.
void check_friction_values(const Scenario& sc, const std::string& key, double mu, std::optional<double> mu_s,
                           const std::string& where) {
  std::ostringstream os;
  os.precision(10);
  if (!(mu >= 0) || !std::isfinite(mu)) {
    os << key << "friction_coefficient = " << sc.string(key + "friction_coefficient") << " is " << mu << where
       << "; allowed range [0, inf) (a Coulomb friction coefficient)";
    sc.fail(key + "friction_coefficient", os.str());
  }
  if (mu_s && (!(*mu_s >= mu) || !std::isfinite(*mu_s))) {
    os << key << "static_friction_coefficient = " << sc.string(key + "static_friction_coefficient") << " is " << *mu_s
       << where << "; allowed range [" << mu << ", inf): at least the sliding coefficient friction_coefficient = " << mu;
    sc.fail(key + "static_friction_coefficient", os.str());
  }
}

/// A friction coefficient that depends on the parameters only, checked as soon as it is read.
void check_friction_at_load(const Scenario& sc, const symbolic::LagrangeModel& m, const std::string& key,
                            const symbolic::LagrangeModel::Contact& c) {
  const auto mu = value_of(c.friction_coefficient, m, sc, nullptr);
  if (!mu) return;  // it depends on the state: checked at the initial state
  const bool has_static = sc.values.count(key + "static_friction_coefficient") && !sc.is_default(key + "static_friction_coefficient");
  check_friction_values(sc, key, *mu, has_static ? value_of(c.static_friction_coefficient, m, sc, nullptr) : std::nullopt, "");
}

/// The friction coefficients of contact `key` at the initial state x0, mu as the kernels evaluate it.
void check_friction_at_start(const Scenario& sc, const symbolic::LagrangeModel& m, const std::string& key, double mu,
                             const ex& static_mu, const std::vector<double>& x0) {
  const bool has_static = sc.values.count(key + "static_friction_coefficient") && !sc.is_default(key + "static_friction_coefficient");
  check_friction_values(sc, key, mu, has_static ? value_of(static_mu, m, sc, &x0) : std::nullopt, " at the initial state");
}

/// The contacts at the initial state: no gap below zero, no approach at zero gap, restitutions in [0, 1].
void check_contacts_at_start(const Scenario& sc, const Compiled& c, const symbolic::LagrangeModel& m,
                             const std::vector<double>& x0, const ContactSettings& settings) {
  Scratch& w = scratch(c);
  c.contacts(fill(c, w, 0.0, x0.data(), 0.0), w.out.data());
  const std::size_t n = c.n, stride = symbolic::KernelNames::contact_stride(n);
  for (std::size_t k = 0; k < c.n_contacts; ++k) {
    const double* o = w.out.data() + k * stride;
    const std::string key = "contacts." + m.contacts[k].name + ".";
    std::ostringstream os;
    os.precision(10);
    if (m.contacts[k].friction)
      check_friction_at_start(sc, m, key, o[4 + 2 * n], m.contacts[k].static_friction_coefficient, x0);
    if (!m.contacts[k].unilateral) continue;
    double gd = 0;
    for (std::size_t i = 0; i < n; ++i) gd += o[1 + i] * x0[n + i];
    if (o[0] < -settings.gap_tolerance) {
      os << "the gap of contact " << m.contacts[k].name << " is " << o[0] << " at the initial state (allowed: >= -"
         << settings.gap_tolerance << ", nonsmooth.gap_tolerance): the bodies overlap; change [initial]";
      sc.fail(key + "gap", os.str());
    }
    if (o[0] <= settings.gap_tolerance && gd < -settings.rest_speed()) {
      os << "contact " << m.contacts[k].name << " starts at zero gap approaching at g' = " << gd
         << " (allowed: >= -" << settings.rest_speed() << "): start just above the surface, or with g' >= 0";
      sc.fail(key + "gap", os.str());
    }
    const double e = o[5 + 2 * n];
    if (!(e >= 0 && e <= 1)) {
      os << "restitution e = " << e << " of contact " << m.contacts[k].name << " is outside [0, 1]";
      sc.fail(key + "restitution", os.str());
    }
  }
}

/// The constraints' gradients G = dC/dq at the initial state must be independent: otherwise the multipliers are not
/// determined and the DAE solver's initial condition fails without saying why. G's column j is C' at the rate e_j
/// less C' at rate 0 (C' = G q' + dC/dt is affine in the rates); each row is scaled to unit length, so that a
/// constraint written twice with different factors is seen as the same one.
void check_constraints_independent(const Scenario& sc, const Compiled& c, const std::vector<double>& x0) {
  const std::size_t n = c.n, nc = c.nc;
  if (!nc || !c.constraints) return;
  Scratch& w = scratch(c);
  std::vector<double> x(x0.begin(), x0.begin() + static_cast<std::ptrdiff_t>(2 * n)), base(2 * nc), col(2 * nc);
  for (std::size_t i = 0; i < n; ++i) x[n + i] = 0.0;
  c.constraints(fill(c, w, 0.0, x.data(), 0.0), base.data());
  Eigen::MatrixXd G(static_cast<Eigen::Index>(nc), static_cast<Eigen::Index>(n));
  for (std::size_t j = 0; j < n; ++j) {
    x[n + j] = 1.0;
    c.constraints(fill(c, w, 0.0, x.data(), 0.0), col.data());
    x[n + j] = 0.0;
    for (std::size_t k = 0; k < nc; ++k)
      G(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = col[nc + k] - base[nc + k];
  }
  for (std::size_t k = 0; k < nc; ++k) {
    const double norm = G.row(static_cast<Eigen::Index>(k)).norm();
    if (!(norm > 0) || !std::isfinite(norm))
      sc.fail("constraints." + c.constraint_names[k] + ".expression",
              "the gradient dC/dq of constraint " + c.constraint_names[k] + " is " +
                  (std::isfinite(norm) ? "zero" : "not finite") +
                  " at the initial state, so its multiplier is not determined (a constraint written as a square, such "
                  "as (x^2 + y^2 - l^2)^2, has a zero gradient on its own surface): write it so that its gradient is "
                  "not zero there");
    G.row(static_cast<Eigen::Index>(k)) /= norm;
  }
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(G, Eigen::ComputeFullU);
  const auto& sv = svd.singularValues();
  Eigen::Index rank = 0;
  for (Eigen::Index i = 0; i < sv.size(); ++i)
    if (sv(i) > 1e-8) ++rank;
  if (rank == static_cast<Eigen::Index>(nc)) return;
  // A left null vector of G: the constraints with a weight in it are the dependent ones.
  const Eigen::VectorXd u = svd.matrixU().col(static_cast<Eigen::Index>(nc) - 1);
  std::vector<std::size_t> dependent;
  for (std::size_t k = 0; k < nc; ++k)
    if (std::abs(u(static_cast<Eigen::Index>(k))) > 1e-6) dependent.push_back(k);
  std::ostringstream os;
  os.precision(3);
  os << "the constraints";
  for (std::size_t i = 0; i < dependent.size(); ++i)
    os << (i == 0 ? " " : i + 1 == dependent.size() ? " and " : ", ") << c.constraint_names[dependent[i]];
  os << " are dependent at the initial state: their gradients dC/dq are linearly dependent (" << nc
     << " constraints of rank " << rank << ", " << n << " coordinates; smallest singular value of the gradients scaled "
     << "to unit length " << (sv.size() < static_cast<Eigen::Index>(nc) ? 0.0 : sv.minCoeff())
     << "), so their multipliers are not determined; remove the redundant constraint, or start where they are independent";
  sc.fail("constraints." + c.constraint_names[dependent.back()] + ".expression", os.str());
}

std::unique_ptr<HybridSystem> make_system_unlocked(const Scenario& sc) {
  auto c = std::make_shared<Compiled>();
  symbolic::LagrangeModel m;
  m.parameters = ordered(sc, "parameters");
  m.coordinates = ordered(sc, "coordinates");
  if (m.coordinates.empty()) {
    // At the first key that presumes coordinates ([initial], [initial_rates], [lagrangian]), else at `model`.
    std::string at = "model";
    for (const auto& [k, e] : sc.values)
      if (!e.defaulted && (k.rfind("initial.", 0) == 0 || k.rfind("initial_rates.", 0) == 0 || k.rfind("lagrangian.", 0) == 0) &&
          (at == "model" || std::tie(e.origin.line, e.origin.column) < std::tie(sc.values.at(at).origin.line, sc.values.at(at).origin.column)))
        at = k;
    sc.fail(at, "a user model needs [coordinates]: the scenario has no [coordinates] table; name each generalized "
                "coordinate with its unit, e.g. [coordinates] x = \"m\"" +
                    (at == "model" ? std::string() : " (" + at + " refers to coordinates)"));
  }
  for (const auto& section : {"parameters", "coordinates"})
    for (const auto& name : section == std::string("parameters") ? m.parameters : m.coordinates) {
      const std::string key = std::string(section) + "." + name;
      if (!is_identifier(name))
        sc.fail(key, "'" + name + "' is not a valid name: use letters, digits and _, not starting with a digit");
      if (reserved_names().count(name))
        sc.fail(key, "'" + name + "' is reserved (t is time, pi the constant, and function names); choose another name");
    }
  for (const auto& q : m.coordinates)
    if (std::find(m.parameters.begin(), m.parameters.end(), q) != m.parameters.end())
      sc.fail("coordinates." + q, "'" + q + "' is both a coordinate and a parameter (parameters." + q + "); rename one");
  const auto constraints = ordered(sc, "constraints", "expression");
  m.make_symbols(constraints.size());

  Reader rd{sc, {}};
  rd.names.symbols["t"] = m.t;
  for (std::size_t i = 0; i < m.parameters.size(); ++i) rd.names.symbols[m.parameters[i]] = m.p[i];
  for (std::size_t i = 0; i < m.coordinates.size(); ++i) {
    rd.names.symbols[m.coordinates[i]] = m.q[i];
    rd.names.rates[m.coordinates[i]] = m.qd[i];
    rd.names.accelerations[m.coordinates[i]] = m.a[i];
  }
  const std::string no_rates_v = "the potential V(t, q) depends on coordinates only; rate-dependent terms belong in "
                                 "the kinetic energy or in [lagrangian] forces";
  m.kinetic = rd.parse("lagrangian.kinetic");
  m.potential = rd.parse("lagrangian.potential", false, no_rates_v);
  for (const auto& q : m.coordinates) m.forces.push_back(rd.parse("lagrangian.forces." + q));

  // Bodies: T += 1/2 m (x'^2 + y'^2) + 1/2 I angle'^2, V += m g y.
  std::vector<std::string> body_keys;
  for (const auto& [k, e] : sc.values)
    if (k.rfind("bodies.", 0) == 0 && k.size() > 5 && k.compare(k.size() - 5, 5, ".mass") == 0) body_keys.push_back(k);
  for (const auto& mass_key : body_keys) {
    const std::string b = mass_key.substr(0, mass_key.size() - 5);
    const std::string no_rates = "a body's mass, inertia and position depend on (t, q) only";
    const ex mass = rd.parse(mass_key, false, no_rates);
    const ex inertia = rd.parse(b + ".inertia", false, no_rates);
    const ex x = rd.parse(b + ".x", false, no_rates), y = rd.parse(b + ".y", false, no_rates);
    const ex angle = rd.parse(b + ".angle", false, no_rates);
    auto rate = [&](const ex& e) {
      ex r = symbolic::d(e, m.t);
      for (std::size_t i = 0; i < m.n(); ++i) r += symbolic::d(e, m.q[i]) * m.qd[i];
      return r;
    };
    const ex xd = rate(x), yd = rate(y), wd = rate(angle);
    m.kinetic += GiNaC::numeric(1, 2) * mass * (xd * xd + yd * yd) + GiNaC::numeric(1, 2) * inertia * wd * wd;
    if (!y.is_zero()) {
      auto g = rd.names.symbols.find("g");
      if (g == rd.names.symbols.end())
        sc.fail(b + ".y", "a body with a height needs the gravitational acceleration as parameters.g (gravity along -y)");
      m.potential += mass * g->second * y;
    }
  }

  for (const auto& name : constraints) {
    const std::string key = "constraints." + name + ".expression";
    m.constraint_names.push_back(name);
    m.constraints.push_back(rd.parse(key, false, "holonomic constraints g(t, q) = 0 depend on coordinates only"));
  }
  // Contacts: one with a given normal force and no gap is the Filippov form (has_contact); any other set goes
  // to the contact engine (m.contacts).
  const auto contacts = ordered(sc, "contacts", "x");
  auto present = [&](const std::string& key) { return sc.values.count(key) && !sc.values.at(key).defaulted; };
  // With constraints, every contact goes to the contact engine, which holds the constraints too.
  // The Filippov construction sticks while the friction needed stays within mu N, the sliding bound: a static
  // coefficient takes the single contact to the contact engine, whose sticking bound is its own.
  const bool filippov_form = contacts.size() == 1 && !present("contacts." + contacts[0] + ".gap") &&
                             !present("contacts." + contacts[0] + ".static_friction_coefficient") && constraints.empty();
  for (const auto& name : contacts) {
    const std::string k = "contacts." + name + ".";
    if (!is_identifier(name))
      sc.fail(k + (present(k + "gap") ? "gap" : "slip_velocity"),
              "'" + name + "' is not a valid contact name: use letters, digits and _, not starting with a digit");
    symbolic::LagrangeModel::Contact c;
    c.name = name;
    c.unilateral = present(k + "gap");
    c.friction = present(k + "slip_velocity");
    const std::string first = c.unilateral ? "gap" : c.friction ? "slip_velocity" : "normal_force";
    if (!c.unilateral && !present(k + "normal_force"))
      sc.fail(k + first, "contact " + name + " needs either a gap (a unilateral contact, its normal force computed) "
                         "or a given normal_force");
    if (c.unilateral && present(k + "normal_force"))
      sc.fail(k + "normal_force", "contact " + name + " has a gap, so its normal force is computed: remove normal_force");
    if (!c.unilateral && !c.friction)
      sc.fail(k + "normal_force", "contact " + name + " has neither a gap nor a slip velocity: it would do nothing");
    if (c.friction != present(k + "friction_coefficient"))
      sc.fail(k + (c.friction ? "slip_velocity" : "friction_coefficient"),
              "contact " + name + ": slip_velocity and friction_coefficient come together (Coulomb friction)");
    if (present(k + "static_friction_coefficient") && !present(k + "friction_coefficient"))
      sc.fail(k + "static_friction_coefficient", "contact " + name + ": static_friction_coefficient bounds the sticking "
                                                 "friction of a contact with friction: it needs slip_velocity and "
                                                 "friction_coefficient (the sliding coefficient mu, mu_s >= mu)");
    if (!c.unilateral && present(k + "restitution"))
      sc.fail(k + "restitution", "contact " + name + ": restitution applies to a contact with a gap (an impact)");
    if (c.unilateral) {
      c.gap = rd.parse(k + "gap", false, "a gap g(q) depends on coordinates only");
      if (c.gap.has(m.t)) sc.fail(k + "gap", "the gap must not depend on t explicitly (a fixed surface)");
      c.restitution = rd.parse(k + "restitution");
      c.normal_force = 0;
    } else {
      c.gap = 0;
      c.restitution = 0;
      c.normal_force = rd.parse(k + "normal_force");
    }
    if (c.friction) {
      c.slip_velocity = rd.parse(k + "slip_velocity");
      if (!linear_in(c.slip_velocity, m.qd))
        sc.fail(k + "slip_velocity", k + "slip_velocity = \"" + sc.string(k + "slip_velocity") +
                                         "\": the slip velocity must be linear in the rates der(q) (w = J(q) der(q) + w0(q))");
      if (c.slip_velocity.has(m.t))
        sc.fail(k + "slip_velocity", "the slip velocity must not depend on t explicitly (the switching surface is fixed)");
      c.friction_coefficient = rd.parse(k + "friction_coefficient");
      c.static_friction_coefficient =
          present(k + "static_friction_coefficient") ? rd.parse(k + "static_friction_coefficient") : c.friction_coefficient;
      check_friction_at_load(sc, m, k, c);
    } else {
      c.slip_velocity = 0;
      c.friction_coefficient = 0;
      c.static_friction_coefficient = 0;
    }
    if (filippov_form) {
      m.has_contact = true;
      m.slip_velocity = c.slip_velocity;
      m.normal_force = c.normal_force;
      m.friction_coefficient = c.friction_coefficient;
    } else {
      m.contacts.push_back(c);
    }
  }
  if (m.contacts.size() > 15)
    sc.fail("contacts." + contacts[15] + ".gap", "at most 15 contacts per model are supported; this model declares " +
                                                    std::to_string(contacts.size()));
  for (const auto& o : ordered(sc, "outputs", "expression")) {
    const std::string k = "outputs." + o + ".";
    m.outputs.push_back(rd.parse(k + "expression", true, "", true));
    c->user_outputs.push_back({o, sc.string(k + "unit"), sc.string(k + "description")});
  }
  for (const auto& e : ordered(sc, "events", "when")) {
    const std::string k = "events." + e + ".";
    m.events.push_back(rd.parse(k + "when", true, "", true));
    const std::string dir = sc.string(k + "direction");
    if (m.has_contact && (e == "switching_surface" || e == "sigma_plus" || e == "sigma_minus"))
      sc.fail(k + "when", "the event name '" + e + "' is the contact's own witness; choose another name");
    for (const auto& spec : contact_specs(m))
      for (const auto& w : ContactEngine::witness_names(spec))
        if (e == w) sc.fail(k + "when", "the event name '" + e + "' is a witness of contact " + spec.name + "; choose another name");
    c->events.push_back({e, dir == "rising" ? 1 : dir == "falling" ? -1 : 0, sc.string(k + "action") == "stop"});
  }

  // Names must not collide with the built-in signals.
  {
    std::set<std::string> taken;
    Compiled probe;
    probe.n = m.n();
    probe.coordinates = m.coordinates;
    probe.units.assign(m.n(), "");
    probe.has_contact = m.has_contact;
    probe.constraint_names = m.constraint_names;
    for (const auto& s : state_signals(probe)) taken.insert(s.name);
    for (const auto& s : output_signals(probe)) taken.insert(s.name);
    for (const auto& s : {"work_forces", "dissipated_friction", "work_explicit_time", "work_constraints"}) taken.insert(s);
    for (const auto& s : ContactEngine::engine_states(true, true)) taken.insert(s.name);
    for (const auto& s : ContactEngine::engine_outputs(contact_specs(m))) taken.insert(s.name);
    // A constraint's multiplier (lambda_NAME) must not take a coordinate's or a built-in signal's name.
    for (const auto& n : m.constraint_names)
      if (taken.count("lambda_" + n))
        sc.fail("constraints." + n + ".expression", "constraint " + n + " would name its multiplier 'lambda_" + n +
                                                        "', which another signal has; rename the constraint");
    for (const auto& n : m.constraint_names) taken.insert("lambda_" + n);
    for (const auto& o : c->user_outputs)
      if (taken.count(o.name)) sc.fail("outputs." + o.name + ".expression", "the output name '" + o.name + "' is taken by a built-in signal; choose another");
  }

  // The derivation and the compiled kernels depend on the model's text only, not on parameter values or the
  // start: runs in one process (sweep points, growth runs) share them.
  const std::string model_key = model_text_key(sc) + KernelNames::layout + "\n";
  const DerivedModel dm = derived_model(model_key, m, sc);
  c->lib = dm.lib;
  c->setup = dm.setup;
  const symbolic::Derivation& dv = dm.flags;

  const symbolic::InputLayout lay(m);
  c->n = m.n();
  c->np = m.p.size();
  c->nc = m.constraints.size();
  c->n_extra = dv.n_extra;
  c->n_user_outputs = m.outputs.size();
  c->n_events = m.events.size();
  c->n_contacts = m.contacts.size();
  c->n_dae_extra = c->nc && !c->n_contacts ? (dv.has_forces ? 1 : 0) + (dv.explicit_time ? 1 : 0) + 1 : 0;
  c->has_contact = m.has_contact;
  c->has_forces = dv.has_forces;
  c->explicit_time = dv.explicit_time;
  c->friction_dissipates = dv.friction_dissipates;
  c->coordinates = m.coordinates;
  for (const auto& q : m.coordinates) c->units.push_back(sc.string("coordinates." + q));
  c->constraint_names = m.constraint_names;
  for (const auto& p : m.parameters) c->p.push_back(sc.real("parameters." + p));
  if (c->nc && contacts.empty()) c->alpha = sc.real("dae.stabilization_rate");
  c->in_size = lay.size;
  c->in_a = lay.a;
  c->in_p = lay.p;
  c->in_lambda = lay.lambda;
  c->in_s = lay.s;
  c->in_alpha = lay.alpha;
  const auto& lib = *c->lib;
  c->dyn = lib.get(KernelNames::dyn);
  c->jac = lib.get(KernelNames::jac);
  c->extra = lib.get(KernelNames::extra);
  c->energy = lib.get(KernelNames::energy);
  c->outputs = lib.get(KernelNames::outputs);
  c->outputs_jac = lib.get(KernelNames::outputs_jac);
  c->witnesses = lib.get(KernelNames::events);
  if (c->has_contact) c->contact = lib.get(KernelNames::contact);
  if (c->n_contacts) c->contacts = lib.get(KernelNames::contacts);
  if (c->nc) c->constraints = lib.get(KernelNames::constraints);
  if (c->nc && c->n_contacts) c->contact_constraints = lib.get(KernelNames::contact_constraints);
  if (c->nc && !c->n_contacts) {
    c->dae = lib.get(KernelNames::dae);
    c->dae_jac = lib.get(KernelNames::dae_jac);
    c->dae_extra = lib.get(KernelNames::dae_extra);
    c->dae_extra_jac = lib.get(KernelNames::dae_extra_jac);
  }

  // The initial state, and the checks at it.
  std::vector<double> q0;
  for (const auto& q : m.coordinates) q0.push_back(sc.real("initial." + q));
  std::vector<double> x0(2 * c->n);
  for (std::size_t i = 0; i < c->n; ++i) {
    x0[i] = q0[i];
    x0[c->n + i] = sc.real("initial_rates." + m.coordinates[i]);
  }
  {
    Scratch& w = scratch(*c);
    c->dyn(fill(*c, w, 0.0, x0.data(), 0.0), w.dyn.data());
    const auto n = static_cast<Eigen::Index>(c->n);
    Eigen::MatrixXd M(n, n);
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) M(i, j) = w.dyn[static_cast<std::size_t>(i + n * j)];
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(M);
    const auto& sv = svd.singularValues();
    const double smax = sv.maxCoeff(), smin = sv.minCoeff();
    if (!std::isfinite(smax) || !(smin > 1e-12 * smax)) {
      std::ostringstream os;
      os.precision(6);
      os << "the mass matrix d2T/dder(q)2 is singular at the initial state (singular values from " << smax << " down to "
         << smin << ")";
      const std::string key = sc.string("lagrangian.kinetic") != "0" || body_keys.empty() ? "lagrangian.kinetic" : body_keys.front();
      // The coordinate that moves without inertia: the largest component of the right singular vector of the
      // smallest singular value. Whether its kinetic term d2T/dder(q_i)2 is zero everywhere, or only here (a chart
      // singular at this point, such as the spherical pendulum's azimuth at the pole), tells the remedy.
      if (std::isfinite(smax)) {
        Eigen::JacobiSVD<Eigen::MatrixXd> full(M, Eigen::ComputeFullV);
        Eigen::Index i = 0;
        full.matrixV().col(n - 1).cwiseAbs().maxCoeff(&i);
        const std::string& q = m.coordinates[static_cast<std::size_t>(i)];
        const ex mii = symbolic::d(symbolic::d(m.kinetic, m.qd[static_cast<std::size_t>(i)]), m.qd[static_cast<std::size_t>(i)]);
        if (M(i, i) > 1e-12 * smax) {
          // Every coordinate has inertia of its own, but a combination of rates has none.
          os << ": the combination of rates";
          const Eigen::VectorXd nv = full.matrixV().col(n - 1);
          for (Eigen::Index j = 0; j < n; ++j)
            if (std::abs(nv(j)) > 1e-6) os << " " << (nv(j) >= 0 ? "+" : "-") << std::abs(nv(j)) << " der(" << m.coordinates[static_cast<std::size_t>(j)] << ")";
          os << " has no inertia: the kinetic energy depends on these rates through fewer combinations than "
             << "coordinates; give every coordinate a kinetic energy term of its own, or remove one";
        } else if (!mii.normal().is_zero())
          os << " (coordinate " << q << ": its kinetic term vanishes there; the coordinates are singular at this point, "
             << "like a spherical pendulum at the pole): start away from it or choose other coordinates";
        else
          os << ": coordinate " << q << " has no inertia (d2T/dder(" << q << ")2 = 0 everywhere); give every coordinate "
             << "a kinetic energy term";
      } else {
        os << ": give every coordinate a kinetic energy term";
      }
      sc.fail(key, os.str());
    }
  }
  if (c->nc) {
    Scratch& w = scratch(*c);
    std::vector<double> cons(2 * c->nc);
    double* in = fill(*c, w, 0.0, x0.data(), 0.0);
    c->constraints(in, cons.data());
    for (std::size_t k = 0; k < c->nc; ++k) {
      double largest = 1.0;  // the scale of the coordinates
      for (std::size_t i = 0; i < c->n; ++i) largest = std::max(largest, std::abs(x0[i]));
      const double scale = 1e-9 * largest;
      if (std::abs(cons[k]) > scale || std::abs(cons[c->nc + k]) > scale) {
        std::ostringstream os;
        os.precision(10);
        os << "constraint " << m.constraint_names[k] << " is violated at the initial state: residual " << cons[k]
           << ", its rate " << cons[c->nc + k] << " (allowed: |residual| <= " << scale
           << "); give [initial] and [initial_rates] values that satisfy it";
        sc.fail("constraints." + m.constraint_names[k] + ".expression", os.str());
      }
    }
    check_constraints_independent(sc, *c, x0);
  }
  if (c->nc && !c->n_contacts) {
    x0.resize(2 * c->n + c->nc + c->n_dae_extra, 0.0);
    auto sys = std::make_unique<ConstrainedUserSystem>(c, x0);
    std::vector<double> xd(x0.size()), lam(c->nc);
    sys->consistent(0.0, x0.data(), xd.data(), lam.data());
    for (std::size_t k = 0; k < c->nc; ++k) x0[2 * c->n + k] = lam[k];
    return std::make_unique<ConstrainedUserSystem>(c, x0);
  }
  x0.resize(2 * c->n + c->n_extra, 0.0);
  if (c->has_contact) {
    if (const auto mu = value_of(m.friction_coefficient, m, sc, &x0))
      check_friction_at_start(sc, m, "contacts." + contacts.front() + ".", *mu, m.friction_coefficient, x0);
    return std::make_unique<ContactSystem>(c, x0);
  }
  if (c->n_contacts) {
    const ContactSettings settings = contact_settings_from(sc);
    check_contacts_at_start(sc, *c, m, x0, settings);
    return std::make_unique<UserContactSystem>(c, x0, contact_specs(m), settings, m.constraint_names);
  }
  return std::make_unique<SmoothSystem>(c, x0);
}

/// GiNaC is not thread-safe (its expressions share reference-counted nodes, its numbers included), and sweep
/// threads build their points' systems concurrently: every use of GiNaC, from parsing to the destruction of the
/// last expression, happens under this lock. The systems built use only the compiled kernels.
std::unique_ptr<HybridSystem> make_system(const Scenario& sc) {
  static std::mutex ginac;
  std::lock_guard<std::mutex> lock(ginac);
  return make_system_unlocked(sc);
}

}  // namespace

ModelEntry model_entry() {
  ModelEntry e;
  e.name = "lagrangian";
  e.description = "a model written in the scenario: Lagrangian, bodies, forces, constraints, one Coulomb contact";
  e.schema = schema;
  e.make_system = make_system;
  return e;
}

}  // namespace rollsim::lagrangian
