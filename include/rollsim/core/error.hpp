#pragma once
/// \file Errors in one place. Library code throws these; main() maps them to messages and exit codes.
#include <stdexcept>
#include <string>

namespace rollsim {

/// Where a scenario value came from: a file position, or a command-line override.
struct Origin {
  std::string file;  ///< scenario path, or "--set" for an override
  int line = 0;      ///< 1-based; 0 when unknown
  int column = 0;    ///< 1-based; 0 when unknown
  std::string str() const;
};

/// Exit codes of the command-line tool.
/// 1 means only that a check failed; an unexpected exception (a defect of the program) is kExitInternal
/// (EX_SOFTWARE of sysexits.h). The README's table lists them for users.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitInput = 2,
  kExitSolver = 3,
  kExitIo = 4,
  kExitInternal = 70,
  kExitInterrupted = 130
};

/// Bad input: a scenario or command-line error. The message starts with file:line:column.
class InputError : public std::runtime_error {
 public:
  InputError(const Origin& where, const std::string& what);
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  /// The message starts with a location (the first constructor), so a caller need not add one.
  bool located() const { return located_; }

 private:
  bool located_ = false;
};

/// A solver that could not go on: where (t, step size, mode), the flag, and what to change.
class SolverError : public std::runtime_error {
 public:
  SolverError(const std::string& function, int flag, const std::string& flag_name, double t, double h,
              const std::string& mode, const std::string& hint);
  explicit SolverError(const std::string& what) : std::runtime_error(what) {}
  double t = 0, h = 0;
};

/// An explicit method's error test failed down to a step of round-off size where the model could be evaluated: the
/// problem may be stiff there (solver.method = "auto" then goes on with BDF).
class StepSizeError : public SolverError {
 public:
  using SolverError::SolverError;
};

/// The self-audit of a run found a state the engine cannot vouch for (docs/audit.md): the message says where
/// (t, mode) and which rule broke. The run ends like a solver failure: exit 3, data kept, marked incomplete.
class AuditError : public SolverError {
 public:
  explicit AuditError(const std::string& what) : SolverError(what) {}
};

/// A file could not be read or written.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run stopped by SIGINT/SIGTERM; the data computed so far is kept.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted by signal") {}
};

}  // namespace rollsim
