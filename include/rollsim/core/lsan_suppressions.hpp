#pragma once
/// \file LeakSanitizer's suppressions, built into each program that links rollsim (include this header in exactly
/// one file of the program: it defines the function LeakSanitizer looks up).
///
/// CLN, the number library under GiNaC (user models), allocates 26 bytes during its static initialisation that it
/// never frees; LeakSanitizer reports them at every program's exit, whether or not a user model ran. That is
/// CLN's, not a leak of rollsim's, and it is the only one suppressed.
extern "C" const char* __lsan_default_suppressions();
extern "C" const char* __lsan_default_suppressions() { return "leak:libcln.so\n"; }
