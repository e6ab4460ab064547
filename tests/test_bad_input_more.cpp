// More malformed scenarios and command lines (the catalogue continues tests/test_bad_input.cpp): each case
// has its exit code and a fragment of its message, and leaves neither the output file nor NAME.tmp behind.
// Overwrite policy: an existing result file is replaced only when the new file is closed, by an atomic
// rename of NAME.tmp; a run that fails on its input never touches it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bad_input_cases.hpp"

using namespace rollsim;

namespace {

const char* kGood = test::kGoodScenario;
using Case = test::BadInputCase;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string r;
  r.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) r += s;
  return r;
}

std::vector<Case> more_cases() {
  const std::string g = kGood;
  std::vector<Case> v{
      // Syntax, unknown keys and suggestions
      {"unterminated string", test::replace_once(g, "[parameters]", "title = \"open\n[parameters]"), "", "s.toml:2:"},
      {"unknown key in [simulation]", test::replace_once(g, "t_end", "t_ned"), "", "unknown key 'simulation.t_ned'; did you mean 'simulation.t_end'?"},
      {"unknown top-level key", "titel = \"x\"\n" + g, "", "s.toml:1:9: unknown key 'titel'; did you mean 'title'?"},
      {"duplicate key", test::replace_once(g, "wheel_mass = 1.0", "wheel_mass = 1.0\nwheel_mass = 2.0"), "", "s.toml:4:"},
      {"duplicate table", g + "[parameters]\ngravity = 9.81\n", "", "cannot redefine existing table 'parameters'"},
      {"empty file", "", "", "s.toml:1:1: missing key 'model'"},
      // Wrong types; arrays and tables where scalars are expected
      {"boolean for a number", test::replace_once(g, "rtol = 1e-8", "rtol = true"), "", "s.toml:12:8: solver.rtol must be a number, not a boolean (true)"},
      {"string for a number", test::replace_once(g, "t_end = 0.5", "t_end = \"0.5\""), "", "simulation.t_end must be a number, not a string"},
      {"array for a number", test::replace_once(g, "wheel_mass = 1.0", "wheel_mass = [1.0, 2.0]"), "", "parameters.wheel_mass must be a number, not an array"},
      {"table for a number", test::replace_once(g, "wheel_mass = 1.0", "wheel_mass = { value = 1.0 }"), "", "parameters.wheel_mass must be a number, not a table"},
      {"date for a number", test::replace_once(g, "t_end = 0.5", "t_end = 1979-05-27"), "", "simulation.t_end must be a number, not a date or time"},
      {"number for the model", test::replace_once(g, "\"tipping_table\"", "42"), "", "model must be a string, not an integer"},
      {"boolean for an event action", g + "[events]\nlift_off = true\n", "", "events.lift_off must be a string, not a boolean"},
      {"integer literal out of range", test::replace_once(g, "t_end = 0.5", "t_end = 99999999999999999999"), "", "s.toml:9:"},
      // NaN and infinity, in the file and on the command line
      {"negative nan", test::replace_once(g, "output_dt = 0.01", "output_dt = -nan"), "", "simulation.output_dt = nan is not a finite number"},
      {"negative infinity", g, "--set parameters.gravity=-inf", "--set parameters.gravity=-inf: parameters.gravity = -inf is not a finite number"},
      {"nan override", g, "--set parameters.wheel_mass=nan", "parameters.wheel_mass = nan is not a finite number; allowed range (0, inf) [kg]"},
      // Non-positive physical values
      {"negative inertia", test::replace_once(g, "wheel_mass = 1.0", "wheel_mass = 1.0\nwheel_inertia = -0.1"), "", "s.toml:4:17: parameters.wheel_inertia = -0.1 is out of range; allowed range (0, inf) [kg m^2]"},
      {"zero gravity", g, "--set parameters.gravity=0", "parameters.gravity = 0 is out of range"},
      {"negative output_dt", test::replace_once(g, "output_dt = 0.01", "output_dt = -0.01"), "", "simulation.output_dt = -0.01 is out of range; allowed range (0, inf) [s]"},
      {"zero table mass", g, "--set parameters.table_mass=0", "parameters.table_mass = 0 is out of range"},
      {"parameters overflowing double", test::replace_once(g, "wheel_mass = 1.0", "wheel_mass = 1e300"), "--set parameters.gravity=1e300", "overflow double precision"},
      // Inconsistent initial states
      {"wheel exactly at the edge", test::replace_once(g, "theta1 = 0.01", "theta1 = 2.0"), "", "s.toml:7:10: the wheel starts at contact position s = r (theta1 - theta2) = 0.5 m, at or beyond the table edge"},
      {"wheel beyond the other edge via theta2", g, "--set initial.theta2=5", "the wheel starts at contact position s = r (theta1 - theta2) = -1.2475 m, at or beyond the table edge; allowed range (-0.5, 0.5) m"},
      // Impossible tolerances and limits
      {"atol zero", test::replace_once(g, "rtol = 1e-8", "atol = 0"), "", "solver.atol = 0 is out of range; allowed range (0, inf)"},
      {"atol negative", g, "--set solver.atol=-1e-12", "solver.atol = -1e-12 is out of range"},
      {"rtol one", g, "--set solver.rtol=1", "solver.rtol = 1 is out of range; allowed range [1e-15, 1)"},
      {"rtol below 1e-15", test::replace_once(g, "rtol = 1e-8", "rtol = 1e-16"), "", "s.toml:12:8: solver.rtol = 1e-16 is out of range; allowed range [1e-15, 1)"},
      {"max_steps zero", g, "--set solver.max_steps=0", "solver.max_steps = 0 is out of range; allowed range [1, 1000000000000]"},
      {"too many samples", test::replace_once(g, "output_dt = 0.01", "output_dt = 1e-12"), "", "s.toml:10:13: simulation.t_end / simulation.output_dt = 500000000000 samples; the limit is 1e9"},
      // Bytes: non-UTF-8, NUL, size
      {"non-UTF-8 byte in a comment", test::replace_once(g, "[initial]", "# caf\xe9\n[initial]"), "", "s.toml:6:"},
      {"NUL byte", test::replace_once(g, "wheel_mass", std::string("wheel\0mass", 10)), "", "s.toml: the scenario file contains NUL bytes"},
      {"huge file", g + "# " + std::string(1100000, 'x') + "\n", "", "bytes; the limit is 1048576 bytes"},
      // Depth and length
      {"deeply nested dotted key", g + "x" + repeat(".a", 20000) + " = 1\n", "", "s.toml:13:64: a key nested more than 32 levels deep"},
      {"deeply nested table header", g + "[" + "a" + repeat(".a", 20000) + "]\n", "", "a key nested more than 32 levels deep"},
      {"deeply nested arrays", g + "x = " + repeat("[", 300) + repeat("]", 300) + "\n", "", "exceeded maximum nested value depth"},
      {"deeply nested inline tables", g + "x = " + repeat("{a=", 300) + "1" + repeat("}", 300) + "\n", "", "s.toml:13:"},
      {"very long key", g + std::string(200000, 'k') + " = 1\n", "", "unknown key 'solver.kkkkkkkkkk"},
      {"dotted key inside strings is fine, unknown key is not", g + "x = \"" + repeat(".", 100) + "\"\n", "", "unknown key 'solver.x'"},
      // Command lines
      {"override with an empty component", g, "--set parameters..wheel_mass=1", "the key 'parameters..wheel_mass' has an empty component"},
      {"override below a string", g, "--set model.x=1", "'model' is not a table, so 'model.x' cannot be set"},
      {"override with an invalid value", g, "--set initial.theta1=[1,", "the value '[1,' is not a valid TOML value"},
      {"override nested too deep", g, "--set a" + repeat(".a", 40) + "=1", "a key nested more than 32 levels deep"},
      {"override of a whole section", g, "--set parameters=1", "--set parameters=1: parameters must be a table ([parameters]), not an integer"},
      {"unknown option", g, "--frobnicate", "--frobnicate"},
      {"output path is a directory", g, "-o @DIR", "is a directory"},
      {"output directory is a file", g, "-o @DIR/s.toml/out.h5", "the output directory '@DIR/s.toml' does not exist"},
  };
  return v;
}

}  // namespace

TEST_CASE("bad input, continued: exit code, message, and no file left behind") {
  const auto cases = more_cases();
  CHECK(cases.size() >= 40);
  for (const auto& c : cases) test::check_bad_input(c);
}

TEST_CASE("bad input: a directory or an unreadable path given as the scenario") {
  test::TempDir dir;
  std::string output;
  CHECK(test::run_binary("run " + dir.path.string() + " -o " + (dir.path / "o.h5").string(), output) == 2);
  CHECK(output.find("is a directory, not a scenario file") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.path / "o.h5"));
}

TEST_CASE("bad input: a location where the result file cannot be created") {
  test::TempDir dir;
  const std::string path = dir.file("s.toml", kGood);
  std::string output;
  if (geteuid() != 0) {
    const auto ro = dir.path / "ro";
    std::filesystem::create_directory(ro);
    std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    CHECK(test::run_binary("run " + path + " -o " + (ro / "o.h5").string(), output) == 2);
    CHECK(output.find("is not writable") != std::string::npos);
    std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
  } else if (std::filesystem::is_directory("/sys") && access("/sys", W_OK) == 0) {
    // root passes access(W_OK) on sysfs, where no file can be created: an I/O error with a one-line reason
    const int code = test::run_binary("run " + path + " -o /sys/rollsim-test.h5", output);
    INFO(output);
    CHECK(code == 4);
    CHECK(output.find("cannot create /sys/rollsim-test.h5.tmp: ") != std::string::npos);
    CHECK(output.find('\n') == output.size() - 1);
  }
}

TEST_CASE("overwrite policy: a run that fails on its input leaves an existing result file byte for byte") {
  test::TempDir dir;
  const std::string out = (dir.path / "out.h5").string();
  const std::string old_bytes = "an earlier result file\n";
  const std::string g = kGood;
  for (const std::string& text : {test::replace_once(g, "wheel_mass = 1.0", "wheel_mass = -1.0"),
                                  test::replace_once(g, "[solver]", "[solvr]"), std::string("model = ")}) {
    std::ofstream(out, std::ios::binary) << old_bytes;
    const std::string path = dir.file("s.toml", text);
    std::string output;
    CHECK(test::run_binary("run " + path + " -o " + out, output) == 2);
    CHECK(read_bytes(out) == old_bytes);
    CHECK(!std::filesystem::exists(out + ".tmp"));
  }
  // A stale NAME.tmp from a killed run does not stop a new run, which replaces both.
  std::ofstream(out + ".tmp", std::ios::binary) << "stale";
  const std::string path = dir.file("s.toml", kGood);
  std::string output;
  CHECK(test::run_binary("run " + path + " -o " + out + " -q", output) == 0);
  CHECK(read_bytes(out).substr(1, 3) == "HDF");
  CHECK(!std::filesystem::exists(out + ".tmp"));
}
