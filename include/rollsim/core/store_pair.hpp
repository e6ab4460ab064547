#pragma once
/// \file One 16-byte store of two values formed in registers, for a model's right-hand side.
#include <cstring>

namespace rollsim {

/// out[0] = a, out[1] = b in one 16-byte store of a pair formed in registers. An explicit Runge-Kutta method's stage
/// sums on a small fixed-size state read x' two values at a time (the compiler pairs them): a 16-byte read of two
/// values just stored 8 bytes apiece waits for both stores to reach the cache, a read of what one 16-byte store wrote
/// does not. Forming the pair also lets the compiler pair the arithmetic that gives a and b (the tipping table's two
/// divisions become one). The values stored are a and b bit for bit.
inline void store_pair(double* out, double a, double b) {
  using Pair = double __attribute__((vector_size(16)));
  const Pair pair = {a, b};
  std::memcpy(out, &pair, sizeof pair);
}

}  // namespace rollsim
