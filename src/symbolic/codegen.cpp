#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/symbolic/expression.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace rollsim::symbolic {

using GiNaC::ex;

namespace {

/// Bumped whenever the generated code's meaning changes, so that old cache entries are not reused.
constexpr const char* kGeneratorVersion = "rollsim-kernels-3";
/// The exported symbol that holds a library's digest, and the text before the digest in it.
constexpr const char* kDigestSymbol = "rollsim_kernels_digest";
constexpr const char* kDigestMarker = "rollsim-kernels-sha256:";
constexpr const char* kFlags = "-std=c++17 -O2 -fPIC -shared -fno-semantic-interposition";

std::string number_text(double v) {
  if (std::isnan(v)) return "(0.0/0.0)";
  if (std::isinf(v)) return v > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

class Emitter {
 public:
  Emitter(const std::map<ex, int, GiNaC::ex_is_less>& inputs, std::ostringstream& os) : in_(inputs), os_(os) {}

  /// A C++ expression for e: a literal, an input or a temporary already computed.
  std::string operator()(const ex& e) {
    if (GiNaC::is_a<GiNaC::numeric>(e)) {
      const auto& n = GiNaC::ex_to<GiNaC::numeric>(e);
      if (!n.is_real()) throw std::invalid_argument("a complex number in an expression: " + to_text(e));
      return number_text(n.to_double());
    }
    if (GiNaC::is_a<GiNaC::symbol>(e)) {
      auto it = in_.find(e);
      if (it == in_.end()) throw std::invalid_argument("a symbol that is not an input: " + to_text(e));
      return "in[" + std::to_string(it->second) + "]";
    }
    if (GiNaC::is_a<GiNaC::constant>(e)) return number_text(GiNaC::ex_to<GiNaC::numeric>(e.evalf()).to_double());
    auto it = memo_.find(e);
    if (it != memo_.end()) return it->second;
    const std::string value = node(e);
    const std::string name = "t" + std::to_string(memo_.size());
    os_ << "  const double " << name << " = " << value << ";\n";
    memo_.emplace(e, name);
    return name;
  }

 private:
  static std::string to_text(const ex& e) {
    std::ostringstream o;
    o << e;
    return o.str();
  }

  /// A hash of e that does not depend on the process: GiNaC orders the terms of sums and products by hashes
  /// that involve addresses, which differ from run to run; the emitted source orders them by this instead, so
  /// that the same model gives the same source (and the same cached library, and the same rounding) every run.
  std::uint64_t key(const ex& e) {
    auto it = keys_.find(e);
    if (it != keys_.end()) return it->second;
    auto mix = [](std::uint64_t h, std::uint64_t v) {
      h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      return h;
    };
    auto text_hash = [](const std::string& t) {
      std::uint64_t h = 1469598103934665603ull;
      for (unsigned char c : t) h = (h ^ c) * 1099511628211ull;
      return h;
    };
    std::uint64_t h;
    if (GiNaC::is_a<GiNaC::numeric>(e) || GiNaC::is_a<GiNaC::symbol>(e) || GiNaC::is_a<GiNaC::constant>(e)) {
      h = text_hash(to_text(e));
    } else {
      std::vector<std::uint64_t> parts;
      for (std::size_t i = 0; i < e.nops(); ++i) parts.push_back(key(e.op(i)));
      const bool commutative = GiNaC::is_a<GiNaC::add>(e) || GiNaC::is_a<GiNaC::mul>(e);
      if (commutative) std::sort(parts.begin(), parts.end());
      std::string kind = GiNaC::is_a<GiNaC::add>(e)     ? "+"
                         : GiNaC::is_a<GiNaC::mul>(e)   ? "*"
                         : GiNaC::is_a<GiNaC::power>(e) ? "^"
                         : GiNaC::is_a<GiNaC::function>(e) ? GiNaC::ex_to<GiNaC::function>(e).get_name()
                                                           : "?";
      h = text_hash(kind);
      for (auto p : parts) h = mix(h, p);
    }
    keys_.emplace(e, h);
    return h;
  }

  std::string node(const ex& e) {
    if (GiNaC::is_a<GiNaC::add>(e) || GiNaC::is_a<GiNaC::mul>(e)) {
      const char* op = GiNaC::is_a<GiNaC::add>(e) ? " + " : " * ";
      std::vector<std::pair<std::uint64_t, ex>> terms;
      for (std::size_t i = 0; i < e.nops(); ++i) terms.emplace_back(key(e.op(i)), e.op(i));
      std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string s;
      for (std::size_t i = 0; i < terms.size(); ++i) s += (i ? op : "") + (*this)(terms[i].second);
      return s;
    }
    if (GiNaC::is_a<GiNaC::power>(e)) return power(e.op(0), e.op(1));
    if (GiNaC::is_a<GiNaC::function>(e)) {
      const std::string f = GiNaC::ex_to<GiNaC::function>(e).get_name();
      static const std::map<std::string, std::string> unary{
          {"sin", "std::sin"},   {"cos", "std::cos"},   {"tan", "std::tan"},   {"asin", "std::asin"},
          {"acos", "std::acos"}, {"atan", "std::atan"}, {"sinh", "std::sinh"}, {"cosh", "std::cosh"},
          {"tanh", "std::tanh"}, {"exp", "std::exp"},   {"log", "std::log"},   {"abs", "std::fabs"}};
      if (auto u = unary.find(f); u != unary.end() && e.nops() == 1) return u->second + "(" + (*this)(e.op(0)) + ")";
      if (f == "atan2" && e.nops() == 2) return "std::atan2(" + (*this)(e.op(0)) + ", " + (*this)(e.op(1)) + ")";
      if (f == kStepFunctionName && e.nops() == 1) {
        const std::string a = (*this)(e.op(0));
        return "(" + a + " > 0 ? 1.0 : " + a + " < 0 ? 0.0 : 0.5)";
      }
      if (f == "csgn" && e.nops() == 1) {
        const std::string a = (*this)(e.op(0));
        return "(" + a + " > 0 ? 1.0 : " + a + " < 0 ? -1.0 : 0.0)";
      }
      throw std::invalid_argument("no compiled form for the function " + f + "() in " + to_text(e));
    }
    throw std::invalid_argument("no compiled form for " + to_text(e));
  }

  std::string power(const ex& base, const ex& expo) {
    const std::string b = (*this)(base);
    if (GiNaC::is_a<GiNaC::numeric>(expo)) {
      const auto& n = GiNaC::ex_to<GiNaC::numeric>(expo);
      if (n.is_integer() && std::abs(n.to_double()) <= 4) {
        const int k = n.to_int();
        std::string p;
        for (int i = 0; i < std::abs(k); ++i) p += (i ? "*" : "") + b;
        if (k == 0) return "1.0";
        return k > 0 ? p : "1.0/(" + p + ")";
      }
      if (n == GiNaC::numeric(1, 2)) return "std::sqrt(" + b + ")";
      if (n == GiNaC::numeric(-1, 2)) return "1.0/std::sqrt(" + b + ")";
      if (n == GiNaC::numeric(3, 2)) return b + "*std::sqrt(" + b + ")";
      if (n == GiNaC::numeric(-3, 2)) return "1.0/(" + b + "*std::sqrt(" + b + "))";
    }
    return "std::pow(" + b + ", " + (*this)(expo) + ")";
  }

  const std::map<ex, int, GiNaC::ex_is_less>& in_;
  std::ostringstream& os_;
  std::map<ex, std::string, GiNaC::ex_is_less> memo_;
  std::map<ex, std::uint64_t, GiNaC::ex_is_less> keys_;
};

std::string quoted_for_message(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

/// Run argv (no shell), stderr and stdout to the open file `log_fd`; the exit status, or -1 if it could not start.
int run_program(const std::vector<std::string>& argv, int log_fd) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  pid_t pid;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream is(s);
  std::vector<std::string> w;
  for (std::string x; is >> x;) w.push_back(x);
  return w;
}

}  // namespace

std::string compiler_command() {
  for (const char* var : {"ROLLSIM_CXX", "CXX"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "c++";
}

std::string cache_directory() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/rollsim";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/rollsim";
  throw IoError(
      "neither XDG_CACHE_HOME nor HOME is set, so there is no private folder for the compiled-model cache (a user "
      "model is compiled and loaded from it; rollsim does not use a shared temporary folder): set XDG_CACHE_HOME "
      "to a folder of yours, e.g. XDG_CACHE_HOME=$PWD/.cache");
}

std::string content_digest(const std::string& text) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, text.size(), reinterpret_cast<const std::uint8_t*>(text.data()));
  std::uint8_t d[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, d);
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : d) s += {hex[b >> 4], hex[b & 15]};
  return s;
}

std::string library_digest(const std::string& key) {
  return content_digest(std::string(kGeneratorVersion) + "\n" + compiler_command() + "\n" + kFlags + "\n" + key);
}

std::string library_path(const std::string& key) { return cache_directory() + "/model-" + library_digest(key) + ".so"; }

std::string embedded_digest_text(const std::string& digest) { return kDigestMarker + digest; }

void check_private(const std::string& path, const struct stat& st, bool directory) {
  const char* what = directory ? "the compiled-model cache folder " : "the cached model library ";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    throw IoError(std::string(what) + path + " is not a " + (directory ? "folder" : "regular file") +
                  "; remove it (it is compiled again)");
  const uid_t me = geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    throw IoError(std::string(what) + path + " belongs to the user with uid " + std::to_string(st.st_uid) +
                  ", not to you (uid " + std::to_string(me) +
                  "); rollsim loads code from the cache and uses only a cache that is yours: remove it, or set "
                  "XDG_CACHE_HOME to a folder of yours");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw IoError(std::string(what) + path + " has mode " + mode + " (owner uid " + std::to_string(st.st_uid) +
                  "): group or others can write it, and rollsim loads code from the cache: " +
                  (directory ? "chmod 700 " + path : "remove it (rm " + path + ") to have it compiled again") +
                  (st.st_uid == me ? "" : ", or set XDG_CACHE_HOME to a folder of yours"));
}

int create_private_file(const std::string& dir, const std::string& suffix, std::string& path,
                        const std::function<std::string()>& next_stem) {
  std::random_device rd;  // the kernel's random source: a name no other user can predict
  const auto random_stem = [&rd] {
    char buf[24];
    std::snprintf(buf, sizeof buf, "tmp-%08x%08x", rd(), rd());
    return std::string(buf);
  };
  for (int attempt = 0; attempt < 100; ++attempt) {
    path = dir + "/" + (next_stem ? next_stem() : random_stem()) + suffix;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno != EEXIST && errno != ELOOP)
      throw IoError("cannot create " + path + ": " + std::strerror(errno) +
                    "; set XDG_CACHE_HOME to a writable folder of yours");
  }
  throw IoError("cannot create a new file in " + dir + ": 100 names were taken; remove the tmp-* files there");
}

std::string generate_source(const std::vector<Kernel>& kernels, const std::vector<ex>& inputs) {
  std::map<ex, int, GiNaC::ex_is_less> index;
  for (std::size_t k = 0; k < inputs.size(); ++k) index.emplace(inputs[k], static_cast<int>(k));
  std::ostringstream os;
  os << "// Generated by rollsim (" << kGeneratorVersion << "): compiled evaluation of a user model.\n"
     << "#include <cmath>\n";
  for (const auto& k : kernels) {
    os << "extern \"C\" void " << k.name << "(const double* in, double* out) {\n";
    Emitter emit(index, os);
    std::vector<std::string> values;
    for (const auto& e : k.outputs) values.push_back(emit(e));
    for (std::size_t i = 0; i < values.size(); ++i) os << "  out[" << i << "] = " << values[i] << ";\n";
    os << "  (void)in;\n}\n";
  }
  return os.str();
}

CompiledKernels::~CompiledKernels() {
  if (handle_) dlclose(handle_);
}

KernelFunction CompiledKernels::get(const std::string& name) const {
  void* f = dlsym(handle_, name.c_str());
  if (!f) throw std::logic_error("compiled model: no kernel " + name + " in " + path_);
  return reinterpret_cast<KernelFunction>(f);
}

namespace {

/// The cache folder checked (check_private), or "" when it does not exist and `create` is false. With `create`,
/// it is made (mode 0700) with its parents.
std::string checked_cache_folder(bool create) {
  const std::string dir = cache_directory();
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) throw IoError("cannot read the compiled-model cache folder " + dir + ": " + std::strerror(errno));
    if (!create) return "";
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw IoError("cannot create the compiled-model cache folder " + dir + ": " + std::strerror(errno) +
                    "; set XDG_CACHE_HOME to a writable folder of yours");
    if (stat(dir.c_str(), &st) != 0)
      throw IoError("cannot read the compiled-model cache folder " + dir + ": " + std::strerror(errno));
  }
  check_private(dir, st, true);
  return dir;
}

/// Whether the bytes of the library at `path` hold the text embedded_digest_text(digest) ending in a NUL. The
/// file is opened without following a link and checked (check_private) first. false if there is no file.
bool file_has_digest(const std::string& path, const std::string& digest, bool& present) {
  present = false;
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    if (errno == ELOOP)
      throw IoError("the cached model library " + path +
                    " is a symbolic link; rollsim loads code from the cache and does not follow links there: "
                    "remove it (it is compiled again)");
    throw IoError("cannot read the cached model library " + path + ": " + std::strerror(errno));
  }
  present = true;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    throw IoError("cannot read the cached model library " + path + ": " + std::strerror(e));
  }
  try {
    check_private(path, st, false);
  } catch (...) {
    close(fd);
    throw;
  }
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  std::string wanted = embedded_digest_text(digest);
  wanted.push_back('\0');
  return bytes.find(wanted) != std::string::npos;
}

/// dlopen the library at `path` if it carries `digest` (in its bytes, checked before dlopen so that no code of a
/// wrong library runs, and in its exported symbol, checked after); nullptr and the reason otherwise.
void* open_library(const std::string& path, const std::string& digest, std::string& why) {
  bool present = false;
  if (!file_has_digest(path, digest, present)) {
    why = present ? "it does not carry the digest of this model" : "there is no such file";
    return nullptr;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    why = std::string("dlopen failed: ") + dlerror();
    return nullptr;
  }
  const auto* text = static_cast<const char*>(dlsym(h, kDigestSymbol));
  if (!text || embedded_digest_text(digest) != text) {
    dlclose(h);
    why = std::string("its symbol ") + kDigestSymbol + " does not hold the digest of this model";
    return nullptr;
  }
  return h;
}

/// An exclusive lock on the compilation of one library, held by one process (or thread) at a time: a lock file
/// next to it, removed by its holder (a waiter that finds it removed locks the new one).
class CompileLock {
 public:
  explicit CompileLock(const std::string& path) : path_(path) {
    for (;;) {
      fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd_ < 0) {
        const int e = errno;
        throw IoError("cannot create the lock file " + path + ": " + std::strerror(e) +
                      (e == ELOOP ? " (a symbolic link; remove it)"
                                      : "; to compile a model not in this cache, set XDG_CACHE_HOME to a writable "
                                        "folder of yours"));
      }
      while (flock(fd_, LOCK_EX) != 0)
        if (errno != EINTR) throw IoError("cannot lock " + path + ": " + std::strerror(errno));
      struct stat held, named;
      if (fstat(fd_, &held) == 0 && lstat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
          held.st_ino == named.st_ino)
        return;
      close(fd_);  // the previous holder removed it meanwhile: lock the current one
    }
  }
  ~CompileLock() {
    unlink(path_.c_str());
    close(fd_);
  }
  CompileLock(const CompileLock&) = delete;
  CompileLock& operator=(const CompileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      close(fd);
      throw IoError("cannot write " + path + ": " + std::strerror(e) + "; set XDG_CACHE_HOME to a writable folder");
    }
    done += static_cast<std::size_t>(n);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

namespace {

/// The handle of the cached library of `key` and its path; nullptr if there is none or it is not used (then,
/// with `warn`, a warning on stderr says why).
void* find_library(const std::string& key, std::string& path, bool warn) {
  const std::string dir = checked_cache_folder(false);
  if (dir.empty()) return nullptr;
  const std::string digest = library_digest(key);
  path = dir + "/model-" + digest + ".so";
  std::string why;
  void* h = open_library(path, digest, why);
  if (!h && warn && why != "there is no such file")
    std::fprintf(stderr, "rollsim: warning: the cached model library %s is not used (%s); it is compiled again\n",
                 path.c_str(), why.c_str());
  return h;
}

}  // namespace

std::shared_ptr<CompiledKernels> CompiledKernels::find(const std::string& key) {
  std::string path;
  void* h = find_library(key, path, true);
  if (!h) return nullptr;
  std::shared_ptr<CompiledKernels> k(new CompiledKernels());
  k->handle_ = h;
  k->path_ = path;
  k->from_cache_ = true;
  return k;
}

std::shared_ptr<CompiledKernels> CompiledKernels::load(const std::string& source, const std::string& key) {
  const std::string dir = checked_cache_folder(true);
  const std::string digest = library_digest(key);
  const std::string path = dir + "/model-" + digest + ".so";
  const auto start = std::chrono::steady_clock::now();
  CompileLock lock(dir + "/model-" + digest + ".lock");
  std::string found;
  if (void* h = find_library(key, found, false)) {  // compiled by a concurrent run while this one waited for the lock
    std::shared_ptr<CompiledKernels> k(new CompiledKernels());
    k->handle_ = h;
    k->path_ = found;
    k->from_cache_ = true;
    return k;
  }

  std::string cpp, so, log;
  int fd = create_private_file(dir, ".cpp", cpp);
  write_all(fd, source + "extern \"C\" __attribute__((visibility(\"default\"), used)) const char " + kDigestSymbol +
                    "[] = \"" + embedded_digest_text(digest) + "\";\n",
            cpp);
  close(fd);
  std::error_code ec;
  const auto remove_all = [&](bool keep_source) {
    if (!keep_source) std::filesystem::remove(cpp, ec);
    if (!so.empty()) std::filesystem::remove(so, ec);
    if (!log.empty()) std::filesystem::remove(log, ec);
  };
  int log_fd = -1;
  try {
    close(create_private_file(dir, ".so", so));  // the compiler replaces this new, private file
    log_fd = create_private_file(dir, ".log", log);
  } catch (...) {
    remove_all(false);
    throw;
  }
  std::vector<std::string> argv = split_words(compiler_command());
  for (auto& f : split_words(kFlags)) argv.push_back(f);
  argv.insert(argv.end(), {"-o", so, cpp});
  const int rc = run_program(argv, log_fd);
  close(log_fd);
  if (rc != 0) {
    std::string text = read_text(log);
    if (text.size() > 2000) text = text.substr(0, 2000) + "\n[...]";
    if (rc < 0 || rc == 127) {
      remove_all(false);
      throw CompileError("the C++ compiler '" + argv[0] +
                         "' could not be started; a user model is compiled at run time: install g++ (Debian: apt-get "
                         "install g++) or name a compiler in ROLLSIM_CXX");
    }
    remove_all(true);
    throw CompileError("compiling the model failed (" + quoted_for_message(argv) + ", exit " + std::to_string(rc) +
                       "); the generated source is kept in " + cpp + "; the compiler said:\n" + text);
  }
  // The compiler's file has the mode its umask gives; the cache's libraries are writable by their owner alone.
  if (chmod(so.c_str(), 0644) != 0 || rename(so.c_str(), path.c_str()) != 0) {
    const int e = errno;
    remove_all(false);
    throw IoError("cannot move the compiled model into " + path + ": " + std::strerror(e));
  }
  so.clear();
  remove_all(false);
  std::string why;
  void* h = open_library(path, digest, why);
  if (!h) throw CompileError("the compiled model " + path + " cannot be loaded: " + why);
  std::shared_ptr<CompiledKernels> k(new CompiledKernels());
  k->handle_ = h;
  k->path_ = path;
  k->from_cache_ = false;
  k->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return k;
}

}  // namespace rollsim::symbolic
