#pragma once
/// \file Writing a sweep's results: the /sweep table of equal-length 1-D datasets and, optionally, each point's
/// trajectory under /points/NNNNNN/trajectory. Called from one thread only (the Debian HDF5 is not thread-safe).
#include <hdf5.h>

#include <string>
#include <vector>

#include "rollsim/sweep/sweep.hpp"

namespace rollsim {

/// Write `columns` as datasets of the group `name` under `root`, with the sweep's description as attributes.
void write_sweep_table(hid_t root, const std::string& name, const sweep::Spec& spec,
                       const std::vector<sweep::Column>& columns);

/// Write point `index`'s trajectory to /points/NNNNNN/trajectory, with its status and overrides as attributes of
/// /points/NNNNNN.
void write_point_trajectory(hid_t root, std::size_t index, const std::vector<std::string>& overrides,
                            const sweep::PointResult& r);

}  // namespace rollsim
