// The command line's promises: no input error replaces a user's file, exit codes, solver options, sweep output,
// messages, the resolved scenario, events in physical units, and long work.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <toml++/toml.h>

#include "rollsim/core/error.hpp"
#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/progress.hpp"
#include "rollsim/io/result_file.hpp"
#include "rollsim/io/terminal_text.hpp"
#include "rollsim/scenario/toml_text.hpp"
#include "rollsim/sweep/sweep.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A relay with C B = -1 < 0 starting on the switching surface C x = 0: sigma+ = 1 > 0 > -1 = sigma-, so
/// forward motion is not unique and the start is refused. initial.x is on line 7, column 5.
const char* kRelayOnSigma = R"(model = "relay_feedback"
[parameters]
A = [0.0]
B = [-1.0]
C = [1.0]
[initial]
x = [0.0]
[simulation]
t_end = 1.0
output_dt = 0.1
)";

const char* kTable = R"(model = "tipping_table"
[initial]
theta1 = 0.01
[simulation]
t_end = 0.5
output_dt = 0.01
[solver]
rtol = 1e-8
)";

std::string attr_of(const std::string& file, const std::string& object, const std::string& name) {
  h5::Handle f = h5::open_file_readonly(file);
  const hid_t id = H5Oopen(f.get(), object.c_str(), H5P_DEFAULT);
  REQUIRE(id >= 0);
  h5::Handle o(id, H5Oclose, object.c_str());
  return h5::read_attr_string(o.get(), name);
}

long steps_of(const test::Run& r) { return r.result.stats.get("n_steps"); }

}  // namespace

TEST_CASE("data safety: a start on the switching surface is an input error found before any file is opened") {
  test::TempDir dir;
  const std::string scen = dir.file("s.toml", kRelayOnSigma);
  const std::string keep = (dir.path / "keep.h5").string();
  const std::string old_bytes = "the user's earlier results\n";
  // Every command that writes a file, with an existing keep.h5: exit 2, the message at initial.x (line 7,
  // column 5), keep.h5 byte for byte, no keep.h5.tmp.
  for (const std::string cmd : {"run", "sweep", "linearize", "check growth"}) {
    std::ofstream(keep, std::ios::binary) << old_bytes;
    std::string text = kRelayOnSigma;
    if (cmd == "sweep") text += "[sweep]\n\"simulation.t_end\" = [1.0, 2.0]\n";
    dir.file("s.toml", text);
    std::string out;
    const int code = test::run_binary(cmd + " " + scen + " -o " + keep, out);
    INFO(cmd << ": " << out);
    CHECK(code == 2);
    CHECK(out.find("rollsim: error: " + scen + ":7:5: ") != std::string::npos);
    CHECK(out.find("switching surface") != std::string::npos);
    CHECK(bytes_of(keep) == old_bytes);
    CHECK(!std::filesystem::exists(keep + ".tmp"));
  }
}

TEST_CASE("data safety: a failure before the first sample removes NAME.tmp and leaves an existing NAME") {
  test::TempDir dir;
  const std::string out = (dir.path / "r.h5").string();
  const std::string old_bytes = "earlier";
  std::ofstream(out, std::ios::binary) << old_bytes;
  const Scenario sc = load_scenario_text(kTable, "s.toml");
  auto sys = build_system(sc);
  const SimulationOptions opt = simulation_options(sc);
  struct FailFirst final : Observer {
    void on_sample(double, const double*, const double*, int) override { throw IoError("disk full (simulated)"); }
  } fail;
  {
    ResultFile file(out, Provenance{});
    TrajectoryWriter writer(file);
    CHECK(std::filesystem::exists(out + ".tmp"));
    // The failing observer goes first: no sample reaches the writer.
    CHECK_THROWS_AS(simulate(*sys, opt, {&fail, &writer}), IoError);
    CHECK(!file.has_data());
  }
  CHECK(!std::filesystem::exists(out + ".tmp"));
  CHECK(bytes_of(out) == old_bytes);
  // A file given up without any data at all (linearize, check growth, sweep before their first write).
  {
    ResultFile file(out, Provenance{});
  }
  CHECK(!std::filesystem::exists(out + ".tmp"));
  CHECK(bytes_of(out) == old_bytes);
}

TEST_CASE("data safety: the relay's refused start names initial.x with its value") {
  try {
    build_system(load_scenario_text(kRelayOnSigma, "relay.toml"));
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("relay.toml:7:5: initial.x = [0]: ", 0) == 0);
    CHECK(what.find("sigma+ = 1, sigma- = -1") != std::string::npos);
  }
}

TEST_CASE("exit codes: every code of ExitCode is in the README's table, and 1 only means a failed check") {
  const std::string readme = test::read_file(rollsim::test::source_dir() + "/README.md");
  for (const int code : {kExitOk, kExitFailure, kExitInput, kExitSolver, kExitIo, kExitInternal, kExitInterrupted}) {
    INFO(code);
    CHECK(std::regex_search(readme, std::regex("\\n\\| " + std::to_string(code) + " \\| [^|\\n]+\\|")));
  }
  CHECK(kExitInternal == 70);  // EX_SOFTWARE of sysexits.h
  CHECK(std::regex_search(readme, std::regex("\\n\\| 1 \\| a check failed")));
}

TEST_CASE("solver options: solver.max_step bounds every internal step") {
  // CVODE (adams, bdf), ARKODE (erk) and IDA (the DAE): with steps no longer than h over 0.5 s there are at
  // least 0.5 / h of them, where the unbounded run needs far fewer.
  for (const std::string extra : {"", "method = \"bdf\"\n", "method = \"erk\"\n"}) {
    const std::string text = std::string(kTable) + extra;
    const auto free = test::run_text(text);
    const auto bounded = test::run_text(text, {"solver.max_step=0.001"});
    INFO(extra << free.result.stats.method << ": " << steps_of(free) << " -> " << steps_of(bounded));
    CHECK(steps_of(free) < 250);
    CHECK(steps_of(bounded) >= 500);
    // The same answer: the final states agree within the tolerance's reach.
    for (std::size_t i = 0; i < free.result.x_final.size(); ++i)
      CHECK(bounded.result.x_final[i] == doctest::Approx(free.result.x_final[i]).epsilon(1e-5));
  }
  const auto dae = test::run_text("formulation = \"dae\"\n" + std::string(kTable), {"solver.max_step=0.001"});
  CHECK(steps_of(dae) >= 500);
}

TEST_CASE("solver options: solver.atol by state name") {
  // The table form with every state named equals the scalar form, step for step.
  auto scalar = test::run_text(std::string(kTable), {"solver.rtol=1e-4", "solver.atol=1e-4"});
  auto table = test::run_text(
      std::string(kTable) + "atol = { theta1 = 1e-4, theta2 = 1e-4, omega1 = 1e-4, omega2 = 1e-4 }\n",
      {"solver.rtol=1e-4"});
  CHECK(steps_of(scalar) == steps_of(table));
  CHECK(scalar.result.x_final == table.result.x_final);
  // Tightening one state's tolerance costs steps and buys accuracy in that state, against a tight reference. On
  // CVODE's Adams: the default's DOP853 is at round-off on this table already at rtol 1e-4 (an error of 1.3e-14
  // either way), where no tolerance buys more.
  scalar = test::run_text(std::string(kTable), {"solver.rtol=1e-4", "solver.atol=1e-4", "solver.method=adams"});
  auto tight_one =
      test::run_text(std::string(kTable) + "atol = { theta1 = 1e-4, omega1 = 1e-4, theta2 = 1e-13, omega2 = 1e-13 }\n",
                     {"solver.rtol=1e-4", "solver.method=adams"});
  auto reference = test::run_text(std::string(kTable), {"solver.rtol=1e-12", "solver.atol=1e-14"});
  INFO(steps_of(scalar) << " " << steps_of(tight_one));
  CHECK(steps_of(tight_one) > steps_of(scalar));
  const double err_scalar = std::abs(scalar.result.x_final[1] - reference.result.x_final[1]);
  const double err_tight = std::abs(tight_one.result.x_final[1] - reference.result.x_final[1]);
  INFO(err_scalar << " " << err_tight);
  CHECK(err_tight < err_scalar);
  // The resolved text holds the table, and reads back as the same table.
  const std::string resolved = table.scenario.resolved_text();
  CHECK(resolved.find("solver.atol = { omega1 = 0.0001, omega2 = 0.0001, theta1 = 0.0001, theta2 = 0.0001 }") !=
        std::string::npos);
  CHECK_NOTHROW(toml::parse(resolved));
}

TEST_CASE("solver options: bad atol and max_step values are refused with their place and the allowed values") {
  auto message = [](const std::string& solver_lines) {
    try {
      build_system(load_scenario_text(std::string(kTable) + solver_lines, "s.toml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("atol = { theta3 = 1e-9 }\n") ==
        "s.toml:9:19: solver.atol names 'theta3', which is not a state of model \"tipping_table\"; allowed names: "
        "theta1, theta2, omega1, omega2; did you mean 'theta1'?");
  CHECK(message("atol = { theta1 = 0.0 }\n") ==
        "s.toml:9:19: solver.atol.theta1 = 0 is out of range; allowed range (0, inf) [state units]");
  CHECK(message("atol = { theta1 = -1e-9 }\n") ==
        "s.toml:9:19: solver.atol.theta1 = -1e-09 is out of range; allowed range (0, inf) [state units]");
  CHECK(message("atol = { theta1 = \"x\" }\n") == "s.toml:9:19: solver.atol.theta1 must be a number, not a string (\"x\")");
  CHECK(message("atol = \"x\"\n") ==
        "s.toml:9:8: solver.atol must be a number or a table { name = number, ... }, not a string (\"x\")");
  CHECK(message("atol = -1.0\n") == "s.toml:9:8: solver.atol = -1 is out of range; allowed range (0, inf) [state units]");
  CHECK(message("max_step = -0.1\n") == "s.toml:9:12: solver.max_step = -0.1 is out of range; allowed range [0, inf) [s]");
  // From the command line, the override is named.
  test::TempDir dir;
  const std::string scen = dir.file("s.toml", kTable);
  std::string out;
  CHECK(test::run_binary("run " + scen + " -o " + (dir.path / "o.h5").string() + " --set 'solver.atol.x1=1e-9'", out) == 2);
  CHECK(out.find("rollsim: error: --set solver.atol.x1=1e-9: solver.atol names 'x1'") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.path / "o.h5"));
}

TEST_CASE("toml text: one writer escapes every control character, DEL included, and reads back") {
  const std::string s = std::string("a\"b\\c\n\t\x01\x7f") + "\xc3\xa9";
  const std::string t = toml_text::string_text(s);
  CHECK(t == "\"a\\\"b\\\\c\\n\\t\\u0001\\u007Fé\"");
  const auto doc = toml::parse("v = " + t);
  CHECK(doc["v"].value<std::string>() == s);
  CHECK(toml_text::key_text("theta1") == "theta1");
  CHECK(toml_text::key_text("a.b") == "\"a.b\"");
  // The scenario's resolved text uses it: a title with DEL reads back.
  const Scenario sc = load_scenario_text(std::string(kTable) + "", "s.toml", {"title=\"x\\u007Fy\""});
  CHECK(sc.resolved_text().find("title = \"x\\u007Fy\"") != std::string::npos);
}

TEST_CASE("toml text: a number is printf's shortest of %.15g, %.16g and %.17g that reads back, and reads back") {
  // The reference is written here with snprintf and strtod; the writer uses to_chars and from_chars.
  auto reference = [](double v) {
    char buf[40];
    for (int prec = 15; prec <= 17; ++prec) {
      std::snprintf(buf, sizeof buf, "%.*g", prec, v);
      if (std::strtod(buf, nullptr) == v) break;
    }
    return std::string(buf);
  };
  std::vector<double> values{0.0, -0.0, 1.0, 0.1, 1e15, 1e16, 123456789012345678.0, 5e-324, 2.2250738585072014e-308,
                             1.7976931348623157e308, 3.0000000150753769, 1e-7, 1e21, -2.5e-300};
  std::uint64_t bits = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 20000; ++i) {  // doubles of every exponent, from their bits
    bits = bits * 6364136223846793005ULL + 1442695040888963407ULL;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
  }
  for (double v : values) {
    CAPTURE(v);
    const std::string t = toml_text::number(v);
    CHECK(t == reference(v));
    CHECK(std::strtod(t.c_str(), nullptr) == v);
  }
}

TEST_CASE("sweep: a point's input error quotes the point's values, not the override that carried them") {
  const std::string text = std::string(kTable) + "[sweep]\n\"initial.theta2\" = [0.0, -3.0]\n";
  const Scenario base = load_scenario_text(text, "s.toml");
  const auto spec = sweep::parse_spec(base);
  CHECK(sweep::point_text(spec, 1) == "initial.theta2 = -3.0");
  const auto r = sweep::run_point(base, {}, spec, 1, false);
  INFO(r.status);
  CHECK(r.status.rfind("input_error: at initial.theta2 = -3.0: ", 0) == 0);
  CHECK(r.message.find("--set") == std::string::npos);
  const auto ok = sweep::run_point(base, {}, spec, 0, false);
  CHECK(ok.status == "ok");
  CHECK(ok.time_unit == "s");
}

TEST_CASE("sweep: trajectories carry the system's time unit and the signal descriptions, t_final has a unit") {
  test::TempDir dir;
  const std::string scen = dir.file("d.toml", R"(model = "rolling_disk"
units = "dimensionless"
[parameters]
inertia_ratio = 0.5
[initial]
z = 3.0
[simulation]
t_end = 1.0
output_dt = 0.1
[sweep]
"initial.x" = [0.0, 0.1]
)");
  const std::string out = (dir.path / "d.h5").string();
  std::string text;
  REQUIRE(test::run_binary("sweep " + scen + " -o " + out + " --threads 1 --trajectories -q", text) == 0);
  CHECK(attr_of(out, "points/000001/trajectory/time", "unit") == "1");
  CHECK(attr_of(out, "points/000001/trajectory/time", "description") == "dimensionless time tau = Omega0 t");
  CHECK(!attr_of(out, "points/000001/trajectory/z", "description").empty());
  CHECK(attr_of(out, "sweep/t_final", "unit") == "1");
}

TEST_CASE("sweep: --threads 0 is bad input, with the usual prefix") {
  test::TempDir dir;
  const std::string scen = dir.file("s.toml", std::string(kTable) + "[sweep]\n\"initial.theta1\" = [0.01]\n");
  const std::string keep = (dir.path / "keep.h5").string();
  std::ofstream(keep) << "keep";
  std::string out;
  CHECK(test::run_binary("sweep " + scen + " -o " + keep + " --threads 0", out) == 2);
  CHECK(out.rfind("rollsim: error: --threads 0: ", 0) == 0);
  CHECK(out.find("allowed range [1, 4096]") != std::string::npos);
  CHECK(bytes_of(keep) == "keep");
}

TEST_CASE("messages: run ignores a [sweep] section and says how to run it") {
  test::TempDir dir;
  const std::string scen = dir.file("s.toml", std::string(kTable) + "[sweep]\n\"initial.theta1\" = [0.01, 0.02]\n");
  std::string out;
  CHECK(test::run_binary("run " + scen + " -o " + (dir.path / "o.h5").string() + " -q", out) == 0);
  CHECK(out == "rollsim: note: the [sweep] section is ignored by `run`; run the sweep with `rollsim sweep " + scen + "`\n");
}

TEST_CASE("messages: --set is trimmed, and .02 is read as 0.02 there, in a file it is explained") {
  const Scenario a = load_scenario_text(kTable, "s.toml", {"  initial.theta1 =  0.02 "});
  CHECK(a.real("initial.theta1") == 0.02);
  const Scenario b = load_scenario_text(kTable, "s.toml", {"initial.theta1=.02", "initial.omega1=-.5e-1"});
  CHECK(b.real("initial.theta1") == 0.02);
  CHECK(b.real("initial.omega1") == -0.05);
  try {
    load_scenario_text("model = \"tipping_table\"\n[initial]\ntheta1 = .02  # tilt\n", "f.toml");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("f.toml:3:", 0) == 0);
    CHECK(what.find("write 0.02, not .02") != std::string::npos);
  }
}

TEST_CASE("messages: the stored command line re-runs in a shell, a value with a space and a quote intact") {
  CHECK(shell_quote("initial.theta1=0.02") == "initial.theta1=0.02");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's a b") == "'it'\\''s a b'");
  test::TempDir dir;
  const std::string scen = dir.file("s.toml", kTable);
  const std::string out = (dir.path / "o.h5").string();
  std::string text;
  REQUIRE(test::run_binary("run " + scen + " -o " + out + " -q --set 'title=\"it'\\''s a  b\"'", text) == 0);
  const std::string stored = attr_of(out, "/", "command_line");
  // The shell splits the stored line into the original arguments.
  std::string words;
  const std::string cmd = "sh -c 'for a in \"$@\"; do printf \"<%s>\" \"$a\"; done' sh " + stored;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) words += buf;
  pclose(p);
  CHECK(words == "<" + rollsim::test::binary() + "><run><" + scen + "><-o><" + out + "><-q><--set><title=\"it's a  b\">");
  CHECK(attr_of(out, "/", "title") == "it's a  b");
}

TEST_CASE("messages: linearize without -o does not point to a file") {
  std::string out;
  REQUIRE(test::run_binary("linearize " + rollsim::test::source_dir() + "/scenarios/tipping_table_linear.toml", out) == 0);
  CHECK(out.find("HDF5 file") == std::string::npos);
  CHECK(out.find("written with -o FILE.h5") != std::string::npos);
}

TEST_CASE("resolved scenario: derived defaults and the title are values like any other") {
  const Scenario sc = load_scenario_text(kTable, "dir/bench.toml");
  const auto doc = toml::parse(sc.resolved_text());
  // 1/2 m r^2 = 1/2 * 1 * 0.25^2 and 1/12 M l^2 = 1/12 (the defaults m = M = 1 kg, r = 0.25 m, l = 1 m).
  CHECK(doc["parameters"]["wheel_inertia"].value<double>() == 0.03125);
  CHECK(doc["parameters"]["table_inertia"].value<double>() == doctest::Approx(1.0 / 12.0).epsilon(1e-15));
  CHECK(doc["title"].value<std::string>() == "bench");
  CHECK(sc.values.at("parameters.wheel_inertia").derived);
  // Given values win, and a derived value follows what it is derived from.
  const Scenario given = load_scenario_text(kTable, "s.toml", {"parameters.wheel_inertia=0.5", "title=\"T\""});
  CHECK(given.real("parameters.wheel_inertia") == 0.5);
  CHECK(given.string("title") == "T");
  const Scenario heavier = load_scenario_text(kTable, "s.toml", {"parameters.wheel_mass=2.0"});
  CHECK(heavier.real("parameters.wheel_inertia") == 0.0625);
}

TEST_CASE("events: each /events row holds the outputs at the event, with their units") {
  test::TempDir dir;
  const std::string scen = dir.file("s.toml", R"(model = "tipping_table"
[initial]
theta1 = 0.01
[simulation]
t_end = 3.0
output_dt = 0.01
[events]
lift_off = "stop"
)");
  const std::string out = (dir.path / "o.h5").string();
  std::string text;
  REQUIRE(test::run_binary("run " + scen + " -o " + out + " -q", text) == 0);
  h5::Handle f = h5::open_file_readonly(out);
  const auto n = h5::read_vector(f.get(), "events/normal_force");
  const auto t = h5::read_vector(f.get(), "events/time");
  REQUIRE(n.size() == 1);
  // lift_off is the root of N: the recorded output is zero to the root finder's accuracy, independent of
  // any other output's value.
  CHECK(std::abs(n[0]) < 1e-8);
  CHECK(attr_of(out, "events/normal_force", "unit") == "N");
  // The same output in /trajectory at the final sample (the event instant) agrees.
  const auto tn = h5::read_vector(f.get(), "trajectory/normal_force");
  const auto tt = h5::read_vector(f.get(), "trajectory/time");
  CHECK(tt.back() == t[0]);
  CHECK(tn.back() == doctest::Approx(n[0]).epsilon(1e-12).scale(1.0));
}

TEST_CASE("events: every model's /events table is written, outputs and extra values side by side") {
  test::TempDir dir;
  for (const char* name : {"relay_feedback", "disk_type_a", "disk_physical", "carriage_pendulum", "tipping_table_dae"}) {
    const std::string out = (dir.path / (std::string(name) + ".h5")).string();
    std::string text;
    INFO(name);
    REQUIRE(test::run_binary(std::string("run " + rollsim::test::source_dir() + "/scenarios/") + name +
                                 ".toml --set simulation.t_end=0.5 -q -o " + out, text) == 0);
    h5::Handle f = h5::open_file_readonly(out);
    CHECK(h5::exists(f.get(), "events/kind"));
  }
}

TEST_CASE("long work: a result over 1 GiB is announced before the run, unless output.warn_size = false") {
  test::TempDir dir;
  // 1e8 + 1 samples, 8 bytes a value. Each sample: the time, 4 states and 8 outputs, and /scene's 30 values (the
  // table's and the wheel's poses, a position and a rotation matrix, 12 each; the contact's point and force, 6; the
  // hinge is static, written once): 43 values, 1e8 * 344 / 2^30 = 32.04 GiB. Without the scene 13 values,
  // 1e8 * 104 / 2^30 = 9.69 GiB. The run stops at its first step (max_steps = 1).
  const std::string scen = dir.file("s.toml", std::string(kTable) + "max_steps = 1\n");
  const std::string big = " --set simulation.t_end=100 --set simulation.output_dt=1e-6 -q -o " +
                          (dir.path / "o.h5").string();
  std::string out;
  CHECK(test::run_binary("run " + scen + big, out) == 3);
  CHECK(out.find("rollsim: warning: the result will hold about 32.0 GiB before compression (1e+08 samples of 43 "
                 "values: time, 12 states and outputs, 30 of /scene); raise simulation.output_dt to write less or set "
                 "output.scene = false,") != std::string::npos);
  CHECK(test::run_binary("run " + scen + big + " --set output.scene=false", out) == 3);
  CHECK(out.find("rollsim: warning: the result will hold about 9.7 GiB before compression (1e+08 samples of 13 "
                 "values: time, 12 states and outputs); raise simulation.output_dt to write less,") != std::string::npos);
  CHECK(test::run_binary("run " + scen + big + " --set output.warn_size=false", out) == 3);
  CHECK(out.find("warning") == std::string::npos);
  CHECK(test::run_binary("run " + scen + " -q -o " + (dir.path / "o.h5").string(), out) == 3);
  CHECK(out.find("warning") == std::string::npos);
}

TEST_CASE("long work: the progress bar's text shows the fraction, the elapsed time and the time left") {
  CHECK(ProgressBar::text(0.25, "t", 30.0) ==
        "t [" + std::string(7, '#') + std::string(23, '.') + "]  25.0%  elapsed 00:30  left 01:30");
  CHECK(ProgressBar::text(0.0, "points", 0.0).find("left --:--") != std::string::npos);
  CHECK(ProgressBar::text(0.5, "runs", 4000.0).find("elapsed 1:06:40  left 1:06:40") != std::string::npos);
}

TEST_CASE("long work: no progress line when stderr is a pipe, in run, bench, sweep and linearize --sweep") {
  // The bar redraws its line with a carriage return and clears it at the end; through a pipe (run_binary's) none of
  // that may reach the output. The bicycle's sweep at 5 of its 101 speeds: the full sweep took 32 s of this test's 33
  // under ASan and 59 s under TSan, and the bar's choice does not depend on the number of points.
  test::TempDir dir;
  const std::string scen = rollsim::test::source_dir() + "/scenarios/";
  std::string bicycle = test::read_file(scen + "bicycle_meijaard.toml");
  const auto at = bicycle.find("n = 101 }");
  REQUIRE(at != std::string::npos);
  bicycle.replace(at, 7, "n = 5");
  const std::string bicycle_path = dir.file("bicycle.toml", bicycle);
  for (const std::string& args :
       {"run " + scen + "tipping_table.toml -o " + (dir.path / "r.h5").string(),
        "bench " + scen + "tipping_table.toml -n 3",
        "sweep " + scen + "table_edge_time.toml -o " + (dir.path / "s.h5").string(),
        "linearize " + bicycle_path + " --sweep --set initial_rates.phi=0 -o " + (dir.path / "l.h5").string()}) {
    CAPTURE(args);
    std::string out;
    CHECK(test::run_binary(args, out) == 0);
    CHECK(out.find('\r') == std::string::npos);
    CHECK(out.find("elapsed") == std::string::npos);
  }
}

TEST_CASE("long work: bench picks its run count, or takes -n") {
  std::string out;
  REQUIRE(test::run_binary("bench " + rollsim::test::source_dir() + "/scenarios/tipping_table.toml -n 3", out) == 0);
  CHECK(out.find("runs              3 (-n;") != std::string::npos);
  REQUIRE(test::run_binary("bench " + rollsim::test::source_dir() + "/scenarios/tipping_table.toml --set simulation.t_end=0.1", out) ==
          0);
  INFO(out);
  // The runs stop once they have taken the 2 s budget: their total is at least 2 s and exceeds it by less than
  // the last run, which is at most the slowest. So the count follows from the runs' cost: at least 2 s / the
  // slowest, at most (2 s + the slowest) / the fastest. All figures are bench's own clock, so neither a slow
  // program start nor a slow build (a sanitizer's) enters.
  std::smatch m, mt, mn, mx;
  REQUIRE(std::regex_search(out, m, std::regex("runs +([0-9]+) \\(about 2 s in all;")));
  REQUIRE(std::regex_search(out, mt, std::regex("wall time, runs +([0-9.]+) s in all")));
  REQUIRE(std::regex_search(out, mn, std::regex("min ([0-9.]+) us")));
  REQUIRE(std::regex_search(out, mx, std::regex("max ([0-9.]+) us")));
  const double runs = std::stod(m[1]), total = std::stod(mt[1]);
  const double fastest = std::stod(mn[1]) * 1e-6, slowest = std::stod(mx[1]) * 1e-6;
  CHECK(runs > 1);  // a run of 0.1 s of the table takes far less than 2 s, even under a sanitizer
  CHECK(total >= 2.0);
  CHECK(total < 2.0 + slowest + 1e-3);  // 1e-3: the printed total is rounded to 0.1 ms, and the time to sort
  CHECK(runs >= (2.0 - 0.01) / slowest);  // 0.01 s: the loop's own time between the runs (clock reads, bar)
  CHECK(runs <= (2.0 + slowest + 1e-3) / fastest);
}

TEST_CASE("summary: a long text item is shortened on the terminal and kept whole in the file") {
  std::string s;
  for (int i = 0; i < 2547; ++i) s += "+-0"[i % 3];
  const std::string short_text = shorten(s, 30, "symbols");
  CHECK(short_text == s.substr(0, 30) + "\u2026 (2547 symbols) \u2026" + s.substr(2547 - 30));
  CHECK(shorten("+-0+", 30, "symbols") == "+-0+");
  // UTF-8: characters, not bytes, are counted and kept.
  std::string u;
  for (int i = 0; i < 100; ++i) u += "\xc3\xa9";
  CHECK(shorten(u, 2) == "\xc3\xa9\xc3\xa9\u2026 (100 characters) \u2026\xc3\xa9\xc3\xa9");
  // End to end: the relay's symbols over a long run.
  test::TempDir dir;
  const std::string out = (dir.path / "r.h5").string();
  std::string text;
  REQUIRE(test::run_binary("run " + rollsim::test::source_dir() + "/scenarios/relay_feedback.toml --set simulation.t_end=60 "
                           "--set simulation.output_dt=0.1 -o " + out, text) == 0);
  h5::Handle f = h5::open_file_readonly(out);
  h5::Handle g = h5::open_group(f.get(), "summary");
  const std::string symbols = h5::read_attr_string(g.get(), "symbols");
  INFO(symbols.size());
  REQUIRE(symbols.size() > 80);
  CHECK(text.find(shorten(symbols, 30, "symbols")) != std::string::npos);
  CHECK(text.find(symbols) == std::string::npos);
}

TEST_CASE("summary: no line of a run's summary ends in a space, a dimensionless item prints no unit") {
  test::TempDir dir;
  std::string text;
  REQUIRE(test::run_binary("run " + rollsim::test::source_dir() + "/scenarios/tipping_table.toml -o " + (dir.path / "t.h5").string(),
                           text) == 0);
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    INFO(line);
    CHECK((line.empty() || line.back() != ' '));
  }
  CHECK(n > 5);
  // energy_drift_rel has the unit "1": the number ends its line.
  CHECK(std::regex_search(text, std::regex("\\nlargest energy drift, relative +[0-9.]+e[-+][0-9]+\\n")));
}

TEST_CASE("exit codes: a run refused at its start (the Painleve rod) exits 3 and writes no file, as the README says") {
  const std::string readme = test::read_file(rollsim::test::source_dir() + "/README.md");
  std::smatch row;
  REQUIRE(std::regex_search(readme, row, std::regex("\\n\\| 3 \\| ([^\\n]+)\\|")));
  CHECK(row[1].str().find("fails before its first sample") != std::string::npos);
  CHECK(row[1].str().find("no result file written") != std::string::npos);
  test::TempDir dir;
  const std::string out = (dir.path / "rod.h5").string();
  std::string text;
  CHECK(test::run_binary("run " + rollsim::test::source_dir() + "/scenarios/painleve_rod.toml -o " + out, text) == kExitSolver);
  CHECK(text.find("no result file written") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(out + ".tmp"));
}
