// An I/O error raised by an observer in the middle of simulate() reaches the caller as an IoError, and a
// result file that is never closed explicitly is kept by its destructor, marked incomplete.
#include <doctest/doctest.h>

#include <filesystem>

#include "rollsim/io/result_file.hpp"
#include "support.hpp"

using namespace rollsim;

namespace {

const char* kScenario = R"(model = "tipping_table"
[initial]
theta1 = 0.01
[simulation]
t_end = 0.5
output_dt = 0.001
)";

/// Fails like a full disk on the n-th sample.
class FailingObserver final : public Observer {
 public:
  explicit FailingObserver(int n) : n_(n) {}
  void on_sample(double, const double*, const double*, int) override {
    if (++seen_ == n_) throw IoError("writing: No space left on device (simulated)");
  }
  int seen_ = 0;

 private:
  int n_;
};

}  // namespace

TEST_CASE("I/O faults: an IoError from an observer propagates out of simulate, and the file is kept incomplete") {
  test::TempDir dir;
  const std::string out = (dir.path / "r.h5").string();
  const Scenario sc = load_scenario_text(kScenario, "s.toml");
  auto sys = find_model(sc.model)->make_system(sc);
  const SimulationOptions opt = simulation_options(sc);
  {
    Provenance prov;
    prov.scenario_text = sc.text;
    prov.model = sc.model;
    ResultFile file(out, prov);
    TrajectoryWriter writer(file);
    FailingObserver failing(200);
    CHECK(std::filesystem::exists(out + ".tmp"));
    CHECK_THROWS_AS(simulate(*sys, opt, {&writer, &failing}), IoError);
    CHECK(failing.seen_ == 200);
    // Leaving the scope without close(): the writer goes first, then the file's destructor.
  }
  CHECK(!std::filesystem::exists(out + ".tmp"));
  REQUIRE(std::filesystem::exists(out));
  h5::Handle f = h5::open_file_readonly(out);
  CHECK(h5::read_attr_double(f.get(), "completed") == 0);
  CHECK(h5::read_attr_string(f.get(), "status") == "failed");
  const auto t = h5::read_vector(f.get(), "trajectory/time");
  CHECK(t.size() == 200);  // the writer saw the failing sample first; its tables flushed every row
  CHECK(t.back() == doctest::Approx(0.199).epsilon(1e-12));
}
