#include "rollsim/models/relay_feedback.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/hybrid/outputs.hpp"
#include "rollsim/hybrid/scene.hpp"
#include "rollsim/models/model_kit.hpp"

namespace rollsim::relay_feedback {

Params third_order(double zeta, double omega, double lambda, double s) {
  Params p;
  p.n = 3;
  p.A = {-(2 * zeta * omega + lambda), 1, 0, -(2 * zeta * omega * lambda + omega * omega), 0, 1, -lambda * omega * omega, 0, 0};
  p.B = {1, -2 * s, 1};
  p.C = {1, 0, 0};
  return p;
}

namespace {

/// What the relay's outputs share at one state.
template <class S>
struct OutputContext {
  S u, h;  ///< the relay output (or the equivalent control), C x
};
using Outputs = OutputList<OutputContext, double>;

const Outputs& relay_outputs() {
  using O = Outputs;
  static const O list{{
      O::output("u", "1", "relay output: -1 (Cx > 0), +1 (Cx < 0), the equivalent control -CAx/CB when sliding",
                [](const auto& c) { return c.u; }),
      O::output("switching_value", "1", "C x", [](const auto& c) { return c.h; }),
  }};
  return list;
}

/// The drawing's length scale L: the largest |C x| at the start (1 when 0); the mass's half width is kMassSize L and
/// the spring's fixed end lies 2 L to the left of the switching surface C x = 0.
constexpr double kMassSize = 0.15;

class RelaySystem final : public FilippovSystem, public SceneSystem {
 public:
  RelaySystem(const Params& p, const std::vector<double>& x0) : p_(p), x0_(x0) {
    const auto n = static_cast<size_t>(p.n);
    if (p.n < 1 || p.A.size() != n * n || p.B.size() != n || p.C.size() != n || x0.size() != n)
      throw InputError("relay_feedback: A must hold n*n, B, C and initial.x n numbers each (n = size of C)");
    for (size_t i = 0; i < n; ++i) {
      std::string name = std::to_string(i + 1);
      name.insert(name.begin(), 'x');  // (not "x" + ...: GCC 12 reports a false -Wrestrict there)
      states_.push_back({name, "1", "state component"});
    }
    const double h0 = std::abs(switching(0, x0.data()));
    length_ = h0 > 0 ? h0 : 1.0;
    const double half = kMassSize * length_;
    scene_ = {2,
              {draw::ground(draw::line("switching_surface", 2, 0, "#7f7f7f")),
               draw::ground(draw::line("wall", 2, 0, "#7f7f7f")), draw::spring("spring", "#2ca02c"),
               draw::box("mass", {half, half, half}, "#1f77b4"), draw::line("relay", 2, 0, "#d62728")}};
  }

  /// The output C x as a mass on a spring: the mass at C x (the relay switches where it crosses the vertical line
  /// x = 0), the relay's push u as an arrow from the mass's centre, L u long.
  const Scene& scene() const override { return scene_; }
  void scene_values(double, const double*, const double* y, int, double* v) const override {
    const double h = y[h_], u = y[u_], L = length_, half = kMassSize * L;
    SceneValues(v)
        .point(0, -2 * half).point(0, 2 * half)
        .point(-2 * L, -half).point(-2 * L, half)
        .spring(-2 * L, 0, h - half, 0, 0.5 * half)
        .planar_pose(h, 0, 0)
        .point(h, 0).point(h + L * u, 0);
  }
  std::string model_name() const override { return "relay_feedback"; }
  Signal time_signal() const override { return {"time", "1", "time (the units of A)"}; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return relay_outputs().signals(); }
  void initial_state(double* x) const override { std::copy(x0_.begin(), x0_.end(), x); }

  void field_plus(double, const double* x, double* f) const override { field(x, -1.0, f); }
  void field_minus(double, const double* x, double* f) const override { field(x, +1.0, f); }
  double switching(double, const double* x) const override {
    double h = 0;
    for (int i = 0; i < p_.n; ++i) h += p_.C[static_cast<size_t>(i)] * x[i];
    return h;
  }
  void switching_gradient(double, const double*, double* g) const override { std::copy(p_.C.begin(), p_.C.end(), g); }
  bool jacobian_plus(double, const double*, double* J) const override { return jac(J); }
  bool jacobian_minus(double, const double*, double* J) const override { return jac(J); }

  void compute_outputs(double t, const double* x, int mode, double* y) const override {
    OutputContext<double> c{-static_cast<double>(mode), switching(t, x)};
    if (mode == 0) {
      double sp, sm;
      sigmas(t, x, sp, sm);  // CAx - CB, CAx + CB
      const double cb = 0.5 * (sm - sp), cax = 0.5 * (sm + sp);
      c.u = -cax / cb;
    }
    relay_outputs().compute(c, y);
  }
  std::string symbol_legend() const override { return "+: Cx > 0, -: Cx < 0, 0: sliding"; }

 private:
  void field(const double* x, double u, double* f) const {
    const int n = p_.n;
    for (int i = 0; i < n; ++i) {
      double s = p_.B[static_cast<size_t>(i)] * u;
      for (int k = 0; k < n; ++k) s += p_.A[static_cast<size_t>(i * n + k)] * x[k];
      f[i] = s;
    }
  }
  bool jac(double* J) const {
    const int n = p_.n;
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) J[i + n * k] = p_.A[static_cast<size_t>(i * n + k)];
    return true;
  }

  Params p_;
  std::vector<double> x0_;
  Signals states_;
  double length_ = 1;
  Scene scene_;
  std::size_t u_ = relay_outputs().index("u"), h_ = relay_outputs().index("switching_value");
};

}  // namespace

const Parameters<Params>& parameters() {
  static const Parameters<Params> list{
      "relay_feedback parameters",
      {
          param(&Params::A, real_list_key("parameters.A", "", "system matrix A, n*n numbers, row by row").required()),
          param(&Params::B, real_list_key("parameters.B", "", "input vector B, n numbers").required()),
          param(&Params::C,
                real_list_key("parameters.C", "", "output vector C, n numbers; the relay switches on C x = 0").required()),
      }};
  return list;
}

const Parameters<InitialValues>& initial_values() {
  static const Parameters<InitialValues> list{
      "relay_feedback initial values",
      {param(&InitialValues::x, real_list_key("initial.x", "", "initial state, n numbers").required())}};
  return list;
}

namespace {

std::string list_text(const std::vector<double>& v) {
  std::ostringstream os;
  os.precision(17);
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + ']';
}

std::unique_ptr<HybridSystem> system_from(const Scenario& sc) {
  Params p = parameters().read(sc);
  p.n = static_cast<int>(p.C.size());
  const auto n = p.C.size();
  const auto x0 = initial_values().read(sc).x;
  if (n == 0) sc.fail("parameters.C", "parameters.C must not be empty");
  if (p.A.size() != n * n)
    sc.fail("parameters.A", "parameters.A holds " + std::to_string(p.A.size()) + " numbers; n*n = " + std::to_string(n * n) +
                                " are needed (n = " + std::to_string(n) + ", the size of parameters.C)");
  if (p.B.size() != n)
    sc.fail("parameters.B", "parameters.B holds " + std::to_string(p.B.size()) + " numbers; " + std::to_string(n) + " are needed");
  if (x0.size() != n)
    sc.fail("initial.x", "initial.x holds " + std::to_string(x0.size()) + " numbers; " + std::to_string(n) + " are needed");
  auto system = make_system(p, x0);
  try {
    system->initial_mode(x0.data());  // a start on the switching surface may be refused
  } catch (const InputError& e) {
    sc.fail("initial.x", std::string("initial.x = ") + list_text(x0) + ": " + e.what());
  }
  return system;
}

}  // namespace

std::unique_ptr<HybridSystem> make_system(const Params& p, const std::vector<double>& x0) {
  return std::make_unique<RelaySystem>(p, x0);
}

ModelEntry model_entry() {
  return kit::model_entry("relay_feedback",
                          "relay feedback system x' = A x + B u, u = -sgn(C x) (Filippov system with sliding)",
                          &parameters, &initial_values, system_from);
}

}  // namespace rollsim::relay_feedback
