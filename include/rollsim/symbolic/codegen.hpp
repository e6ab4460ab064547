#pragma once
/// \file Compiled evaluation of symbolic expressions: every expression list ("kernel") becomes a C++
/// function `void NAME(const double* in, double* out)` over one input array, with every repeated
/// subexpression computed once (the expressions' DAG is emitted node by node, each distinct node once). The
/// source is compiled with the system's C++ compiler into a shared object, cached under
/// $XDG_CACHE_HOME/rollsim (default ~/.cache/rollsim) by a hash of the source and the compiler command, and
/// loaded with dlopen.
///
/// No user text reaches the compiler: the source holds only numbers printed by this file, the input array
/// in[k] for each symbol, and the C library functions of the operators GiNaC expressions use.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ginac/ginac.h>

namespace rollsim::symbolic {

/// A list of expressions evaluated together.
struct Kernel {
  std::string name;  ///< a C identifier chosen by the program (never user text)
  std::vector<GiNaC::ex> outputs;
};

using KernelFunction = void (*)(const double* in, double* out);

/// The C++ source of `kernels` over the input symbols `inputs` (in[k] is inputs[k]). Throws std::invalid_argument
/// for an expression with a symbol not among the inputs or an operation it cannot print.
std::string generate_source(const std::vector<Kernel>& kernels, const std::vector<GiNaC::ex>& inputs);

/// A compiled and loaded set of kernels.
class CompiledKernels {
 public:
  ~CompiledKernels();
  CompiledKernels(const CompiledKernels&) = delete;
  CompiledKernels& operator=(const CompiledKernels&) = delete;
  KernelFunction get(const std::string& name) const;  ///< throws std::logic_error if absent
  const std::string& library_path() const { return path_; }
  bool from_cache() const { return from_cache_; }
  double compile_seconds() const { return compile_seconds_; }

  /// The library cached for the model text `key`, loaded; nullptr when there is none.
  static std::shared_ptr<CompiledKernels> find(const std::string& key);
  /// Compile `source` into the cache under the model text `key` and load it. Throws CompileError.
  static std::shared_ptr<CompiledKernels> load(const std::string& source, const std::string& key);

 private:
  CompiledKernels() = default;
  void* handle_ = nullptr;
  std::string path_;
  bool from_cache_ = false;
  double compile_seconds_ = 0;
};

/// The compiler is missing or failed, or the cache cannot be written: what happened and what to do.
class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The compiler command used: $ROLLSIM_CXX, else $CXX, else "c++".
std::string compiler_command();
/// The cache folder: $XDG_CACHE_HOME/rollsim, else $HOME/.cache/rollsim.
std::string cache_directory();
/// 64-bit FNV-1a of text, as 16 hex digits.
std::string content_hash(const std::string& text);

}  // namespace rollsim::symbolic
