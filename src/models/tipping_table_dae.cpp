#include "rollsim/models/tipping_table_dae.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "rollsim/analysis/compare.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/models/constrained_mechanics.hpp"

namespace rollsim::tipping_table {

namespace {

constexpr int kQ = BodyModel::nq;
static_assert(mechanics::state_size<BodyModel>() == kDaeStates);

enum State { kTh1, kTh2, kPx, kPy, kW1, kW2, kVx, kVy, kLn, kLt };

const Signals& dae_state_signals() {
  const Signals& ode = state_signals();  // theta1, theta2, omega1, omega2
  static const Signals s{
      ode[0],
      ode[1],
      {"wheel_x", "m", "wheel centre, horizontal, from the pivot"},
      {"wheel_y", "m", "wheel centre, vertical, from the pivot"},
      ode[2],
      ode[3],
      Signal{"wheel_vx", "m/s", "wheel centre velocity, horizontal"}.as(Role::Rate),
      Signal{"wheel_vy", "m/s", "wheel centre velocity, vertical"}.as(Role::Rate),
      {"lambda_normal", "N", "multiplier of the contact constraint (= normal_force)"},
      {"lambda_tangential", "N", "multiplier of the rolling constraint (= tangential_force)"},
  };
  return s;
}

/// The minimal formulation's outputs (every one, by construction), then the constraint residuals.
const Outputs& dae_outputs() {
  using O = Outputs;
  static const O list = tipping_table::outputs().extended({
      O::output("constraint_normal", "m", "contact constraint residual -px sin theta1 + py cos theta1 - r (drift)",
                [](const auto& c) { return c.constraint_normal; }),
      O::output("constraint_rolling", "m",
                "rolling constraint residual r (phi - phi_support) - (s - s_support) of the ideal rolling element "
                "(drift)",
                [](const auto& c) { return c.constraint_rolling; }),
  });
  return list;
}

/// The table's summary, plus the largest constraint residuals.
class DaeSummarizer final : public Summarizer {
 public:
  explicit DaeSummarizer(std::unique_ptr<Summarizer> base)
      : base_(std::move(base)),
        c_normal_(dae_outputs().index("constraint_normal")),
        c_rolling_(dae_outputs().index("constraint_rolling")) {}
  void on_point(double t, const double* x, const double* y, int mode) override {
    base_->on_point(t, x, y, mode);
    max_n_ = std::max(max_n_, std::abs(y[c_normal_]));
    max_r_ = std::max(max_r_, std::abs(y[c_rolling_]));
  }
  void on_event(double t, const std::string& kind, int before, int after, const double* x) override {
    base_->on_event(t, kind, before, after, x);
  }
  std::vector<SummaryItem> items() const override {
    auto v = base_->items();
    v.push_back({"constraint_normal_max", max_n_, "", "m", "largest contact constraint residual", false});
    v.push_back({"constraint_rolling_max", max_r_, "", "m", "largest rolling constraint residual", false});
    return v;
  }

 private:
  std::unique_ptr<Summarizer> base_;
  std::size_t c_normal_, c_rolling_;
  double max_n_ = 0, max_r_ = 0;
};

class TableDaeSystem final : public mechanics::ConstrainedSystem<BodyModel>,
                             public WitnessSystem,
                             public RollingTableScene {
 public:
  TableDaeSystem(const Params& p, const double* x0, const EventActions& a, const DaeOptions& o)
      : ConstrainedSystem(BodyModel{p}, o.stabilization_rate),
        RollingTableScene(p, dae_state_signals(), dae_outputs().signals()),
        a_(a) {
    std::copy(x0, x0 + kStates, x0_minimal_);
    body_state(p, o, x0, x0_);
    witnesses_.push_back({"table_edge", -1, a.stop_at_edge});
    witnesses_.push_back({"lift_off", -1, a.stop_at_lift_off});
    if (p.friction_coefficient) witnesses_.push_back({"slip_onset", -1, a.stop_at_slip_onset});
  }
  std::string model_name() const override { return "tipping_table"; }
  const Signals& states() const override { return dae_state_signals(); }
  const Signals& outputs() const override { return dae_outputs().signals(); }
  void initial_state(double* x0) const override { std::copy(x0_, x0_ + kDaeStates, x0); }


  std::vector<Witness> witnesses(int) const override { return witnesses_; }
  std::size_t witness_count(int) const override { return witnesses_.size(); }

  void witness_values(double, const double* x, int, double* g) const override {
    const double s = contact(x);
    const double half = 0.5 * m_.p.table_length;
    g[0] = half * half - s * s;
    g[1] = x[kLn];
    if (m_.p.friction_coefficient) g[2] = *m_.p.friction_coefficient * x[kLn] - std::abs(x[kLt]);
  }

  void compute_outputs(double, const double* x, int, double* y) const override {
    const Params& p = m_.p;
    OutputContext<double> c;
    c.s = contact(x);
    c.normal = x[kLn];
    c.tangential = x[kLt];
    c.kinetic = 0.5 * p.table_inertia * x[kW1] * x[kW1] + 0.5 * p.wheel_inertia * x[kW2] * x[kW2] +
                0.5 * p.wheel_mass * (x[kVx] * x[kVx] + x[kVy] * x[kVy]);
    c.potential = p.wheel_mass * p.gravity * x[kPy];
    c.input_work = p.table_torque * (x[kTh1] - x0_[kTh1]);
    double r[2];
    m_.constraints(x, r);
    c.constraint_normal = r[0];
    c.constraint_rolling = -r[1];  // the element's own residual r (phi - phi_s) - (s - s_s)
    dae_outputs().compute(c, y);
  }

  std::unique_ptr<Summarizer> make_summarizer() const override {
    return std::make_unique<DaeSummarizer>(
        make_table_summarizer(m_.p, {kTh1, kTh2, kW1, kW2}, outputs()));
  }

 private:
  double contact(const double* x) const { return x[kPx] * std::cos(x[kTh1]) + x[kPy] * std::sin(x[kTh1]); }

  EventActions a_;
  double x0_minimal_[kStates];
  double x0_[kDaeStates];
  std::vector<Witness> witnesses_;
};

}  // namespace

void body_state(const Params& p, const DaeOptions& o, const double* xm, double* x) {
  const double r = p.wheel_radius;
  const double th1 = xm[0], w1 = xm[2], w2 = xm[3];
  const double c1 = std::cos(th1), s1 = std::sin(th1);
  const double s = contact_position(p, xm);
  const double sd = r * (w1 - w2);
  x[kTh1] = th1;
  x[kTh2] = xm[1];
  x[kPx] = s * c1 - r * s1;  // p = s e1 + r e2
  x[kPy] = s * s1 + r * c1;
  x[kW1] = w1;
  x[kW2] = w2;
  // p' = (s' - r theta1') e1 + s theta1' e2
  x[kVx] = (sd - r * w1) * c1 - s * w1 * s1;
  x[kVy] = (sd - r * w1) * s1 + s * w1 * c1;
  mechanics::consistent_multipliers(BodyModel{p}, 0.0, o.stabilization_rate, x);
}

std::unique_ptr<HybridSystem> make_dae_system(const Params& p, const double* x0, const EventActions& actions,
                                              const DaeOptions& options) {
  return std::make_unique<TableDaeSystem>(p, x0, actions, options);
}

void append_formulation_keys(std::vector<KeySpec>& v, const std::map<std::string, std::string>& raw) {
  v.push_back(KeyVariant(formulation_parameters().key("formulation"))
                  .only_choices({"ode", "dae", "contact"})
                  .with_description("ode: minimal coordinates on CVODE; dae: body coordinates with constraints on IDA; "
                                    "contact: the wheel a free body on the table, unilateral contact with friction and "
                                    "impacts"));
  v.push_back(KeyVariant(dae_parameters().key("dae.stabilization_rate"))
                  .with_description("Baumgarte rate a of the constrained formulation: C'' + 2 a C' + a^2 C = 0"));
  for (auto& k : formulation_check_keys()) v.push_back(std::move(k));
  const auto it = raw.find("formulation");
  if (it != raw.end() && it->second == "dae")
    v.push_back(dae_solver_method_key("for formulation = \"dae\""));
}

DaeOptions dae_options_from(const Scenario& sc) { return dae_parameters().read(sc); }

}  // namespace rollsim::tipping_table
