#include "rollsim/models/contact_keys.hpp"

namespace rollsim {

std::vector<KeySpec> nonsmooth_keys() {
  const ContactSettings d;
  return {real_key("nonsmooth.capture_velocity", "m/s",
                   "an impact whose rebound e |g'| would be slower than this is plastic and closes the contact (the "
                   "rule that ends an accumulation of impacts)")
              .with_default(d.capture_velocity)
              .positive(),
          real_key("nonsmooth.gap_tolerance", "m", "a gap within this of zero counts as touching")
              .with_default(d.gap_tolerance)
              .positive(),
          real_key("nonsmooth.stabilization_rate", "1/s",
                   "Baumgarte rate a holding closed gaps and sticking slips at zero: g'' + 2 a g' + a^2 g = 0")
              .with_default(d.stabilization_rate)
              .non_negative()};
}

ContactSettings contact_settings_from(const Scenario& sc) {
  ContactSettings settings;
  settings.capture_velocity = sc.real("nonsmooth.capture_velocity");
  settings.gap_tolerance = sc.real("nonsmooth.gap_tolerance");
  settings.stabilization_rate = sc.real("nonsmooth.stabilization_rate");
  return settings;
}

}  // namespace rollsim
