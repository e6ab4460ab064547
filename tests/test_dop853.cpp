// solver.method = "dop853": its coefficients against the order conditions they must satisfy, and its steps and
// dense output against the closed form of the harmonic oscillator, with the order of convergence measured.
// The models' runs (the table, the disk, the relay) are in test_explicit_rk.cpp, with dopri5's.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "rollsim/solve/dop853_tableau.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

using T = dop853::Tableau;

/// sum_j w_j c_j^k over stages 0 to 11.
double moment(const double* w, int k) {
  double s = 0;
  for (int j = 0; j < 12; ++j) s += w[j] * std::pow(T::c[j], k);
  return s;
}

}  // namespace

TEST_CASE("dop853: the tableau meets the order conditions of its solution and of its two error estimates") {
  // Each stage sits at its node: sum_j a_sj = c_s, the dense output's extra stages included.
  for (int s = 1; s < 16; ++s) {
    double row = 0;
    for (int j = 0; j < s; ++j) row += T::a[s][j];
    CAPTURE(s);
    CHECK(std::abs(row - T::c[s]) < 1e-14);
    for (int j = s; j < 16; ++j) CHECK(T::a[s][j] == 0.0);  // explicit: no stage uses itself or a later one
  }
  // The solution (row 12) integrates polynomials of degree 7 exactly: sum_j b_j c_j^k = 1 / (k + 1).
  for (int k = 0; k <= 7; ++k) {
    CAPTURE(k);
    CHECK(std::abs(moment(T::a[12], k) - 1.0 / (k + 1)) < 1e-14);
  }
  // A few of the tree conditions: sum b_i a_ij c_j = 1/6, sum b_i a_ij c_j^2 = 1/12, sum b_i a_ij a_jk c_k = 1/24.
  double bac = 0, bac2 = 0, baac = 0;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < i; ++j) {
      bac += T::a[12][i] * T::a[i][j] * T::c[j];
      bac2 += T::a[12][i] * T::a[i][j] * T::c[j] * T::c[j];
      double ac = 0;
      for (int k = 0; k < j; ++k) ac += T::a[j][k] * T::c[k];
      baac += T::a[12][i] * T::a[i][j] * ac;
    }
  CHECK(std::abs(bac - 1.0 / 6) < 1e-14);
  CHECK(std::abs(bac2 - 1.0 / 12) < 1e-14);
  CHECK(std::abs(baac - 1.0 / 24) < 1e-14);
  // The error estimates are differences of an order-8 and a lower-order solution: they vanish on polynomials
  // of degree 4 (the fifth-order estimate) and 2 (the third-order one), and not on the next degree.
  for (int k = 0; k <= 4; ++k) CHECK(std::abs(moment(T::e5, k)) < 1e-14);
  CHECK(std::abs(moment(T::e5, 5)) > 1e-4);
  for (int k = 0; k <= 2; ++k) CHECK(std::abs(moment(T::e3, k)) < 1e-14);
  CHECK(std::abs(moment(T::e3, 3)) > 1e-3);
}

namespace {

struct Errors {
  double final = 0;    ///< |x - cos t| at the end
  double samples = 0;  ///< the largest |x - cos t| over the samples, which fall inside the steps
  long steps = 0;
};

/// Steps of size h (the tolerances too loose to shorten them), samples every 0.37 h.
Errors fixed_steps(double h) {
  test::Oscillator sys;
  test::Recorder rec;
  SimulationOptions opt;
  opt.t_end = 4.0;
  opt.output_dt = 0.37 * h;
  opt.solver.method = "dop853";
  opt.solver.rtol = 1e3;
  opt.solver.atol = 1e3;
  opt.solver.max_step_size = h;
  const RunResult r = simulate(sys, opt, {&rec});
  REQUIRE(r.completed());
  Errors e;
  e.final = std::abs(r.x_final[0] - std::cos(r.t_final));
  for (std::size_t k = 0; k < rec.t.size(); ++k)
    e.samples = std::max(e.samples, std::abs(rec.x[k][0] - std::cos(rec.t[k])));
  e.steps = r.stats.get("n_steps");
  return e;
}

}  // namespace

TEST_CASE("dop853: the error falls as h^8 at the steps and as h^8 in the dense output between them") {
  const Errors coarse = fixed_steps(0.4), fine = fixed_steps(0.2);
  INFO("h = 0.4: final error " << coarse.final << ", samples " << coarse.samples << "; h = 0.2: " << fine.final << ", "
                               << fine.samples);
  // The step count shows that max_step set the steps (4 s / h, the last one stretched to the stop time).
  CHECK(coarse.steps <= 11);
  CHECK(fine.steps <= 21);
  // Order 8: halving h divides the global error by 2^8 = 256 (within the asymptotic regime's spread).
  CHECK(coarse.final / fine.final > 150);
  CHECK(coarse.final / fine.final < 450);
  // The dense output is of order 7 locally, so its error inside a step is O(h^8) like the steps' own.
  CHECK(coarse.samples / fine.samples > 100);
  CHECK(fine.samples < 1e-8);
}

TEST_CASE("dop853: at a tight tolerance the oscillator follows cos t to the tolerance's order, in few steps") {
  test::Oscillator sys;
  test::Recorder rec;
  SimulationOptions opt;
  opt.t_end = 20.0;
  opt.output_dt = 0.1;
  opt.solver.method = "dop853";
  opt.solver.rtol = 1e-12;
  opt.solver.atol = 1e-14;
  const RunResult r = simulate(sys, opt, {&rec});
  REQUIRE(r.completed());
  CHECK(r.stats.method == "dop853");
  double worst = 0;
  for (std::size_t k = 0; k < rec.t.size(); ++k) worst = std::max(worst, std::abs(rec.x[k][0] - std::cos(rec.t[k])));
  INFO("worst sample error " << worst << " over " << r.stats.get("n_steps") << " steps");
  CHECK(worst < 1e-10);
  // About three periods at order 8: a few dozen steps per period, not hundreds (dopri5 takes about 10 times more).
  CHECK(r.stats.get("n_steps") < 400);
}
