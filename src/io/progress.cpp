#include "rollsim/io/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace rollsim {

bool ProgressBar::enabled() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(bool force_off) : on_(!force_off && enabled()) {}

void ProgressBar::on_start(const RunInfo& info) {
  t0_ = info.t0;
  t_end_ = info.t_end;
}

void ProgressBar::on_sample(double t, const double*, const double*, int) {
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  draw((t - t0_) / (t_end_ - t0_), "t");
}

void ProgressBar::on_finish(const RunResult&) {
  if (on_) clear();
}

void ProgressBar::draw(double fraction, const char* label) {
  if (fraction < 0) fraction = 0;
  if (fraction > 1) fraction = 1;
  constexpr int width = 40;
  const int filled = static_cast<int>(fraction * width);
  char bar[width + 1];
  for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
  bar[width] = '\0';
  std::fprintf(stderr, "\r%s [%s] %5.1f%%", label, bar, 100.0 * fraction);
  std::fflush(stderr);
}

void ProgressBar::clear() {
  std::fprintf(stderr, "\r%60s\r", "");
  std::fflush(stderr);
}

}  // namespace rollsim
