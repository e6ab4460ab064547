#include "rollsim/sweep/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <toml++/toml.h>

#include "rollsim/app/registry.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/scenario/scenario_set.hpp"
#include "rollsim/scenario/toml_text.hpp"
#include "rollsim/solve/simulate.hpp"

namespace rollsim::sweep {

namespace {

Origin pos(const std::string& path, const toml::node& n) {
  const auto& s = n.source();
  return Origin{path, static_cast<int>(s.begin.line), static_cast<int>(s.begin.column)};
}

bool before(const toml::node& a, const toml::node& b) {
  const auto& x = a.source().begin;
  const auto& y = b.source().begin;
  return x.line != y.line ? x.line < y.line : x.column < y.column;
}

/// Keys of the schema that may be swept.
struct SchemaIndex {
  std::map<std::string, const KeySpec*> keys;
  std::vector<std::string> names;
  explicit SchemaIndex(const Scenario& sc) {
    for (const auto& k : sc.schema) {
      if (k.path == "model") continue;
      keys[k.path] = &k;
      names.push_back(k.path);
    }
  }
  bool is_prefix(const std::string& p) const {
    for (const auto& n : names)
      if (n.rfind(p + ".", 0) == 0) return true;
    return false;
  }
};

struct Parser {
  const Scenario& base;
  const SchemaIndex& schema;
  Spec spec;
  std::optional<Origin> mode_origin;

  [[noreturn]] void fail(const toml::node& n, const std::string& msg) const { throw InputError(pos(base.path, n), msg); }

  /// One value of an axis: typed, as TOML text (value_text: the override that sets it) and as a label.
  static void push(Axis& a, Value v, double number) {
    a.values.push_back(value_text(v));
    a.numbers.push_back(number);
    if (const auto* str = std::get_if<std::string>(&v)) {
      a.labels.push_back(*str);
      a.numeric = false;
    } else {
      a.labels.push_back(a.values.back());
      a.numeric = a.numeric && !std::holds_alternative<bool>(v);
    }
    a.typed.push_back(std::move(v));
  }

  /// A number for a key of `kind`: an integer key takes a whole number (within long long) as an integer.
  static Value number_value(double v, Kind kind) {
    if (kind == Kind::Integer && std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9.2e18)
      return static_cast<long long>(v);
    return v;
  }

  void add_value(Axis& a, const toml::node& item, const KeySpec& ks) {
    if (auto i = item.as_integer()) {
      push(a, static_cast<long long>(i->get()), static_cast<double>(i->get()));
    } else if (auto f = item.as_floating_point()) {
      push(a, number_value(f->get(), ks.kind), f->get());
    } else if (auto s = item.as_string()) {
      push(a, s->get(), NAN);
    } else if (auto b = item.as_boolean()) {
      push(a, b->get(), NAN);
    } else {
      fail(item, "sweep." + a.key + ": a swept value must be a number, a string or a boolean");
    }
  }

  void range(Axis& a, const toml::table& t, const KeySpec& ks) {
    const toml::node* from = nullptr;
    const toml::node* to = nullptr;
    const toml::node* n = nullptr;
    const toml::node* spacing = nullptr;
    for (const auto& [k, v] : t) {
      const std::string name(k.str());
      if (name == "from") from = &v;
      else if (name == "to") to = &v;
      else if (name == "n") n = &v;
      else if (name == "spacing") spacing = &v;
      else {
        std::string msg = "sweep." + a.key + ": unknown range field '" + name + "'; a range reads { from = A, to = B, n = N, spacing = \"linear\" | \"log\" }";
        const std::string near = closest_match(name, {"from", "to", "n", "spacing"});
        if (!near.empty()) msg += "; did you mean '" + near + "'?";
        fail(v, msg);
      }
    }
    auto number = [&](const toml::node* node, const char* field) -> double {
      if (!node)
        throw InputError(pos(base.path, t), "sweep." + a.key + ": a range needs '" + field + "' (from, to, n)");
      if (auto i = node->as_integer()) return static_cast<double>(i->get());
      if (auto f = node->as_floating_point()) {
        if (!std::isfinite(f->get())) fail(*node, "sweep." + a.key + "." + field + " must be a finite number");
        return f->get();
      }
      fail(*node, "sweep." + a.key + "." + field + " must be a number");
    };
    const double lo = number(from, "from");
    const double hi = number(to, "to");
    if (!n) throw InputError(pos(base.path, t), "sweep." + a.key + ": a range needs 'n' (the number of values)");
    auto ni = n->as_integer();
    if (!ni) fail(*n, "sweep." + a.key + ".n must be an integer");
    if (ni->get() < 1) fail(*n, "sweep." + a.key + ".n = " + std::to_string(ni->get()) + " is out of range; n must be at least 1");
    if (static_cast<unsigned long long>(ni->get()) > kMaxPoints)
      fail(*n, "sweep." + a.key + ".n = " + std::to_string(ni->get()) + " is too large; the limit is " + std::to_string(kMaxPoints));
    bool log = false;
    if (spacing) {
      auto s = spacing->as_string();
      if (!s || (s->get() != "linear" && s->get() != "log"))
        fail(*spacing, "sweep." + a.key + ".spacing must be \"linear\" or \"log\"");
      log = s->get() == "log";
    }
    if (log && !(lo > 0)) fail(*from, "sweep." + a.key + ": log spacing needs from > 0 (from = " + toml_text::float_text(lo) + ")");
    if (log && !(hi > 0)) fail(*to, "sweep." + a.key + ": log spacing needs to > 0 (to = " + toml_text::float_text(hi) + ")");
    if (ks.kind != Kind::Real && ks.kind != Kind::Integer)
      fail(t, "sweep." + a.key + ": a range needs a numeric key; give a list of values instead");
    for (const double v : spaced(lo, hi, ni->get(), log)) {
      if (ks.kind == Kind::Integer && v != std::floor(v))
        fail(t, "sweep." + a.key + " is an integer key, but the range gives " + toml_text::float_text(v) +
                    "; choose from, to and n so that every value is an integer, or give a list");
      push(a, number_value(v, ks.kind), v);
    }
  }

  void axis(const std::string& key, const toml::node& node) {
    auto it = schema.keys.find(key);
    if (it == schema.keys.end()) {
      std::string msg = "sweep: unknown key '" + key + "' for model \"" + base.model + "\"";
      if (key == "model") msg = "sweep: the model cannot be swept";
      const std::string near = key == "model" ? "" : closest_match(key, schema.names);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      fail(node, msg);
    }
    for (const auto& a : spec.axes)
      if (a.key == key) fail(node, "sweep: the key '" + key + "' is swept twice (first at " + a.origin.str() + ")");
    const KeySpec& ks = *it->second;
    Axis a;
    a.key = key;
    a.origin = pos(base.path, node);
    a.unit = ks.unit;
    a.description = ks.description;
    if (auto arr = node.as_array()) {
      if (arr->empty()) fail(node, "sweep." + key + ": the list of values is empty");
      if (arr->size() > kMaxPoints) fail(node, "sweep." + key + ": too many values");
      for (const auto& item : *arr) add_value(a, item, ks);
    } else if (auto t = node.as_table()) {
      range(a, *t, ks);
    } else {
      fail(node, "sweep." + key + " must be a list of values or a range { from = A, to = B, n = N }");
    }
    spec.axes.push_back(std::move(a));
  }

  /// `summary = ["key", ...]`: the summary items to write (their names are checked against the model's by
  /// check_valid_point, which builds it).
  void summary(const toml::node& node) {
    const auto* arr = node.as_array();
    if (!arr)
      fail(node, "sweep.summary must be a list of summary item names, e.g. summary = [\"t_edge\"] (docs/sweep.md)");
    spec.summary.emplace();
    for (const auto& item : *arr) {
      const auto* s = item.as_string();
      if (!s) fail(item, "sweep.summary: each entry must be the name of a summary item, as a string");
      for (std::size_t k = 0; k < spec.summary->size(); ++k)
        if ((*spec.summary)[k] == s->get())
          fail(item, "sweep.summary: '" + s->get() + "' is listed twice (first at " + spec.summary_origins[k].str() +
                         ")");
      spec.summary->push_back(s->get());
      spec.summary_origins.push_back(pos(base.path, item));
    }
  }

  void walk(const toml::table& t, const std::string& prefix) {
    std::vector<std::pair<std::string, const toml::node*>> items;
    for (const auto& [k, v] : t) items.emplace_back(std::string(k.str()), &v);
    std::sort(items.begin(), items.end(), [](const auto& x, const auto& y) { return before(*x.second, *y.second); });
    for (const auto& [name, node] : items) {
      const std::string key = prefix.empty() ? name : prefix + "." + name;
      if (prefix.empty() && name == "mode") {
        auto s = node->as_string();
        if (!s || (s->get() != "grid" && s->get() != "zip"))
          fail(*node, "sweep.mode must be \"grid\" or \"zip\"");
        spec.mode = s->get();
        mode_origin = pos(base.path, *node);
        continue;
      }
      if (prefix.empty() && name == "summary") {
        summary(*node);
        continue;
      }
      if (auto sub = node->as_table()) {
        const bool is_range = sub->contains("from") || sub->contains("to") || sub->contains("n") || sub->contains("spacing");
        if (!is_range && !schema.keys.count(key) && schema.is_prefix(key)) {
          walk(*sub, key);
          continue;
        }
      }
      axis(key, *node);
    }
  }
};

}  // namespace

std::vector<double> spaced(double from, double to, long long n, bool log) {
  std::vector<double> v(static_cast<std::size_t>(n));
  if (n == 1) {
    v[0] = from;
    return v;
  }
  // Log spacing interpolates the decimal exponent, so that decades come out as exact powers of ten.
  const double a = log ? std::log10(from) : from;
  const double b = log ? std::log10(to) : to;
  for (long long i = 0; i < n; ++i) {
    const double s = static_cast<double>(i) / static_cast<double>(n - 1);
    const double u = a + (b - a) * s;
    v[static_cast<std::size_t>(i)] = log ? std::pow(10.0, u) : u;
  }
  v.front() = from;
  v.back() = to;
  return v;
}

std::vector<std::size_t> Spec::indices(std::size_t i) const {
  std::vector<std::size_t> idx(axes.size());
  for (std::size_t k = 0; k < axes.size(); ++k) idx[k] = index(i, k);
  return idx;
}

std::size_t Spec::index(std::size_t i, std::size_t k) const {
  if (mode == "zip") return i;
  // Grid: the last axis varies fastest.
  for (std::size_t j = axes.size(); --j > k;) i /= axes[j].values.size();
  return i % axes[k].values.size();
}

std::vector<std::string> Spec::overrides(std::size_t i) const {
  const auto idx = indices(i);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < axes.size(); ++k) out.push_back(axes[k].key + "=" + axes[k].values[idx[k]]);
  return out;
}

Spec parse_spec(const Scenario& base, const std::vector<std::string>& sets) {
  for (const auto& s : sets) {
    const std::string key = s.substr(0, s.find('='));
    if (key == "sweep" || key.rfind("sweep.", 0) == 0)
      throw InputError(Origin{"--set " + s, 0, 0}, "the [sweep] section cannot be changed with --set; edit the scenario file");
  }
  toml::table root;
  try {
    root = toml::parse(base.text, base.path);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw InputError(Origin{base.path, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
                     std::string("syntax error: ") + std::string(e.description()));
  }
  const toml::node* sw = root.get("sweep");
  if (!sw) throw InputError(Origin{base.path, 1, 1}, "the scenario has no [sweep] section; see docs/sweep.md");
  if (!sw->is_table()) throw InputError(pos(base.path, *sw), "sweep must be a table: [sweep] with key = [values] lines");
  const SchemaIndex schema(base);
  Parser p{base, schema, {}, {}};
  p.walk(*sw->as_table(), "");
  Spec& spec = p.spec;
  if (spec.axes.empty())
    throw InputError(pos(base.path, *sw), "the [sweep] section sweeps no key; add e.g. \"initial.theta1\" = [0.01, 0.02]");
  for (const auto& s : sets) {
    const std::string key = s.substr(0, s.find('='));
    for (const auto& a : spec.axes)
      if (a.key == key)
        throw InputError(Origin{"--set " + s, 0, 0},
                         "the key '" + key + "' is swept (" + a.origin.str() + "); it cannot also be set with --set");
  }
  if (spec.mode == "zip") {
    const Axis& first = spec.axes.front();
    for (const auto& a : spec.axes)
      if (a.values.size() != first.values.size())
        throw InputError(a.origin, "sweep: mode = \"zip\" needs lists of equal length; '" + first.key + "' has " +
                                       std::to_string(first.values.size()) + " values, '" + a.key + "' has " +
                                       std::to_string(a.values.size()));
    spec.n_points = first.values.size();
  } else {
    std::size_t n = 1;
    for (const auto& a : spec.axes) {
      if (a.values.size() > kMaxPoints / n)
        throw InputError(a.origin, "sweep: the grid has more than " + std::to_string(kMaxPoints) + " points");
      n *= a.values.size();
    }
    spec.n_points = n;
  }
  return spec;
}

namespace {

/// Keeps a point's samples in memory (for --trajectories).
class TrajectoryRecorder final : public Observer {
 public:
  explicit TrajectoryRecorder(Trajectory& t) : t_(t) {}
  void on_start(const RunInfo& info) override {
    sys_ = info.system;
    auto add = [&](const Signal& s, bool state) {
      t_.names.push_back(s.name);
      t_.units.push_back(s.unit);
      t_.descriptions.push_back(s.description);
      t_.roles.emplace_back(role_name(written_role(s, state)));
      t_.contacts.push_back(s.contact);
      t_.ledger.push_back(s.ledger);
    };
    add(sys_->time_signal().as(Role::Time), false);
    for (const auto& s : sys_->states()) add(s, true);
    for (const auto& s : sys_->outputs()) add(s, false);
    if (sys_->has_modes()) add(Signal{"mode", "1", "mode of the hybrid system"}.as(Role::Mode), false);
    t_.columns.assign(t_.names.size(), {});
    for (const auto& c : event_columns(*sys_)) {
      t_.event_names.push_back(c.signal.name);
      t_.event_units.push_back(c.signal.unit);
      t_.event_descriptions.push_back(c.signal.description);
      t_.event_roles.emplace_back(role_name(written_role(c.signal, false)));
      t_.event_contacts.push_back(c.signal.contact);
      t_.event_ledger.push_back(c.signal.ledger);
    }
    t_.event_columns.assign(t_.event_names.size(), {});
  }
  void on_event(const EventRecord& ev) override {
    event_row(*sys_, ev, row_);
    for (std::size_t k = 0; k < row_.size(); ++k) t_.event_columns[k].push_back(row_[k]);
    t_.event_kinds.push_back(ev.kind);
  }
  void on_sample(double t, const double* x, const double* y, int mode) override {
    std::size_t k = 0;
    t_.columns[k++].push_back(t);
    for (std::size_t i = 0; i < sys_->states().size(); ++i) t_.columns[k++].push_back(x[i]);
    for (std::size_t i = 0; i < sys_->outputs().size(); ++i) t_.columns[k++].push_back(y[i]);
    if (sys_->has_modes()) t_.columns[k++].push_back(mode);
  }

 private:
  Trajectory& t_;
  const HybridSystem* sys_ = nullptr;
  std::vector<double> row_;
};

}  // namespace

std::string point_text(const Spec& spec, std::size_t i) {
  const auto idx = spec.indices(i);
  std::string out;
  for (std::size_t k = 0; k < spec.axes.size(); ++k)
    out += (k ? ", " : "") + spec.axes[k].key + " = " + spec.axes[k].values[idx[k]];
  return out;
}

namespace {

/// True when point values can be set on a copy of the base as typed values (no text to parse).
bool typed_points(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec) {
  bool typed = base.overrides == sets;
  for (const auto& a : spec.axes) typed = typed && settable(base, a.key);
  return typed;
}

/// Point i's swept values set on sc, a copy of the base (with the base's overrides).
void set_point_values(Scenario& sc, const Spec& spec, std::size_t i) {
  const auto idx = spec.indices(i);
  for (std::size_t k = 0; k < spec.axes.size(); ++k) set_value(sc, spec.axes[k].key, spec.axes[k].typed[idx[k]]);
}

/// The scenario of point i: the base with the point's values set (the base holds the command line's overrides
/// already); a point that sets a top-level key (which may choose the schema) reads the base text again with the
/// command line's overrides and the point's. Either way the same checks and messages.
Scenario point_scenario(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec, std::size_t i) {
  if (typed_points(base, sets, spec)) {
    Scenario sc = base;
    set_point_values(sc, spec, i);
    return sc;
  }
  std::vector<std::string> ov = sets;
  for (auto& o : spec.overrides(i)) ov.push_back(std::move(o));
  return load_scenario_text(base.text, base.path, ov);
}

/// Point i's swept values set on the workspace's copy of the base, each checked and converted on its first use.
void set_point_values(PointWorkspace& w, const Spec& spec, std::size_t i) {
  if (w.spec != &spec || w.prepared.size() != spec.axes.size()) {
    w.prepared.assign(spec.axes.size(), {});
    for (std::size_t k = 0; k < spec.axes.size(); ++k) w.prepared[k].resize(spec.axes[k].typed.size());
    w.spec = &spec;
  }
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const std::size_t j = spec.index(i, k);
    auto& slot = w.prepared[k][j];
    if (std::holds_alternative<std::monostate>(slot)) {
      try {
        slot = prepare_value(*w.scenario, spec.axes[k].key, spec.axes[k].typed[j]);
      } catch (const InputError&) {
        slot = std::current_exception();
      }
    }
    if (const auto* e = std::get_if<std::exception_ptr>(&slot)) std::rethrow_exception(*e);
    set_prepared(*w.scenario, std::get<PreparedValue>(slot));
  }
}

/// Point i's scenario in the workspace's copy of the base when the points are typed (only the swept entries, the
/// derived ones and the overrides differ between points, and each is set anew), else a new scenario in it.
const Scenario& point_scenario(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec,
                               std::size_t i, PointWorkspace& w) {
  if (typed_points(base, sets, spec)) {
    if (!w.scenario || w.of != &base) {
      w.scenario = std::make_unique<Scenario>(base);
      w.of = &base;
      w.spec = nullptr;  // the prepared values belong to one base
    } else {
      w.scenario->overrides = base.overrides;
    }
    set_point_values(w, spec, i);
    return *w.scenario;
  }
  w.scenario = std::make_unique<Scenario>(point_scenario(base, sets, spec, i));
  w.of = nullptr;
  return *w.scenario;
}

/// An input error of point i: if a swept value caused it, the override prefix ("--set key=value: ") is dropped
/// and `axis` is set to the swept key's index.
std::string point_error(const Spec& spec, std::size_t i, const InputError& e, std::size_t* axis = nullptr) {
  const std::string what = e.what();
  const auto ov = spec.overrides(i);
  for (std::size_t k = 0; k < ov.size(); ++k) {
    const std::string carried = "--set " + ov[k] + ": ";
    if (what.rfind(carried, 0) == 0) {
      if (axis) *axis = k;
      return what.substr(carried.size());
    }
  }
  return what;
}

/// Every key of `summary = [...]` is one of the items a run of the model reports (summary_keys).
void check_summary_keys(const Spec& spec, const HybridSystem& system, const std::string& model) {
  if (!spec.summary) return;
  const std::vector<std::string> known = summary_keys(system);
  for (std::size_t k = 0; k < spec.summary->size(); ++k) {
    const std::string& key = (*spec.summary)[k];
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg = "sweep.summary: '" + key + "' is not a summary item of model \"" + model + "\"";
    const std::string near = closest_match(key, known);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    msg += "; its items are";
    for (std::size_t j = 0; j < known.size(); ++j) msg += (j ? ", " : " ") + known[j];
    throw InputError(spec.summary_origins[k], msg);
  }
}

}  // namespace

void check_valid_point(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec) {
  std::optional<std::string> first;
  for (std::size_t i = 0; i < spec.n_points; ++i) {
    std::unique_ptr<HybridSystem> system;
    try {
      const Scenario sc = point_scenario(base, sets, spec, i);
      system = build_system(sc);
      simulation_options(sc);
    } catch (const InputError& e) {
      if (first) continue;
      std::size_t axis = spec.axes.size();
      const std::string what = point_error(spec, i, e, &axis);
      first = (axis < spec.axes.size() ? spec.axes[axis].origin.str() + ": " : std::string()) + what;
      continue;
    }
    check_summary_keys(spec, *system, base.model);
    return;
  }
  if (first)
    throw InputError(*first + " (every one of the " + std::to_string(spec.n_points) +
                     " points of the sweep is bad input; this is the first, " + point_text(spec, 0) + ")");
}

PointResult run_point(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec, std::size_t i,
                      bool keep_trajectory, SolverWorkspace* workspace) {
  PointWorkspace w;
  w.solver = workspace;
  return run_point(base, sets, spec, i, keep_trajectory, w);
}

PointResult run_point(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec, std::size_t i,
                      bool keep_trajectory, PointWorkspace& workspace) {
  PointResult r;
  try {
    const Scenario& sc = point_scenario(base, sets, spec, i, workspace);
    bool numeric = true;
    for (const Axis& a : spec.axes) numeric = numeric && a.numeric;
    const bool checked = numeric && workspace.columns_checked == &spec && workspace.of == &base;
    const auto system = build_system(sc, checked ? ColumnCheck::done : ColumnCheck::check);
    if (numeric && workspace.of == &base) workspace.columns_checked = &spec;
    r.time_unit = system->time_signal().unit;
    r.state_names.reserve(system->states().size());
    r.state_units.reserve(system->states().size());
    for (const auto& s : system->states()) {
      r.state_names.push_back(s.name);
      r.state_units.push_back(s.unit);
    }
    SimulationOptions opt = simulation_options(sc);
    opt.summary = spec.summary;
    TrajectoryRecorder rec(r.trajectory);
    std::vector<Observer*> obs;
    if (keep_trajectory) obs.push_back(&rec);
    std::vector<double> x0(system->size());
    system->initial_state(x0.data());
    RunResult res = simulate(*system, x0, opt, obs, workspace.solver);
    r.status = res.status;
    r.termination = res.termination;
    r.message = res.message;
    r.t_final = res.t_final;
    r.n_events = static_cast<long long>(res.n_events);
    r.x_final = std::move(res.x_final);
    r.summary = std::move(res.summary);
    r.has_trajectory = keep_trajectory;
  } catch (const InputError& e) {
    // The point's values reach the scenario as overrides; name them as the point's values instead.
    r.message = "at " + point_text(spec, i) + ": " + point_error(spec, i, e);
    r.status = "input_error: " + r.message;
  } catch (const SolverError& e) {
    r.status = "solver_failure";
    r.message = e.what();
  } catch (const std::exception& e) {
    r.status = std::string("error: ") + e.what();
    r.message = e.what();
  }
  return r;
}

namespace {

/// A worker's last layout of compact rows (PointResult::layout).
struct RowLayout {
  std::size_t serial = 0;
  std::vector<std::string> state_names, state_units, keys;
  std::vector<char> text;
};

/// Releases a row's summary items and state names and units, not only empties them (`= {}` would keep the vectors'
/// memory): a compact row is kept in its ring slot until a later result is copied into it (refill), and 4,096 slots
/// each holding a summary's memory took 12 MB.
void release_layout(PointResult& r) {
  std::vector<SummaryItem>().swap(r.summary);
  std::vector<std::string>().swap(r.state_names);
  std::vector<std::string>().swap(r.state_units);
}

/// Makes r a compact row of worker `worker`, whose last layout is `last`: the first row of a layout keeps
/// everything, a row like the worker's previous one keeps only its numbers and texts.
void compact_row(PointResult& r, RowLayout& last, int worker) {
  bool same = last.serial != 0 && r.state_names == last.state_names && r.state_units == last.state_units &&
              r.summary.size() == last.keys.size();
  for (std::size_t j = 0; same && j < r.summary.size(); ++j)
    same = r.summary[j].key == last.keys[j] && static_cast<char>(!r.summary[j].text.empty()) == last.text[j];
  if (!same) {
    last.serial++;
    last.state_names = r.state_names;
    last.state_units = r.state_units;
    last.keys.clear();
    last.text.clear();
    for (const auto& it : r.summary) {
      last.keys.push_back(it.key);
      last.text.push_back(!it.text.empty());
    }
  }
  r.worker = worker;
  r.layout = last.serial;
  if (!same) return;
  r.numbers.reserve(r.summary.size());
  for (auto& it : r.summary) {
    r.numbers.push_back(it.number);
    if (!it.text.empty()) r.texts.push_back(std::move(it.text));
  }
  release_layout(r);
}

/// Puts a worker's result r in its ring slot. A slot that held an earlier result takes r's values into that one's
/// strings and vectors, whose memory is reused as it is: the thread that tabulates the rows copies from them and
/// never frees them. Freeing on that thread the memory a worker allocated took over a quarter of its time on the disk's
/// basin map (glibc returns such a block to the worker's arena under the arena's lock), more than tabulating the row.
/// r itself is freed here, by the worker that allocated it. A row with a summary (the first of its layout, or every
/// row of a sweep that is not compact) is moved in whole, and a trajectory is moved, not copied. What such a row
/// left in the slot is released when a compact row takes it: 4,096 slots each keeping a summary's memory took 12 MB.
void refill(std::optional<PointResult>& slot, PointResult&& r) {
  if (!slot || !r.summary.empty()) {
    slot = std::move(r);
    return;
  }
  Trajectory trajectory = std::move(r.trajectory);
  *slot = r;
  slot->trajectory = std::move(trajectory);
  release_layout(*slot);
}

/// Asks for the cache lines of an object (a hint; no effect on the result).
template <class T>
void prefetch_object(const T* p) {
  const char* c = reinterpret_cast<const char*>(p);
  for (std::size_t off = 0; off < sizeof(T); off += 64) __builtin_prefetch(c + off);
}

/// Asks for the cache lines of a result's row: its numbers, texts and final state.
void prefetch_rows(const PointResult& r) {
  __builtin_prefetch(r.status.data());
  __builtin_prefetch(r.x_final.data());
  for (std::size_t j = 0; j < r.numbers.size(); j += 8) __builtin_prefetch(r.numbers.data() + j);
  __builtin_prefetch(r.texts.data());
}

}  // namespace

void run_points(const Scenario& base, const std::vector<std::string>& sets, const Spec& spec,
                const std::vector<std::size_t>& which, int threads, bool keep_trajectory,
                const std::function<void(std::size_t, PointResult&&)>& sink,
                const std::function<void(std::size_t, std::size_t)>& progress, std::size_t window, bool compact) {
  const std::size_t n = which.size();
  // No lock is taken per point. Results wait for the sink in a ring of slots, result k in slot k mod cap, marked
  // full by an atomic flag; a worker starts point k only when k < written + limit (so the slot it will fill has
  // been emptied), waiting on the atomic `room` otherwise (the sink is behind: rare without a window). The
  // calling thread waits on the atomic `results` and is woken for a batch of results, not for each: a wake-up is
  // a system call on both sides and leaves this thread's caches cold, a sizeable part of a point that takes 20 us.
  // It waits for the next `batch` results (a quarter of the ring, or half the window): for the last of them, and once
  // that is there for the first one that is not (`target`), whose worker wakes it. A worker that completes a result
  // also wakes it when the next result to take is there and the sink last took results kLatency ago or more: rows
  // then reach the sink, and the progress line the terminal, at least that often while points complete. Woken for
  // each 16 results in a row (as this was before), the disk's 400 x 400 basin map took 3.1 us of this thread's CPU a
  // point with 1 worker and 1.9 us with 2; woken for each 1,024, about 1.5 us with either (rollsim sweep's "writer"
  // line; the clock was then still read at each row, docs/sweep.md).
  const std::size_t cap = std::max<std::size_t>({window, 4096, static_cast<std::size_t>(4 * std::max(threads, 1))});
  const std::size_t limit = window > 0 ? window : cap;
  const std::size_t batch = window > 0 ? std::max<std::size_t>(1, window / 2) : cap / 4;
  constexpr std::chrono::steady_clock::duration kLatency = std::chrono::milliseconds(50);
  std::vector<std::optional<PointResult>> ring(std::min(cap, std::max<std::size_t>(n, 1)));
  std::vector<std::atomic<bool>> full(ring.size());
  const std::size_t slots = ring.size();
  std::atomic<std::size_t> next{0}, done{0}, written{0}, target{0};
  std::atomic<bool> abort{false};
  // What the threads wait on (32-bit, so that C++20's atomic wait is a futex on the value itself): the sink on
  // `results`, bumped by the worker that wakes it; the workers on `room`, bumped by the sink.
  std::atomic<unsigned> results{0}, room{0};
  // When the sink last took results (steady clock ticks).
  std::atomic<std::chrono::steady_clock::rep> last_taken{std::chrono::steady_clock::now().time_since_epoch().count()};
  // Whether the sink last took results kLatency ago or more and result w, the next it takes, is there.
  auto overdue = [&](std::size_t w) {
    if (w >= n || !full[w % slots].load()) return false;
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    return now - last_taken.load(std::memory_order_relaxed) >= kLatency.count();
  };

  auto worker = [&](int index) {
    SolverWorkspace solver;
    PointWorkspace workspace;
    workspace.solver = &solver;
    RowLayout layout;
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= n) return;
      for (unsigned e = room.load(); k >= written.load() + std::min(limit, slots) && !abort; e = room.load())
        room.wait(e);
      if (abort) return;
      PointResult r;
      if (interrupt_flag().load()) {
        r.status = "not_run";
        r.message = "the sweep was interrupted before this point started";
      } else {
        r = run_point(base, sets, spec, which[k], keep_trajectory, workspace);
      }
      if (compact) compact_row(r, layout, index);
      refill(ring[k % slots], std::move(r));
      full[k % slots].store(true);
      done.fetch_add(1);
      // The worker that completes the result the sink waits for sees it (the flag was stored before `target` is
      // loaded here, and the sink stores `target` before it loads the flag: sequentially consistent, one of the
      // two sees the other's store) and wakes the sink; so does one that finds the sink overdue.
      if (k == target.load() || overdue(written.load())) {
        results.fetch_add(1);
        results.notify_one();
      }
    }
  };

  const int nt = std::max(1, std::min<int>(threads, static_cast<int>(std::max<std::size_t>(n, 1))));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(nt));
  for (int t = 0; t < nt; ++t) pool.emplace_back(worker, t);

  auto stop = [&]() {
    abort = true;
    next.store(n);
    room.fetch_add(1);
    room.notify_all();
    for (auto& th : pool)
      if (th.joinable()) th.join();
  };

  try {
    std::size_t w = 0;
    while (w < n) {
      // Wait until the batch is all there, or results are there and overdue: for its last result, and once that is
      // there for the first one that is not.
      const std::size_t last = std::min(w + batch, n) - 1;
      for (;;) {
        std::size_t m = w;
        while (m <= last && full[m % slots].load()) ++m;
        if (m > last || (m > w && overdue(w))) break;
        const std::size_t t = full[last % slots].load() ? m : last;
        target.store(t);
        const unsigned e = results.load();
        if (!full[t % slots].load()) results.wait(e);
      }
      // Every result in a row that is there: given to the sink, its slot emptied, then counted as written (room
      // for the workers).
      std::size_t k = w;
      for (; k < n && full[k % slots].load(); ++k) {
        // The next results were written by other cores: their lines are fetched while this one is taken. A result
        // is read (for its pointers) only once its flag is seen set with acquire, as the loop below reads it.
        if (k + 2 < n && full[(k + 2) % slots].load(std::memory_order_acquire)) prefetch_object(&ring[(k + 2) % slots]);
        if (k + 1 < n && full[(k + 1) % slots].load(std::memory_order_acquire)) prefetch_rows(*ring[(k + 1) % slots]);
        // The slot keeps the result: what the sink leaves in it (a compact row's buffers) is the next result's
        // (refill), so that this thread frees nothing the workers allocated.
        sink(k, std::move(*ring[k % slots]));
        if (keep_trajectory) ring[k % slots]->trajectory = {};  // not kept in the slot if the sink left it there
        full[k % slots].store(false);
      }
      w = k;
      last_taken.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
      written.store(w);
      room.fetch_add(1);
      room.notify_all();
      if (progress) progress(done.load(), n);
    }
  } catch (...) {
    stop();
    throw;
  }
  for (auto& th : pool) th.join();
}

TableBuilder::TableBuilder(const Spec& spec) : spec_(spec) {
  status_.type = termination_.type = message_.type = Column::String;
  status_.name = "status";
  status_.description = "ok, input_error: <message>, solver_failure, audit_failure, interrupted or not_run";
  termination_.name = "termination";
  termination_.description = "t_end, or the name of the terminal event, or the failure";
  message_.name = "message";
  message_.description = "the failure message, if any";
  t_final_.name = "t_final";
  t_final_.description = "time at which the point's run ended (NaN if it did not run)";
  n_events_.type = Column::Int64;
  n_events_.name = "n_events";
  n_events_.unit = "1";
  n_events_.description = "events logged during the run";
}

std::size_t TableBuilder::column(const SummaryItem& it, bool text, std::size_t& guess) {
  std::size_t at;
  if (guess < items_.size() && items_[guess].key == it.key) {
    at = guess;
  } else if (auto found = index_.find(it.key); found != index_.end()) {
    at = found->second;
  } else {
    Item item;
    item.key = it.key;
    item.unit = it.unit;
    item.label = it.label;
    item.text = text;
    item.tallied = it.tallied;
    if (item.text) item.strings.assign(rows_ - first_, "");
    else item.numbers.assign(rows_ - first_, NAN);
    at = items_.size();
    index_.emplace(it.key, at);
    items_.push_back(std::move(item));
  }
  guess = at + 1;
  Item& item = items_[at];
  if (text && !item.text) {  // a text item first met with an empty text: it is a text column
    item.text = true;
    item.strings.assign(item.numbers.size(), "");
    item.numbers.clear();
  }
  return at;
}

void TableBuilder::take_state_names(const PointResult& r) {
  // Final state: the names of the first point whose system was built.
  if (state_names_.empty() && !r.state_names.empty()) {
    state_names_ = r.state_names;
    state_units_ = r.state_units;
    finals_.assign(state_names_.size(), std::vector<double>(rows_ - first_, NAN));
  }
}

void TableBuilder::add(std::size_t i, PointResult&& r) {
  if (i != rows_) throw std::logic_error("sweep::TableBuilder: rows must be added in order");
  // A row's strings are copied, not moved: run_points keeps a compact row's buffers for the worker's next result, so
  // that this thread neither frees what a worker allocated nor leaves it to allocate them anew.
  status_.strings.push_back(r.status);
  termination_.strings.push_back(r.termination);
  message_.strings.push_back(r.message);
  t_final_.numbers.push_back(r.t_final);
  if (t_final_.unit.empty()) t_final_.unit = r.time_unit;  // the first point whose system was built
  n_events_.ints.push_back(r.n_events);
  // Summary items: the union over all points, in order of first appearance. The points of a sweep report their
  // items in the same order, mostly: the item after the last one found is tried before the index.
  std::size_t guess = 0;
  if (r.layout == 0) {
    take_state_names(r);
    for (std::size_t s = 0; s < finals_.size(); ++s)
      finals_[s].push_back(r.state_names == state_names_ && s < r.x_final.size() ? r.x_final[s] : NAN);
    for (auto& it : r.summary) {
      Item& item = items_[column(it, !it.text.empty(), guess)];
      if (item.text) item.strings.push_back(std::move(it.text));
      else item.numbers.push_back(it.number);
    }
  } else {
    // A compact row: the first of its worker's layout carries the summary items (the layout is taken from them),
    // the next ones only the numbers and texts.
    const auto w = static_cast<std::size_t>(r.worker);
    if (w >= layouts_.size()) layouts_.resize(w + 1);
    Layout& l = layouts_[w];
    if (l.serial != r.layout) {
      take_state_names(r);
      l.serial = r.layout;
      l.states_match = !r.state_names.empty() && r.state_names == state_names_;
      l.at.clear();
      l.text.clear();
      l.items_known = SIZE_MAX;  // whether it covers the items is decided at its next row
      for (auto& it : r.summary) {
        l.text.push_back(!it.text.empty());
        l.at.push_back(column(it, l.text.back(), guess));
        Item& item = items_[l.at.back()];
        if (item.text) item.strings.push_back(std::move(it.text));
        else item.numbers.push_back(it.number);
      }
    } else {
      for (std::size_t j = 0, t = 0; j < l.at.size(); ++j) {
        Item& item = items_[l.at[j]];
        if (l.text[j]) item.strings.push_back(r.texts[t++]);  // a text item's column is a text column
        else if (item.text) item.strings.emplace_back();
        else item.numbers.push_back(r.numbers[j]);
      }
      for (std::size_t s = 0; s < finals_.size(); ++s)
        finals_[s].push_back(l.states_match && s < r.x_final.size() ? r.x_final[s] : NAN);
      if (l.items_known != items_.size()) {
        // Decided again when another layout added items: does this one name every item once?
        l.items_known = items_.size();
        std::vector<char> named(items_.size(), 0);
        l.covers = l.at.size() == items_.size();
        for (std::size_t a : l.at) {
          l.covers = l.covers && !named[a];
          named[a] = 1;
        }
      }
      if (l.covers) {  // every column has this row's cell, once: only the tallies are left
        ++rows_;
        for (auto& item : items_)
          if (item.tallied && item.text) item.tally(item.strings.back());
        return;
      }
      ++rows_;
      close_row(i);
      return;
    }
    for (std::size_t s = 0; s < finals_.size(); ++s)
      finals_[s].push_back(l.states_match && s < r.x_final.size() ? r.x_final[s] : NAN);
  }
  ++rows_;
  close_row(i);
}

void TableBuilder::close_row(std::size_t i) {
  for (const auto& item : items_)  // two items of one name at this point went to one column: refused, not misaligned
    if ((item.text ? item.strings.size() : item.numbers.size()) > rows_ - first_)
      throw IoError("sweep: point " + std::to_string(i) + " reports the summary item '" + item.key +
                    "' twice; the table would hold two values in one cell");
  for (auto& item : items_) {  // items this point did not report
    if (item.text && item.strings.size() < rows_ - first_) item.strings.push_back("");
    if (!item.text && item.numbers.size() < rows_ - first_) item.numbers.push_back(NAN);
    if (item.tallied && item.text) item.tally(item.strings.back());
  }
}

void TableBuilder::Item::tally(std::string_view value) {
  if (value.empty()) return;
  if (last && last->first == value) {
    ++last->second;
    return;
  }
  auto it = counts.find(value);
  if (it == counts.end()) it = counts.emplace(std::string(value), 0).first;
  ++it->second;
  last = &*it;
}

std::vector<TableBuilder::Tally> TableBuilder::tallies() const {
  std::vector<Tally> out;
  for (const auto& item : items_)
    if (item.tallied && !item.counts.empty()) out.push_back({item.key, {item.counts.begin(), item.counts.end()}});
  return out;
}

namespace {

/// Moves a column's values out, leaving it empty with room for as many rows (the next block's are as many).
template <class T>
std::vector<T> take_values(std::vector<T>& v) {
  std::vector<T> out = std::move(v);
  v.clear();
  v.reserve(out.size());
  return out;
}

Texts take_values(Texts& t) {
  Texts out = std::move(t);
  t.clear();
  t.reserve(out.size(), out.bytes());
  return out;
}

}  // namespace

std::vector<Column> TableBuilder::take_block() {
  std::vector<Column> cols;
  std::set<std::string> used;
  auto add = [&](Column c) {
    used.insert(c.name);
    cols.push_back(std::move(c));
  };
  // A fixed column hands over its values and keeps its name, type, unit and description.
  auto take = [](Column& c) {
    Column out;
    out.type = c.type;
    out.name = c.name;
    out.unit = c.unit;
    out.description = c.description;
    out.numbers = take_values(c.numbers);
    out.ints = take_values(c.ints);
    out.strings = take_values(c.strings);
    return out;
  };
  for (std::size_t k = 0; k < spec_.axes.size(); ++k) {
    const Axis& a = spec_.axes[k];
    Column c;
    c.name = a.key;
    c.unit = a.unit;
    c.description = "swept: " + a.description;
    c.type = a.numeric ? Column::Float64 : Column::String;
    if (a.numeric) c.numbers.reserve(rows_ - first_);
    for (std::size_t i = first_; i < rows_; ++i) {
      const std::size_t j = spec_.index(i, k);
      if (a.numeric) c.numbers.push_back(a.numbers[j]);
      else c.strings.push_back(a.labels[j]);
    }
    add(std::move(c));
  }
  add(take(status_));
  add(take(termination_));
  add(take(message_));
  add(take(t_final_));
  add(take(n_events_));
  for (std::size_t s = 0; s < state_names_.size(); ++s) {
    Column c;
    c.name = "final_" + state_names_[s];
    c.unit = state_units_[s];
    c.description = "final " + state_names_[s];
    c.numbers = take_values(finals_[s]);
    add(std::move(c));
  }
  for (auto& item : items_) {
    Column c;
    c.name = used.count(item.key) ? "summary_" + item.key : item.key;
    c.unit = item.unit;
    c.description = item.label;
    c.type = item.text ? Column::String : Column::Float64;
    c.numbers = take_values(item.numbers);
    c.strings = take_values(item.strings);
    add(std::move(c));
  }
  first_ = rows_;
  return cols;
}

std::vector<Column> build_table(const Spec& spec, const std::vector<PointResult>& rows) {
  TableBuilder b(spec);
  for (std::size_t i = 0; i < rows.size(); ++i) b.add(i, rows[i]);
  return b.finish();
}

namespace {

void put_u64(std::string& b, unsigned long long v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_f64(std::string& b, double v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_str(std::string& b, const std::string& s) {
  put_u64(b, s.size());
  b += s;
}
void put_strs(std::string& b, const std::vector<std::string>& v) {
  put_u64(b, v.size());
  for (const auto& s : v) put_str(b, s);
}
void put_f64s(std::string& b, const std::vector<double>& v) {
  put_u64(b, v.size());
  if (!v.empty()) b.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

struct Reader {
  const std::string& b;
  std::size_t at = 0;
  void need(std::size_t n) {
    if (at + n > b.size()) throw std::runtime_error("sweep: truncated result buffer");
  }
  unsigned long long u64() {
    need(8);
    unsigned long long v;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
  }
  double f64() {
    need(8);
    double v;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
  }
  std::string str() {
    const auto n = u64();
    need(n);
    std::string s = b.substr(at, n);
    at += n;
    return s;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(u64());
    for (auto& s : v) s = str();
    return v;
  }
  std::vector<double> f64s() {
    const auto n = u64();
    need(n * 8);
    std::vector<double> v(n);
    if (n > 0) std::memcpy(v.data(), b.data() + at, n * 8);
    at += n * 8;
    return v;
  }
};

}  // namespace

void encode(std::size_t index, const PointResult& r, std::string& b) {
  put_u64(b, index);
  put_str(b, r.status);
  put_str(b, r.termination);
  put_str(b, r.message);
  put_f64(b, r.t_final);
  put_str(b, r.time_unit);
  put_u64(b, static_cast<unsigned long long>(r.n_events));
  put_strs(b, r.state_names);
  put_strs(b, r.state_units);
  put_f64s(b, r.x_final);
  put_u64(b, r.summary.size());
  for (const auto& it : r.summary) {
    put_str(b, it.key);
    put_f64(b, it.number);
    put_str(b, it.text);
    put_str(b, it.unit);
    put_str(b, it.label);
    put_u64(b, (it.is_integer ? 1u : 0u) | (it.tallied ? 2u : 0u));
  }
  put_u64(b, r.has_trajectory ? 1 : 0);
  if (r.has_trajectory) {
    put_strs(b, r.trajectory.names);
    put_strs(b, r.trajectory.units);
    put_strs(b, r.trajectory.descriptions);
    put_strs(b, r.trajectory.roles);
    put_strs(b, r.trajectory.contacts);
    put_f64s(b, r.trajectory.ledger);
    put_u64(b, r.trajectory.columns.size());
    for (const auto& c : r.trajectory.columns) put_f64s(b, c);
    put_strs(b, r.trajectory.event_names);
    put_strs(b, r.trajectory.event_units);
    put_strs(b, r.trajectory.event_descriptions);
    put_strs(b, r.trajectory.event_roles);
    put_strs(b, r.trajectory.event_contacts);
    put_f64s(b, r.trajectory.event_ledger);
    put_u64(b, r.trajectory.event_columns.size());
    for (const auto& c : r.trajectory.event_columns) put_f64s(b, c);
    put_strs(b, r.trajectory.event_kinds);
  }
}

void decode(const std::string& buf, std::vector<std::size_t>& index, std::vector<PointResult>& out) {
  Reader rd{buf};
  while (rd.at < buf.size()) {
    index.push_back(rd.u64());
    PointResult r;
    r.status = rd.str();
    r.termination = rd.str();
    r.message = rd.str();
    r.t_final = rd.f64();
    r.time_unit = rd.str();
    r.n_events = static_cast<long long>(rd.u64());
    r.state_names = rd.strs();
    r.state_units = rd.strs();
    r.x_final = rd.f64s();
    r.summary.resize(rd.u64());
    for (auto& it : r.summary) {
      it.key = rd.str();
      it.number = rd.f64();
      it.text = rd.str();
      it.unit = rd.str();
      it.label = rd.str();
      const auto flags = rd.u64();
      it.is_integer = (flags & 1u) != 0;
      it.tallied = (flags & 2u) != 0;
    }
    r.has_trajectory = rd.u64() != 0;
    if (r.has_trajectory) {
      r.trajectory.names = rd.strs();
      r.trajectory.units = rd.strs();
      r.trajectory.descriptions = rd.strs();
      r.trajectory.roles = rd.strs();
      r.trajectory.contacts = rd.strs();
      r.trajectory.ledger = rd.f64s();
      r.trajectory.columns.resize(rd.u64());
      for (auto& c : r.trajectory.columns) c = rd.f64s();
      r.trajectory.event_names = rd.strs();
      r.trajectory.event_units = rd.strs();
      r.trajectory.event_descriptions = rd.strs();
      r.trajectory.event_roles = rd.strs();
      r.trajectory.event_contacts = rd.strs();
      r.trajectory.event_ledger = rd.f64s();
      r.trajectory.event_columns.resize(rd.u64());
      for (auto& c : r.trajectory.event_columns) c = rd.f64s();
      r.trajectory.event_kinds = rd.strs();
    }
    out.push_back(std::move(r));
  }
}

}  // namespace rollsim::sweep
