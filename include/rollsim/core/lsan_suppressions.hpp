#pragma once
/// \file LeakSanitizer's suppressions, built into each program that links rollsim (include this header in exactly
/// one file of the program: it defines the function LeakSanitizer looks up).
///
/// CLN, the number library under GiNaC (user models), allocates 26 bytes during its static initialisation that it
/// never frees; LeakSanitizer reports them at every program's exit, whether or not a user model ran. That is
/// CLN's, not a leak of rollsim's.
/// GiNaC's power::subs loses 104 bytes (a power and two numerics) when it substitutes into a power of a rate with a
/// coordinate as its exponent (the fuzzing input tests/fuzz_regressions/ginac-power-subs-leak.toml: a friction
/// coefficient 1/2 J der(theta)^u, evaluated at the start); rollsim holds GiNaC's expressions only by value (ex,
/// reference-counted), so the lost objects are GiNaC's own. GiNaC's mul::combine_ex_with_coeff_to_pair loses 40
/// bytes when a product divides by an exact zero and GiNaC throws its division by zero from inside it (the fuzzing
/// input tests/fuzz_regressions/ginac-mul-division-by-zero-leak.toml: Euler's disk at alpha = 0, a start rate
/// sqrt(5 g / (a sin(alpha))), which rollsim catches and refuses as a start that is not a finite real number):
/// GiNaC's own object, lost on its own exception path. Those three are the only suppressions.
/// The list of suppressions used is not printed at exit: the programs' messages stay what the tests expect.
extern "C" const char* __lsan_default_suppressions();
/// A program may add its own, in ROLLSIM_LSAN_EXTRA_SUPPRESSIONS, defined before it includes this header.
#ifndef ROLLSIM_LSAN_EXTRA_SUPPRESSIONS
#define ROLLSIM_LSAN_EXTRA_SUPPRESSIONS ""
#endif
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libcln.so\nleak:GiNaC::power::subs\nleak:GiNaC::mul::combine_ex_with_coeff_to_pair\n" ROLLSIM_LSAN_EXTRA_SUPPRESSIONS;
}
extern "C" const char* __lsan_default_options();
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
