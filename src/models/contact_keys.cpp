#include "rollsim/models/contact_keys.hpp"

#include <iterator>
#include <string>

#include "rollsim/analysis/simulation_keys.hpp"

namespace rollsim {

namespace {

/// Each name of kModeSelectionNames with its ModeSelection, in the enum's order.
std::vector<std::pair<std::string, ModeSelection>> mode_selection_names() {
  std::vector<std::pair<std::string, ModeSelection>> v;
  for (std::size_t i = 0; i < std::size(kModeSelectionNames); ++i)
    v.emplace_back(kModeSelectionNames[i], static_cast<ModeSelection>(i));
  return v;
}

}  // namespace

const Parameters<ContactSettings>& nonsmooth_parameters() {
  using S = ContactSettings;
  static const Parameters<S> list{
      "[nonsmooth] keys",
      {
          param(&S::capture_velocity,
                real_key("nonsmooth.capture_velocity", "m/s",
                         "an impact whose rebound e |g'| would be slower than this is plastic and closes the contact (the "
                         "rule that ends an accumulation of impacts); 0, the default: derived at each impact from what "
                         "the integration resolves (a rebound whose flight would rise less than 10 times the gap's "
                         "resolution under its free acceleration is plastic)")
                    .non_negative()),
          param(&S::gap_tolerance,
                real_key("nonsmooth.gap_tolerance", "m", "a gap within this of zero counts as touching").positive()),
          param(&S::stabilization_rate,
                real_key("nonsmooth.stabilization_rate", "1/s",
                         "Baumgarte rate a holding closed gaps and sticking slips at zero: g'' + 2 a g' + a^2 g = 0")
                    .non_negative()),
          choice(&S::mode_selection,
                 choice_option("nonsmooth.mode_selection",
                               "how the contacts' modes and impulses are chosen at an event: \"enumerate\" checks every "
                               "combination of the undecided contacts' modes (at most " +
                                   std::to_string(static_cast<long>(ContactSettings::kMaxCombinations)) +
                                   "), \"lcp\" first narrows them to those next to a solution of the contacts' linear "
                                   "complementarity problem (Lemke's method, Siconos Numerics), \"auto\" enumerates up "
                                   "to " +
                                   std::to_string(static_cast<long>(ContactSettings::kAutoCombinations)) +
                                   " combinations and narrows above"),
                 mode_selection_names()),
      }};
  return list;
}

std::vector<KeySpec> nonsmooth_keys() { return nonsmooth_parameters().keys(); }

ContactSettings contact_settings_from(const Scenario& sc) {
  ContactSettings settings = nonsmooth_parameters().read(sc);
  // The derived capture rule takes the integration's tolerances.
  const SolverOptions solver = solver_parameters().read(sc);
  settings.rtol = solver.rtol;
  settings.atol = solver.atol;
  return settings;
}

}  // namespace rollsim
