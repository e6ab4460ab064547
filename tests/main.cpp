#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

// The test binary links Siconos Numerics' 3-D friction-contact solver directly (tests/test_cone_siconos.cpp): its
// driver leaves 120-byte blocks allocated inside libsiconos_numerics (48 over the 24 problems the sanitizer tree
// solves) that frictionContactProblem_free and solver_options_delete do not free. They are Siconos's, suppressed in
// this binary only; the programs load Siconos for the LCP alone and keep the suppressions of the header.
#define ROLLSIM_LSAN_EXTRA_SUPPRESSIONS "leak:libsiconos_numerics.so\n"
#include "rollsim/core/lsan_suppressions.hpp"

#include <string>

namespace rollsim::test {
const std::string& source_dir() {
  static const std::string dir = ROLLSIM_SOURCE_DIR;
  return dir;
}
const std::string& binary() {
  static const std::string path = ROLLSIM_BINARY;
  return path;
}
}  // namespace rollsim::test
