#pragma once
// The bad-input catalogue's shared parts: a good tipping-table scenario to break, the case record, and the check
// every case must pass (its exit code, a fragment of its message, and no output file nor NAME.tmp left behind).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support.hpp"

namespace rollsim::test {

inline const char* kGoodScenario = R"(model = "tipping_table"
[parameters]
wheel_mass = 1.0
wheel_radius = 0.25
table_length = 1.0
[initial]
theta1 = 0.01
[simulation]
t_end = 0.5
output_dt = 0.01
[solver]
rtol = 1e-8
)";

struct BadInputCase {
  const char* name;
  std::string text;    // the scenario file, byte for byte
  std::string args;    // extra command-line arguments; "@DIR" is replaced by the case's directory
  std::string expect;  // a fragment the message must contain ("@DIR" replaced too)
  int code = 2;
};

/// `s` with the first `from` replaced by `to` (which must be there).
inline std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto p = s.find(from);
  REQUIRE(p != std::string::npos);
  s.replace(p, from.size(), to);
  return s;
}

inline std::string subst_dir(std::string s, const std::string& dir) {
  for (auto p = s.find("@DIR"); p != std::string::npos; p = s.find("@DIR")) s.replace(p, 4, dir);
  return s;
}

/// Run one case in a directory of its own. Unless the case names its own output (-o, or an [output] section),
/// the result file would be DIR/out.h5; in every case only the scenario file may be left in the directory.
inline void check_bad_input(const BadInputCase& c) {
  TempDir dir;
  const std::string path = (dir.path / "s.toml").string();
  std::ofstream(path, std::ios::binary) << c.text;
  const std::string out = (dir.path / "out.h5").string();
  const std::string args = subst_dir(c.args, dir.path.string());
  const bool own_output = args.find("-o ") != std::string::npos || c.text.find("[output]") != std::string::npos;
  std::string output;
  const int code = run_binary("run " + path + (own_output ? "" : " -o " + out) + " " + args, output);
  const std::string expect = subst_dir(c.expect, dir.path.string());
  INFO(std::string(c.name) << ": " << output.substr(0, 2000));
  CHECK(code == c.code);
  CHECK(output.find(expect) != std::string::npos);
  CHECK(output.size() < 4000);  // a long key or line is not echoed in full
  CHECK(!std::filesystem::exists(out));
  CHECK(!std::filesystem::exists(out + ".tmp"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 1);  // only the scenario itself
}

}  // namespace rollsim::test
