#pragma once
// Test helpers: a recorder observer, and the closed-form propagation of the dimensionless disk
// (every mode is linear: a harmonic oscillator about an offset centre, z by integration), with event
// times found by bracketing and bisection to 1e-14.
#include <cmath>
#include <string>
#include <vector>

#include "rollsim/solve/observer.hpp"

namespace disk_test {

struct Sample {
  double t;
  std::vector<double> x, y;
  int mode;
};

class Recorder final : public rollsim::Observer {
 public:
  std::vector<Sample> samples;
  std::vector<rollsim::EventRecord> events;
  rollsim::RunResult result;
  size_t ny = 0, nx = 0;
  void on_start(const rollsim::RunInfo& info) override {
    nx = info.system->size();
    ny = info.system->outputs().size();
  }
  void on_sample(double t, const double* x, const double* y, int mode) override {
    samples.push_back({t, std::vector<double>(x, x + nx), std::vector<double>(y, y + ny), mode});
  }
  void on_event(const rollsim::EventRecord& e) override { events.push_back(e); }
  void on_finish(const rollsim::RunResult& r) override { result = r; }
  std::string symbols() const {
    for (const auto& s : result.summary)
      if (s.key == "symbols") return s.text;
    return "";
  }
  const rollsim::SummaryItem* item(const std::string& key) const {
    for (const auto& s : result.summary)
      if (s.key == key) return &s;
    return nullptr;
  }
};

struct CfEvent {
  double t;
  std::string kind;
  int before, after;
  double x, y;
};

struct CfRun {
  std::vector<CfEvent> events;
  std::string symbols;
  std::vector<double> radii;  // at each stick
  int final_mode = 0;
  double x = 0, y = 0, z = 0;  // state at t_end
};

inline char sym(int m) { return m > 0 ? '+' : (m < 0 ? '-' : '0'); }

/// Closed-form state after time s in mode m from (x, y, z).
inline void propagate(double j, int m, double x, double y, double z, double s, double& xo, double& yo, double& zo) {
  if (m == 0) {
    xo = x * std::cos(s) + y * std::sin(s);
    yo = -x * std::sin(s) + y * std::cos(s);
    zo = 0;
    return;
  }
  const double w = std::sqrt(1 + j), c = -m * j / (1 + j), A = x - c, B = y / w;
  xo = c + A * std::cos(w * s) + B * std::sin(w * s);
  yo = w * (-A * std::sin(w * s) + B * std::cos(w * s));
  zo = z - (1 + j) * ((c + m) * s + (A * std::sin(w * s) - B * (std::cos(w * s) - 1)) / w);
}

/// The first s in (0, s_max] where `outside(s)` turns true, by a scan of step ds and bisection to 1e-14; -1 if none.
template <class F>
double first_root(F outside, double s_max, double ds = 1e-3) {
  double lo = 0, s = ds;
  while (s <= s_max + ds) {
    if (outside(s)) {
      double a = lo, b = s;
      while (b - a > 1e-14) {
        const double mid = 0.5 * (a + b);
        if (outside(mid)) b = mid;
        else a = mid;
      }
      return b;
    }
    lo = s;
    s += ds;
  }
  return -1;
}

inline CfRun closed_form(double j, double x, double y, double z, double t_end) {
  CfRun r;
  // On z = 0: rolling inside the strip, and on its edge |x| = 1 when the rolling circle goes inwards (x y < 0, or
  // y = 0); otherwise the side the fields give.
  int m = z > 0 ? 1 : (z < 0 ? -1 : (std::abs(x) < 1 || (std::abs(x) == 1 && x * y <= 0) ? 0 : (x >= 1 ? -1 : 1)));
  r.symbols += sym(m);
  double t = 0;
  while (true) {
    const double left = t_end - t;
    double s;
    if (m == 0) {
      if (std::hypot(x, y) <= 1) s = -1;
      else
        s = first_root(
            [&](double u) {
              double a, b, c;
              propagate(j, 0, x, y, 0, u, a, b, c);
              return a * a >= 1;
            },
            left);
    } else {
      s = first_root(
          [&](double u) {
            double a, b, c;
            propagate(j, m, x, y, z, u, a, b, c);
            return m * c <= 0;
          },
          left);
    }
    if (s < 0 || s > left) {
      propagate(j, m, x, y, z, left, r.x, r.y, r.z);
      r.final_mode = m;
      return r;
    }
    double xn, yn, zn;
    propagate(j, m, x, y, z, s, xn, yn, zn);
    t += s;
    const int before = m;
    std::string kind;
    if (m == 0) {
      m = xn > 0 ? -1 : 1;
      kind = "slip";
    } else if (std::abs(xn) < 1) {
      m = 0;
      kind = "stick";
      r.radii.push_back(std::hypot(xn, yn));
    } else {
      m = -m;
      kind = "reversal";
    }
    x = xn;
    y = yn;
    z = 0;
    r.events.push_back({t, kind, before, m, x, y});
    r.symbols += sym(m);
  }
}

}  // namespace disk_test
