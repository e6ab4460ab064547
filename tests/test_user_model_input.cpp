// User models' input: expression keys given as numbers, the static friction coefficient, friction coefficients
// checked at load and at the start, the messages for redundant constraints, a missing [coordinates] and a chart
// singular at the start, and the key listing of `rollsim keys lagrangian`.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "rollsim/scenario/key_table.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

/// A block of mass m on a ramp of angle alpha: x down the slope, y off it (a gap), Coulomb friction mu. From rest
/// with tan(alpha) > mu it slides with x'' = g (sin alpha - mu cos alpha) (statics along the slope: the normal force
/// is m g cos alpha).
const std::string kRamp = R"toml(model = "lagrangian"
[parameters]
m = 2.0
g = 9.81
alpha = 0.5
[coordinates]
x = "m"
y = "m"
[[bodies]]
mass = "m"
x = "x*cos(alpha) + y*sin(alpha)"
y = "-x*sin(alpha) + y*cos(alpha)"
[contacts.foot]
gap = "y"
slip_velocity = "der(x)"
friction_coefficient = "0.3"
[simulation]
t_end = 1.0
output_dt = 0.1
)toml";

/// The same block with one coordinate and its normal force given (the single Filippov contact).
const std::string kRampGiven = R"toml(model = "lagrangian"
[parameters]
m = 2.0
g = 9.81
alpha = 0.5
[coordinates]
x = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2"
potential = "-m*g*sin(alpha)*x"
[contacts.foot]
slip_velocity = "der(x)"
normal_force = "m*g*cos(alpha)"
friction_coefficient = "0.3"
[simulation]
t_end = 1.0
output_dt = 0.1
)toml";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

/// The message of the InputError that loading and building `text` throws ("" if none).
std::string input_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    const Scenario sc = load_scenario_text(text, "u.toml", sets);
    build_system(sc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// Line and column "u.toml:L:C" of the first occurrence of `needle` in `text` (1-based).
std::string where(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const auto bol = text.rfind('\n', at);
  const auto col = at - (bol == std::string::npos ? 0 : bol + 1) + 1;
  return "u.toml:" + std::to_string(line) + ":" + std::to_string(col);
}

/// Where the value of the first line `key = value` (given whole) is: "u.toml:L:C" of the value.
std::string where_value(const std::string& text, const std::string& line) {
  const std::string at = where(text, line);
  const auto colon = at.rfind(':');
  return at.substr(0, colon + 1) + std::to_string(std::stoi(at.substr(colon + 1)) + static_cast<int>(line.find("= ")) + 2);
}

/// x at each sample against the closed form of the sliding block.
double worst_sliding_error(const test::Run& r, double mu) {
  const double g = 9.81, alpha = 0.5, acc = g * (std::sin(alpha) - mu * std::cos(alpha));
  double worst = 0;
  for (std::size_t k = 0; k < r.rec.t.size(); ++k)
    worst = std::max(worst, std::abs(r.rec.x[k][0] - 0.5 * acc * r.rec.t[k] * r.rec.t[k]));
  return worst;
}

}  // namespace

TEST_CASE("user model input: a number where an expression is expected is that number") {
  // The body's mass and the friction coefficient as TOML numbers: the sliding block's closed form.
  const std::string numbers = replaced(replaced(kRamp, "mass = \"m\"", "mass = 2"), "friction_coefficient = \"0.3\"",
                                       "friction_coefficient = 0.3");
  const test::Run r = test::run_text(numbers);
  REQUIRE(r.result.completed());
  REQUIRE(r.rec.t.size() >= 10);
  CHECK(worst_sliding_error(r, 0.3) <= 1e-7);
  CHECK(r.scenario.string("bodies.0.mass") == "2");
  CHECK(r.scenario.string("contacts.foot.friction_coefficient") == "0.3");
  // The text is the shortest that reads back as the same double; an integer stays an integer.
  for (const auto& [toml, text] : {std::pair{"0.1", "0.1"}, {"1e-5", "1e-05"}, {"-2.5e300", "-2.5e+300"},
                                   {"0.30000000000000004", "0.30000000000000004"}, {"7", "7"}, {"-3", "-3"}}) {
    const Scenario sc = load_scenario_text(replaced(kRampGiven, "friction_coefficient = \"0.3\"",
                                                    std::string("friction_coefficient = ") + toml),
                                           "u.toml", {});
    CHECK(sc.string("contacts.foot.friction_coefficient") == text);
    CHECK(std::stod(sc.string("contacts.foot.friction_coefficient")) == std::stod(toml));
  }
  // The same through an override, and for restitution and a force.
  const Scenario sc = load_scenario_text(kRamp, "u.toml",
                                         {"contacts.foot.restitution=0.5", "contacts.foot.friction_coefficient=0.25"});
  CHECK(sc.string("contacts.foot.restitution") == "0.5");
  CHECK(sc.string("contacts.foot.friction_coefficient") == "0.25");
  const test::Run o = test::run_text(kRamp, {"contacts.foot.friction_coefficient=0.25"});
  REQUIRE(o.result.completed());
  CHECK(worst_sliding_error(o, 0.25) <= 1e-7);
  const test::Run f = test::run_text(kRampGiven, {"lagrangian.forces.x=1"});
  REQUIRE(f.result.completed());
  // An added force of 1 N along x: x'' = g (sin - mu cos) + 1/m.
  const double acc = 9.81 * (std::sin(0.5) - 0.3 * std::cos(0.5)) + 0.5;
  CHECK(std::abs(f.rec.x.back()[0] - 0.5 * acc * f.rec.t.back() * f.rec.t.back()) <= 1e-7);
}

TEST_CASE("user model input: an expression key of a wrong type names both allowed types at its position") {
  const std::string b = replaced(kRamp, "friction_coefficient = \"0.3\"", "friction_coefficient = true");
  CHECK(input_error(b) == where_value(b, "friction_coefficient = true") +
                              ": contacts.foot.friction_coefficient must be a string (an expression) or a number, not a "
                              "boolean (true)");
  const std::string a = replaced(kRamp, "mass = \"m\"", "mass = [1, 2]");
  CHECK(input_error(a).find(where_value(a, "mass = [1, 2]") + ": bodies.0.mass must be a string (an expression) or a number, not an array") == 0);
  const std::string inf = replaced(kRamp, "mass = \"m\"", "mass = inf");
  CHECK(input_error(inf).find("bodies.0.mass = inf is not a finite number") != std::string::npos);
  // Keys that are not expressions stay strings.
  const std::string unit = replaced(kRamp, "x = \"m\"\ny = \"m\"", "x = 1\ny = \"m\"");
  CHECK(input_error(unit).find("coordinates.x must be a string, not an integer") != std::string::npos);
  const std::string name = replaced(kRamp, "mass = \"m\"", "mass = \"m\"\nname = 3");
  CHECK(input_error(name).find("bodies.0.name must be a string, not an integer") != std::string::npos);
}

TEST_CASE("user model input: friction coefficients are checked at load and at the initial state") {
  // Depending on parameters only: at load, at the key, with the value and the range.
  const std::string neg = replaced(kRamp, "friction_coefficient = \"0.3\"", "friction_coefficient = \"0.1 - 0.4\"");
  CHECK(input_error(neg) == where(neg, "\"0.1 - 0.4\"") +
                                ": contacts.foot.friction_coefficient = 0.1 - 0.4 is -0.3; allowed range [0, inf) (a "
                                "Coulomb friction coefficient)");
  const std::string neg_given = replaced(kRampGiven, "friction_coefficient = \"0.3\"", "friction_coefficient = -0.3");
  CHECK(input_error(neg_given).find(where_value(neg_given, "friction_coefficient = -0.3") + ": contacts.foot.friction_coefficient = -0.3 is -0.3") == 0);
  // Depending on the state: at the initial state (mu = 0.3 - x is -0.7 at x = 1).
  for (const auto* text : {&kRamp, &kRampGiven}) {
    const std::string q = replaced(*text, "friction_coefficient = \"0.3\"", "friction_coefficient = \"0.3 - x\"");
    const std::string e = input_error(q, {"initial.x=1"});
    CHECK(e.find(where(q, "\"0.3 - x\"") + ": contacts.foot.friction_coefficient = 0.3 - x is -0.7 at the initial state; "
                                          "allowed range [0, inf)") == 0);
    CHECK(input_error(q).empty());  // 0.3 at x = 0
  }
  // A static coefficient below the sliding one.
  const std::string low = replaced(kRamp, "friction_coefficient = \"0.3\"",
                                   "friction_coefficient = \"0.3\"\nstatic_friction_coefficient = 0.2");
  CHECK(input_error(low) == where_value(low, "static_friction_coefficient = 0.2") +
                                ": contacts.foot.static_friction_coefficient = 0.2 is 0.2; allowed range [0.3, inf): at "
                                "least the sliding coefficient friction_coefficient = 0.3");
  const std::string low_q = replaced(kRamp, "friction_coefficient = \"0.3\"",
                                     "friction_coefficient = \"0.3\"\nstatic_friction_coefficient = \"0.5 - x\"");
  CHECK(input_error(low_q, {"initial.x=0.4"}).find(where(low_q, "\"0.5 - x\"") +
                                                   ": contacts.foot.static_friction_coefficient = 0.5 - x is 0.1 at the "
                                                   "initial state; allowed range [0.3, inf)") == 0);
  CHECK(input_error(low_q).empty());
  // Only with friction.
  const std::string alone = replaced(kRamp, "slip_velocity = \"der(x)\"\nfriction_coefficient = \"0.3\"",
                                     "static_friction_coefficient = 0.5");
  CHECK(input_error(alone).find(where_value(alone, "static_friction_coefficient = 0.5") + ": contact foot: static_friction_coefficient bounds the sticking "
                                                      "friction of a contact with friction") == 0);
}

TEST_CASE("user model input: a static friction coefficient takes the single given-force contact to the contact engine") {
  // Without it the contact is the Filippov form (its outputs slip_velocity, normal_force); with it the contact
  // engine (per-contact outputs). With mu_s = mu both slide by the same closed form.
  auto outputs = [](const Scenario& sc) {
    std::set<std::string> s;
    const auto sys = build_system(sc);
    for (const auto& o : sys->outputs()) s.insert(o.name);
    return s;
  };
  const std::string with = replaced(kRampGiven, "friction_coefficient = \"0.3\"",
                                    "friction_coefficient = \"0.3\"\nstatic_friction_coefficient = 0.3");
  const auto filippov = outputs(load_scenario_text(kRampGiven, "u.toml", {}));
  const auto engine = outputs(load_scenario_text(with, "u.toml", {}));
  CHECK(filippov.count("normal_force") == 1);
  CHECK(engine.count("normal_force_foot") == 1);
  for (const auto* text : {&kRampGiven, &with}) {
    const test::Run r = test::run_text(*text);
    REQUIRE(r.result.completed());
    CHECK(worst_sliding_error(r, 0.3) <= 1e-7);
  }
}

TEST_CASE("user model input: dependent constraints at the start are refused by name") {
  const std::string pendulum = R"toml(model = "lagrangian"
[parameters]
m = 1.0
l = 1.0
g = 9.81
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "1/2*m*(der(x)^2 + der(y)^2)"
potential = "m*g*y"
[constraints.rod]
expression = "x^2 + y^2 - l^2"
[constraints.rod_twice]
expression = "2*(x^2 + y^2 - l^2)"
[initial]
x = 1.0
)toml";
  const std::string e = input_error(pendulum);
  CHECK(e.find(where(pendulum, "\"2*(x^2") + ": the constraints rod and rod_twice are dependent at the initial state") == 0);
  CHECK(e.find("IDA") == std::string::npos);
  // Without the second, the pendulum is well posed.
  const std::string one = replaced(pendulum, "[constraints.rod_twice]\nexpression = \"2*(x^2 + y^2 - l^2)\"\n", "");
  CHECK(input_error(one).empty());
  // Gradients dependent at the start only: y = 0 and y = x^2 touch at x = 0 (both gradients (0, 1)).
  const std::string touch = R"toml(model = "lagrangian"
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "1/2*(der(x)^2 + der(y)^2)"
[constraints.line]
expression = "y"
[constraints.parabola]
expression = "y - x^2"
)toml";
  CHECK(input_error(touch).find(where(touch, "\"y - x^2\"") + ": the constraints line and parabola are dependent") == 0);
  // A zero gradient.
  const std::string square = replaced(one, "expression = \"x^2 + y^2 - l^2\"", "expression = \"(x^2 + y^2 - l^2)^2\"");
  CHECK(input_error(square).find(where(square, "\"(x^2") + ": the gradient dC/dq of constraint rod is zero") == 0);
}

TEST_CASE("user model input: a model without [coordinates] is told that it needs them") {
  const std::string text = R"toml(model = "lagrangian"
[lagrangian]
kinetic = "1/2*der(x)^2"
[initial]
x = 1.0
)toml";
  CHECK(input_error(text) == where(text, "\"1/2*der(x)") +
                                 ": a user model needs [coordinates]: the scenario has no [coordinates] table; name each "
                                 "generalized coordinate with its unit, e.g. [coordinates] x = \"m\" (lagrangian.kinetic "
                                 "refers to coordinates)");
  const std::string only_initial = "model = \"lagrangian\"\n[initial]\nx = 1.0\n";
  CHECK(input_error(only_initial).find(where_value(only_initial, "x = 1.0") + ": a user model needs [coordinates]") == 0);
}

TEST_CASE("user model input: a mass matrix singular at the start says whether the chart or the model lacks inertia") {
  // The spherical pendulum at the pole: T = 1/2 m l^2 (theta'^2 + sin(theta)^2 phi'^2) has no phi term at theta = 0.
  const std::string sph = R"toml(model = "lagrangian"
[parameters]
m = 1.0
l = 1.0
g = 9.81
[coordinates]
theta = "rad"
phi = "rad"
[lagrangian]
kinetic = "1/2*m*l^2*(der(theta)^2 + sin(theta)^2*der(phi)^2)"
potential = "-m*g*l*cos(theta)"
)toml";
  const std::string e = input_error(sph);
  CHECK(e.find(where(sph, "\"1/2*m*l^2") + ": the mass matrix d2T/dder(q)2 is singular at the initial state") == 0);
  CHECK(e.find("(coordinate phi: its kinetic term vanishes there; the coordinates are singular at this point, like a "
               "spherical pendulum at the pole): start away from it or choose other coordinates") != std::string::npos);
  CHECK(input_error(sph, {"initial.theta=0.3"}).empty());
  // A coordinate with no kinetic term at all.
  const std::string none = replaced(sph, "sin(theta)^2*der(phi)^2", "0*der(phi)");
  CHECK(input_error(none).find("coordinate phi has no inertia (d2T/dder(phi)2 = 0 everywhere); give every coordinate a "
                               "kinetic energy term") != std::string::npos);
  // Two rates with one combination of inertia.
  const std::string comb = replaced(sph, "der(theta)^2 + sin(theta)^2*der(phi)^2", "(der(theta) + der(phi))^2");
  CHECK(input_error(comb).find("has no inertia: the kinetic energy depends on these rates through fewer combinations") !=
        std::string::npos);
}

TEST_CASE("user model input: equations of motion not finite at the start are refused at the force or energy") {
  // A force with the square root of a negative number at these parameters (the block on a tilted plane pushed
  // sideways, its push written with sqrt(mu_s^2 cos^2 - sin^2), tilted past its static angle; found by fuzzing).
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
beta = 0.3
[coordinates]
x = "m"
y = "m"
[lagrangian]
kinetic = "1/2*m*(der(x)^2 + der(y)^2)"
forces = { x = "m*g*sin(beta)", y = "m*g*sqrt(0.25 - sin(beta)^2)" }
)toml";
  CHECK(input_error(text).empty());
  const std::string e = input_error(text, {"parameters.beta=1"});
  CHECK(e.find(where(text, "\"m*g*sqrt") + ": the equation of motion of coordinate y is not finite at the initial state") ==
        0);
  CHECK(e.find("lagrangian.forces.y = \"m*g*sqrt(0.25 - sin(beta)^2)\" is evaluated there") != std::string::npos);
  // A start that divides by zero at the parameters' values is not finite (it was called "not of t or the
  // coordinates"); the fuzzing input tests/fuzz_regressions/ginac-mul-division-by-zero-leak.toml is one.
  const std::string rate = replaced(text, "[coordinates]", "[initial_rates]\nx = \"sqrt(g/sin(beta))\"\n[coordinates]");
  CHECK(input_error(rate).empty());
  CHECK(input_error(rate, {"parameters.beta=0"}).find(where(rate, "\"sqrt(g/sin") + ": initial_rates.x = \"sqrt(g/sin(beta))\" "
                                                      "is not a finite real number at the parameters' values") == 0);
  // A potential singular at the start, with no force given: refused at the potential.
  const std::string pot = replaced(replaced(text, "forces = { x = \"m*g*sin(beta)\", y = \"m*g*sqrt(0.25 - sin(beta)^2)\" }",
                                            "potential = \"m*g*log(y)\""),
                                   "[coordinates]", "[initial]\ny = 1.0\n[coordinates]");
  CHECK(input_error(pot).empty());
  CHECK(input_error(pot, {"initial.y=0"}).find(where(pot, "\"m*g*log(y)") + ": the equation of motion of coordinate y") == 0);
}

TEST_CASE("user model input: a slip velocity that divides by a rate at rest is refused at its key") {
  // A rate inside a function whose derivative GiNaC takes as 0 (step): its second derivatives by the rates vanish,
  // but it is not J(q) der(q) + w0(q) (its value at rest, every rate at 0, would even divide by zero: GiNaC's
  // pole_error escaped as a crash once; the fuzzing input
  // tests/fuzz_regressions/ginac-pole-in-slip-velocity-at-rest.toml is one). Refused with the key's place and the
  // reason.
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
[coordinates]
x = "m"
[lagrangian]
kinetic = "1/2*m*der(x)^2"
[contacts.floor]
slip_velocity = "step(1 + 1/der(x))*der(x)"
normal_force = "m*g"
friction_coefficient = "0.1"
)toml";
  const std::string e = input_error(text);
  CHECK(e.find(where_value(text, "slip_velocity = \"step")) == 0);
  CHECK(e.find("contacts.floor.slip_velocity = \"step(1 + 1/der(x))*der(x)\": the slip velocity must be linear in the "
               "rates der(q) (w = J(q) der(q) + w0(q))") != std::string::npos);
  // Written linear in the rate, the same contact builds.
  CHECK(input_error(replaced(text, "step(1 + 1/der(x))*der(x)", "der(x)")).empty());
}

TEST_CASE("user model input: rollsim keys lagrangian lists every key the schema accepts") {
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
[coordinates]
x = "m"
y = "m"
[lagrangian]
forces = { x = "0", y = "0" }
[[bodies]]
mass = "m"
y = "y"
[constraints.c1]
expression = "x"
[contacts.floor]
gap = "y"
slip_velocity = "der(x)"
friction_coefficient = 0.3
[outputs.o]
expression = "x"
[events.e]
when = "y"
)toml";
  const Scenario sc = load_scenario_text(text, "u.toml", {});
  // The listing, from the same declarations: the model's schema for no scenario (as `rollsim keys` asks for it).
  std::set<std::string> listed;
  for (const auto& k : find_model("lagrangian")->schema({})) listed.insert(k.path);
  std::string out;
  REQUIRE(test::run_binary("keys lagrangian --markdown", out) == 0);
  const std::set<std::string> named{"parameters", "coordinates", "initial", "initial_rates", "constraints",
                                    "contacts", "outputs", "events"};
  const std::vector<KeySpec> commons = common_keys();
  std::size_t count = 0;
  for (const auto& k : sc.schema) {
    if (k.path == "model") continue;
    std::vector<std::string> parts;
    std::stringstream ss(k.path);
    for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
    if (parts.size() > 1 && named.count(parts[0])) parts[1] = "NAME";
    if (parts.size() > 1 && parts[0] == "bodies") parts[1] = "N";
    if (parts.size() > 2 && parts[0] == "lagrangian" && parts[1] == "forces") parts[2] = "NAME";
    std::string key;
    for (const auto& p : parts) key += (key.empty() ? "" : ".") + p;
    const bool common = std::any_of(commons.begin(), commons.end(), [&](const KeySpec& c) { return c.path == key; });
    INFO(k.path << " as " << key);
    if (!common || listed.count(key)) {
      CHECK(listed.count(key) == 1);
      CHECK(out.find("| `" + key + "` |") != std::string::npos);
    }
    ++count;
  }
  CHECK(count > 40);
  for (const auto* k : {"contacts.NAME.gap", "contacts.NAME.restitution", "contacts.NAME.static_friction_coefficient",
                        "nonsmooth.capture_velocity", "nonsmooth.mode_selection", "dae.stabilization_rate",
                        "bodies.N.mass", "events.NAME.when", "lagrangian.forces.NAME"})
    CHECK(listed.count(k) == 1);
  // A scenario file never gets the placeholders.
  CHECK(input_error(replaced(text, "[events.e]", "[initial]\nNAME = 1\n[events.e]")).find("unknown key 'initial.NAME'") !=
        std::string::npos);
}

TEST_CASE("user model input: an event's direction and action are read as the crossings that count and the stop") {
  // A ball thrown up at 3 m/s from y = 0 passes y = 0.2 rising at t1 and falling at t2, the roots of
  // g/2 t^2 - 3 t + 0.2 = 0: `up` counts only rising crossings and records, `down` only falling ones and stops.
  const double g = 9.81, v0 = 3.0, h = 0.2;
  const double t1 = (v0 - std::sqrt(v0 * v0 - 2 * g * h)) / g, t2 = (v0 + std::sqrt(v0 * v0 - 2 * g * h)) / g;
  const std::string text = R"toml(model = "lagrangian"
[parameters]
m = 1.0
g = 9.81
[coordinates]
y = "m"
[initial_rates]
y = 3.0
[[bodies]]
mass = "m"
y = "y"
[events.up]
when = "y - 0.2"
direction = "rising"
[events.down]
when = "y - 0.2"
direction = "falling"
action = "stop"
[simulation]
t_end = 1.0
output_dt = 0.01
)toml";
  const test::Run r = test::run_text(text);
  REQUIRE(r.rec.events.size() == 2);
  CHECK(r.rec.events[0].kind == "up");
  CHECK_FALSE(r.rec.events[0].terminal);
  CHECK(r.rec.events[0].t == doctest::Approx(t1).epsilon(1e-8));
  CHECK(r.rec.events[1].kind == "down");
  CHECK(r.rec.events[1].terminal);
  CHECK(r.rec.events[1].t == doctest::Approx(t2).epsilon(1e-8));
  CHECK(r.result.termination == "down");
  // "both" (the default) counts the two crossings; "record" (the default) goes on to t_end.
  const test::Run both = test::run_text(text, {"events.down.direction=both", "events.down.action=record"});
  std::vector<double> down;
  for (const auto& e : both.rec.events)
    if (e.kind == "down") down.push_back(e.t);
  REQUIRE(down.size() == 2);
  CHECK(down[0] == doctest::Approx(t1).epsilon(1e-8));
  CHECK(down[1] == doctest::Approx(t2).epsilon(1e-8));
  CHECK(both.result.termination == "t_end");
}

}  // namespace rollsim
