// The generic Filippov engine: its classification rules on a toy system, and a second Filippov system (relay
// feedback) against its closed form (matrix exponentials per mode, event times by bisection).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include "support.hpp"
#include "disk_closed_form.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/filippov.hpp"
#include "rollsim/models/relay_feedback.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/simulate.hpp"

using namespace rollsim;

namespace {

/// Constant fields F+ = (1, a), F- = (1, b) on the plane, H = x2 (or a circle H = x1² + x2² - 1 when curved).
class Toy final : public FilippovSystem {
 public:
  double a = -1, b = 1;
  bool curved = false;
  std::string model_name() const override { return "toy"; }
  const Signals& states() const override { return s_; }
  const Signals& outputs() const override { return o_; }
  void initial_state(double* x) const override { x[0] = x[1] = 0; }
  void field_plus(double, const double*, double* f) const override {
    f[0] = 1;
    f[1] = a;
  }
  void field_minus(double, const double*, double* f) const override {
    f[0] = 1;
    f[1] = b;
  }
  double switching(double, const double* x) const override { return curved ? x[0] * x[0] + x[1] * x[1] - 1 : x[1]; }
  void switching_gradient(double, const double* x, double* g) const override {
    g[0] = curved ? 2 * x[0] : 0;
    g[1] = curved ? 2 * x[1] : 1;
  }
  void compute_outputs(double, const double*, int, double*) const override {}
  std::unique_ptr<Summarizer> make_summarizer() const override { return nullptr; }

 private:
  Signals s_{{"x1", "1", ""}, {"x2", "1", ""}}, o_;
};

}  // namespace

TEST_CASE("filippov: classification at the switching surface") {
  Toy toy;
  double x[2] = {0.3, 1e-13};
  SUBCASE("attracting: stick, projected onto H = 0") {
    toy.a = -1;
    toy.b = 2;
    const auto o = toy.on_event(0, x, +1, "switching_surface", -1);
    CHECK(o.kind == "stick");
    CHECK(o.new_mode == 0);
    CHECK(o.state_changed);
    CHECK(x[1] == 0.0);
    // The record's values, at the state after the handler (computed only when an observer records the event).
    std::map<std::string, double> extra;
    toy.event_details(0, x, +1, "switching_surface", extra);
    CHECK(extra.at("sigma_plus") == -1);
    CHECK(extra.at("sigma_minus") == 2);
    CHECK(extra.at("residual") == 0.0);
    // F0 = (σ- F+ - σ+ F-)/(σ- - σ+) = (2 (1, -1) + (1, 2)) / 3 = (1, 0)
    double f[2];
    toy.sliding_field(0, x, f);
    CHECK(f[0] == doctest::Approx(1.0));
    CHECK(f[1] == 0.0);
  }
  SUBCASE("crossing both ways, state kept") {
    toy.a = -1;
    toy.b = -3;
    auto o = toy.on_event(0, x, +1, "switching_surface", -1);
    CHECK(o.kind == "crossing");
    CHECK(o.new_mode == -1);
    CHECK_FALSE(o.state_changed);
    CHECK(x[1] == 1e-13);
    toy.a = 2;
    toy.b = 1;
    o = toy.on_event(0, x, -1, "switching_surface", +1);
    CHECK(o.kind == "crossing");
    CHECK(o.new_mode == +1);
  }
  SUBCASE("repelling: a terminal, flagged event; never a guess") {
    toy.a = 1;
    toy.b = -1;
    const auto o = toy.on_event(0, x, +1, "switching_surface", -1);
    CHECK(o.kind == "repelling");
    CHECK(o.terminal);
    CHECK(o.new_mode == +1);
    double x0[2] = {0, 0};
    CHECK_THROWS_AS(toy.classify_initial(0, x0), InputError);
  }
  SUBCASE("grazing by rounding: logged, mode kept") {
    toy.a = 1e-16;  // arrived from above, but F+ points away again
    toy.b = 1;
    const auto o = toy.on_event(0, x, +1, "switching_surface", -1);
    CHECK(o.kind == "graze");
    CHECK(o.new_mode == +1);
  }
  SUBCASE("sliding exits") {
    auto o = toy.on_event(0, x, 0, "sigma_plus", +1);
    CHECK(o.kind == "slip");
    CHECK(o.new_mode == +1);
    o = toy.on_event(0, x, 0, "sigma_minus", -1);
    CHECK(o.new_mode == -1);
  }
  SUBCASE("witnesses: H in the regions with the direction towards Σ; σ± (not H) while sliding") {
    auto w = toy.witnesses(+1);
    REQUIRE(w.size() == 1);
    CHECK(w[0].direction == -1);
    w = toy.witnesses(-1);
    CHECK(w[0].direction == +1);
    w = toy.witnesses(0);
    REQUIRE(w.size() == 2);
    CHECK(w[0].name == "sigma_plus");
    CHECK(w[0].direction == +1);
    CHECK(w[1].name == "sigma_minus");
    CHECK(w[1].direction == -1);
    CHECK(toy.event_extras() == std::vector<std::string>{"sigma_plus", "sigma_minus", "residual"});
  }
  SUBCASE("initial modes") {
    toy.a = -1;
    toy.b = 1;
    double on[2] = {0.5, 0}, above[2] = {0, 0.1}, below[2] = {0, -0.1};
    CHECK(toy.classify_initial(0, on) == 0);
    CHECK(toy.classify_initial(0, above) == 1);
    CHECK(toy.classify_initial(0, below) == -1);
    toy.a = 1;
    toy.b = 2;
    CHECK(toy.classify_initial(0, on) == 1);
  }
  SUBCASE("projection onto a curved surface") {
    toy.curved = true;
    double p[2] = {0.6, 0.81};
    toy.project_to_surface(0, p);
    CHECK(std::abs(toy.switching(0, p)) < 1e-15);
  }
}

// ---- relay feedback against its closed form -------------------------------------------------------------

namespace {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

struct RelayCf {
  Mat A;
  Vec B, C;
  double CB;
  explicit RelayCf(const relay_feedback::Params& p) : A(p.n, p.n), B(p.n), C(p.n) {
    for (int i = 0; i < p.n; ++i) {
      B[i] = p.B[static_cast<size_t>(i)];
      C[i] = p.C[static_cast<size_t>(i)];
      for (int k = 0; k < p.n; ++k) A(i, k) = p.A[static_cast<size_t>(i * p.n + k)];
    }
    CB = C.dot(B);
  }
  /// The matrix of x -> x(s) in mode m, on the augmented state (x, 1).
  Mat flow(int m, double s) const {
    const long n = A.rows();
    Mat Z = Mat::Zero(n + 1, n + 1);
    if (m == 0) {
      Z.topLeftCorner(n, n) = (Mat::Identity(n, n) - B * C.transpose() / CB) * A;
    } else {
      Z.topLeftCorner(n, n) = A;
      Z.topRightCorner(n, 1) = -m * B;  // u = -sgn(Cx)
    }
    return (Z * s).exp();
  }
  Vec apply(const Mat& F, const Vec& x) const {
    Vec xa(x.size() + 1);
    xa << x, 1.0;
    return (F * xa).head(x.size());
  }
  /// true once the segment in mode m has ended
  bool ended(int m, const Vec& x) const {
    if (m != 0) return m * C.dot(x) <= 0;
    const double cax = C.dot(A * x);
    return cax - CB >= 0 || cax + CB <= 0;
  }
};

disk_test::CfRun relay_closed_form(const relay_feedback::Params& p, Vec x, double t_end) {
  const RelayCf cf(p);
  disk_test::CfRun r;
  const double h = cf.C.dot(x);
  int m = h > 0 ? 1 : (h < 0 ? -1 : 0);
  r.symbols += disk_test::sym(m);
  double t = 0;
  const double ds = 1e-3;
  while (t < t_end) {
    // Scan with a fixed step matrix, then bisect with the exact flow from the segment start.
    const Mat step = cf.flow(m, ds);
    Vec xs = x;
    double s = 0;
    bool found = false;
    while (t + s < t_end) {
      xs = cf.apply(step, xs);
      s += ds;
      if (cf.ended(m, xs)) {
        found = true;
        break;
      }
    }
    if (!found) break;
    double lo = s - ds, hi = s;
    while (hi - lo > 1e-14) {
      const double mid = 0.5 * (lo + hi);
      if (cf.ended(m, cf.apply(cf.flow(m, mid), x))) hi = mid;
      else lo = mid;
    }
    x = cf.apply(cf.flow(m, hi), x);
    t += hi;
    if (t > t_end) break;
    const int before = m;
    const double cax = cf.C.dot(cf.A * x), sp = cax - cf.CB, sm = cax + cf.CB;
    std::string kind;
    if (m == 0) {
      m = sp >= 0 ? 1 : -1;
      kind = "slip";
    } else if (sp < 0 && sm > 0) {
      m = 0;
      kind = "stick";
      x -= cf.C * (cf.C.dot(x) / cf.C.squaredNorm());
    } else {
      m = -m;
      kind = "crossing";
    }
    r.events.push_back({t, kind, before, m, x[0], x.size() > 1 ? x[1] : 0.0});
    r.symbols += disk_test::sym(m);
  }
  return r;
}

}  // namespace

TEST_CASE("filippov: relay feedback against the matrix-exponential closed form") {
  struct Case {
    relay_feedback::Params p;
    std::vector<double> x0;
    double t_end;
    double rtol;
  };
  // The first case slides on an unstable sliding manifold (growth rate 0.5 per unit time) with omega = 25; at
  // rtol 1e-10 its event times agree to ~1.2e-8, at rtol 1e-12 to ~1e-10.
  const std::vector<Case> cases{
      {relay_feedback::third_order(0.05, 25, 1, 0.5), {0.1, 0, 0}, 2.0, 1e-12},   // the scenario: sliding onsets and exits
      {relay_feedback::third_order(0.05, 1, 1, 0.2), {1, 0, 0}, 40.0, 1e-10},   // sliding, then a crossing-only cycle
      {relay_feedback::third_order(0.2, 2, 0.5, -1), {1, 0, 0}, 20.0, 1e-10},   // stable sliding to rest
  };
  for (const auto& c : cases) {
    CAPTURE(c.t_end);
    const auto cf = relay_closed_form(c.p, Eigen::Map<const Vec>(c.x0.data(), 3), c.t_end);
    auto sys = relay_feedback::make_system(c.p, c.x0);
    SimulationOptions opt;
    opt.t_end = c.t_end;
    opt.output_dt = 0.001;
    opt.solver.rtol = c.rtol;
    opt.solver.atol = c.rtol * 1e-2;
    disk_test::Recorder rec;
    simulate(*sys, opt, {&rec});
    REQUIRE(rec.result.status == "ok");
    CHECK(rec.symbols() == cf.symbols);
    REQUIRE(rec.events.size() == cf.events.size());
    double max_dt = 0, max_h = 0;
    for (size_t i = 0; i < cf.events.size(); ++i) {
      CHECK(rec.events[i].kind == cf.events[i].kind);
      max_dt = std::max(max_dt, std::abs(rec.events[i].t - cf.events[i].t));
    }
    for (const auto& s : rec.samples)
      if (s.mode == 0) max_h = std::max(max_h, std::abs(s.x[0]));  // C x = x1 stays on Σ while sliding
    CHECK(max_dt < 1e-8);
    CHECK(max_h == 0.0);
    MESSAGE("relay (t_end " << c.t_end << "): " << cf.events.size() << " events " << cf.symbols.substr(0, 40)
                            << ", max |dt| = " << max_dt);
  }
}

TEST_CASE("filippov: relay_feedback scenario and input errors") {
  const Scenario sc = load_scenario(rollsim::test::source_dir() + "/scenarios/relay_feedback.toml");
  auto sys = find_model("relay_feedback")->make_system(sc);
  disk_test::Recorder rec;
  simulate(*sys, simulation_options(sc), {&rec});
  REQUIRE(rec.result.status == "ok");
  CHECK(rec.item("n_stick")->number > 5);
  CHECK(rec.item("n_slip")->number > 5);
  const std::string bad = "model = \"relay_feedback\"\n[parameters]\nA = [1.0, 2.0]\nB = [1.0]\nC = [1.0]\n[initial]\nx = [0.5]\n";
  try {
    find_model("relay_feedback")->make_system(load_scenario_text(bad, "bad.toml"));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bad.toml:3:") != std::string::npos);
  }
}
