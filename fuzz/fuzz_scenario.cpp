// libFuzzer target over rollsim's scenario validation (see fuzz/scenario_input.hpp and tools/fuzz).
// A finding: a crash, a sanitizer report, an exception other than InputError, or a failed check.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "rollsim/core/lsan_suppressions.hpp"
#include "scenario_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = rollsim::fuzz::run_input(std::string(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_scenario: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
