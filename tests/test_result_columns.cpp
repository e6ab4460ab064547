// Every column of a result file's trajectory and events tables has one declaration: building a system refuses two
// signals of one name (states, outputs, event extras, and the tables' own time, mode and kind columns).
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/scenario/scenario.hpp"

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

TEST_CASE("result columns: every shipped scenario's system has one column per name") {
  // scenarios/*.toml covers every built-in model and formulation and the user models the project ships. The check
  // runs before the initial mode is chosen, so a scenario whose start has no consistent mode (the Painleve rod,
  // exit 3) has passed it.
  std::size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(ROLLSIM_SOURCE_DIR "/scenarios")) {
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

}  // namespace rollsim
