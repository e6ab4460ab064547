#pragma once
/// \file LeakSanitizer's suppressions, built into each program that links rollsim (include this header in exactly
/// one file of the program: it defines the function LeakSanitizer looks up).
///
/// CLN, the number library under GiNaC (user models), allocates 26 bytes during its static initialisation that it
/// never frees; LeakSanitizer reports them at every program's exit, whether or not a user model ran. That is
/// CLN's, not a leak of rollsim's, and it is the only one suppressed.
/// The list of suppressions used is not printed at exit: the programs' messages stay what the tests expect.
extern "C" const char* __lsan_default_suppressions();
extern "C" const char* __lsan_default_suppressions() { return "leak:libcln.so\n"; }
extern "C" const char* __lsan_default_options();
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
