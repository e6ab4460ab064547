#include "rollsim/models/contact_keys.hpp"

#include <iterator>
#include <string>

namespace rollsim {

std::vector<KeySpec> nonsmooth_keys() {
  const ContactSettings d;
  return {real_key("nonsmooth.capture_velocity", "m/s",
                   "an impact whose rebound e |g'| would be slower than this is plastic and closes the contact (the "
                   "rule that ends an accumulation of impacts); 0, the default: derived at each impact from what the "
                   "integration resolves (a rebound whose flight would rise less than 10 times the gap's resolution "
                   "under its free acceleration is plastic)")
              .with_default(d.capture_velocity)
              .non_negative(),
          real_key("nonsmooth.gap_tolerance", "m", "a gap within this of zero counts as touching")
              .with_default(d.gap_tolerance)
              .positive(),
          real_key("nonsmooth.stabilization_rate", "1/s",
                   "Baumgarte rate a holding closed gaps and sticking slips at zero: g'' + 2 a g' + a^2 g = 0")
              .with_default(d.stabilization_rate)
              .non_negative(),
          string_key("nonsmooth.mode_selection", kModeSelectionNames[static_cast<int>(d.mode_selection)],
                     {std::begin(kModeSelectionNames), std::end(kModeSelectionNames)},
                     "how the contacts' modes and impulses are chosen at an event: \"enumerate\" checks every "
                     "combination of the undecided contacts' modes (at most " +
                         std::to_string(static_cast<long>(ContactSettings::kMaxCombinations)) +
                         "), \"lcp\" first narrows them to those next to a solution of the contacts' linear "
                         "complementarity problem (Lemke's method, Siconos Numerics), \"auto\" enumerates up to " +
                         std::to_string(static_cast<long>(ContactSettings::kAutoCombinations)) +
                         " combinations and narrows above")};
}

ContactSettings contact_settings_from(const Scenario& sc) {
  ContactSettings settings;
  settings.capture_velocity = sc.real("nonsmooth.capture_velocity");
  settings.rtol = sc.real("solver.rtol");
  settings.atol = sc.real("solver.atol");
  settings.gap_tolerance = sc.real("nonsmooth.gap_tolerance");
  settings.stabilization_rate = sc.real("nonsmooth.stabilization_rate");
  const std::string& selection = sc.string("nonsmooth.mode_selection");
  for (std::size_t i = 0; i < std::size(kModeSelectionNames); ++i)
    if (selection == kModeSelectionNames[i]) settings.mode_selection = static_cast<ModeSelection>(i);
  return settings;
}

}  // namespace rollsim
