#include "rollsim/solve/sundials.hpp"

#include <cstdlib>

#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "rollsim/core/error.hpp"

namespace rollsim::sundials {

Context make_context() {
  SUNContext ctx = nullptr;
  if (SUNContext_Create(nullptr, &ctx) != 0 || !ctx) throw SolverError("SUNContext_Create failed");
  return Context(ctx);
}

Vector make_vector(long n, SUNContext ctx) {
  N_Vector v = N_VNew_Serial(n, ctx);
  check_ptr(v, "N_VNew_Serial");
  return Vector(v);
}

DenseLinearSolver make_dense_linear_solver(N_Vector y, long n, SUNContext ctx) {
  DenseLinearSolver d;
  d.A.reset(SUNDenseMatrix(n, n, ctx));
  check_ptr(d.A.get(), "SUNDenseMatrix");
  d.LS.reset(SUNLinSol_Dense(y, d.A.get(), ctx));
  check_ptr(d.LS.get(), "SUNLinSol_Dense");
  return d;
}

void check(int flag, const char* function, char* (*name_of)(long int)) {
  if (flag >= 0) return;
  std::string name = "flag";
  if (name_of) {
    char* s = name_of(flag);
    if (s) {
      name = s;
      std::free(s);
    }
  }
  throw SolverError(std::string(function) + " failed with " + name + " (" + std::to_string(flag) + ")");
}

void check_ptr(const void* p, const char* function) {
  if (!p) throw SolverError(std::string(function) + " returned null (out of memory?)");
}

}  // namespace rollsim::sundials
