#pragma once
/// \file Writes a linear analysis under /linear. Matrices are 2-D datasets in C (row-major) order:
/// dataset[i, j] is element (i, j), so h5py's f["linear/A"][i, j] is A(i, j). MATLAB's h5read returns the
/// transpose (HDF5 dimensions are listed in reverse there); tools/matlab/rollsim_load.m transposes back.
/// Eigenvectors: eigenvectors_real[i, k] + 1i * eigenvectors_imag[i, k] is component i of eigenvector k.
#include <hdf5.h>

#include "rollsim/analysis/linear_model.hpp"

namespace rollsim {

void write_linear(hid_t root, const LinearResult& r);

}  // namespace rollsim
