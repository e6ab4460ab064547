// Parameters declared once (scenario/parameters.hpp): the schema, the reader and set/get by name agree with the
// structs' members, the derived defaults follow their closed forms, and the key tables show what the loader does.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "rollsim/app/registry.hpp"
#include "rollsim/models/carriage_pendulum.hpp"
#include "rollsim/models/relay_feedback.hpp"
#include "rollsim/models/rolling_disk.hpp"
#include "rollsim/models/tipping_table_system.hpp"
#include "rollsim/scenario/key_table.hpp"

using namespace rollsim;
namespace tt = rollsim::tipping_table;

namespace {

std::string parameter_message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("parameters: the tipping table's defaults are the IFToMM benchmark, derived inertias by their formulas") {
  const Scenario sc = load_scenario_text("model = \"tipping_table\"\n", "t.toml");
  const tt::Params p = tt::params_from(sc);
  CHECK(p.wheel_mass == 1.0);
  CHECK(p.wheel_radius == 0.25);
  CHECK(p.wheel_inertia == 0.03125);  // 1/2 * 1 kg * (0.25 m)^2
  CHECK(p.table_length == 1.0);
  CHECK(p.table_inertia == doctest::Approx(1.0 / 12.0).epsilon(1e-15));  // 1/12 * 1 kg * (1 m)^2
  CHECK(p.gravity == 9.81);
  CHECK(p.table_torque == 0.0);
  CHECK(!p.friction_coefficient);
  CHECK(sc.is_default("parameters.wheel_inertia"));
  CHECK(sc.resolved_text().find("parameters.wheel_inertia = 0.03125\n") != std::string::npos);

  // A derived default follows the values it is derived from: 1/2 * 2 * 0.5^2 = 0.25, 1/12 * 3 * 2^2 = 1.
  const Scenario s2 = load_scenario_text("model = \"tipping_table\"\n", "t.toml",
                                         {"parameters.wheel_mass=2", "parameters.wheel_radius=0.5",
                                          "parameters.table_mass=3", "parameters.table_length=2"});
  const tt::Params q = tt::params_from(s2);
  CHECK(q.wheel_inertia == 0.25);
  CHECK(q.table_inertia == 1.0);
  // A given value wins over the rule.
  const tt::Params g = tt::params_from(
      load_scenario_text("model = \"tipping_table\"\n", "t.toml", {"parameters.wheel_inertia=0.7"}));
  CHECK(g.wheel_inertia == 0.7);
}

TEST_CASE("parameters: each key lands in its own member") {
  const Scenario sc = load_scenario_text(
      "model = \"tipping_table\"\n", "t.toml",
      {"parameters.wheel_mass=1.5", "parameters.wheel_radius=0.3", "parameters.wheel_inertia=0.11",
       "parameters.table_mass=2.5", "parameters.table_length=1.25", "parameters.table_inertia=0.4",
       "parameters.gravity=9.5", "parameters.table_torque=-0.2", "parameters.friction_coefficient=0.6",
       "initial.theta1=0.01", "initial.theta2=-0.02", "initial.omega1=0.03", "initial.omega2=-0.04"});
  const tt::Params p = tt::params_from(sc);
  CHECK(p.wheel_mass == 1.5);
  CHECK(p.wheel_radius == 0.3);
  CHECK(p.wheel_inertia == 0.11);
  CHECK(p.table_mass == 2.5);
  CHECK(p.table_length == 1.25);
  CHECK(p.table_inertia == 0.4);
  CHECK(p.gravity == 9.5);
  CHECK(p.table_torque == -0.2);
  CHECK(p.friction_coefficient == 0.6);
  double x0[tt::kStates];
  tt::initial_from(sc, p, x0);
  CHECK(x0[0] == 0.01);
  CHECK(x0[1] == -0.02);
  CHECK(x0[2] == 0.03);
  CHECK(x0[3] == -0.04);

  namespace cp = rollsim::carriage_pendulum;
  const Scenario sc2 = load_scenario_text(
      "model = \"carriage_pendulum\"\n", "c.toml",
      {"parameters.carriage_mass=1.1", "parameters.bob_mass=0.7", "parameters.rod_length=0.9",
       "parameters.spring_stiffness=12", "parameters.gravity=9.7", "parameters.force=0.3", "initial.phi=0.2"});
  const cp::Params c = cp::parameters().read(sc2);
  CHECK(c.carriage_mass == 1.1);
  CHECK(c.bob_mass == 0.7);
  CHECK(c.rod_length == 0.9);
  CHECK(c.spring_stiffness == 12.0);
  CHECK(c.gravity == 9.7);
  CHECK(c.force == 0.3);
  const cp::MinimalState m = cp::initial_values().read(sc2);
  CHECK(m[0] == 0.0);
  CHECK(m[1] == 0.2);

  const relay_feedback::Params r = relay_feedback::parameters().read(load_scenario_text(
      "model = \"relay_feedback\"\nparameters.A = [1, 2, 3, 4]\nparameters.B = [5, 6]\nparameters.C = [7, 8]\n"
      "initial.x = [0.5, 0.25]\n",
      "r.toml"));
  CHECK(r.A == std::vector<double>{1, 2, 3, 4});
  CHECK(r.B == std::vector<double>{5, 6});
  CHECK(r.C == std::vector<double>{7, 8});
}

TEST_CASE("parameters: the disk's keys have no schema default, absent gravity and initial values keep the struct's") {
  namespace rd = rollsim::rolling_disk;
  const Scenario sc = load_scenario_text(
      "model = \"rolling_disk\"\nparameters.mass = 2.0\nparameters.stiffness = 3.0\n"
      "parameters.friction_coefficient = 0.4\nparameters.inertia = 0.5\nparameters.radius = 0.5\ninitial.u = 0.1\n",
      "d.toml");
  CHECK(!sc.has("parameters.gravity"));
  CHECK(!sc.has("parameters.inertia_ratio"));
  CHECK(!sc.has("initial.v"));
  CHECK(sc.resolved_text().find("gravity") == std::string::npos);
  const rd::Params p = rd::parameters().read(sc);
  CHECK(p.gravity == 9.81);
  CHECK(p.mass == 2.0);
  CHECK(p.inertia == 0.5);
  CHECK(p.radius == 0.5);
  const rd::InitialValues v = rd::initial_values().read(sc);
  CHECK(v.u == 0.1);
  CHECK(v.v == 0.0);
  // The system: j = J / (m r^2) = 0.5 / (2 * 0.25) = 1.
  auto system = build_system(sc);
  CHECK(system->states().size() == static_cast<std::size_t>(rd::kStates));
}

TEST_CASE("parameters: set and get by name, checked like a scenario value") {
  const auto& decl = tt::parameters();
  tt::Params p;
  decl.set(p, "wheel_mass", 2.0);
  CHECK(p.wheel_mass == 2.0);
  decl.set(p, "parameters.gravity", 3.5);
  CHECK(p.gravity == 3.5);
  CHECK(decl.get(p, "wheel_radius") == 0.25);
  CHECK(decl.get(p, "parameters.gravity") == 3.5);
  CHECK(parameter_message_of([&] { decl.set(p, "wheel_mass", -1.0); }) ==
        "set wheel_mass: parameters.wheel_mass = -1 is out of range; allowed range (0, inf) [kg]");
  CHECK(p.wheel_mass == 2.0);  // unchanged by the refused value
  CHECK(parameter_message_of([&] { decl.set(p, "wheel_mas", 1.0); }).find("did you mean 'wheel_mass'") != std::string::npos);
  CHECK(parameter_message_of([&] { decl.get(p, "friction_coefficient"); }) ==
        "get friction_coefficient: parameters.friction_coefficient has no value");
  decl.set(p, "friction_coefficient", 0.3);
  CHECK(p.friction_coefficient == 0.3);
  CHECK(decl.get(p, "friction_coefficient") == 0.3);
  CHECK(parameter_message_of([&] { relay_feedback::Params r; relay_feedback::parameters().set(r, "A", 1.0); }) ==
        "set A: parameters.A is a list of numbers, not a number");

  tt::InitialState x{};
  tt::initial_values().set(x, "omega2", 0.5);
  CHECK(x[3] == 0.5);
  CHECK(tt::initial_values().get(x, "initial.omega2") == 0.5);
}

TEST_CASE("parameters: every model's schema lists its declared keys with the loader's defaults") {
  for (const auto& m : models()) {
    const std::vector<KeySpec> keys = m.schema({});
    for (const auto& k : keys) {
      if (k.path.rfind("parameters.", 0) != 0 && k.path.rfind("initial.", 0) != 0) continue;
      // The user model's schema without a file is its key listing, for the placeholder name NAME: no file has it.
      if (k.path.find(".NAME") != std::string::npos) continue;
      CAPTURE(k.path);
      CHECK(k.description.find("{default}") == std::string::npos);
      // A key with a schema default resolves to it when absent; one without stays absent (or is derived).
      if (k.required) continue;
      std::string text = "model = \"" + m.name + "\"\n";
      if (m.name == "rolling_disk") text += "units = \"dimensionless\"\nparameters.inertia_ratio = 0.5\n";
      const Scenario sc = load_scenario_text(text, "m.toml");
      if (k.def) {
        REQUIRE(sc.has(k.path));
        CHECK(sc.real(k.path) == std::get<double>(*k.def));
      } else if (!k.derive && k.path != "parameters.inertia_ratio") {
        CHECK(!sc.has(k.path));
      }
    }
  }
}

TEST_CASE("key tables: a row per key with the derived default's text, '|' escaped") {
  const std::string table = markdown_key_table(tt::parameters().keys());
  CHECK(table.rfind("| key | type | unit | default | allowed | meaning |\n|---|---|---|---|---|---|\n", 0) == 0);
  CHECK(table.find("| `parameters.wheel_inertia` | number | kg m^2 | 1/2 wheel_mass wheel_radius^2 | (0, inf) | "
                   "wheel inertia about its centre; default 1/2 wheel_mass wheel_radius^2 (uniform disk) |") !=
        std::string::npos);
  CHECK(table.find("| `parameters.table_torque` | number | N m | 0 | any |") != std::string::npos);
  CHECK(table.find("| `parameters.friction_coefficient` | number | 1 | none | (0, inf) |") != std::string::npos);
  CHECK(table.find("\\|s\\| = l/2") != std::string::npos);
  const std::string disk = markdown_key_table(rolling_disk::parameters().keys());
  CHECK(disk.find("| `parameters.gravity` | number | m/s^2 | 9.81 | (0, inf) | gravitational acceleration g "
                  "(units = \"physical\"; default 9.81) |") != std::string::npos);
}
