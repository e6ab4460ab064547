#pragma once
/// \file A progress bar on stderr, shown only when stderr is a terminal.
#include <chrono>

#include "rollsim/solve/observer.hpp"

namespace rollsim {

class ProgressBar final : public Observer {
 public:
  /// \param force_off never draw (e.g. --quiet)
  explicit ProgressBar(bool force_off = false);
  void on_start(const RunInfo& info) override;
  void on_sample(double t, const double*, const double*, int) override;
  void on_finish(const RunResult&) override;

  /// A bar for counted work (sweeps): draw `done` of `total`.
  static void draw(double fraction, const char* label);
  static void clear();
  static bool enabled();

 private:
  bool on_ = false;
  double t0_ = 0, t_end_ = 1;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace rollsim
