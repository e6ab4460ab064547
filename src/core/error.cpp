#include "rollsim/core/error.hpp"

#include <sstream>

namespace rollsim {

std::string Origin::str() const {
  std::ostringstream os;
  os << file;
  if (line > 0) os << ':' << line << ':' << column;
  return os.str();
}

InputError::InputError(const Origin& where, const std::string& what)
    : std::runtime_error(where.str() + ": " + what), located_(!where.file.empty()) {}

static std::string solver_message(const std::string& function, int flag, const std::string& flag_name, double t,
                                  double h, const std::string& mode, const std::string& hint) {
  std::ostringstream os;
  os.precision(10);
  os << function << " failed with " << flag_name << " (" << flag << ") at t = " << t << " s, step size h = " << h;
  if (!mode.empty()) os << ", mode " << mode;
  if (!hint.empty()) os << "; " << hint;
  return os.str();
}

SolverError::SolverError(const std::string& function, int flag, const std::string& flag_name, double t_, double h_,
                         const std::string& mode, const std::string& hint)
    : std::runtime_error(solver_message(function, flag, flag_name, t_, h_, mode, hint)), t(t_), h(h_) {}

}  // namespace rollsim
