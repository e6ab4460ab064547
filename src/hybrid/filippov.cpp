#include "rollsim/hybrid/filippov.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "rollsim/core/error.hpp"

namespace rollsim {

namespace {

double dot_n(const double* a, const double* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) { return dot_n(a.data(), b.data(), a.size()); }

/// Per-thread scratch for ∇H and F±: sized once, so that evaluating σ± or F0 (every right-hand side in the
/// sliding mode, every witness) does not allocate.
struct FieldScratch {
  std::vector<double> g, fp, fm;
  /// For the rates along F0 (which call sigmas(), so they need their own): F0 and the two displaced states.
  std::vector<double> f, xa, xb;
  void resize(size_t n) {
    if (g.size() != n) {
      for (auto* v : {&g, &fp, &fm, &f, &xa, &xb}) v->assign(n, 0.0);
    }
  }
};

/// Inlined at each use (every witness, rate and sliding right-hand side): a call of its own cost a sweep of the disk
/// with dopri5 about 1 % of its instructions.
[[gnu::always_inline]] inline FieldScratch& scratch(size_t n) {
  thread_local FieldScratch s;
  if (s.g.size() != n) [[unlikely]]
    s.resize(n);
  return s;
}

}  // namespace

char filippov_symbol(int mode) { return mode > 0 ? '+' : (mode < 0 ? '-' : '0'); }

std::string FilippovSystem::mode_name(int mode) const {
  if (mode == kPlus) return "+1 (H > 0)";
  if (mode == kMinus) return "-1 (H < 0)";
  return "0 (sliding on H = 0)";
}

void FilippovSystem::project_to_surface(double t, double* x) const {
  const size_t n = size();
  std::vector<double> g(n);
  double h = switching(t, x);
  for (int it = 0; it < 8 && h != 0.0; ++it) {
    switching_gradient(t, x, g.data());
    const double gg = dot(g, g);
    if (!(gg > 0)) break;
    std::vector<double> trial(x, x + n);
    for (size_t i = 0; i < n; ++i) trial[i] -= h * g[i] / gg;
    const double h_new = switching(t, trial.data());
    if (!(std::abs(h_new) < std::abs(h))) break;
    std::copy(trial.begin(), trial.end(), x);
    h = h_new;
  }
}

void FilippovSystem::sigmas(double t, const double* x, double& sp, double& sm) const {
  FieldScratch& s = scratch(size());
  auto &g = s.g, &fp = s.fp, &fm = s.fm;
  switching_gradient(t, x, g.data());
  field_plus(t, x, fp.data());
  field_minus(t, x, fm.data());
  sp = dot(g, fp);
  sm = dot(g, fm);
}

void FilippovSystem::sliding_field(double t, const double* x, double* f) const {
  const size_t n = size();
  FieldScratch& s = scratch(n);
  auto &g = s.g, &fp = s.fp, &fm = s.fm;
  switching_gradient(t, x, g.data());
  field_plus(t, x, fp.data());
  field_minus(t, x, fm.data());
  const double sp = dot(g, fp), sm = dot(g, fm);
  const double d = sm - sp;  // > 0 on the attracting part of Σ
  for (size_t i = 0; i < n; ++i) f[i] = (sm * fp[i] - sp * fm[i]) / d;
}

void FilippovSystem::sigma_rates(double t, const double* x, double& rp, double& rm) const {
  const size_t n = size();
  FieldScratch& s = scratch(n);
  auto &f = s.f, &xp = s.xa, &xm = s.xb;
  sliding_field(t, x, f.data());
  const double d = flow_step(x, f.data(), n, 1e-7);
  if (d == 0) {
    rp = rm = 0;
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    xp[i] = x[i] + d * f[i];
    xm[i] = x[i] - d * f[i];
  }
  double spp, smp, spm, smm;
  sigmas(t + d, xp.data(), spp, smp);
  sigmas(t - d, xm.data(), spm, smm);
  rp = (spp - spm) / (2 * d);
  rm = (smp - smm) / (2 * d);
}

int FilippovSystem::sigma_trend(double t, const double* x, int which) const {
  double rp, rm;
  sigma_rates(t, x, rp, rm);
  double rate = which > 0 ? rp : rm;
  if (rate == 0) {
    // Tangent to first order: the rate a short step along F0 later (about 1e-6 of the state's size) decides.
    const size_t n = size();
    std::vector<double> f(n), x1(x, x + n);
    sliding_field(t, x, f.data());
    const double d = flow_step(x, f.data(), n, 1e-6);
    if (d == 0) return 0;
    for (size_t i = 0; i < n; ++i) x1[i] += d * f[i];
    sigma_rates(t + d, x1.data(), rp, rm);
    rate = which > 0 ? rp : rm;
  }
  return rate > 0 ? 1 : (rate < 0 ? -1 : 0);
}

int FilippovSystem::classify_initial(double t, const double* x) const {
  const double h = switching(t, x);
  if (h > 0) return kPlus;
  if (h < 0) return kMinus;
  double sp, sm;
  sigmas(t, x, sp, sm);
  if (sp < 0 && sm > 0) return kSliding;
  // On a fold (the boundary of the attracting part): slide if the vanishing σ moves to its attracting sign
  // along the sliding flow; else take the side the fields give.
  if (sp == 0 && sm > 0 && sigma_trend(t, x, +1) < 0) return kSliding;
  if (sm == 0 && sp < 0 && sigma_trend(t, x, -1) > 0) return kSliding;
  if (sp >= 0 && sm >= 0 && (sp > 0 || sm > 0)) return kPlus;
  if (sp <= 0 && sm <= 0 && (sp < 0 || sm < 0)) return kMinus;
  std::ostringstream os;
  os.precision(10);
  os << "the initial state lies on the switching surface H = 0 where forward motion is not unique (sigma+ = " << sp
     << ", sigma- = " << sm << "); start off the surface";
  throw InputError(os.str());
}

void FilippovSystem::rhs(double t, const double* x, int mode, double* xdot) const {
  if (mode == kPlus)
    field_plus(t, x, xdot);
  else if (mode == kMinus)
    field_minus(t, x, xdot);
  else
    sliding_field(t, x, xdot);
}

bool FilippovSystem::jacobian(double t, const double* x, int mode, double* J) const {
  if (mode == kPlus) return jacobian_plus(t, x, J);
  if (mode == kMinus) return jacobian_minus(t, x, J);
  // Mode 0: difference quotients of F0, used only when the model provides Jacobians for F± (CVODE then calls
  // this for every mode).
  const size_t n = size();
  std::vector<double> probe(n * n);
  if (!jacobian_plus(t, x, probe.data())) return false;
  std::vector<double> xp(x, x + n), f0(n), f1(n);
  sliding_field(t, x, f0.data());
  for (size_t j = 0; j < n; ++j) {
    const double dx = 1e-7 * std::max(1.0, std::abs(x[j]));
    xp[j] = x[j] + dx;
    sliding_field(t, xp.data(), f1.data());
    xp[j] = x[j];
    for (size_t i = 0; i < n; ++i) J[i + n * j] = (f1[i] - f0[i]) / dx;
  }
  return true;
}

const std::vector<Witness>& FilippovSystem::mode_witnesses(int mode) {
  static const std::vector<Witness> plus{{kSwitchingWitness, -1, false, true}};
  static const std::vector<Witness> minus{{kSwitchingWitness, +1, false, true}};
  static const std::vector<Witness> sliding{{kSigmaPlusWitness, +1, false, true},
                                            {kSigmaMinusWitness, -1, false, true}};
  return mode == kPlus ? plus : (mode == kMinus ? minus : sliding);
}

void FilippovSystem::witness_rates(double t, const double* x, const double* xdot, int mode, double* gdot) const {
  if (mode == kPlus || mode == kMinus) {
    // dH/dt = ∇H·x', and x' = F± in mode ±: σ± without evaluating the two fields again.
    FieldScratch& s = scratch(size());
    switching_gradient(t, x, s.g.data());
    gdot[0] = dot_n(s.g.data(), xdot, size());
    return;
  }
  sigma_rates(t, x, gdot[0], gdot[1]);
}

RegionCheck FilippovSystem::region_check(double t, const double* x, int mode, const double* err) const {
  // The witnesses' signs (m H >= 0 in mode m; σ+ <= 0 <= σ- when sliding), then the sliding strip; the
  // tolerances and the words are worked out only for a state on the wrong side.
  if (mode == kPlus || mode == kMinus) {
    if (!(-mode * switching(t, x) > 0)) return {};
    return WitnessSystem::region_check(t, x, mode, err);
  }
  double sp, sm;
  sigmas(t, x, sp, sm);
  RegionCheck c;
  if (sp > 0 || sm < 0) c = WitnessSystem::region_check(t, x, mode, err);
  const double h = std::abs(switching(t, x));
  if (h > 0) {
    // Checked at every step that slides: no allocation, and the rule's words only for a state outside the strip.
    const size_t n = size();
    FieldScratch& s = scratch(n);
    switching_gradient(t, x, s.g.data());
    double tolerance = 0;
    for (size_t i = 0; i < n; ++i) tolerance += std::abs(s.g[i]) * err[i];
    if (c.rule.empty() || h - tolerance > c.excess - c.tolerance) {
      c.excess = h;
      c.tolerance = tolerance;
      c.rule = c.violated() ? "|H| within the sliding strip in mode " + mode_name(mode) : std::string();
    }
  }
  return c;
}

void FilippovSystem::witness_values(double t, const double* x, int mode, double* g) const {
  if (mode == kPlus || mode == kMinus) {
    g[0] = switching(t, x);
    return;
  }
  sigmas(t, x, g[0], g[1]);
}

EventOutcome FilippovSystem::on_event(double t, double* x, int mode, const std::string& witness, int) const {
  EventOutcome out;
  out.new_mode = mode;
  if (mode == kPlus || mode == kMinus) {
    double sp, sm;
    sigmas(t, x, sp, sm);
    // m s_arr <= 0: the arriving side's field points at Σ; m s_opp > 0: so does the other side's (attracting).
    const double m = mode;
    const double s_arr = mode == kPlus ? sp : sm, s_opp = mode == kPlus ? sm : sp;
    if (m * s_arr > 0) {
      // The arriving field already points away again: a grazing touch (only by rounding), or repelling.
      if (m * s_opp < 0) {
        out.kind = "repelling";
        out.terminal = true;
      } else {
        out.kind = "graze";
      }
    } else if (m * s_opp > 0 || (s_opp == 0 && s_arr != 0 && m * sigma_trend(t, x, -mode) > 0)) {
      // Attracting, or arriving at a fold whose other field turns to point at Σ as the sliding flow moves on.
      out.kind = "stick";
      out.new_mode = kSliding;
      project_to_surface(t, x);
      out.state_changed = true;
    } else if (s_arr == 0 && s_opp == 0) {
      out.kind = "repelling";  // both fields tangent: forward motion not unique
      out.terminal = true;
    } else {
      out.kind = crossing_kind();
      out.new_mode = -mode;
    }
  } else {
    // Leaving Σ: σ+ rose through 0 (F+ now points into H > 0), or σ- fell through 0.
    out.kind = "slip";
    if (witness != kSigmaPlusWitness && witness != kSigmaMinusWitness)
      throw std::logic_error("Filippov engine: no witness " + witness + " in the sliding mode");
    out.new_mode = witness == kSigmaPlusWitness ? kPlus : kMinus;
  }
  return out;
}

void FilippovSystem::event_details(double t, const double* x, int, const std::string&,
                                   std::map<std::string, double>& extra) const {
  double sp, sm;
  sigmas(t, x, sp, sm);
  extra["sigma_plus"] = sp;
  extra["sigma_minus"] = sm;
  extra["residual"] = std::abs(switching(t, x));
}

namespace {

/// The engine's part of the summary (FilippovRecord), then the model's.
class FilippovSummarizer final : public Summarizer {
 public:
  explicit FilippovSummarizer(const FilippovSystem& sys)
      : crossing_(sys.crossing_kind()),
        legend_(sys.symbol_legend()),
        sliding_(sys.mode_name(FilippovSystem::kSliding)),
        physics_(sys.make_physics_summarizer(record_)) {}

  void on_point(double t, const double* x, const double* y, int mode) override {
    if (record_.symbols.empty()) record_.symbols += filippov_symbol(mode);
    if (physics_) physics_->on_point(t, x, y, mode);
  }
  void on_event(double t, const std::string& kind, int before, int after, const double* x) override {
    // Compared as strings (the lengths first), not with literals (a length and a compare of bytes per test).
    static const std::string stick = "stick", slip = "slip", repelling = "repelling";
    if (after != before) record_.symbols += filippov_symbol(after);
    if (kind == stick) ++record_.n_stick;
    if (kind == slip) ++record_.n_slip;
    if (kind == crossing_) ++record_.n_crossing;
    if (kind == repelling) ++record_.n_repelling;
    if (physics_) physics_->on_event(t, kind, before, after, x);
  }
  void on_tolerances(double rtol, double atol, bool exact) override {
    if (physics_) physics_->on_tolerances(rtol, atol, exact);
  }
  // The engine's items need no outputs: the model's summarizer decides.
  void select(const std::vector<std::string>& keys) override {
    if (physics_) physics_->select(keys);
  }
  bool reads_outputs() const override { return physics_ && physics_->reads_outputs(); }
  /// The symbols come from the first point and the events: a sample adds none.
  bool reads_samples() const override { return physics_ && physics_->reads_samples(); }
  std::vector<std::size_t> output_columns() const override {
    return physics_ ? physics_->output_columns() : std::vector<std::size_t>{};
  }
  std::vector<std::string> conditional_keys() const override {
    return physics_ ? physics_->conditional_keys() : std::vector<std::string>{};
  }
  std::vector<SummaryItem> items() const override {
    auto count = [](const std::string& key, long n, const std::string& label) {
      return SummaryItem{key, static_cast<double>(n), "", "", label, true};
    };
    // Each item built in place (an initializer list would copy every string once more: a sweep asks per point).
    std::vector<SummaryItem> physics = physics_ ? physics_->items() : std::vector<SummaryItem>{};
    std::vector<SummaryItem> v;
    v.reserve(5 + physics.size());
    v.push_back({"symbols", 0, record_.symbols, "", "modes visited (" + legend_ + ")", false});
    v.push_back(count("n_stick", record_.n_stick, "stick events (into mode " + sliding_ + ")"));
    v.push_back(count("n_slip", record_.n_slip, "slip events (out of mode " + sliding_ + ")"));
    v.push_back(count("n_" + crossing_, record_.n_crossing, crossing_ + " events (across H = 0)"));
    v.push_back(count("n_repelling", record_.n_repelling, "repelling points reached (run stopped)"));
    for (auto& item : physics) v.push_back(std::move(item));
    return v;
  }

 private:
  FilippovRecord record_;  // before physics_: the model's summarizer holds a reference to it
  std::string crossing_, legend_, sliding_;
  std::unique_ptr<Summarizer> physics_;
};

}  // namespace

std::unique_ptr<Summarizer> FilippovSystem::make_summarizer() const {
  return std::make_unique<FilippovSummarizer>(*this);
}

}  // namespace rollsim
