#pragma once
/// \file What the source generator (codegen.cpp) and the compiler driver with its cache (codegen_cache.cpp) share.

namespace rollsim::symbolic::detail {

/// Bumped whenever the generated code's meaning changes, so that old cache entries are not reused.
inline constexpr const char* kGeneratorVersion = "rollsim-kernels-5";
/// The line that separates two translation units of a generated source (each compiled by its own compiler
/// process); a source without it is one unit. Only the generator writes comments into a source.
inline constexpr const char* kUnitMarker = "// rollsim: next translation unit\n";

}  // namespace rollsim::symbolic::detail
