#pragma once
/// \file Move-only RAII handles for SUNDIALS objects, and return-code checks that throw SolverError.
#include <memory>
#include <string>

#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>
#include <sundials/sundials_nvector.h>

namespace rollsim::sundials {

struct ContextDeleter {
  void operator()(SUNContext c) const { SUNContext_Free(&c); }
};
struct VectorDeleter {
  void operator()(N_Vector v) const { N_VDestroy(v); }
};
struct MatrixDeleter {
  void operator()(SUNMatrix m) const { SUNMatDestroy(m); }
};
struct LinearSolverDeleter {
  void operator()(SUNLinearSolver s) const { SUNLinSolFree(s); }
};
struct NonlinearSolverDeleter {
  void operator()(SUNNonlinearSolver s) const { SUNNonlinSolFree(s); }
};
/// Frees a solver's memory block (CVodeCreate, IDACreate, ERKStepCreate) with that solver's free function.
struct SolverMemoryDeleter {
  void (*free)(void**) = nullptr;
  void operator()(void* m) const {
    if (free) free(&m);
  }
};

using Context = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextDeleter>;
using Vector = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorDeleter>;
using Matrix = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixDeleter>;
using LinearSolver = std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinearSolverDeleter>;
using NonlinearSolver = std::unique_ptr<std::remove_pointer_t<SUNNonlinearSolver>, NonlinearSolverDeleter>;
using SolverMemory = std::unique_ptr<void, SolverMemoryDeleter>;

Context make_context();
Vector make_vector(long n, SUNContext ctx);

/// A dense n-by-n matrix and the dense direct linear solver on it (SUNDenseMatrix data is column-major).
struct DenseLinearSolver {
  Matrix A;
  LinearSolver LS;
};
/// For states like `y`, of size n.
DenseLinearSolver make_dense_linear_solver(N_Vector y, long n, SUNContext ctx);

/// Throws SolverError naming `function` if `flag` < 0. `name_of` maps the flag to its name.
void check(int flag, const char* function, char* (*name_of)(long int));
/// Throws SolverError if `p` is null.
void check_ptr(const void* p, const char* function);

}  // namespace rollsim::sundials
