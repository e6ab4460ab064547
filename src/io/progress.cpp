#include "rollsim/io/progress.hpp"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

namespace rollsim {

namespace {

/// When the bar was last drawn, as steady-clock ticks (one bar at a time, drawn from one thread).
std::atomic<long long> last_draw{0};

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const long long t = std::llround(s);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", t / 60, t % 60);
  return buf;
}

}  // namespace

bool ProgressBar::enabled() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(bool force_off) : on_(!force_off && enabled()) {}

void ProgressBar::on_start(const RunInfo& info) {
  t0_ = info.t0;
  t_end_ = info.t_end;
  start_ = Clock::now();
}

void ProgressBar::on_sample(double t, const double*, const double*, int) {
  if (on_) draw((t - t0_) / (t_end_ - t0_), "t", start_);
}

void ProgressBar::on_finish(const RunResult&) {
  if (on_) clear();
}

std::string ProgressBar::text(double fraction, const char* label, double elapsed) {
  if (!(fraction >= 0)) fraction = 0;
  if (fraction > 1) fraction = 1;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<std::size_t>(width), '.');
  for (int i = 0; i < filled; ++i) bar[static_cast<std::size_t>(i)] = '#';
  const double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : NAN;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s [%s] %5.1f%%  elapsed %s  left %s", label, bar.c_str(), 100.0 * fraction,
                duration_text(elapsed).c_str(), duration_text(left).c_str());
  return buf;
}

void ProgressBar::draw(double fraction, const char* label, Clock::time_point start) {
  const auto now = Clock::now();
  const long long ticks = now.time_since_epoch().count();
  if (fraction < 1 && ticks - last_draw.load() < std::chrono::duration_cast<Clock::duration>(kInterval).count()) return;
  last_draw.store(ticks);
  // Asked of the system only when a line is due (isatty is a system call; a run calls this at every sample).
  if (!enabled()) return;
  std::fprintf(stderr, "\r%s", text(fraction, label, std::chrono::duration<double>(now - start).count()).c_str());
  std::fflush(stderr);
}

void ProgressBar::clear() {
  if (!enabled()) return;  // nothing was drawn: a file or a pipe gets no blank line
  std::fprintf(stderr, "\r%80s\r", "");
  std::fflush(stderr);
  last_draw.store(0);
}

}  // namespace rollsim
