#pragma once
// Helpers of the 3-D rolling tests (tests/test_bicycle.cpp, tests/test_rolling_3d.cpp): a run's signal by name,
// numbers written back into overrides (the roots of a linearization: test::roots, support.hpp).
#include <doctest/doctest.h>

#include <complex>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "rollsim/app/registry.hpp"
#include "support.hpp"

namespace rollsim::test {

/// v with every digit, for an override that must reproduce it exactly.
inline std::string digits(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

/// The samples of a run's states and outputs by name (a test failure for a name the run does not have).
class RunSignals {
 public:
  explicit RunSignals(const Run& r) : run_(r), sys_(build_system(r.scenario)) {}
  std::vector<double> operator()(const std::string& name) const {
    std::vector<double> out;
    const auto& s = sys_->states();
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i].name == name) {
        for (const auto& x : run_.rec.x) out.push_back(x[i]);
        return out;
      }
    const auto& o = sys_->outputs();
    for (std::size_t i = 0; i < o.size(); ++i)
      if (o[i].name == name) {
        for (const auto& y : run_.rec.y) out.push_back(y[i]);
        return out;
      }
    FAIL("the run has no signal " << name);
    return out;
  }

 private:
  const Run& run_;
  std::unique_ptr<HybridSystem> sys_;
};

}  // namespace rollsim::test
