// The user model's outputs and events, the names they must not take, and the derivation and compilation of its
// equations into the compiled form (its kernels, sizes and input layout).
#include <chrono>
#include <map>
#include <mutex>
#include <set>

#include "rollsim/core/lock_wait.hpp"
#include "rollsim/symbolic/nonholonomic.hpp"

#include "rollsim/core/error.hpp"
#include "lagrangian_build.hpp"

namespace rollsim::lagrangian::detail {

using symbolic::KernelNames;

void read_outputs_and_events(Build& b) {
  symbolic::LagrangeModel& m = b.m;
  for (const auto& o : ordered(b.sc, "outputs", "expression")) {
    const OutputKeys out = keys().outputs.read(b.rd, o);
    m.outputs.push_back(out.expression);
    b.c->user_outputs.push_back({o, out.unit, out.description});
  }
  for (const auto& e : ordered(b.sc, "events", "when")) {
    const std::string k = "events." + e + ".";
    const EventKeys event = keys().events.read(b.rd, e);
    m.events.push_back(event.when);
    if (m.has_contact && (e == "switching_surface" || e == "sigma_plus" || e == "sigma_minus"))
      b.sc.fail(k + "when", "the event name '" + e + "' is the contact's own witness; choose another name");
    for (const auto& spec : contact_specs(m))
      for (const auto& w : ContactEngine::witness_names(spec))
        if (e == w) b.sc.fail(k + "when", "the event name '" + e + "' is a witness of contact " + spec.name + "; choose another name");
    b.c->events.push_back({e, event.direction, event.terminal});
  }
}

/// Names must not collide with the built-in signals.
void check_signal_names(const Build& b) {
  const symbolic::LagrangeModel& m = b.m;
  std::set<std::string> taken;
  Compiled probe;
  probe.n = m.n();
  probe.coordinates = m.coordinates;
  probe.units.assign(m.n(), "");
  probe.has_contact = m.has_contact;
  probe.constraint_names = m.constraint_names;
  for (const auto& s : state_signals(probe)) taken.insert(s.name);
  for (const auto& s : output_signals(probe)) taken.insert(s.name);
  for (const LedgerState s : kLedgerStates) taken.insert(ledger_state(s).name);
  for (const auto& s : ContactEngine::engine_states(true, true)) taken.insert(s.name);
  for (const auto& s : ContactEngine::engine_outputs(contact_specs(m))) taken.insert(s.name);
  // A constraint's multiplier (lambda_NAME) must not take a coordinate's or a built-in signal's name.
  for (const auto& n : m.constraint_names)
    if (taken.count("lambda_" + n))
      b.sc.fail("constraints." + n + ".expression", "constraint " + n + " would name its multiplier 'lambda_" + n +
                                                        "', which another signal has; rename the constraint");
  for (const auto& n : m.constraint_names) taken.insert("lambda_" + n);
  for (const auto& o : b.c->user_outputs)
    if (taken.count(o.name))
      b.sc.fail("outputs." + o.name + ".expression", "the output name '" + o.name + "' is taken by a built-in signal; choose another");
}

// ---- derivation and compilation ----------------------------------------------------------------------------

namespace {

/// Every scenario text that defines the model's equations (not the parameter values or the start).
std::string model_text_key(const Scenario& sc) {
  std::string key;
  for (const auto& [k, e] : sc.values) {
    const bool defining = k.rfind("lagrangian.", 0) == 0 || k.rfind("bodies.", 0) == 0 || k.rfind("constraints.", 0) == 0 ||
                          k.rfind("contacts.", 0) == 0 || k.rfind("outputs.", 0) == 0 || k.rfind("events.", 0) == 0 ||
                          k.rfind("coordinates.", 0) == 0 || k.rfind("points.", 0) == 0 || k.rfind("draw.", 0) == 0;
    if (defining && std::holds_alternative<std::string>(e.value)) key += k + "=" + std::get<std::string>(e.value) + "\n";
    if (defining && !e.strings.empty()) {  // a list of expressions (a 3-D position, an inertia, a matrix by rows)
      key += k + "=[";
      for (const auto& item : e.strings) key += item + "\x1f";
      for (double row : e.list) key += std::to_string(row) + "\x1f";
      key += "]\n";
    }
    if (k.rfind("parameters.", 0) == 0) key += k + "\n";
  }
  // The order of the coordinates and parameters (the file's) matters too.
  for (const auto& s : {"coordinates", "parameters", "constraints", "contacts", "outputs", "events"})
    for (const auto& n : ordered(sc, s, s == std::string("coordinates") || s == std::string("parameters") ? "" : "x"))
      key += std::string(s) + ":" + n + "\n";
  return key;
}

struct DerivedModel {
  std::shared_ptr<symbolic::CompiledKernels> lib;
  symbolic::Derivation flags;  ///< without its kernels
  SetupTimes setup;
};

/// The derivation and the compiled kernels of a model, once per process for each model text; the compiled
/// library is cached on disk under the same text, so a run that finds it derives nothing.
DerivedModel derived_model(const std::string& key, const symbolic::LagrangeModel& m, const Scenario& sc) {
  static std::mutex mutex;
  static std::map<std::string, DerivedModel> cache;
  {
    const auto lock = timed_lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  DerivedModel out;
  try {
    out.lib = symbolic::CompiledKernels::find(key);
    if (out.lib) {
      out.flags = symbolic::derivation_flags(m);
    } else {
      out.flags = symbolic::derive(m);
      out.setup.derive_seconds = out.flags.seconds;
      const auto generate_start = std::chrono::steady_clock::now();
      const std::string source = symbolic::generate_source(out.flags.kernels, m.inputs());
      out.setup.generate_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - generate_start).count();
      out.lib = symbolic::CompiledKernels::load(source, key);
    }
  } catch (const IoError&) {
    throw;  // an unsafe or unwritable model cache: exit 4
  } catch (const symbolic::CompileError& e) {
    throw InputError(sc.origin("model"), e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(sc.origin("model"), std::string("the model uses an operation rollsim cannot compile: ") + e.what());
  } catch (const std::exception& e) {
    throw InputError(sc.origin("model"), std::string("deriving the equations of motion failed: ") + e.what());
  }
  out.setup.compile_seconds = out.lib->compile_seconds();
  out.setup.from_cache = out.lib->from_cache();
  out.setup.library = out.lib->library_path();
  out.flags.kernels.clear();
  const auto lock = timed_lock(mutex);
  cache.emplace(key, out);
  return out;
}

// ---- layout ------------------------------------------------------------------------------------------------

/// The compiled form's sizes, flags and input layout, from the model and its derivation.
void lay_out(Build& b, const symbolic::Derivation& dv) {
  const symbolic::LagrangeModel& m = b.m;
  Compiled& c = *b.c;
  const symbolic::InputLayout lay(m);
  c.n = m.n();
  c.np = m.p.size();
  c.nc = m.constraints.size();
  c.n_extra = dv.n_extra;
  c.n_user_outputs = m.outputs.size();
  c.n_events = m.events.size();
  c.n_contacts = m.contacts.size();
  c.n_dae_extra = c.nc && !c.n_contacts ? (dv.has_forces ? 1 : 0) + (dv.explicit_time ? 1 : 0) + 1 : 0;
  c.has_contact = m.has_contact;
  c.has_forces = dv.has_forces;
  c.explicit_time = dv.explicit_time;
  c.friction_dissipates = dv.friction_dissipates;
  c.coordinates = m.coordinates;
  c.constraint_names = m.constraint_names;
  for (const auto& chart : m.charts) c.charts.emplace_back(chart.body, chart.sequence);
  if (c.nc && b.contacts.empty()) c.alpha = keys().dae.read(b.rd, "").stabilization_rate;
  c.in_size = lay.size;
  c.in_a = lay.a;
  c.in_p = lay.p;
  c.in_lambda = lay.lambda;
  c.in_s = lay.s;
  c.in_alpha = lay.alpha;
}

/// The kernels the compiled form uses, from its library.
void load_kernels(Compiled& c) {
  const auto& lib = *c.lib;
  c.dyn = lib.get(KernelNames::dyn);
  c.jac = lib.get(KernelNames::jac);
  c.extra = lib.get(KernelNames::extra);
  c.energy = lib.get(KernelNames::energy);
  c.outputs = lib.get(KernelNames::outputs);
  c.outputs_jac = lib.get(KernelNames::outputs_jac);
  c.witnesses = lib.get(KernelNames::events);
  c.scene_values = lib.get(KernelNames::scene);
  if (c.has_contact) c.contact = lib.get(KernelNames::contact);
  if (c.n_contacts) c.contacts = lib.get(KernelNames::contacts);
  if (!c.charts.empty()) c.chart_determinants = lib.get(KernelNames::charts);
  if (c.nc) c.constraints = lib.get(KernelNames::constraints);
  if (c.nc && c.n_contacts) c.contact_constraints = lib.get(KernelNames::contact_constraints);
  if (c.nc && !c.n_contacts) {
    c.dae = lib.get(KernelNames::dae);
    c.dae_jac = lib.get(KernelNames::dae_jac);
    c.dae_extra = lib.get(KernelNames::dae_extra);
    c.dae_extra_jac = lib.get(KernelNames::dae_extra_jac);
  }
}

}  // namespace

/// The derivation and the compiled kernels depend on the model's text only, not on parameter values or the
/// start: runs in one process (sweep points, growth runs) share them.
void derive_and_compile(Build& b) {
  std::string model_key = model_text_key(b.sc) + KernelNames::layout + "\n";
  model_key += b.c->scene_key;
  if (!b.m.velocity_constraints.empty()) model_key += std::string(symbolic::NonholonomicKernels::layout) + "\n";
  const DerivedModel dm = derived_model(model_key, b.m, b.sc);
  b.c->lib = dm.lib;
  b.c->setup = dm.setup;
  lay_out(b, dm.flags);
  load_kernels(*b.c);
}

}  // namespace rollsim::lagrangian::detail
