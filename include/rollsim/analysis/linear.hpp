#pragma once
/// \file Linear analysis of smooth models: exact Jacobians by forward automatic differentiation,
/// state-space linearisation, eigen/modal analysis (EoM-style table), transmission zeros,
/// steady-state gain, frequency response, and the IFToMM wheel-on-tipping-table helpers.
///
/// Conventions
/// - Time in s, angular rates in rad/s, frequencies in Hz = (rad/s) / (2 pi).
/// - A state-space model is xdot = A x + B u, y = C x + D u (n states, m inputs, p outputs).
/// - Eigenvalue order (`sort_eigenvalues`, used everywhere below):
///     1. oscillatory roots (see `Tolerances`) as conjugate pairs, pairs by ascending |lambda|
///        (ties: descending real part), each pair with +imag first, then -imag;
///     2. then every non-oscillatory root by descending real part (ties: descending imag part).
///   For the IFToMM benchmark this is EoM's table order: +6.79i, -6.79i, +4.09, -4.09.
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

namespace rollsim::linear {

template <class S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// The automatic-differentiation scalar: a value and a dynamic-size gradient.
using AD = Eigen::AutoDiffScalar<Eigen::VectorXd>;

namespace detail {
/// Copy the value and gradient of an AD result into row `row` of `jac` and entry `row` of `value`.
/// A component that does not depend on the inputs may carry an empty gradient; it gives a zero row.
inline void store_row(const AD& y, Eigen::Index row, Eigen::MatrixXd& jac, Eigen::VectorXd& value) {
  value(row) = y.value();
  const auto& d = y.derivatives();
  if (d.size() == 0) {
    jac.row(row).setZero();
  } else if (d.size() == jac.cols()) {
    jac.row(row) = d.transpose();
  } else {
    throw std::logic_error("rollsim::linear: gradient of inconsistent size in automatic differentiation");
  }
}
}  // namespace detail

/// Exact Jacobian (to round-off; forward-mode automatic differentiation, no finite differences) of
/// y = f(x) at x. `f` is a generic callable `Vec<S> f(const Vec<S>&)` (e.g. a generic lambda or a
/// template functor) that is called once with S = AD. If `value` is not null it receives f(x).
/// Returns the dim(y) x dim(x) matrix dy/dx.
template <class F>
Eigen::MatrixXd jacobian(F&& f, const Eigen::VectorXd& x, Eigen::VectorXd* value = nullptr) {
  const Eigen::Index n = x.size();
  Vec<AD> xa(n);
  for (Eigen::Index i = 0; i < n; ++i) xa(i) = AD(x(i), n, i);
  const Vec<AD> ya = f(static_cast<const Vec<AD>&>(xa));
  Eigen::MatrixXd jac(ya.size(), n);
  Eigen::VectorXd val(ya.size());
  for (Eigen::Index i = 0; i < ya.size(); ++i) detail::store_row(ya(i), i, jac, val);
  if (value) *value = val;
  return jac;
}

/// A linear time-invariant model xdot = A x + B u, y = C x + D u.
struct StateSpace {
  Eigen::MatrixXd A, B, C, D;
  /// Values at the linearisation point (filled by `linearize`): f(x0, u0) and h(x0, u0). A nonzero
  /// `f0` means the point is not an equilibrium (the caller decides whether that matters).
  Eigen::VectorXd f0, y0;
  Eigen::Index states() const { return A.rows(); }
  Eigen::Index inputs() const { return B.cols(); }
  Eigen::Index outputs() const { return C.rows(); }
  /// Throws std::invalid_argument if the four blocks do not fit together.
  void check() const;
};

/// Linearise xdot = f(x, u), y = h(x, u) about (x0, u0) with exact AD Jacobians:
/// A = df/dx, B = df/du, C = dh/dx, D = dh/du. `f` and `h` are generic callables
/// `Vec<S> (const Vec<S>& x, const Vec<S>& u)`; f must return dim(x) entries.
template <class F, class H>
StateSpace linearize(F&& f, H&& h, const Eigen::VectorXd& x0, const Eigen::VectorXd& u0) {
  const Eigen::Index n = x0.size(), m = u0.size(), nz = n + m;
  Vec<AD> xa(n), ua(m);
  for (Eigen::Index i = 0; i < n; ++i) xa(i) = AD(x0(i), nz, i);
  for (Eigen::Index j = 0; j < m; ++j) ua(j) = AD(u0(j), nz, n + j);
  const Vec<AD> fa = f(static_cast<const Vec<AD>&>(xa), static_cast<const Vec<AD>&>(ua));
  const Vec<AD> ha = h(static_cast<const Vec<AD>&>(xa), static_cast<const Vec<AD>&>(ua));
  if (fa.size() != n) throw std::invalid_argument("rollsim::linear::linearize: f(x, u) must return dim(x) entries");
  Eigen::MatrixXd jf(n, nz), jh(ha.size(), nz);
  StateSpace ss;
  ss.f0.resize(n);
  ss.y0.resize(ha.size());
  for (Eigen::Index i = 0; i < n; ++i) detail::store_row(fa(i), i, jf, ss.f0);
  for (Eigen::Index i = 0; i < ha.size(); ++i) detail::store_row(ha(i), i, jh, ss.y0);
  ss.A = jf.leftCols(n);
  ss.B = jf.rightCols(m);
  ss.C = jh.leftCols(n);
  ss.D = jh.rightCols(m);
  return ss;
}

// ---------------------------------------------------------------------------------------------
// Eigenvalues and modal table

/// Tolerances of the root classification; see `classification_rule` for the rule in words.
/// With lambda = sigma + i omega [rad/s] and thr(lambda) = abs + rel |lambda|:
///   rigid body   |lambda| <= abs
///   oscillatory  not rigid and |omega| > thr
///   real part is taken as zero when |sigma| <= thr: the mode is then "undamped";
///   damped       not rigid and sigma < -thr;   unstable  not rigid and sigma > thr.
/// `abs` is large enough for the O(sqrt(eps |A|)) scatter of a computed double zero root (a free
/// coordinate); `rel` is far above the O(eps) relative round-off of well-conditioned roots.
/// abs = rel = 0 gives plain sign tests, which reproduces EoM's counts (see `ModalCounts`).
struct Tolerances {
  double abs = 1e-6;  ///< [rad/s]
  double rel = 1e-8;  ///< [-]
};

/// The round-off floor of a computed eigenvalue's real part, in ulps of ||A||_F: `real_part_floor(A)` =
/// kRealPartFloorUlps * eps * ||A||_F [rad/s]. The QR algorithm returns the exact eigenvalues of A + E with ||E|| a
/// small multiple of eps ||A|| (a factor growing slowly with n), and a well-conditioned root moves by about ||E||:
/// a real part within the floor has no sign the computation determines (an undamped pair comes out as
/// sigma = +-1e-16). 256 ulps (5.7e-14 ||A||_F) covers that factor for the tens of states of these models, and a
/// damping ratio above 5.7e-14 ||A||_F / |lambda| is kept. ||A||_F bounds every |lambda|, so the floor is also at
/// least 256 ulps of each root.
inline constexpr double kRealPartFloorUlps = 256;
double real_part_floor(const Eigen::MatrixXd& A);

/// True if the root is oscillatory under `tol`.
bool is_oscillatory(std::complex<double> lambda, const Tolerances& tol = {});

/// Sort roots into the documented order (see the file comment). Throws std::invalid_argument if
/// the oscillatory roots cannot be paired with conjugates (the input is not from a real matrix).
std::vector<std::complex<double>> sort_eigenvalues(std::vector<std::complex<double>> roots,
                                                   const Tolerances& tol = {});

/// Eigenvalues and right eigenvectors of a real square matrix.
struct EigenResult {
  Eigen::VectorXcd values;   ///< sorted as `sort_eigenvalues`
  Eigen::MatrixXcd vectors;  ///< column k belongs to values(k): unit 2-norm, and its first
                             ///< component of largest modulus (within a relative 1e-10) is real > 0
};

/// Eigen-decomposition of A (Eigen::EigenSolver), sorted and normalised as documented above.
/// Throws std::runtime_error if the QR iteration does not converge.
EigenResult eigen_analysis(const Eigen::MatrixXd& A, const Tolerances& tol = {});

/// Stability class of a mode (a conjugate pair or one real root).
enum class Stability { Damped, Undamped, Unstable, RigidBody };

/// One row of the EoM-style table, for one root lambda = sigma + i omega.
struct ModalRow {
  std::complex<double> lambda;
  double real_rad_s = 0, imag_rad_s = 0;  ///< sigma, omega [rad/s]
  double real_hz = 0, imag_hz = 0;        ///< sigma / 2pi, omega / 2pi [Hz]
  /// |lambda| / 2pi [Hz]; NaN for non-oscillatory roots (EoM prints "-").
  double natural_frequency_hz = 0;
  /// -sigma / |lambda|; NaN if not oscillatory. A sigma within the round-off floor (`modal_table`'s
  /// `real_floor`) is taken as zero: the damping ratio is then exactly 0.
  double damping_ratio = 0;
  /// -1 / sigma [s], for every root (negative = growing, as in EoM). When sigma is zero or within the
  /// round-off floor it is +infinity: the root neither grows nor decays.
  double time_constant_s = 0;
  /// 2 pi / |omega| [s]; NaN if not oscillatory.
  double wavelength_s = 0;
  bool oscillatory = false;
  Stability stability = Stability::Damped;
};

/// Mode counts. A mode is one oscillatory conjugate pair or one non-oscillatory root (so a free
/// coordinate, a double root at zero, gives 2 rigid-body modes). Each mode is exactly one of
/// damped / undamped / unstable / rigid body, so these four add up to `modes`; `oscillatory`
/// counts the pairs among them.
///
/// Relation to EoM: EoM reports the benchmark as "1 oscillatory, 2 damped, 1 unstable, 0 rigid
/// body modes". Its roots are -9.5e-16 +- 6.79i, +4.09, -4.09; counting the pair once, that
/// summary is what plain sign tests give: the pair (real part -9.5e-16 < 0, pure round-off) and
/// the root -4.09 are its 2 "damped" modes, +4.09 is the unstable one, and there is no class for
/// a zero real part. With the default tolerances this library calls the pair undamped:
/// "1 oscillatory, 1 damped, 1 undamped, 1 unstable, 0 rigid body"; with Tolerances{0, 0} it
/// reproduces EoM's line for EoM's roots.
struct ModalCounts {
  int degrees_of_freedom = 0;  ///< n / 2 (rounded down): the model is taken as second order
  int modes = 0;
  int oscillatory = 0;
  int damped = 0;
  int undamped = 0;
  int unstable = 0;
  int rigid_body = 0;
};

struct ModalTable {
  std::vector<ModalRow> rows;  ///< one per root, in the order given to `modal_table`
  ModalCounts counts;
  double real_floor = 0;       ///< the round-off floor the table was built with [rad/s]
};

/// Build the table for the given roots (normally `eigen_analysis(A).values`, already sorted;
/// they are not re-sorted here). A real part with |sigma| <= real_floor (normally `real_part_floor(A)`;
/// 0 keeps every computed sigma, as EoM does) is taken as zero before the root is classified and its
/// damping ratio and time constant computed; the row's sigma columns keep the computed root.
/// Non-conjugated oscillatory roots are counted by their +imag member only, so a lone root with
/// negative imag part adds to no count.
ModalTable modal_table(const Eigen::VectorXcd& roots, const Tolerances& tol = {}, double real_floor = 0);

/// The classification rule in words, with the numbers of `tol` and the round-off floor, for printing.
std::string classification_rule(const Tolerances& tol = {}, double real_floor = 0);

/// One line like EoM's: "2 degrees of freedom; 1 oscillatory, 1 damped, 1 undamped, 1 unstable,
/// 0 rigid body modes".
std::string summary_line(const ModalCounts& counts);

/// Name of a stability class: "damped", "undamped", "unstable", "rigid body".
const char* to_string(Stability s);

// ---------------------------------------------------------------------------------------------
// Poles, zeros, gain

/// Transfer-function poles: the eigenvalues of A, sorted as documented.
std::vector<std::complex<double>> poles(const StateSpace& sys, const Tolerances& tol = {});

/// Transmission zeros of a square system (inputs == outputs, SISO included).
struct ZerosResult {
  std::vector<std::complex<double>> zeros;  ///< finite zeros, sorted as `sort_eigenvalues`
  /// True when the system pencil [A - sI, B; C, D] is singular for every s (normal rank below
  /// n + m, e.g. a zero transfer matrix or dependent inputs): then every s is a zero and `zeros`
  /// is empty.
  bool degenerate = false;
};

/// The finite generalized eigenvalues of the Rosenbrock pencil [A B; C D] - s [I 0; 0 0].
/// Method: exact, determinant-preserving deflation of the infinite eigenvalues (an
/// Emami-Naeini / Van Dooren-style reduction with orthogonal transformations: the invertible part
/// of D is eliminated by a Schur complement, a zero D is removed by compressing B), until D is
/// invertible; then the QZ algorithm (Eigen::GeneralizedEigenSolver) on the reduced pencil, of
/// which exactly m eigenvalues (those with the smallest |beta| / |alpha|) are infinite and are
/// dropped. Rank decisions use `rank_tolerance(sys)`.
/// Throws std::invalid_argument for a non-square system.
ZerosResult transmission_zeros(const StateSpace& sys);

/// Steady-state (DC) gain G(0) = D - C A^{-1} B, the output a constant input settles to.
struct SteadyStateGain {
  /// outputs x inputs. Where A is singular, each channel's gain is that of its minimal realization (the part
  /// of A its input reaches and its output sees); NaN in a channel where a root at s = 0 remains there (a pole
  /// at 0: a constant input drives that output without bound, so there is no steady state).
  Eigen::MatrixXd gain;
  bool a_singular = false;  ///< A is singular to working precision (a root at s = 0): rcond(A) <= n eps
  double a_rcond = 0;       ///< reciprocal condition number of A in the 2-norm (its smallest / largest singular value)
  bool exists() const;      ///< every channel has a finite gain
};

/// The gain, with a singular A reduced per channel to its minimal realization: the input's reachable subspace
/// (the smallest A-invariant subspace holding B's column) and, within it, the part the output sees, each found
/// by orthogonal steps with rank decisions at `rank_tolerance(sys)`. A root at 0 outside that part cancels (an
/// energy ledger's state, a coordinate the input does not move); one inside it is a pole at 0.
SteadyStateGain steady_state_gain(const StateSpace& sys);

/// The gain in words where A is singular (and "" where it is regular), as `rollsim linearize` prints it and
/// /linear stores it: which channels have no steady state and why, or why the gain exists all the same.
std::string steady_state_gain_note(const SteadyStateGain& g);

/// The threshold of the rank decisions of the zeros and the gain: 1e3 eps ||[A B; C D]||_F.
double rank_tolerance(const StateSpace& sys);

// ---------------------------------------------------------------------------------------------
// Frequency response

/// n frequencies from f_min to f_max [Hz], equally spaced in log10, endpoints exact.
/// n = 1 gives {f_min}. Throws std::invalid_argument unless 0 < f_min <= f_max and n >= 1.
std::vector<double> log_grid(double f_min, double f_max, std::size_t n);

/// The response of one output to one input along the grid.
struct ChannelResponse {
  int output = 0, input = 0;
  std::vector<std::complex<double>> h;  ///< H(i 2 pi f)
  std::vector<double> magnitude_db;     ///< 20 log10 |H| (-inf where H = 0)
  /// arg H [deg]: the first point is the principal value in (-180, 180]; each next point is moved by
  /// a multiple of 360 to lie within 180 of its predecessor (continuous along the grid, in grid
  /// order; only as reliable as the grid is fine near poles and zeros on the imaginary axis).
  std::vector<double> phase_deg;
};

struct FrequencyResponse {
  std::vector<double> frequency_hz;
  std::vector<ChannelResponse> channels;  ///< output-major: channels[out * inputs + in]
};

/// H(i 2 pi f) = C (i 2 pi f I - A)^{-1} B + D for every f of the grid (any order, any sign),
/// by an LU solve per frequency. At a pole on the imaginary axis the result is inf/NaN.
FrequencyResponse frequency_response(const StateSpace& sys, const std::vector<double>& frequency_hz);

// ---------------------------------------------------------------------------------------------
// IFToMM wheel on tipping table

/// Eigenvalues (1.7): s = +- sqrt(-2 g (3 r +- sqrt(2 l^2 + 9 r^2))) / l [rad/s], in the documented
/// order (imaginary pair, +i first; then the real pair, positive first). Valid only for the
/// benchmark's relations between the parameters: equal wheel and table masses (any value; the
/// mass cancels), a uniform disk wheel (J = m r^2 / 2) and a thin plate table of length l pivoted
/// at its centre (I = m l^2 / 12). Throws std::invalid_argument unless g, r, l > 0.
std::vector<std::complex<double>> iftomm_eigenvalues(double g, double r, double l);

/// The benchmark's values (1.8)-(1.9) in the documented order:
/// +6.791341869219082i, -6.791341869219082i, +4.085624112006405, -4.085624112006405.
std::vector<std::complex<double>> iftomm_benchmark_eigenvalues();

/// The benchmark's error measure: the l2 norm of (computed - benchmark) as complex vectors, after
/// sorting both lists by `sort_eigenvalues` with `tol` (so roots are matched by position in the
/// documented order). Returns +infinity if the lists differ in length.
double iftomm_error(const std::vector<std::complex<double>>& computed,
                    const std::vector<std::complex<double>>& benchmark = iftomm_benchmark_eigenvalues(),
                    const Tolerances& tol = {});

/// Plain-text results file: optionally one '#' header line, then one line per eigenvalue in the
/// given order, "<real> <imag>" in rad/s, each with 17 significant digits ("%.16e").
std::string iftomm_results_text(const std::vector<std::complex<double>>& eigenvalues, bool header = true);

}  // namespace rollsim::linear
