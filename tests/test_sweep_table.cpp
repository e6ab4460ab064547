// The /sweep table written block by block (SweepTableWriter): the same table as the whole-sweep build_table,
// however the rows are split into blocks, with columns first met in a later block, a summary item that turns from
// a number into a text, strings written fixed-length or, where padding would not pay, variable-length.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/sweep_file.hpp"
#include "rollsim/scenario/toml_text.hpp"
#include "rollsim/sweep/sweep.hpp"
#include "support.hpp"

using namespace rollsim;
using namespace rollsim::test;

namespace {

const std::string kScenario = R"(model = "tipping_table"
[initial]
theta1 = 0.01
[sweep]
mode = "zip"
"initial.theta1" = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07]
)";

SummaryItem number(const std::string& key, double v) {
  SummaryItem it;
  it.key = key;
  it.number = v;
  it.unit = "m";
  it.label = key + " label";
  return it;
}

SummaryItem text(const std::string& key, const std::string& v) {
  SummaryItem it;
  it.key = key;
  it.text = v;
  it.label = key + " label";
  return it;
}

/// Seven rows that exercise every case: row 0 never built its system (no states, no summary); "late" is first
/// reported by row 4; "word" is reported with an empty text (a number) until row 5 gives it a text; row 3's
/// message is long, so the message column is stored as variable-length strings.
std::vector<sweep::PointResult> rows() {
  std::vector<sweep::PointResult> out(7);
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& r = out[i];
    if (i == 0) {
      r.status = "input_error: at initial.theta1 = 0.01: a message";
      r.message = "a message";
      continue;
    }
    r.status = i == 2 ? "solver_failure" : "ok";
    r.termination = i % 2 ? "t_end" : "edge";
    r.message = i == 3 ? std::string(900, 'm') : "";
    r.t_final = 0.5 * static_cast<double>(i);
    r.time_unit = "s";
    r.n_events = static_cast<long long>(i * i);
    r.state_names = {"a", "b"};
    r.state_units = {"rad", "rad/s"};
    r.x_final = {1.0 * static_cast<double>(i), -2.0 * static_cast<double>(i)};
    r.summary.push_back(number("x", 0.1 * static_cast<double>(i)));
    r.summary.push_back(text("symbols", std::string(i, '+') + "0"));
    if (i >= 4) r.summary.push_back(number("late", 10.0 + static_cast<double>(i)));
    r.summary.push_back(text("word", i >= 5 ? "abc" : ""));
    if (i == 6) r.summary.push_back(number("status", 7.0));  // an item named like a fixed column
  }
  return out;
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

/// The group's datasets hold `expected`'s columns (values, units), and its `columns` attribute their order.
void check_table(hid_t g, const std::vector<sweep::Column>& expected) {
  std::string order;
  for (const auto& c : expected) {
    CAPTURE(c.name);
    order += (order.empty() ? "" : "\n") + c.name;
    switch (c.type) {
      case sweep::Column::Float64: CHECK(same(h5::read_vector(g, c.name), c.numbers)); break;
      case sweep::Column::Int64: CHECK(h5::read_ints(g, c.name) == c.ints); break;
      case sweep::Column::String: CHECK(h5::read_strings(g, c.name) == c.strings); break;
    }
    if (!c.unit.empty()) {
      h5::Handle ds(H5Dopen2(g, c.name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2");
      CHECK(h5::read_attr_string(ds.get(), "unit") == c.unit);
    }
  }
  CHECK(h5::read_attr_string(g, "columns") == order);
}

/// A sweep's every point run on one thread, its full rows kept in point order.
struct FullRun {
  Scenario base;
  sweep::Spec spec;
  std::vector<std::size_t> all;
  std::vector<sweep::PointResult> full;
  FullRun(const std::string& text, const std::string& name)
      : base(load_scenario_text(text, name)), spec(sweep::parse_spec(base, {})), all(spec.n_points),
        full(spec.n_points) {
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    sweep::run_points(base, {}, spec, all, 1, false,
                      [&](std::size_t k, sweep::PointResult&& r) { full[k] = std::move(r); }, nullptr);
  }
};

bool is_variable_length(hid_t group, const std::string& name) {
  h5::Handle ds(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2");
  h5::Handle t(H5Dget_type(ds.get()), H5Tclose, "H5Dget_type");
  return H5Tis_variable_str(t.get()) > 0;
}

}  // namespace

TEST_CASE("sweep table: written in blocks of any size, the file holds the table build_table makes of all rows") {
  TempDir dir;
  const Scenario sc = load_scenario_text(kScenario, "t.toml");
  const sweep::Spec spec = sweep::parse_spec(sc, {});
  REQUIRE(spec.n_points == 7);
  const auto all = rows();
  const auto expected = sweep::build_table(spec, all);
  // The expected table itself: the cases above are in it.
  auto col = [&](const std::string& name) -> const sweep::Column& {
    for (const auto& c : expected)
      if (c.name == name) return c;
    FAIL("no column " << name);
    return expected.front();
  };
  CHECK(std::isnan(col("late").numbers[3]));
  CHECK(col("late").numbers[4] == 14.0);
  CHECK(col("word").type == sweep::Column::String);
  CHECK(col("word").strings == std::vector<std::string>{"", "", "", "", "", "abc", "abc"});
  CHECK(col("summary_status").numbers[6] == 7.0);
  CHECK(std::isnan(col("final_a").numbers[0]));

  // Blocks of one row (each numeric chunk written as its first row, then completed through HDF5's filters), of a
  // chunk (each written whole, as rollsim sweep writes them) and of sizes that straddle chunks.
  for (std::size_t block : {1u, 2u, 3u, 4u, 7u}) {
    CAPTURE(block);
    const std::string path = (dir.path / ("t" + std::to_string(block) + ".h5")).string();
    {
      h5::Handle f = h5::create_file(path);
      SweepTableWriter writer(f.get(), "sweep", spec, 2);
      sweep::TableBuilder table(spec);
      auto copy = rows();
      for (std::size_t i = 0; i < copy.size(); ++i) {
        table.add(i, std::move(copy[i]));
        if (table.block_rows() >= block) {
          const std::size_t first = table.first_row();
          writer.write(table.take_block(), first);
        }
      }
      const std::size_t first = table.first_row();
      writer.write(table.finish(), first);
      writer.finish();
    }
    h5::Handle f = h5::open_file_readonly(path);
    h5::Handle g = h5::open_group(f.get(), "sweep");
    check_table(g.get(), expected);
    // Short strings are fixed-length; the column with a 900-byte message among empty ones is variable-length.
    CHECK_FALSE(is_variable_length(g.get(), "status"));
    CHECK_FALSE(is_variable_length(g.get(), "symbols"));
    CHECK(is_variable_length(g.get(), "message"));
  }
}

TEST_CASE("sweep table: runs of one text over whole chunks are stored as their own text, however the runs meet the chunks") {
  // A text column is spooled with its repeats marked, and a chunk whose rows all repeat the chunk before it is that
  // chunk's bytes. Runs of "a", "b", "bb" and "" that begin and end inside chunks and on their bounds, a run that
  // changes its text exactly at a chunk's start, and a last, partial chunk: each chunk must read back as its rows.
  const std::string scenario = R"(model = "tipping_table"
[initial]
theta1 = 0.01
[sweep]
"initial.theta1" = { from = 0.01, to = 0.02, n = 23 }
)";
  const Scenario sc = load_scenario_text(scenario, "runs.toml");
  const sweep::Spec spec = sweep::parse_spec(sc, {});
  REQUIRE(spec.n_points == 23u);
  std::vector<std::string> texts;
  for (int k = 0; k < 6; ++k) texts.push_back("a");
  for (int k = 0; k < 6; ++k) texts.push_back("b");
  for (int k = 0; k < 3; ++k) texts.push_back("bb");
  for (int k = 0; k < 5; ++k) texts.push_back("");
  for (int k = 0; k < 3; ++k) texts.push_back("a");
  REQUIRE(texts.size() == 23u);
  TempDir dir;
  for (std::size_t chunk : {1u, 2u, 3u, 4u, 6u}) {
    CAPTURE(chunk);
    const std::string path = (dir.path / ("runs" + std::to_string(chunk) + ".h5")).string();
    {
      h5::Handle f = h5::create_file(path);
      SweepTableWriter writer(f.get(), "sweep", spec, chunk);
      sweep::TableBuilder table(spec);
      for (std::size_t i = 0; i < texts.size(); ++i) {
        sweep::PointResult r;
        r.status = "ok";
        r.summary.push_back(text("run", texts[i]));
        table.add(i, std::move(r));
      }
      writer.write(table.finish(), 0);
      writer.finish();
    }
    h5::Handle f = h5::open_file_readonly(path);
    h5::Handle g = h5::open_group(f.get(), "sweep");
    CHECK_FALSE(is_variable_length(g.get(), "run"));
    CHECK(h5::read_strings(g.get(), "run") == texts);
    CHECK(h5::read_strings(g.get(), "status") == std::vector<std::string>(23, "ok"));
  }
}

TEST_CASE("sweep table: rollsim sweep writes, in blocks of 4096 rows, the table of the points run in memory, in under 100 bytes a point") {
  // 65 x 65 points of the disk's exact map: two blocks. The strings (status, termination, symbols, classification,
  // audit) are fixed-length and deflated; variable-length strings took 436 bytes a point. Size: to tau = 50 in a
  // release run; to tau = 5 in a sanitizer tree (test::sanitized), where the 8,450 runs to 50 took 36 s under TSan.
  TempDir dir;
  std::string text = read_file(rollsim::test::source_dir() + "/scenarios/disk_basin.toml");
  for (std::size_t at = text.find("n = 101"); at != std::string::npos; at = text.find("n = 101"))
    text.replace(at, 7, "n = 65");
  if (test::sanitized) {
    const auto at = text.find("t_end = 50.0");
    REQUIRE(at != std::string::npos);
    text.replace(at, 12, "t_end = 5.0");
  }
  const std::string path = dir.file("basin.toml", text);
  const std::string out = (dir.path / "basin.h5").string();
  std::string output;
  REQUIRE(run_binary("sweep " + path + " -o " + out + " --threads 2", output) == 0);
  // The two measures of the rows' cost are printed, each per point: the wall time tabulating and writing them, and
  // the CPU time of the thread that takes the results and writes the file (which includes that work).
  double tab_s = -1, tab_us = -1, cpu_s = -1, cpu_us = -1;
  const auto table_line = output.find("table            ");
  const auto writer_line = output.find("writer           ");
  REQUIRE(table_line != std::string::npos);
  REQUIRE(writer_line != std::string::npos);
  CHECK(std::sscanf(output.c_str() + table_line, "table %lf s to tabulate and write (%lf us per point)", &tab_s,
                    &tab_us) == 2);
  CHECK(std::sscanf(output.c_str() + writer_line,
                    "writer %lf s CPU on the thread that takes the results and writes the file (%lf us per point)",
                    &cpu_s, &cpu_us) == 2);
  CHECK(tab_s > 0);
  CHECK(cpu_s > 0);
  // Seconds are printed to 1 ms, microseconds a point to 0.01 us.
  CHECK(std::abs(tab_us * 1e-6 * (65 * 65) - tab_s) <= 0.0005 + 0.005e-6 * (65 * 65) + 1e-9);
  CHECK(std::abs(cpu_us * 1e-6 * (65 * 65) - cpu_s) <= 0.0005 + 0.005e-6 * (65 * 65) + 1e-9);
  const Scenario base = load_scenario_text(text, path);
  const sweep::Spec spec = sweep::parse_spec(base, {});
  REQUIRE(spec.n_points == 65u * 65u);
  CHECK(std::filesystem::file_size(out) < spec.n_points * 100u);
  std::vector<sweep::PointResult> got(spec.n_points);
  std::vector<std::size_t> all(spec.n_points);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  sweep::run_points(base, {}, spec, all, 1, false, [&](std::size_t k, sweep::PointResult&& r) { got[k] = std::move(r); },
                    nullptr);
  const auto expected = sweep::build_table(spec, got);
  h5::Handle f = h5::open_file_readonly(out);
  h5::Handle g = h5::open_group(f.get(), "sweep");
  check_table(g.get(), expected);
  CHECK_FALSE(is_variable_length(g.get(), "symbols"));
}

TEST_CASE("sweep table: compact rows from the workers tabulate to the table of full rows, layouts mixed, on 1 and 3 threads") {
  // Points that fail as input (no states, no summary) among points that run: every worker's rows change layout
  // now and then, and a row like its worker's previous one arrives with its numbers and texts alone. 4,200 points,
  // more than run_points' ring holds (4,096): later results are copied into slots that held earlier ones, of
  // either layout.
  const std::string text = R"(model = "tipping_table"
[initial]
theta1 = 0.01
[simulation]
t_end = 0.3
output_dt = 0.1
[sweep]
mode = "grid"
"initial.theta1" = [0.01, 3.0, 0.02, 0.03, 3.0, 3.0, 0.04, 0.05, 0.06, 3.0, 0.07, 0.08]
"initial.theta2" = { from = 0.0, to = 0.1, n = 350 }
)";
  const FullRun run(text, "compact.toml");
  const Scenario& base = run.base;
  const sweep::Spec& spec = run.spec;
  const auto& all = run.all;
  const auto& full = run.full;
  REQUIRE(spec.n_points == 4200u);
  REQUIRE(full[350].status.rfind("input_error", 0) == 0);
  REQUIRE(full[0].status == "ok");
  const auto expected = sweep::build_table(spec, full);
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    sweep::TableBuilder table(spec);
    std::size_t compacted = 0;
    sweep::run_points(
        base, {}, spec, all, threads, false,
        [&](std::size_t k, sweep::PointResult&& r) {
          CHECK(r.layout > 0);
          const bool compact_row = r.summary.empty() && !r.numbers.empty();
          compacted += compact_row;
          // A compact row holds no memory of its summary: the ring's 4,096 slots keep their rows.
          if (compact_row) CHECK(r.summary.capacity() == 0u);
          table.add(k, std::move(r));
        },
        nullptr, 0, /*compact=*/true);
    CHECK(compacted > 0);  // some rows came without their items
    const auto got = table.finish();
    REQUIRE(got.size() == expected.size());
    for (std::size_t c = 0; c < got.size(); ++c) {
      CAPTURE(expected[c].name);
      CHECK(got[c].name == expected[c].name);
      CHECK(got[c].type == expected[c].type);
      CHECK(got[c].unit == expected[c].unit);
      CHECK(same(got[c].numbers, expected[c].numbers));
      CHECK(got[c].ints == expected[c].ints);
      CHECK(got[c].strings == expected[c].strings);
    }
  }
}

TEST_CASE("sweep table: the tallies of compact rows count each class as the full rows' column holds it") {
  // The disk's orbit class (A or B) is tallied, as `rollsim sweep` prints it: counted row by row, the same class
  // mostly repeating between neighbours. The counts must be those of the column that the full rows tabulate to.
  const std::string text = R"(model = "rolling_disk"
units = "dimensionless"
[parameters]
inertia_ratio = 0.4
[initial]
x = 0.0
y = 0.0
z = 1.0
[simulation]
t_end = 50.0
[solver]
method = "exact"
[sweep]
mode = "grid"
"initial.x" = { from = -4.0, to = 4.0, n = 23 }
"initial.z" = { from = -4.0, to = 4.0, n = 19 }
)";
  const FullRun run(text, "classes.toml");
  const Scenario& base = run.base;
  const sweep::Spec& spec = run.spec;
  const auto& all = run.all;
  std::map<std::string, std::size_t> expected;
  for (const auto& c : sweep::build_table(spec, run.full))
    if (c.name == "classification")
      for (auto v : c.strings) ++expected[std::string(v)];
  REQUIRE(expected.size() == 2u);  // both classes are met, each more than once
  REQUIRE(expected["A"] > 1u);
  REQUIRE(expected["B"] > 1u);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    sweep::TableBuilder table(spec);
    sweep::run_points(base, {}, spec, all, threads, false,
                      [&](std::size_t k, sweep::PointResult&& r) { table.add(k, std::move(r)); }, nullptr, 0,
                      /*compact=*/true);
    const auto tallies = table.tallies();
    REQUIRE(tallies.size() == 1u);
    CHECK(tallies[0].key == "classification");
    CHECK(tallies[0].counts == expected);
  }
}

TEST_CASE("sweep table: a point that reports one summary item twice is refused, not written misaligned") {
  // A system's names are checked at a worker's first point (build_system); were a later point's items to clash,
  // both values would go to one column: the table refuses that point with an I/O error (exit 4) naming the item.
  const Scenario base = load_scenario_text("model = \"tipping_table\"\n[sweep]\n\"initial.theta1\" = [0.01, 0.02]\n",
                                           "twice.toml");
  const sweep::Spec spec = sweep::parse_spec(base, {});
  auto point = [](std::vector<std::string> keys) {
    sweep::PointResult r;
    r.status = "ok";
    for (const auto& k : keys) r.summary.push_back({k, 1.0, "", "", "", false});
    return r;
  };
  sweep::TableBuilder table(spec);
  CHECK_NOTHROW(table.add(0, point({"a", "b"})));
  CHECK_THROWS_WITH_AS(table.add(1, point({"a", "a"})), doctest::Contains("point 1 reports the summary item 'a' twice"),
                       IoError);
}

TEST_CASE("sweep table: a text column stores its texts one after another and reads each back as it was put") {
  sweep::Texts t;
  CHECK(t.empty());
  t.push_back("ok");
  t.emplace_back();
  t.push_back(std::string(40, 'x'));  // longer than a std::string holds in place
  t.push_back(std::string_view("a\0b", 3));
  t.push_back("");
  REQUIRE(t.size() == 5u);
  CHECK(t[0] == "ok");
  CHECK(t[1].empty());
  CHECK(t[2] == std::string(40, 'x'));
  CHECK(t[3] == std::string_view("a\0b", 3));
  CHECK(t[4].empty());
  CHECK(t.back().empty());
  const std::vector<std::string> expected{"ok", "", std::string(40, 'x'), std::string("a\0b", 3), ""};
  CHECK(t == expected);
  CHECK(t.strings() == expected);
  std::vector<std::string> seen;
  for (std::string_view v : t) seen.emplace_back(v);
  CHECK(seen == expected);
  CHECK(sweep::Texts(expected) == t);
  CHECK_FALSE(t == std::vector<std::string>{"ok", "", std::string(40, 'x'), "a", ""});
  CHECK_FALSE(t == sweep::Texts{"ok"});
  t.assign(3, "B");
  CHECK(t == sweep::Texts{"B", "B", "B"});
  t.clear();
  CHECK(t.empty());
  CHECK(t.size() == 0u);
}
