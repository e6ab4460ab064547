// The ideal rolling element alone: kinematics, its velocity form, statics and power balance.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "rollsim/models/ideal_rolling.hpp"

using namespace rollsim::ideal_rolling;

TEST_CASE("ideal rolling: the kinematic relation and the rolled position") {
  const Element e{0.25};
  Ports<double> x{0.3, -0.1, 0.0, 0.2};
  x.s = rolled_position(e, x.phi, x.phi_support, x.s_support);
  CHECK(x.s == doctest::Approx(0.2 + 0.25 * 0.4).epsilon(1e-15));
  CHECK(std::abs(kinematic_residual(e, x)) < 1e-15);
  x.s += 1e-3;  // a slip of 1 mm shows as -1 mm
  CHECK(kinematic_residual(e, x) == doctest::Approx(-1e-3).epsilon(1e-12));
  // Turning the rotational port by 2 pi moves the translational port by one circumference.
  Ports<double> y{2 * std::numbers::pi, 0, 2 * std::numbers::pi * 0.25, 0};
  CHECK(std::abs(kinematic_residual(e, y)) < 1e-15);
}

TEST_CASE("ideal rolling: the velocity form is the time derivative of the kinematic residual") {
  const Element e{0.4};
  auto at = [&](double t) {
    return Ports<double>{std::sin(t), 0.3 * t * t, std::cos(2 * t), std::exp(0.1 * t)};
  };
  const double t = 0.7, h = 1e-6;
  const Ports<double> rates{std::cos(t), 0.6 * t, -2 * std::sin(2 * t), 0.1 * std::exp(0.1 * t)};
  const double fd = (kinematic_residual(e, at(t + h)) - kinematic_residual(e, at(t - h))) / (2 * h);
  CHECK(velocity_residual(e, rates) == doctest::Approx(fd).epsilon(1e-8));
}

TEST_CASE("ideal rolling: statics r f + tau = 0 and zero net power (massless, lossless)") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int k = 0; k < 100; ++k) {
    const Element e{0.05 + std::abs(u(rng))};
    // Any motion that satisfies the kinematics: choose three rates, the fourth follows.
    Ports<double> v{u(rng), u(rng), 0, u(rng)};
    v.s = v.s_support + e.radius * (v.phi - v.phi_support);
    CHECK(std::abs(velocity_residual(e, v)) < 1e-12);
    const double f = u(rng);
    const double tau = torque(e, f);
    CHECK(std::abs(force_residual(e, f, tau)) < 1e-14);
    CHECK(std::abs(power(v, f, tau)) < 1e-12 * (1 + std::abs(f) * 10));
    // A torque that breaks the statics does deliver power: the check can fail.
    if (std::abs(v.phi - v.phi_support) > 0.1) CHECK(std::abs(power(v, f, tau + 1.0)) > 1e-3);
  }
}

TEST_CASE("ideal rolling: the generalized force is -f times the gradient of the kinematic residual") {
  const Element e{0.25};
  // Ports as functions of two coordinates q = (a, b): phi = -b, phi_s = -a, s = 2 a + b^2, s_s = 0.
  auto ports = [](double a, double b) { return Ports<double>{-b, -a, 2 * a + b * b, 0.0}; };
  const double a = 0.3, b = -0.2, f = 1.7, h = 1e-6;
  const double dra = (kinematic_residual(e, ports(a + h, b)) - kinematic_residual(e, ports(a - h, b))) / (2 * h);
  const double drb = (kinematic_residual(e, ports(a, b + h)) - kinematic_residual(e, ports(a, b - h))) / (2 * h);
  // d(s - s_s)/da = 2, d(phi - phi_s)/da = 1; d(s - s_s)/db = 2 b, d(phi - phi_s)/db = -1
  CHECK(generalized_force(e, f, 2.0, 1.0) == doctest::Approx(-f * dra).epsilon(1e-8));
  CHECK(generalized_force(e, f, 2 * b, -1.0) == doctest::Approx(-f * drb).epsilon(1e-8));
}
