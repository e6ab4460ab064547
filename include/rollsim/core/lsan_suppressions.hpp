#pragma once
/// \file LeakSanitizer's suppressions, built into each program that links rollsim (include this header in exactly
/// one file of the program: it defines the function LeakSanitizer looks up).
///
/// CLN, the number library under GiNaC (user models), allocates 26 bytes during its static initialisation that it
/// never frees; LeakSanitizer would report them at every program's exit, whether or not a user model ran. That is
/// CLN's, not a leak of rollsim's. Rather than suppress it, LeakSanitizer is off while the shared libraries
/// initialise (below): a suppression is matched only after the leak's stack is symbolized, which starts
/// llvm-symbolizer on the whole program at every exit (0.45 s of the 0.7 s a sanitized `rollsim --version` took),
/// where a program that leaks nothing needs no symbolizer.
/// GiNaC's power::subs loses 104 bytes (a power and two numerics) when it substitutes into a power of a rate with a
/// coordinate as its exponent (the fuzzing input tests/fuzz_regressions/ginac-power-subs-leak.toml: a friction
/// coefficient 1/2 J der(theta)^u, evaluated at the start); rollsim holds GiNaC's expressions only by value (ex,
/// reference-counted), so the lost objects are GiNaC's own. GiNaC's mul::combine_ex_with_coeff_to_pair loses 40
/// bytes when a product divides by an exact zero and GiNaC throws its division by zero from inside it (the fuzzing
/// input tests/fuzz_regressions/ginac-mul-division-by-zero-leak.toml: Euler's disk at alpha = 0, a start rate
/// sqrt(5 g / (a sin(alpha))), which rollsim catches and refuses as a start that is not a finite real number):
/// GiNaC's own object, lost on its own exception path. Those two, and what shared libraries allocate while they
/// initialise, are all that is left out.
/// The list of suppressions used is not printed at exit: the programs' messages stay what the tests expect.
extern "C" const char* __lsan_default_suppressions();
/// A program may add its own, in ROLLSIM_LSAN_EXTRA_SUPPRESSIONS, defined before it includes this header.
#ifndef ROLLSIM_LSAN_EXTRA_SUPPRESSIONS
#define ROLLSIM_LSAN_EXTRA_SUPPRESSIONS ""
#endif
extern "C" const char* __lsan_default_suppressions() {
  return "leak:GiNaC::power::subs\nleak:GiNaC::mul::combine_ex_with_coeff_to_pair\n" ROLLSIM_LSAN_EXTRA_SUPPRESSIONS;
}
// Off from the program's first pre-initialisation function, which runs before any shared library's initialisers
// (the sanitizer's own comes before it, being linked first), to the program's first constructor, which runs after
// all of them and before its own static objects: what is allocated in between is not reported as a leak.
#if defined(__SANITIZE_ADDRESS__)
#define ROLLSIM_LSAN_INIT_WINDOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROLLSIM_LSAN_INIT_WINDOW 1
#endif
#endif
#ifdef ROLLSIM_LSAN_INIT_WINDOW
#include <sanitizer/lsan_interface.h>
namespace {
void lsan_off_while_libraries_initialise() { __lsan_disable(); }
[[gnu::section(".preinit_array"), gnu::used]] void (*lsan_off_entry)() = &lsan_off_while_libraries_initialise;
[[gnu::constructor(101)]] void lsan_on_after_libraries_initialise() { __lsan_enable(); }
}  // namespace
#endif
extern "C" const char* __lsan_default_options();
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
