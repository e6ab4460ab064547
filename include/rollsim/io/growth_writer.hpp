#pragma once
/// \file Writes the short-time growth check under /growth: a table of equal-length 1-D datasets, one row per
/// (mode, epsilon), and the observed orders.
#include <hdf5.h>

#include "rollsim/analysis/growth.hpp"

namespace rollsim {

void write_growth(hid_t root, const GrowthResult& g);

}  // namespace rollsim
