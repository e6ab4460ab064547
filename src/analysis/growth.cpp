#include "rollsim/analysis/growth.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>

#include "rollsim/solve/simulate.hpp"

namespace rollsim {

namespace {

/// Unit round-off of double: x0 + epsilon shape is stored, and each step computed, to this relative precision.
constexpr double kRoundoff = 2.220446049250313e-16;

/// Least-squares slope of y against t.
double slope(const std::vector<double>& t, const std::vector<double>& y) {
  const double n = static_cast<double>(t.size());
  double st = 0, sy = 0, stt = 0, sty = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    st += t[i];
    sy += y[i];
    stt += t[i] * t[i];
    sty += t[i] * y[i];
  }
  return (n * sty - st * sy) / (n * stt - st * st);
}

class StateRecorder final : public Observer {
 public:
  std::vector<double> t;
  std::vector<std::vector<double>> x;
  void on_sample(double tt, const double* xx, const double*, int) override {
    t.push_back(tt);
    x.emplace_back(xx, xx + n);
  }
  void on_start(const RunInfo& info) override { n = info.system->states().size(); }
  std::size_t n = 0;
};

}  // namespace

const Parameters<GrowthOptions>& growth_parameters() {
  using O = GrowthOptions;
  static const Parameters<O> list{
      "[growth] keys",
      {
          param(&O::epsilons,
                real_list_key("growth.epsilons", "", "perturbation sizes along each mode shape (unit 2-norm eigenvector)")
                    .range(0, 1, true)),
          param(&O::tolerance,
                real_key("growth.tolerance", "", "largest relative error allowed for small epsilon").range(0, 1, true)),
          param(&O::small_epsilon,
                real_key("growth.small_epsilon", "", "epsilons up to this must meet growth.tolerance").range(0, 1, true)),
          param(&O::window_scale, real_key("growth.window_scale", "",
                                           "window length in time constants (real roots) or 2-period units (pairs)")
                                      .range(0, 100, true)),
          param(&O::rtol, real_key("growth.rtol", "", "relative tolerance of the perturbed runs").range(1e-15, 1e-3, true)),
      }};
  return list;
}

std::vector<KeySpec> growth_keys() { return growth_parameters().keys(); }

GrowthOptions growth_options(const Scenario& sc) {
  const GrowthOptions o = growth_parameters().read(sc);
  if (o.epsilons.empty()) sc.fail("growth.epsilons", "growth.epsilons is empty; give at least one epsilon in (0, 1]");
  return o;
}

GrowthResult check_growth(const SimulationOptions& base, const Linearizable& model, const LinearResult& lin,
                          const GrowthOptions& opt) {
  GrowthResult res;
  res.floor_margin = opt.floor_margin;
  res.order_points = opt.order_points;
  const auto n = lin.x0.size();
  const Eigen::MatrixXcd Vinv = lin.eig.vectors.inverse();
  const double x0_norm = lin.x0.cwiseAbs().maxCoeff();
  // One system for every perturbed start: the runs differ in their initial state only.
  const auto* system = dynamic_cast<const HybridSystem*>(&model);
  if (!system) throw std::logic_error("check_growth: the linearizable model is not a hybrid system");
  bool judged = false;
  for (Eigen::Index k = 0; k < lin.eig.values.size(); ++k) {
    const std::complex<double> lambda = lin.eig.values(k);
    const auto& row = lin.modal.rows[static_cast<std::size_t>(k)];
    if (row.oscillatory && lambda.imag() < 0) continue;  // one run per pair, from its +imag member
    if (std::abs(lambda) <= 1e-12) continue;             // a rigid-body root has no rate to measure
    const std::string label = std::to_string(k + 1) + (row.oscillatory ? ": oscillatory pair" : ": real");
    const double window = opt.window_scale * (row.oscillatory ? 2.0 * 2.0 * M_PI / std::abs(lambda.imag())
                                                              : 1.0 / std::abs(lambda.real()));
    const Eigen::VectorXd shape = lin.eig.vectors.col(k).real();
    const double q0 = std::abs((Vinv.row(k) * shape.cast<std::complex<double>>())(0));  // |q(0)| per unit epsilon
    const double vinv_norm = Vinv.row(k).cwiseAbs().sum();
    std::vector<double> log_eps, log_err;
    for (double eps : opt.epsilons) {
      GrowthRow r;
      r.mode = static_cast<int>(k + 1);
      r.label = label;
      r.epsilon = eps;
      r.predicted = lambda;
      r.window = window;
      SimulationOptions so = base;
      so.t_end = window;
      so.output_dt = window / static_cast<double>(opt.samples);
      so.solver.method = "bdf";
      so.solver.rtol = opt.rtol;
      so.solver.atol = std::max(1e-300, eps * opt.rtol * 1e-3);
      const Eigen::VectorXd x_start = lin.x0 + eps * shape;
      StateRecorder rec;
      const RunResult rr = simulate(*system, std::span<const double>(x_start.data(), static_cast<std::size_t>(n)), so, {&rec});
      const double steps = static_cast<double>(std::max(1L, rr.stats.get("n_steps")));
      const double per_step = so.solver.rtol * eps + so.solver.atol + kRoundoff * x0_norm;
      const double delta = vinv_norm * per_step / (eps * q0);
      r.floor = 2.0 * delta * std::sqrt(steps) / (std::abs(lambda) * window);
      if (!rr.completed()) {
        r.status = rr.status + ": " + rr.message;
        if (res.run_failure.empty()) res.run_failure = rr.status;
      }
      else if (rr.t_final < window * (1 - 1e-12)) r.status = "stopped early by " + rr.termination;
      // Fit over the samples (the event instants are samples too; they are on the same curve).
      std::vector<double> t, logmag, phase;
      double prev_arg = 0, unwrap = 0;
      for (std::size_t s = 0; s < rec.t.size(); ++s) {
        Eigen::VectorXd dx(n);
        for (Eigen::Index i = 0; i < n; ++i) dx(i) = rec.x[s][static_cast<std::size_t>(i)] - lin.x0(i);
        const std::complex<double> q = (Vinv.row(k) * dx.cast<std::complex<double>>())(0);
        if (std::abs(q) == 0) continue;
        const double arg = std::arg(q);
        if (!t.empty()) {
          double d = arg - prev_arg;
          while (d > M_PI) d -= 2 * M_PI;
          while (d < -M_PI) d += 2 * M_PI;
          unwrap += d;
        } else {
          unwrap = arg;
        }
        prev_arg = arg;
        t.push_back(rec.t[s]);
        logmag.push_back(std::log(std::abs(q)));
        phase.push_back(unwrap);
      }
      if (t.size() < 10) {
        if (r.status == "ok") r.status = "too few samples to fit (" + std::to_string(t.size()) + ")";
        r.measured = NAN;
        r.rel_error = NAN;
      } else {
        r.measured = {slope(t, logmag), row.oscillatory ? slope(t, phase) : 0.0};
        r.rel_error = std::abs(r.measured - lambda) / std::abs(lambda);
      }
      if (eps <= opt.small_epsilon) {
        if (r.floor > opt.tolerance) {
          if (r.status == "ok") r.status = "not judged: the integration floor is above growth.tolerance";
        } else {
          judged = true;
          if (!(r.rel_error <= opt.tolerance)) {
            res.passed = false;
            char b[200];
            std::snprintf(b, sizeof b, "mode %s, epsilon %.1e: relative error %.3e above growth.tolerance %.1e",
                          label.c_str(), eps, r.rel_error, opt.tolerance);
            res.problems.push_back(b);
          }
        }
      }
      if (r.status == "ok" && r.rel_error > opt.floor_margin * r.floor) {
        log_eps.push_back(std::log(eps));
        log_err.push_back(std::log(r.rel_error));
      }
      res.rows.push_back(r);
    }
    GrowthOrder ord;
    ord.label = label;
    // The asymptotic order: over the smallest epsilons above the floor (the epsilons are in the given order;
    // sort them so "smallest" holds for any order), since larger ones add terms of higher order.
    std::vector<std::size_t> idx(log_eps.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return log_eps[a] < log_eps[b]; });
    if (idx.size() > static_cast<std::size_t>(opt.order_points)) idx.resize(static_cast<std::size_t>(opt.order_points));
    std::vector<double> le, lr;
    for (auto i : idx) {
      le.push_back(log_eps[i]);
      lr.push_back(log_err[i]);
    }
    ord.points = static_cast<int>(le.size());
    if (le.size() >= 2) ord.order = slope(le, lr);
    res.orders.push_back(ord);
  }
  if (!judged) {
    res.passed = false;
    res.problems.push_back("no row with epsilon <= growth.small_epsilon has an integration floor below "
                           "growth.tolerance; lower growth.rtol or raise growth.small_epsilon");
  }
  return res;
}

}  // namespace rollsim
