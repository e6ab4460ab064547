#include "rollsim/app/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

#include "rollsim/analysis/simulation_keys.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/hybrid/system.hpp"

#include "rollsim/models/lagrangian.hpp"
#include "rollsim/models/model_entry.hpp"

/// The built-in models, one line each, in the order --help lists them: X(ns) names the namespace rollsim::ns
/// whose `ModelEntry model_entry()` describes the model (its header declares it too; none is needed here).
#define ROLLSIM_MODELS(X) \
  X(tipping_table)        \
  X(carriage_pendulum)    \
  X(rolling_disk)         \
  X(relay_feedback)       \
  X(double_pendulum)      \
  X(lagrangian)           \
  /* end of the list: each line above ends in a backslash */

namespace rollsim {

#define ROLLSIM_DECLARE_ENTRY(ns) \
  namespace ns {                  \
  ModelEntry model_entry();       \
  }
ROLLSIM_MODELS(ROLLSIM_DECLARE_ENTRY)
#undef ROLLSIM_DECLARE_ENTRY

const std::vector<ModelEntry>& models() {
#define ROLLSIM_ENTRY(ns) ns::model_entry(),
  static const std::vector<ModelEntry> list{ROLLSIM_MODELS(ROLLSIM_ENTRY)};
#undef ROLLSIM_ENTRY
  return list;
}

namespace {

/// Where the initial state was given: the first [initial] key the scenario sets, else the file.
Origin initial_origin(const Scenario& sc) {
  for (const auto& [k, e] : sc.values)
    if (k.rfind("initial.", 0) == 0 && !e.defaulted) return sc.origin(k);
  return Origin{sc.path, 0, 0};
}

}  // namespace

/// The result file's trajectory and events tables name a column after every state, output and event extra (and
/// time, mode, kind): two declarations of one name would fail the writer after the run, or let a reader take the
/// wrong column. Refused here, before any file is opened, naming both declarations; so are two summary items of one
/// name.
void check_unique_columns(const HybridSystem& sys, const Scenario& sc) {
  // Every sweep point builds a system: the names are compared without making a string per name (sorted views,
  // stably, so that of two equal names the one declared first is said first); the message is made for a clash.
  struct Entry {
    std::string_view name;
    const char* what;  // "the state " + name, or a whole description when `fixed`
    bool fixed;
  };
  auto check = [&](std::vector<Entry>& v, const char* place) {
    std::stable_sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    for (std::size_t k = 1; k < v.size(); ++k)
      if (v[k].name == v[k - 1].name) {
        auto said = [](const Entry& e) { return e.fixed ? std::string(e.what) : e.what + std::string(e.name); };
        throw InputError(sc.origin("model"), std::string("the result file would have two ") + place + " named '" +
                                                 std::string(v[k].name) + "': " + said(v[k - 1]) + " and " +
                                                 said(v[k]) + "; give one of them another name");
      }
  };
  const std::vector<std::string> extras = sys.event_extras();
  std::vector<Entry> columns{{"time", "the time column", true},
                             {"mode", "the mode column", true},
                             {"kind", "the events' kind column", true},
                             {"mode_before", "the events' mode_before column", true},
                             {"mode_after", "the events' mode_after column", true}};
  for (const auto& s : sys.states()) columns.push_back({s.name, "the state ", false});
  for (const auto& s : sys.outputs()) columns.push_back({s.name, "the output ", false});
  for (const auto& e : extras) columns.push_back({e, "the event extra ", false});
  check(columns, "columns");
  // The summary's items are attributes of /summary next to the run's own; those a summarizer declares before the
  // run are checked here (an item it adds only at the end is refused by the writer, write_summary).
  std::vector<SummaryItem> items;
  if (const auto summarizer = sys.make_summarizer()) items = summarizer->items();
  std::vector<Entry> keys;
  for (const auto own : kSummaryOwnKeys) keys.push_back({own, "the summary's own ", false});
  for (const auto& item : items) keys.push_back({item.key, "the summary item ", false});
  check(keys, "summary items");
}

std::unique_ptr<HybridSystem> build_system(const Scenario& sc) { return build_system(sc, ColumnCheck::check); }

std::unique_ptr<HybridSystem> build_system(const Scenario& sc, ColumnCheck columns) {
  const ModelEntry* model = find_model(sc.model);
  if (!model) throw InputError(sc.origin("model"), "unknown model \"" + sc.model + "\"");
  auto system = model->make_system(sc);
  if (columns == ColumnCheck::check) check_unique_columns(*system, sc);
  std::vector<double> x0(system->size());
  system->initial_state(x0.data());
  for (std::size_t i = 0; i < x0.size(); ++i)
    if (!std::isfinite(x0[i])) {
      throw InputError(initial_origin(sc), "the initial state is not finite (" + system->states()[i].name + " = " +
                                               std::to_string(x0[i]) +
                                               "): the parameters or the initial values overflow double precision");
    }
  // States named in solver.atol = { name = value } must be states of the system.
  for (const auto& [name, at] : simulation_parameters().names_given(sc, "solver.atol")) {
    bool known = false;
    std::vector<std::string> names;
    for (const auto& s : system->states()) {
      known = known || s.name == name;
      names.push_back(s.name);
    }
    if (!known) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      std::string msg = "solver.atol names '" + name + "', which is not a state of model \"" + sc.model +
                        "\"; allowed names: " + list;
      const std::string near = closest_match(name, names);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      throw InputError(at, msg);
    }
  }
  // The initial mode is part of the input: a start the model refuses (e.g. on a switching surface where the
  // motion is not unique) is found here, before any command opens a file.
  try {
    system->initial_mode(x0.data());
  } catch (const InputError& e) {
    if (e.located()) throw;
    throw InputError(initial_origin(sc), e.what());
  }
  return system;
}

const ModelEntry* find_model(const std::string& name) {
  for (const auto& m : models())
    if (m.name == name) return &m;
  return nullptr;
}

const ScenarioSchemas& model_schemas() {
  static const ScenarioSchemas schemas = [] {
    ScenarioSchemas s;
    for (const auto& m : models()) s.models.push_back(m.name);
    s.keys = [](const std::string& model, const std::map<std::string, std::string>& raw) {
      return find_model(model)->schema(raw);
    };
    s.common = common_keys();
    return s;
  }();
  return schemas;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return load_scenario(path, overrides, model_schemas());
}

Scenario load_scenario_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
  return load_scenario_text(text, path, overrides, model_schemas());
}

std::size_t user_models_derived() { return lagrangian::full_builds(); }

std::string model_setup_text(const HybridSystem& system) {
  const auto* user = dynamic_cast<const lagrangian::UserModel*>(&system);
  if (!user) return "";
  const auto& s = user->setup_times();
  char buf[128];
  std::snprintf(buf, sizeof buf, "derivation %.3f s, source %.3f s, ", s.derive_seconds, s.generate_seconds);
  std::string text = buf;
  if (s.from_cache) return text + "kernels from the cache (" + s.library + ")";
  std::snprintf(buf, sizeof buf, "compilation %.3f s (", s.compile_seconds);
  return text + buf + s.library + ")";
}

std::vector<KeySpec> common_keys() {
  std::vector<KeySpec> v = simulation_parameters().keys();
  for (auto& k : output_parameters().keys()) v.push_back(std::move(k));
  return v;
}

}  // namespace rollsim
