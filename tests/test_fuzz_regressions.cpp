// Inputs the fuzzer (tools/fuzz) or the bad-input catalogue found trouble with, fed through the same
// checks as the fuzz target: each must be accepted cleanly or rejected with an InputError.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "support.hpp"
#include "../fuzz/scenario_input.hpp"

TEST_CASE("fuzz regressions: every input in tests/fuzz_regressions is handled cleanly") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(rollsim::test::source_dir()) / "tests" / "fuzz_regressions";
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string input(std::istreambuf_iterator<char>(in), {});
    INFO(e.path().filename().string());
    std::string problem;
    CHECK_NOTHROW(problem = rollsim::fuzz::run_input(input));
    CHECK(problem == "");
    ++n;
  }
  CHECK(n >= 2);
  // The shipped scenarios pass every check of the fuzz target.
  for (const auto& e : fs::directory_iterator(fs::path(rollsim::test::source_dir()) / "scenarios")) {
    if (e.path().extension() != ".toml") continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string input(std::istreambuf_iterator<char>(in), {});
    INFO(e.path().filename().string());
    CHECK(rollsim::fuzz::run_input(input) == "");
  }
}
