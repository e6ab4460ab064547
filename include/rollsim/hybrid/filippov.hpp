#pragma once
/// \file A Filippov system with one switching surface Σ = {H = 0}, presented to the simulate loop as a
/// HybridSystem with an ODE and witnesses (its facets) and three modes:
///
///   mode +1  H > 0, field F+;  witness H, falling
///   mode -1  H < 0, field F-;  witness H, rising
///   mode  0  sliding on Σ with the Filippov/Utkin field F0 = (σ- F+ - σ+ F-) / (σ- - σ+), σ± = ∇H·F±;
///            witnesses σ+ (rising: F+ then points away from Σ, exit into +1) and σ- (falling: exit into -1).
///            H itself is not a witness in mode 0 (it sits at zero over the whole interval).
///
/// On reaching Σ from a region the event handler classifies the point by σ±:
///   σ+ σ- > 0         crossing: the region changes, the state is kept (kind crossing_kind(), e.g. "reversal")
///   σ+ < 0 < σ-       attracting sliding: the state is projected onto Σ, mode 0 (kind "stick")
///   σ+ > 0 > σ-       repelling: forward motion is not unique; the event "repelling" is logged and the run
///                     stops there (terminal event, RunResult::termination = "repelling"). Nothing is guessed.
///   tangencies        with m the mode arrived from: m σ_arrival <= 0 and m σ_other > 0 sticks; at a fold
///                     (σ_other = 0) it sticks if σ_other turns attracting along F0 (sigma_trend), else crosses;
///                     m σ_other < 0 crosses (σ+ = σ- = 0 stops as "repelling": not unique); an arrival field that already
///                     points away again (m σ_arrival > 0, only by rounding) is logged as "graze", mode kept.
/// Sliding ends when σ+ or σ- reaches zero (kind "slip"); the state on Σ is kept as it is (H = 0 exactly).
///
/// Restarts never re-detect the event just handled: after a crossing the state is the one CVODE returns at
/// the far side of the root bracket (H has the new region's sign, or is exactly 0); after a slip H is exactly 0.
/// A root function that is exactly zero at the restart time is deactivated by CVODE until it moves off zero
/// (cvRcheck1 in cvode.c: g_i == 0 at t0 sets gactive[i] = false, and it is re-activated at the first point
/// where g_i != 0), so the tangential departure from Σ (H = 0, H' = 0) cannot re-trigger the H witness, and no
/// time skip is used. In mode 0 the state stays on Σ exactly when H is linear in x (∇H·F0 = 0 in floating
/// point, since σ-σ+ - σ+σ- = 0); for a curved Σ it is re-projected at entry.
///
/// The self-audit (docs/audit.md): every witness bounds its mode's region, so the simulate loop locates every
/// crossing of it, grazes included, and checks at every accepted step that the state lies in its mode's region:
/// m H >= 0 in mode m = ±1, and in mode 0 |H| within the strip the integration error allows, σ+ <= 0 <= σ-.
///
/// The state vector may carry components beyond the Filippov core (e.g. an integrated dissipated energy): they
/// are ordinary components of F± and get the same convex combination in F0, and H does not depend on them.
#include <memory>
#include <string>
#include <vector>

#include "rollsim/hybrid/system.hpp"

namespace rollsim {

/// What the engine records of a run for the summary: the modes visited and the events by kind. A model's own
/// summary reads it (FilippovSystem::make_physics_summarizer).
struct FilippovRecord {
  std::string symbols;  ///< one character per mode visited, in order: '+', '-', '0' (filippov_symbol)
  long n_stick = 0, n_slip = 0, n_crossing = 0, n_repelling = 0;
};

class FilippovSystem : public OdeSystem, public WitnessSystem {
 public:
  static constexpr int kPlus = 1, kMinus = -1, kSliding = 0;
  /// The witnesses' names: H in the regions, σ+ and σ- while sliding (an integrator that finds the events itself
  /// reports them by these names, through mode_witnesses()).
  static constexpr const char* kSwitchingWitness = "switching_surface";
  static constexpr const char* kSigmaPlusWitness = "sigma_plus";
  static constexpr const char* kSigmaMinusWitness = "sigma_minus";
  /// The witnesses of a mode (witnesses() of every Filippov system).
  static const std::vector<Witness>& mode_witnesses(int mode);  ///< built once

  // ---- what a model supplies -------------------------------------------------------------------------
  /// F+(t, x) and F-(t, x): \param x dim size(); \param f out, dim size().
  virtual void field_plus(double t, const double* x, double* f) const = 0;
  virtual void field_minus(double t, const double* x, double* f) const = 0;
  /// The switching function H(t, x) and its gradient ∇H (dim size()). H must not depend on t explicitly.
  virtual double switching(double t, const double* x) const = 0;
  virtual void switching_gradient(double t, const double* x, double* grad) const = 0;
  /// Optional Jacobians of F± (column-major, dim size()²); false when not provided. Mode 0 always falls back
  /// to CVODE's difference quotients (jacobian() returns false there only if the model gives none at all).
  virtual bool jacobian_plus(double, const double*, double*) const { return false; }
  virtual bool jacobian_minus(double, const double*, double*) const { return false; }
  /// The /events kind of a crossing ("crossing" unless the model names it, e.g. "reversal").
  virtual std::string crossing_kind() const { return "crossing"; }
  /// dσ+/dt and dσ-/dt along the sliding field F0 at (t, x). Default: central differences along F0.
  virtual void sigma_rates(double t, const double* x, double& rate_plus, double& rate_minus) const;
  /// The sign (+1, -1, 0) with which σ+ (which = +1) or σ- (which = -1) changes along F0 at x: its rate, or,
  /// where that is zero, its rate a short step along F0 later. Decides the folds.
  int sigma_trend(double t, const double* x, int which) const;
  /// Put x onto Σ. Default: Newton steps along ∇H until |H| stops decreasing (exact in one step for linear H).
  virtual void project_to_surface(double t, double* x) const;
  /// The legend of the symbols string in the summary (what '+', '-' and '0' mean for the model).
  virtual std::string symbol_legend() const { return "+: H > 0, -: H < 0, 0: sliding on H = 0"; }
  /// The model's own summary items (its physics), after the engine's; the summarizer may read `record`, which
  /// the engine updates before passing each point and event on. Default: none.
  virtual std::unique_ptr<Summarizer> make_physics_summarizer(const FilippovRecord& /*record*/) const {
    return nullptr;
  }

  // ---- the engine ------------------------------------------------------------------------------------
  /// σ+ = ∇H·F+ and σ- = ∇H·F- at (t, x).
  void sigmas(double t, const double* x, double& sigma_plus, double& sigma_minus) const;
  /// F0 at (t, x) (valid where σ- - σ+ != 0).
  void sliding_field(double t, const double* x, double* f) const;
  /// The mode a state starts in: H > 0 → +1, H < 0 → -1; on Σ: attracting → 0; on the fold, the boundary of
  /// the attracting part (one σ zero, the other attracting): 0 if the sliding flow moves into the attracting
  /// part (the zero σ's rate along F0, sigma_rates(), points inwards), else the side rule; σ± both >= 0 (not both 0)
  /// → +1; both <= 0 (not both 0) → -1; repelling or σ+ = σ- = 0 → InputError (forward motion not unique).
  int classify_initial(double t, const double* x) const;

  bool has_modes() const override { return true; }
  std::string mode_name(int mode) const override;
  int initial_mode(const double* x0) const override { return classify_initial(0.0, x0); }
  void rhs(double t, const double* x, int mode, double* xdot) const override;
  bool jacobian(double t, const double* x, int mode, double* J) const override;
  std::vector<Witness> witnesses(int mode) const override { return mode_witnesses(mode); }
  std::size_t witness_count(int mode) const override { return mode_witnesses(mode).size(); }
  void witness_values(double t, const double* x, int mode, double* g) const override;
  /// Mode ±1: dH/dt = ∇H·x' (σ± = ∇H·F±, with x' = F± from the caller); mode 0: sigma_rates().
  void witness_rates(double t, const double* x, const double* xdot, int mode, double* gdot) const override;
  RegionCheck region_check(double t, const double* x, int mode, const double* err) const override;
  EventOutcome on_event(double t, double* x, int mode, const std::string& witness,
                        int crossing_direction) const override;
  /// The summary: the modes visited (key symbols) and the counts n_stick, n_slip, n_<crossing_kind()>,
  /// n_repelling, then the model's items (make_physics_summarizer()).
  std::unique_ptr<Summarizer> make_summarizer() const override;
  std::vector<std::string> event_extras() const override { return {"sigma_plus", "sigma_minus", "residual"}; }
  /// sigma_plus, sigma_minus and the residual |H| at the state after the event.
  void event_details(double t, const double* x, int mode, const std::string& witness,
                     std::map<std::string, double>& extra) const override;
};

/// '+', '-' or '0' for a Filippov mode.
char filippov_symbol(int mode);

}  // namespace rollsim
