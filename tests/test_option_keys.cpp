// Option keys declared once (scenario/parameters.hpp, analysis/simulation_keys.hpp and the bindings next to each
// option struct): an absent key reads as the option struct's own default, a declaration that disagrees with its
// member is refused, a model's variant of a shared key keeps the shared choices, and in the sources no bound key
// is read by its path or declared a second time outside its binding.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.hpp"
#include "rollsim/analysis/compare.hpp"
#include "rollsim/analysis/growth.hpp"
#include "rollsim/analysis/linear_model.hpp"
#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/models/contact_keys.hpp"
#include "rollsim/models/tipping_table_system.hpp"
#include "rollsim/scenario/key_table.hpp"

using namespace rollsim;
namespace tt = rollsim::tipping_table;

namespace {

const KeySpec* find_key(const std::vector<KeySpec>& keys, const std::string& path) {
  for (const auto& k : keys)
    if (k.path == path) return &k;
  return nullptr;
}

/// The sections whose keys are bound to option structs (the user model's own sections are not among them).
bool bound_section(const std::string& path) {
  static const std::vector<std::string> sections = {"simulation.", "solver.", "output.",    "linear.", "growth.",
                                                    "check.",      "dae.",    "nonsmooth.", "events."};
  if (path == "title" || path == "formulation") return true;
  for (const auto& s : sections)
    if (path.rfind(s, 0) == 0) return path.find('{') == std::string::npos && path.find("NAME") == std::string::npos;
  return false;
}

}  // namespace

TEST_CASE("option keys: an absent key reads as the option struct's own default") {
  const Scenario sc = load_scenario_text("model = \"double_pendulum\"\n", "plain.toml");
  const SimulationOptions o = simulation_options(sc);
  const SimulationOptions d;
  // The defaults users got from the schema (10 s, 1e-3 s) are the struct's now, so a SimulationOptions made in
  // code and one read from a scenario without [simulation] agree.
  CHECK(d.t_end == 10.0);
  CHECK(d.output_dt == 1e-3);
  CHECK(o.t_end == d.t_end);
  CHECK(o.output_dt == d.output_dt);
  CHECK(o.solver.method == d.solver.method);
  CHECK(o.solver.rtol == d.solver.rtol);
  CHECK(o.solver.atol == d.solver.atol);
  CHECK(o.solver.atol_by_state.empty());
  CHECK(o.solver.max_steps == d.solver.max_steps);
  CHECK(o.solver.max_step_size == d.solver.max_step_size);

  const OutputOptions out = output_options(sc);
  CHECK(out.file == OutputOptions{}.file);
  CHECK(out.warn_size == OutputOptions{}.warn_size);
  CHECK(out.title == "plain");  // derived from the file name

  const LinearOptions lin = linear_options(sc);
  const LinearOptions ld;
  CHECK(lin.outputs == ld.outputs);
  CHECK(lin.f_min == ld.f_min);
  CHECK(lin.f_max == ld.f_max);
  CHECK(lin.n_frequencies == ld.n_frequencies);
  CHECK(lin.equilibrium_tolerance == ld.equilibrium_tolerance);
  CHECK(lin.tolerances.abs == ld.tolerances.abs);
  CHECK(lin.tolerances.rel == ld.tolerances.rel);

  const GrowthOptions g = growth_options(sc);
  const GrowthOptions gd;
  CHECK(g.epsilons == gd.epsilons);
  CHECK(g.tolerance == gd.tolerance);
  CHECK(g.small_epsilon == gd.small_epsilon);
  CHECK(g.window_scale == gd.window_scale);
  CHECK(g.rtol == gd.rtol);

  const Scenario table = load_scenario_text("model = \"tipping_table\"\n", "t.toml");
  const CompareTolerances c = formulation_check_parameters().read(table);
  CHECK(c.state == CompareTolerances{}.state);
  CHECK(c.force == CompareTolerances{}.force);
  CHECK(c.event_time == CompareTolerances{}.event_time);
  const tt::EventActions a = tt::actions_from(table);
  CHECK(a.stop_at_edge == tt::EventActions{}.stop_at_edge);
  CHECK(a.stop_at_lift_off == tt::EventActions{}.stop_at_lift_off);
  CHECK(a.stop_at_slip_onset == tt::EventActions{}.stop_at_slip_onset);

  const Scenario contact = load_scenario_text("model = \"tipping_table\"\nformulation = \"contact\"\n", "c.toml");
  const ContactSettings s = contact_settings_from(contact);
  const ContactSettings sd;
  CHECK(s.capture_velocity == sd.capture_velocity);
  CHECK(s.gap_tolerance == sd.gap_tolerance);
  CHECK(s.stabilization_rate == sd.stabilization_rate);
  CHECK(s.mode_selection == sd.mode_selection);
  CHECK(s.rtol == SolverOptions{}.rtol);
  CHECK(s.atol == SolverOptions{}.atol);
  // With contact the edge is only recorded by default: the variant's one default, read back.
  CHECK_FALSE(tt::actions_from(contact).stop_at_edge);
}

TEST_CASE("option keys: given values land in their members, a choice in its enum, a table by name beside its number") {
  const Scenario sc = load_scenario_text(
      "model = \"tipping_table\"\nformulation = \"contact\"\n[solver]\nmethod = \"bdf\"\nrtol = 1e-8\n"
      "atol = { theta1 = 1e-9 }\nmax_steps = 77\nmax_step = 0.5\n[nonsmooth]\nmode_selection = \"lcp\"\n"
      "[output]\nfile = \"x.h5\"\nwarn_size = false\n[events]\ntable_edge = \"stop\"\n",
      "given.toml");
  const SimulationOptions o = simulation_options(sc);
  CHECK(o.solver.method == "bdf");
  CHECK(o.solver.rtol == 1e-8);
  CHECK(o.solver.atol == SolverOptions{}.atol);  // states not named take the one number
  REQUIRE(o.solver.atol_by_state.size() == 1);
  CHECK(o.solver.atol_by_state[0].first == "theta1");
  CHECK(o.solver.atol_by_state[0].second == 1e-9);
  CHECK(o.solver.max_steps == 77);
  CHECK(o.solver.max_step_size == 0.5);
  CHECK(contact_settings_from(sc).mode_selection == ModeSelection::Lcp);
  CHECK(contact_settings_from(sc).rtol == 1e-8);
  const OutputOptions out = output_options(sc);
  CHECK(out.file == "x.h5");
  CHECK_FALSE(out.warn_size);
  CHECK(tt::actions_from(sc).stop_at_edge);
  const auto names = simulation_parameters().names_given(sc, "solver.atol");
  REQUIRE(names.size() == 1);
  CHECK(names[0].first == "theta1");
  CHECK(names[0].second.line == 6);
}

TEST_CASE("option keys: a declaration that disagrees with its member or its own range is refused") {
  struct S {
    double x = 2.0;
    std::string method = "rk4";
    long n = 0;
  };
  // A number bound to a string key, a string bound to a number key.
  CHECK_THROWS_AS(param(&S::x, string_option("s.x", {}, "")), std::logic_error);
  CHECK_THROWS_AS(param(&S::method, real_key("s.method", "", "")), std::logic_error);
  // A default outside the key's range or choices: the loader would refuse the program's own default.
  CHECK_THROWS_AS(Parameters<S>("s", {param(&S::x, real_key("s.x", "", "").range(0, 1))}).keys(), std::logic_error);
  CHECK_THROWS_AS(Parameters<S>("s", {param(&S::method, string_option("s.method", {"adams", "bdf"}, ""))}).keys(),
                  std::logic_error);
  CHECK_THROWS_AS(Parameters<S>("s", {param(&S::n, integer_option("s.n", "").range(1, 10))}).keys(), std::logic_error);
  // A model's variant may keep only choices the shared key has.
  CHECK_THROWS_AS(static_cast<KeySpec>(KeyVariant(solver_parameters().key("solver.method")).only_choices({"rk4"})),
                  std::logic_error);
  CHECK_THROWS_AS(solver_parameters().key("solver.nothing"), std::logic_error);
  CHECK_THROWS_AS(solver_parameters().names_given(Scenario{}, "solver.rtol"), std::logic_error);
}

TEST_CASE("option keys: every model's variant of a shared key derives from the shared declaration") {
  const std::vector<KeySpec> common = common_keys();
  const KeySpec* method = find_key(common, "solver.method");
  REQUIRE(method);
  // The disk adds its closed-form propagation after the shared methods, in their order.
  const ModelEntry* disk = find_model("rolling_disk");
  REQUIRE(disk);
  const std::vector<KeySpec> dk = disk->schema({});
  const KeySpec* disk_method = find_key(dk, "solver.method");
  REQUIRE(disk_method);
  std::vector<std::string> expected = method->choices;
  expected.push_back("exact");
  CHECK(disk_method->choices == expected);
  CHECK(std::get<std::string>(*disk_method->def) == std::get<std::string>(*method->def));
  CHECK(disk_method->description.rfind(method->description, 0) == 0);
  // A DAE formulation keeps "auto" (IDA) and "bdf" only, shared methods.
  // The [dae] key of every constrained form is the shared one's variant: its unit and range, the user model
  // with a default of its own (the key listing of the user model lists its constrained form's keys).
  const KeySpec rate = dae_parameters().key("dae.stabilization_rate");
  CHECK(std::get<double>(*rate.def) == DaeOptions{}.stabilization_rate);
  for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
           {"carriage_pendulum", "dae"}, {"tipping_table", "dae"}, {"lagrangian", ""}}) {
    const auto& [model, formulation] = entry;
    CAPTURE(entry.first);
    const std::vector<KeySpec> keys =
        find_model(model)->schema(formulation.empty() ? std::map<std::string, std::string>{}
                                                      : std::map<std::string, std::string>{{"formulation", formulation}});
    const KeySpec* m = find_key(keys, "solver.method");
    REQUIRE(m);
    CHECK(m->choices == std::vector<std::string>{"auto", "bdf"});
    CHECK(std::find(method->choices.begin(), method->choices.end(), "bdf") != method->choices.end());
    const KeySpec* r = find_key(keys, "dae.stabilization_rate");
    REQUIRE(r);
    CHECK(r->unit == rate.unit);
    CHECK(key_row(*r).allowed == key_row(rate).allowed);
    if (model != "lagrangian") CHECK(key_row(*r).def == key_row(rate).def);
  }
  // Every other shared key a model lists is the shared one, default and range included: a model that lists one
  // (the title) lists the declaration itself.
  for (const auto& m : models()) {
    for (const auto& k : m.schema({})) {
      const KeySpec* c = find_key(common, k.path);
      if (!c || k.path == "solver.method" || (m.name == "rolling_disk" && k.path.rfind("simulation.", 0) == 0))
        continue;
      CAPTURE(m.name);
      CAPTURE(k.path);
      CHECK(key_row(k).def == key_row(*c).def);
      CHECK(key_row(k).allowed == key_row(*c).allowed);
      CHECK(k.description == c->description);
    }
  }
}

TEST_CASE("option keys: no bound key is read by its path or declared again outside its binding") {
  // The bound keys: every key of the bound sections that a built-in model's schema lists, for each formulation.
  std::set<std::string> bound;
  for (const auto& k : common_keys()) bound.insert(k.path);
  for (const auto& m : models())
    for (const std::string f : {"", "ode", "dae", "contact"}) {
      std::map<std::string, std::string> raw;
      if (!f.empty()) raw["formulation"] = f;
      std::vector<KeySpec> keys;
      try {
        keys = m.schema(raw);
      } catch (const std::exception&) {
        continue;  // a formulation the model does not have
      }
      for (const auto& k : keys)
        if (bound_section(k.path)) bound.insert(k.path);
    }
  REQUIRE(bound.count("solver.atol"));
  REQUIRE(bound.count("nonsmooth.mode_selection"));
  REQUIRE(bound.count("events.rod_slack"));

  // A read by path: scenario.real("solver.rtol") and the like. A declaration: a key builder given the path.
  const std::regex read(R"(\.(real|string|integer|boolean|has|optional_real|real_list|string_list|by_name)\(\s*"([a-z_.]+)\")");
  const std::regex declared(
      R"(\b(real_key|integer_key|string_key|boolean_key|real_list_key|string_list_key|expression_key|string_option|)"
      R"(integer_option|boolean_option|choice_option)\(\s*"([a-z_.]+)\")");
  namespace fs = std::filesystem;
  const fs::path root = rollsim::test::source_dir();
  std::map<std::string, std::vector<std::string>> declarations;  // path -> file:line of each declaration
  std::vector<std::string> reads;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    const std::string rel = fs::relative(e.path(), root).generic_string();
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), read); it != std::sregex_iterator(); ++it)
        if (bound.count((*it)[2].str())) reads.push_back(rel + ":" + std::to_string(n) + ": " + (*it)[0].str());
      for (auto it = std::sregex_iterator(line.begin(), line.end(), declared); it != std::sregex_iterator(); ++it) {
        const std::string path = (*it)[2].str();
        if (bound.count(path))
          declarations[path].push_back(rel + ":" + std::to_string(n));
      }
    }
  }
  // The binding's reader reads each key; the only read by path left is the table names' origins, which
  // Parameters::names_given gives from the declaration in scenario/parameters.hpp (not under src/).
  std::string listed;
  for (const auto& r : reads) listed += r + "\n";
  CAPTURE(listed);
  CHECK(reads.empty());
  // Each bound key is declared once, in one file; a model narrows it with a KeyVariant of that declaration.
  for (const auto& declaration : declarations) {
    const auto& [path, where] = declaration;
    CAPTURE(declaration.first);
    std::string all;
    for (const auto& w : where) all += w + " ";
    CAPTURE(all);
    CHECK(where.size() == 1);
  }
}

TEST_CASE("option keys: the formulation is read through its declaration, each model's forms and default its own") {
  CHECK(formulation_of(load_scenario_text("model = \"tipping_table\"\n", "t.toml")) == FormulationChoice::Ode);
  CHECK(formulation_of(load_scenario_text("model = \"tipping_table\"\nformulation = \"contact\"\n", "t.toml")) ==
        FormulationChoice::Contact);
  CHECK(formulation_of(load_scenario_text("model = \"carriage_pendulum\"\n", "c.toml")) == FormulationChoice::Dae);
  CHECK_FALSE(formulation_of(load_scenario_text("model = \"double_pendulum\"\n", "d.toml")).has_value());
  // The carriage pendulum has no contact form: its variant keeps "dae" and "ode" only.
  CHECK_THROWS_AS(load_scenario_text("model = \"carriage_pendulum\"\nformulation = \"contact\"\n", "c.toml"), InputError);
  CHECK(formulation_name(FormulationChoice::Dae) == "dae");
}
