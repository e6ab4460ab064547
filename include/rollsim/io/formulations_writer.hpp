#pragma once
/// \file Writes `rollsim check formulations` under /formulations: the judged largest differences next to their
/// tolerances, every compared signal, the matched events, the problems, and each run's summary and solver work.
#include <hdf5.h>

#include "rollsim/analysis/compare.hpp"

namespace rollsim {

void write_formulations(hid_t root, const FormulationCheck& fc);

}  // namespace rollsim
