#pragma once
/// \file The time threads spend blocked on rollsim's own locks (the symbolic engine's, the compiler cache's, the
/// LCP and LP solvers', a sweep's result slots), summed over threads, so that `rollsim bench --sweep` can say how
/// much of a sweep's time contention costs. A lock taken without waiting costs one try_lock and no clock read.
#include <atomic>
#include <chrono>
#include <mutex>

namespace rollsim {

/// Nanoseconds spent waiting for a lock that another thread held, over all threads since the process started.
inline std::atomic<long long>& lock_wait_ns() {
  static std::atomic<long long> total{0};
  return total;
}

/// Lock `m`; when another thread holds it, add the time until it is ours to lock_wait_ns().
template <class Mutex>
std::unique_lock<Mutex> timed_lock(Mutex& m) {
  std::unique_lock<Mutex> lock(m, std::try_to_lock);
  if (!lock.owns_lock()) {
    const auto t0 = std::chrono::steady_clock::now();
    lock.lock();
    lock_wait_ns().fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
        std::memory_order_relaxed);
  }
  return lock;
}

}  // namespace rollsim
