// Malformed scenarios and command lines: exit 2, a message with file:line:column and the allowed range,
// and no output file left behind.
#include <doctest/doctest.h>

#include <filesystem>

#include "bad_input_cases.hpp"

using namespace rollsim;

using test::BadInputCase;
using test::kGoodScenario;
const auto replace = test::replace_once;

TEST_CASE("bad input: each malformed scenario or command line exits 2 with a located message and no file") {
  const std::string g = kGoodScenario;
  const std::vector<BadInputCase> cases{
      {"syntax error", replace(g, "wheel_mass = 1.0", "wheel_mass = = 1.0"), "", "s.toml:3:"},
      {"unknown key with suggestion", replace(g, "wheel_mass", "wheel_mas"), "", "did you mean 'parameters.wheel_mass'"},
      {"unknown section", replace(g, "[solver]", "[solvr]"), "", "did you mean 'solver'"},
      {"wrong type", replace(g, "wheel_mass = 1.0", "wheel_mass = \"heavy\""), "", "s.toml:3:14: parameters.wheel_mass must be a number"},
      {"nan", replace(g, "wheel_mass = 1.0", "wheel_mass = nan"), "", "not a finite number; allowed range (0, inf) [kg]"},
      {"infinity", replace(g, "theta1 = 0.01", "theta1 = inf"), "", "s.toml:7:10: initial.theta1 = inf is not a finite number"},
      {"negative mass", replace(g, "wheel_mass = 1.0", "wheel_mass = -1.0"), "", "s.toml:3:14: parameters.wheel_mass = -1 is out of range; allowed range (0, inf) [kg]"},
      {"zero radius", replace(g, "wheel_radius = 0.25", "wheel_radius = 0"), "", "parameters.wheel_radius = 0 is out of range; allowed range (0, inf) [m]"},
      {"zero table length", replace(g, "table_length = 1.0", "table_length = 0.0"), "", "parameters.table_length = 0 is out of range"},
      {"wheel beyond the edge", replace(g, "theta1 = 0.01", "theta1 = 2.5"), "", "s.toml:7:10: the wheel starts at contact position"},
      {"rtol too large", replace(g, "rtol = 1e-8", "rtol = 1.5"), "", "solver.rtol = 1.5 is out of range; allowed range [1e-15, 1)"},
      {"rtol zero", replace(g, "rtol = 1e-8", "rtol = 0"), "", "solver.rtol = 0 is out of range; allowed range [1e-15, 1)"},
      {"t_end zero", replace(g, "t_end = 0.5", "t_end = 0"), "", "simulation.t_end = 0 is out of range; allowed range (0, inf) [s]"},
      {"t_end negative", replace(g, "t_end = 0.5", "t_end = -3"), "", "simulation.t_end = -3 is out of range"},
      {"unknown model", replace(g, "\"tipping_table\"", "\"tipping_tabel\""), "", "did you mean \"tipping_table\""},
      {"missing model", replace(g, "model = \"tipping_table\"", ""), "", "missing key 'model'"},
      {"bad method", g + "", "--set solver.method=rk4", "allowed values one of \"auto\", \"adams\", \"bdf\""},
      {"override of unknown key", g, "--set initial.theta3=1", "--set initial.theta3=1: unknown key 'initial.theta3'; did you mean"},
      {"override with wrong type", g, "--set initial.theta1=abc", "--set initial.theta1=abc: initial.theta1 must be a number"},
      {"override without =", g, "--set initial.theta1", "must read KEY=VALUE"},
      {"unwritable output directory", g, "-o /nonexistent-dir/out.h5", "the output directory '/nonexistent-dir' does not exist"},
      {"output file in a missing directory via scenario", g + "[output]\nfile = \"/nonexistent-dir/x.h5\"\n", "", "s.toml:14:8: the output directory"},
      {"max_steps not an integer", replace(g, "rtol = 1e-8", "rtol = 1e-8\nmax_steps = 1.5"), "", "solver.max_steps must be an integer"},
      {"event action", g + "[events]\ntable_edge = \"halt\"\n", "", "allowed values one of \"stop\", \"record\""},
      {"non-UTF-8 bytes", replace(g, "model = \"tipping_table\"", "model = \"tipping\xff\xfe\""), "", "s.toml:1:"},
      {"negative gravity", g, "--set parameters.gravity=-9.81", "parameters.gravity = -9.81 is out of range"},
  };
  CHECK(cases.size() >= 15);
  for (const auto& c : cases) test::check_bad_input(c);
}

TEST_CASE("bad input: a missing scenario file and unknown options") {
  std::string output;
  CHECK(test::run_binary("run /nonexistent/scenario.toml", output) == 2);
  CHECK(output.find("/nonexistent/scenario.toml: cannot open the scenario file") != std::string::npos);
  CHECK(test::run_binary("run", output) == 2);
  CHECK(test::run_binary("frobnicate", output) == 2);
  CHECK(test::run_binary("--version", output) == 0);
  CHECK(output.find("rollsim ") == 0);
  CHECK(test::run_binary("--help", output) == 0);
  CHECK(output.find("run") != std::string::npos);
}

TEST_CASE("bad input: the good scenario itself runs, so the cases above fail for their own reason") {
  test::TempDir dir;
  const std::string path = dir.file("s.toml", kGoodScenario);
  std::string output;
  const std::string out = (dir.path / "out.h5").string();
  CHECK(test::run_binary("run " + path + " -o " + out, output) == 0);
  CHECK(std::filesystem::exists(out));
  CHECK(!std::filesystem::exists(out + ".tmp"));
}

TEST_CASE("solver failure: a tiny max_steps gives exit 3, a located message, and the partial data kept") {
  test::TempDir dir;
  const std::string path = dir.file("s.toml", kGoodScenario);
  const std::string out = (dir.path / "out.h5").string();
  std::string output;
  CHECK(test::run_binary("run " + path + " -o " + out + " --set solver.max_steps=3", output) == 3);  // the default method takes 11
  INFO(output);
  CHECK(output.find("at t = ") != std::string::npos);
  CHECK(output.find("step size h = ") != std::string::npos);
  CHECK(output.find("raise solver.max_steps") != std::string::npos);
  CHECK(std::filesystem::exists(out));
}
