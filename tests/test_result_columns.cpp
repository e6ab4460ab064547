// Every column of a result file's trajectory and events tables has one declaration: building a system refuses two
// signals of one name (states, outputs, event extras, and the tables' own time, mode and kind columns).
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "support.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/system.hpp"
#include "rollsim/io/hdf5.hpp"
#include "rollsim/io/result_file.hpp"
#include "rollsim/scenario/scenario.hpp"
#include "rollsim/solve/observer.hpp"
#include "rollsim/sweep/sweep.hpp"

namespace rollsim {

TEST_CASE("result columns: an output named like an event extra is refused when the system is built (exit 2)") {
  // A ball on a floor: the contact engine's impacts record the extra impulse_normal_floor. A user output of that
  // name passes the user model's own name checks (which know the states and outputs), but the events table would
  // hold two columns of that name.
  const std::string text =
      "model = \"lagrangian\"\n[parameters]\nm = 1.0\ng = 9.81\n[coordinates]\ny = \"m\"\n[lagrangian]\n"
      "kinetic = \"1/2*m*der(y)^2\"\npotential = \"m*g*y\"\n[contacts.floor]\ngap = \"y\"\n"
      "[outputs.impulse_normal_floor]\nexpression = \"y\"\n[initial]\ny = 1.0\n";
  const Scenario sc = load_scenario_text(text, "ball.toml");
  CHECK_THROWS_WITH_AS(build_system(sc),
                       doctest::Contains("two columns named 'impulse_normal_floor': the output impulse_normal_floor "
                                         "and the event extra impulse_normal_floor"),
                       InputError);
  // Without it the same model builds.
  const std::string fine = text.substr(0, text.find("[outputs.")) + "[initial]\ny = 1.0\n";
  CHECK_NOTHROW(build_system(load_scenario_text(fine, "ball.toml")));
}

TEST_CASE("result columns: a sweep over numbers checks the columns at a worker's first point, and every point of "
          "a model that clashes is refused") {
  // A sweep whose swept values are all numbers builds the same columns at every point, so a worker compares the
  // names at its first point only (ColumnCheck::done after it). A model whose names clash fails that first check,
  // marks nothing, and so every later point is checked and refused as well.
  const std::string ball =
      "model = \"lagrangian\"\n[parameters]\nm = 1.0\ng = 9.81\n[coordinates]\ny = \"m\"\n[lagrangian]\n"
      "kinetic = \"1/2*m*der(y)^2\"\npotential = \"m*g*y\"\n[contacts.floor]\ngap = \"y\"\n";
  const std::string sweep = "[initial]\ny = 1.0\n[simulation]\nt_end = 0.1\n[sweep]\n\"parameters.m\" = [1.0, 2.0, 3.0]\n";
  for (const bool clash : {true, false}) {
    CAPTURE(clash);
    const std::string text = ball + (clash ? "[outputs.impulse_normal_floor]\nexpression = \"y\"\n" : "") + sweep;
    const Scenario base = load_scenario_text(text, "ball.toml");
    const sweep::Spec spec = sweep::parse_spec(base);
    REQUIRE(spec.axes.size() == 1);
    CHECK(spec.axes[0].numeric);
    sweep::PointWorkspace w;
    for (std::size_t i = 0; i < spec.n_points; ++i) {
      CAPTURE(i);
      const sweep::PointResult r = sweep::run_point(base, {}, spec, i, false, w);
      if (clash) {
        CHECK(r.status.rfind("input_error", 0) == 0);
        CHECK(r.message.find("two columns named 'impulse_normal_floor'") != std::string::npos);
        CHECK(w.columns_checked == nullptr);
      } else {
        CHECK(r.status == "ok");
        CHECK(w.columns_checked == &spec);
      }
    }
  }
}

TEST_CASE("result columns: every shipped scenario's system has one column per name") {
  // scenarios/*.toml covers every built-in model and formulation and the user models the project ships. The check
  // runs before the initial mode is chosen, so a scenario whose start has no consistent mode (the Painleve rod,
  // exit 3) has passed it.
  std::size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(rollsim::test::source_dir() + "/scenarios")) {
    if (f.path().extension() != ".toml") continue;
    CAPTURE(f.path().string());
    ++n;
    std::string refused;
    try {
      build_system(load_scenario(f.path().string(), {}));
    } catch (const SolverError&) {
    } catch (const InputError& e) {
      refused = e.what();
    }
    CHECK_MESSAGE(refused.empty(), refused);
  }
  CHECK(n >= 20);
}

namespace {

/// A summarizer whose items are given.
class FixedSummarizer final : public Summarizer {
 public:
  explicit FixedSummarizer(std::vector<std::string> keys) : keys_(std::move(keys)) {}
  void on_point(double, const double*, const double*, int) override {}
  std::vector<SummaryItem> items() const override {
    std::vector<SummaryItem> v;
    for (const auto& k : keys_) v.push_back({k, 1.0, "", "", "item " + k, false});
    return v;
  }

 private:
  std::vector<std::string> keys_;
};

/// One state, no outputs, and a summary of the given items.
class SummarySystem final : public HybridSystem {
 public:
  explicit SummarySystem(std::vector<std::string> keys) : keys_(std::move(keys)) {}
  std::string model_name() const override { return "summary_test"; }
  const Signals& states() const override { return states_; }
  const Signals& outputs() const override { return outputs_; }
  void initial_state(double* x0) const override { x0[0] = 0; }
  /// At rest: the check reads only the declarations.
  void rhs(double, const double*, int, double* xdot) const { xdot[0] = 0; }
  void compute_outputs(double, const double*, int, double*) const override {}
  std::unique_ptr<Summarizer> make_summarizer() const override { return std::make_unique<FixedSummarizer>(keys_); }

 private:
  std::vector<std::string> keys_;
  Signals states_{{"q", "m", "a coordinate"}}, outputs_;
};

}  // namespace

TEST_CASE("result columns: two summary items of one name are refused before the run, naming both") {
  const Scenario sc = load_scenario_text("model = \"double_pendulum\"\n", "summary.toml");
  CHECK_NOTHROW(check_unique_columns(SummarySystem({"energy_initial", "energy_drift_abs"}), sc));
  CHECK_THROWS_WITH_AS(check_unique_columns(SummarySystem({"energy_initial", "energy_initial"}), sc),
                       doctest::Contains("summary.toml:1:9: the result file would have two summary items named "
                                         "'energy_initial': the summary item energy_initial and the summary item "
                                         "energy_initial"),
                       InputError);
  // An item may not take the name of one of /summary's own attributes either (it would overwrite it).
  CHECK_THROWS_WITH_AS(check_unique_columns(SummarySystem({"t_final"}), sc),
                       doctest::Contains("two summary items named 't_final': the summary's own t_final and the "
                                         "summary item t_final"),
                       InputError);
  // A summary item may share a name with a column: they live in different groups.
  CHECK_NOTHROW(check_unique_columns(SummarySystem({"q"}), sc));
}

TEST_CASE("result columns: the summary writer refuses an item that would overwrite another") {
  // Items a summarizer adds only at the end of a run (or the loop's own) are not known before it: the writer checks.
  const std::string path = (std::filesystem::temp_directory_path() / "rollsim_summary_duplicates.h5").string();
  h5::Handle f = h5::create_file(path);
  RunResult res;
  res.summary = {{"n_impact", 1, "", "", "impacts", true}, {"audit", 0, "passed", "", "audit", false}};
  CHECK_NOTHROW(write_summary(f.get(), res));
  res.summary.push_back({"n_impact", 2, "", "", "impacts again", true});
  CHECK_THROWS_WITH_AS(write_summary(f.get(), res), doctest::Contains("two items named 'n_impact'"), IoError);
  res.summary.back().key = "n_events";
  CHECK_THROWS_WITH_AS(write_summary(f.get(), res), doctest::Contains("two items named 'n_events'"), IoError);
  f.reset();
  std::filesystem::remove(path);
}

}  // namespace rollsim
