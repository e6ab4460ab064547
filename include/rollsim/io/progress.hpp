#pragma once
/// \file A progress bar on stderr with the elapsed time and an estimate of the time left, drawn only when stderr
/// is a terminal and at most about ten times a second. A run's bar follows the simulated time (as an observer);
/// counted work (sweep points, bench runs) draws it with draw().
#include <chrono>
#include <string>

#include "rollsim/solve/observer.hpp"

namespace rollsim {

class ProgressBar final : public Observer {
 public:
  using Clock = std::chrono::steady_clock;

  /// \param force_off never draw (e.g. --quiet)
  explicit ProgressBar(bool force_off = false);
  void on_start(const RunInfo& info) override;
  void on_sample(double t, const double*, const double*, int) override;
  void on_finish(const RunResult&) override;

  /// Draw `fraction` (0 to 1) of the work labelled `label`, started at `start`, with the elapsed time and the
  /// time left at the rate so far. Does nothing if the last draw was less than kInterval ago (unless fraction is
  /// 1) or stderr is not a terminal.
  static void draw(double fraction, const char* label, Clock::time_point start);
  /// Erase the bar.
  static void clear();
  static bool enabled();
  /// The bar's text for `fraction` done after `elapsed` seconds (without the leading carriage return).
  static std::string text(double fraction, const char* label, double elapsed);
  static constexpr std::chrono::milliseconds kInterval{100};

 private:
  bool on_ = false;
  double t0_ = 0, t_end_ = 1;
  Clock::time_point start_{};
};

}  // namespace rollsim
