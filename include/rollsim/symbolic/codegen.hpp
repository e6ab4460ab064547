#pragma once
/// \file Compiled evaluation of symbolic expressions: every expression list ("kernel") becomes a C++
/// function `void NAME(const double* in, double* out)` over one input array, with every repeated
/// subexpression computed once (the expressions' DAG is emitted node by node, each distinct node once). A long
/// kernel is written as parts (functions of a bounded number of statements) and the functions are spread over
/// translation units, compiled by parallel compiler processes and linked into one shared object (SplitOptions).
/// The source is compiled with the system's C++ compiler into a shared object, cached under
/// $XDG_CACHE_HOME/rollsim (default ~/.cache/rollsim) by a SHA-256 digest of the generator's version, the
/// compiler command, the flags and the model's text, and loaded with dlopen.
///
/// The cache is a code-loading path: its folder (mode 0700) and each library must belong to the user (or root)
/// and be writable by nobody else, or the run stops (IoError, exit 4) before anything is loaded. Each library
/// embeds its digest (the exported symbol rollsim_kernels_digest); it is read from the file's bytes before
/// dlopen and from the symbol after, so a library built for other model text is compiled again, never used.
///
/// No user text reaches the compiler: the source holds only numbers printed by this file, the input array
/// in[k] for each symbol, and the C library functions of the operators GiNaC expressions use.
#include <sys/stat.h>

#include <cstdint>
#include <functional>
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

/// How a source is cut up for the compiler. The C++ compiler's time and memory grow faster than linearly with the
/// length of one straight-line function, so a kernel of more than part_statements statements is written as
/// parts of that many, each its own function; and the functions are packed into translation units of at most
/// unit_statements statements, compiled in parallel. The defaults come from measurements (docs/user-models.md,
/// "The compile cache"); tests force other values. Part of the library's digest.
struct SplitOptions {
  std::size_t part_statements = 250;
  std::size_t unit_statements = 2500;
  /// A kernel in parts keeps a workspace of up to this many doubles (128 KiB) on its stack, a larger one on the heap.
  std::size_t stack_workspace = 16384;
  std::string text() const;  ///< for the digest
};

/// The C++ source of `kernels` over the input symbols `inputs` (in[k] is inputs[k]), in translation units
/// separated by a marker line that CompiledKernels::load splits at. The results are the same doubles whatever
/// the split. Throws std::invalid_argument for an expression with a symbol not among the inputs or an operation it
/// cannot print.
std::string generate_source(const std::vector<Kernel>& kernels, const std::vector<GiNaC::ex>& inputs,
                            const SplitOptions& split = {});

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

  /// The library cached for the model text `key`, loaded; nullptr when there is none, or when the one there
  /// does not carry the model's digest (it is then compiled again by load). Throws IoError (exit 4) for a cache
  /// folder or library that others could have written.
  static std::shared_ptr<CompiledKernels> find(const std::string& key, const SplitOptions& split = {});
  /// Compile `source` (generated with `split`) into the cache under the model text `key` and load it; when a
  /// concurrent run compiled it meanwhile, load that one (from_cache()). Each translation unit is compiled by its
  /// own compiler process, as many at once as the machine has cores, then the objects are linked; a source of one
  /// unit is compiled and linked by one process. Throws CompileError (a unit that fails: its source kept and
  /// named), or IoError for an unsafe or unwritable cache; no other file is left behind.
  static std::shared_ptr<CompiledKernels> load(const std::string& source, const std::string& key,
                                               const SplitOptions& split = {});

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
/// The cache folder: $XDG_CACHE_HOME/rollsim, else $HOME/.cache/rollsim; without either variable, an IoError
/// that says to set one (there is no shared fallback folder).
std::string cache_directory();
/// SHA-256 (nettle) of text, as 64 lowercase hex digits.
std::string content_digest(const std::string& text);
/// The digest that names the library of the model text `key` and that the library embeds: SHA-256 of the
/// generator's version, the compiler command, the flags and their rule, the split and `key`.
std::string library_digest(const std::string& key, const SplitOptions& split = {});
/// Where that library is cached: cache_directory()/model-DIGEST.so.
std::string library_path(const std::string& key, const SplitOptions& split = {});
/// The optimisation flag for a translation unit of `statements` statements.
const char* optimisation_flag(std::size_t statements);
/// The text the generated source embeds (and a cached library must contain) for `digest`.
std::string embedded_digest_text(const std::string& digest);

/// Throws IoError (exit 4) unless `st`, the status of `path` (the cache folder when `directory`, else a cached
/// library, which must be a regular file), shows an owner that is the effective user or root, and no write
/// permission for group or others. The message names the path, the owner and mode found and what to do.
void check_private(const std::string& path, const struct stat& st, bool directory);

/// A new file in the folder `dir`, created with O_CREAT | O_EXCL | O_NOFOLLOW and mode 0600 (a link or any
/// file already at the name is never opened: another name is tried), named next_stem() + suffix (default: "tmp-"
/// and 16 random hex digits). Returns the open descriptor (close-on-exec) and sets `path`; IoError after 100
/// names taken or for any other failure.
int create_private_file(const std::string& dir, const std::string& suffix, std::string& path,
                        const std::function<std::string()>& next_stem = {});

}  // namespace rollsim::symbolic
