#include "rollsim/core/lock_wait.hpp"
#include "rollsim/hybrid/lcp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include <dlfcn.h>

#include <siconos/numerics/LCP_Solvers.h>
#include <siconos/numerics/LinearComplementarityProblem.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/lcp_cst.h>

#include "rollsim/core/error.hpp"

namespace rollsim {

namespace {
/// Siconos Numerics keeps no promise of thread safety; sweeps run systems on several threads. The mutex also
/// guards the loading below.
std::mutex lcp_mutex;

/// The Numerics functions used here, from the library loaded at the first LCP (CMakeLists.txt says why it
/// is not linked). The declarations come from Numerics' own headers, so the types are checked against them.
struct Numerics {
  decltype(&NM_null) null_matrix = nullptr;
  decltype(&solver_options_create) create_options = nullptr;
  decltype(&solver_options_delete) delete_options = nullptr;
  decltype(&lcp_lexicolemke) lemke = nullptr;
};

/// Loads the library once; throws SolverError if it or one of its functions is missing. Call under lcp_mutex.
const Numerics& numerics() {
  static Numerics f;
  static bool loaded = false;
  if (loaded) return f;
  // RTLD_NODELETE: the library stays mapped to the end, so that nothing of it is freed under a thread.
  void* lib = dlopen(ROLLSIM_SICONOS_NUMERICS_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) {
    const char* why = dlerror();
    throw SolverError(std::string("the contact engine needs its LCP solver, and " ROLLSIM_SICONOS_NUMERICS_SONAME
                                  " did not load (") + (why ? why : "no reason given") +
                      "); install Debian's libsiconos-numerics-dev (tools/install-deps does), or set "
                      "nonsmooth.mode_selection = \"enumerate\"");
  }
  auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn)
      throw SolverError(std::string(ROLLSIM_SICONOS_NUMERICS_SONAME " has no function ") + name +
                        "; rollsim was built against another version of Siconos Numerics");
  };
  find(f.null_matrix, "NM_null");
  find(f.create_options, "solver_options_create");
  find(f.delete_options, "solver_options_delete");
  find(f.lemke, "lcp_lexicolemke");
  loaded = true;
  return f;
}
}  // namespace

bool solve_lcp(const Eigen::MatrixXd& A, const Eigen::VectorXd& q, Eigen::VectorXd& z, Eigen::VectorXd& w) {
  const auto n = static_cast<int>(q.size());
  z = Eigen::VectorXd::Zero(n);
  w = q;
  if (n == 0) return true;
  // Column-major, as Numerics' dense storage is.
  Eigen::MatrixXd a = A;
  Eigen::VectorXd qq = q;
  int info = -1;
  {
    const auto lock = timed_lock(lcp_mutex);
    const Numerics& nm = numerics();
    NumericsMatrix m;
    nm.null_matrix(&m);
    m.storageType = NM_DENSE;
    m.size0 = n;
    m.size1 = n;
    m.matrix0 = a.data();
    LinearComplementarityProblem problem{n, &m, qq.data()};
    // solver_options_delete clears the options but leaves the struct itself to the caller.
    auto drop = [&nm](SolverOptions* o) {
      nm.delete_options(o);
      std::free(o);
    };
    std::unique_ptr<SolverOptions, decltype(drop)> options(nm.create_options(SICONOS_LCP_LEMKE), drop);
    nm.lemke(&problem, z.data(), w.data(), &info, options.get());
  }
  if (info != 0 || !z.allFinite()) return false;
  // The solver's word is checked: z >= 0, w = A z + q >= 0 and z.w = 0, each to rounding of its terms' size.
  w = A * z + q;
  if (!w.allFinite()) return false;
  const double tiny = std::numeric_limits<double>::min();
  const double tz = 1e-9 * std::max(z.cwiseAbs().maxCoeff(), tiny);
  const double tw = 1e-9 * std::max({A.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff(), q.cwiseAbs().maxCoeff(), tiny});
  for (int i = 0; i < n; ++i)
    if (z(i) < -tz || w(i) < -tw || (z(i) > tz && w(i) > tw)) return false;
  return true;
}

bool solve_planar_contacts(const PlanarContactProblem& p, PlanarContactSolution& s) {
  using Eigen::Index;
  const auto nN = static_cast<Index>(p.n_normal);
  const auto nT = static_cast<Index>(p.normal_of.size());
  // lambda_T = U lambda_N + u0 - lambda_0L.
  Eigen::MatrixXd U = Eigen::MatrixXd::Zero(nT, nN);
  Eigen::VectorXd u0 = Eigen::VectorXd::Zero(nT);
  for (Index j = 0; j < nT; ++j) {
    const auto js = static_cast<std::size_t>(j);
    if (p.normal_of[js] >= 0)
      U(j, p.normal_of[js]) = p.mu[js];
    else
      u0(j) = p.mu[js] * p.bound[js];
  }
  const auto GNN = p.G.topLeftCorner(nN, nN), GNT = p.G.topRightCorner(nN, nT);
  const auto GTN = p.G.bottomLeftCorner(nT, nN), GTT = p.G.bottomRightCorner(nT, nT);
  // z = [lambda_N; y+; lambda_0L], w = [y_N; lambda_0R; y-].
  const Index n = nN + 2 * nT;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd q(n);
  A.block(0, 0, nN, nN) = GNN + GNT * U;
  A.block(0, nN + nT, nN, nT) = -GNT;
  A.block(nN, 0, nT, nN) = 2 * U;
  A.block(nN, nN + nT, nT, nT) = -Eigen::MatrixXd::Identity(nT, nT);
  A.block(nN + nT, 0, nT, nN) = -(GTN + GTT * U);
  A.block(nN + nT, nN, nT, nT) = Eigen::MatrixXd::Identity(nT, nT);
  A.block(nN + nT, nN + nT, nT, nT) = GTT;
  q.head(nN) = p.d.head(nN) + GNT * u0;
  q.segment(nN, nT) = 2 * u0;
  q.tail(nT) = -p.d.tail(nT) - GTT * u0;
  Eigen::VectorXd z, w;
  if (!solve_lcp(A, q, z, w)) return false;
  s.lambda.resize(nN + nT);
  s.lambda.head(nN) = z.head(nN);
  s.edge_minus = z.tail(nT);
  s.lambda.tail(nT) = U * z.head(nN) + u0 - s.edge_minus;
  s.edge_plus = w.segment(nN, nT);
  s.y = p.G * s.lambda + p.d;
  return s.lambda.allFinite() && s.y.allFinite();
}

}  // namespace rollsim
