#pragma once
#include <string>
#include <vector>

namespace rollsim {

/// A named quantity of a model: a state or an output. Every column written to HDF5 is one.
struct Signal {
  std::string name;
  std::string unit;
  std::string description;
};

using Signals = std::vector<Signal>;

}  // namespace rollsim
