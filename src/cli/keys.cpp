// rollsim keys: the scenario keys of a model (or the keys every model shares) with type, unit, default, allowed
// values and meaning, as text or as the markdown tables of scenarios/README.md and docs/scenario-keys-*.md.
#include <algorithm>
#include <cstdio>
#include <map>

#include "common.hpp"
#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/scenario/key_table.hpp"

namespace rollsim::cli {

namespace {

struct KeysArgs {
  std::string model;
  std::vector<std::string> sections;
  std::vector<std::string> with;  ///< top-level string keys that select keys (e.g. formulation=contact)
  bool markdown = false;
  bool common = false;
};

/// The section of a key: the part before its first dot, or a top-level key's own name (e.g. `formulation`).
std::string section_of(const std::string& path) { return path.substr(0, path.find('.')); }

int keys_command(const KeysArgs& a) {
  std::vector<KeySpec> keys;
  if (a.common) {
    if (!a.model.empty()) throw InputError(Origin{"--common", 0, 0}, "give a model or --common, not both");
    keys = common_keys();
  } else if (a.model.empty()) {
    std::printf("models (rollsim keys MODEL lists a model's keys; --common the keys every model shares):\n");
    for (const auto& m : models()) std::printf("  %-18s %s\n", m.name.c_str(), m.description.c_str());
    return 0;
  } else {
    const ModelEntry* m = find_model(a.model);
    if (!m) {
      std::string list;
      for (const auto& e : models()) list += (list.empty() ? "\"" : ", \"") + e.name + "\"";
      std::string msg = "unknown model \"" + a.model + "\"; allowed values " + list;
      std::vector<std::string> names;
      for (const auto& e : models()) names.push_back(e.name);
      const std::string near = closest_match(a.model, names);
      if (!near.empty()) msg += "; did you mean \"" + near + "\"?";
      throw InputError(Origin{"keys " + a.model, 0, 0}, msg);
    }
    std::map<std::string, std::string> raw;
    for (const auto& w : a.with) {
      const auto eq = w.find('=');
      if (eq == std::string::npos || eq == 0)
        throw InputError(Origin{"--with " + w, 0, 0}, "expected KEY=VALUE, e.g. formulation=contact");
      raw[w.substr(0, eq)] = w.substr(eq + 1);
    }
    // `raw` holds no `model` (a scenario's always does): a model whose keys the scenario names (lagrangian:
    // parameters, coordinates, contacts, ...) lists them for the placeholder name NAME.
    keys = m->schema(raw);
  }
  if (!a.sections.empty()) {
    std::vector<KeySpec> kept;
    for (const auto& k : keys)
      if (std::find(a.sections.begin(), a.sections.end(), section_of(k.path)) != a.sections.end()) kept.push_back(k);
    if (kept.empty()) throw InputError(Origin{"--section", 0, 0}, "no key is in the sections given");
    keys = kept;
  }
  const std::string text = a.markdown ? markdown_key_table(keys) : text_key_table(keys);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

void add_keys_command(CLI::App& app) {
  auto args = std::make_shared<KeysArgs>();
  auto* cmd = app.add_subcommand(
      "keys", "The scenario keys of a model (type, unit, default, allowed values, meaning); without MODEL, the models");
  cmd->add_option("model", args->model, "model name, as in `model = \"...\"` of a scenario");
  cmd->add_option("--section", args->sections,
                  "only the keys of this section, e.g. parameters, initial, events, or a top-level key such as formulation "
                  "(repeatable)");
  cmd->add_option("--with", args->with,
                  "KEY=VALUE: the keys of a model with this top-level choice, e.g. formulation=contact (repeatable)");
  cmd->add_flag("--markdown", args->markdown, "print a markdown table (as in scenarios/README.md)");
  cmd->add_flag("--common", args->common, "the keys every model shares instead of a model's");
  cmd->callback([args]() { throw CLI::RuntimeError(keys_command(*args)); });
}

}  // namespace rollsim::cli
