#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/core/error.hpp"
#include "codegen_internal.hpp"

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
#include <thread>

extern char** environ;

namespace rollsim::symbolic {

namespace {

using detail::kGeneratorVersion;

/// The exported symbol that holds a library's digest, and the text before the digest in it.
constexpr const char* kDigestSymbol = "rollsim_kernels_digest";
constexpr const char* kDigestMarker = "rollsim-kernels-sha256:";
/// The flags of every compiler process; a unit's optimisation flag (optimisation_flag) comes after them, then
/// -shared (a source of one unit, compiled and linked at once) or -c (one unit of several, linked after by
/// kLinkFlags).
constexpr const char* kFlags = "-std=c++17 -fPIC -fno-semantic-interposition";
constexpr const char* kLinkFlags = "-shared -fPIC";
/// optimisation_flag's rule, in words, for the digest: a change of the rule compiles every model again.
constexpr const char* kOptimisationRule = "-O2 up to 1000 lines, -O1 above";

std::string quoted_for_message(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

/// Start argv (no shell), stderr and stdout to the open file `log_fd`; its process id, or -1 if it could not start.
pid_t start_program(const std::vector<std::string>& argv, int log_fd) {
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
  return rc == 0 ? pid : -1;
}

/// Wait for the process `pid`: its exit status (128 + the signal for one killed by a signal), -1 on an error.
/// Left out of the fuzzer's coverage (clang's no_sanitize("coverage"); tools/fuzz): whether waitpid is interrupted
/// depends on how long the compiler runs against the fuzzer's timer signal, and the fuzzer would steer by it, so
/// that its repeatable run differed from run to run.
#if defined(__clang__)
__attribute__((no_sanitize("coverage")))
#endif
int wait_program(pid_t pid) {
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

// Measured with g++ 12 on the benchmark bicycle's four units of about 2,400 lines (parts of 250 statements): -O1
// took 1.8 s of CPU for all, -O2 2.7 s, and the kernels compiled at -O1 gave the same doubles and were no slower
// (rs_jac 2.4 us against 2.7 us, rs_nh_jac 2.6 against 2.8: the code is calls of the C library's functions and
// arithmetic in a fixed order, which -O2 cannot improve much). A unit of a small model costs little at -O2.
const char* optimisation_flag(std::size_t lines) { return lines <= 1000 ? "-O2" : "-O1"; }

std::string library_digest(const std::string& key, const SplitOptions& split) {
  return content_digest(std::string(kGeneratorVersion) + "\n" + compiler_command() + "\n" + kFlags + "; " +
                        kLinkFlags + "; " + kOptimisationRule + "; " + split.text() + "\n" + key);
}

std::string library_path(const std::string& key, const SplitOptions& split) {
  return cache_directory() + "/model-" + library_digest(key, split) + ".so";
}

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
void* find_library(const std::string& key, const SplitOptions& split, std::string& path, bool warn) {
  const std::string dir = checked_cache_folder(false);
  if (dir.empty()) return nullptr;
  const std::string digest = library_digest(key, split);
  path = dir + "/model-" + digest + ".so";
  std::string why;
  void* h = open_library(path, digest, why);
  if (!h && warn && why != "there is no such file")
    std::fprintf(stderr, "rollsim: warning: the cached model library %s is not used (%s); it is compiled again\n",
                 path.c_str(), why.c_str());
  return h;
}

}  // namespace

std::shared_ptr<CompiledKernels> CompiledKernels::find(const std::string& key, const SplitOptions& split) {
  std::string path;
  void* h = find_library(key, split, path, true);
  if (!h) return nullptr;
  std::shared_ptr<CompiledKernels> k(new CompiledKernels());
  k->handle_ = h;
  k->path_ = path;
  k->from_cache_ = true;
  return k;
}

namespace {

/// The temporary files of one compilation (private, new names: create_private_file), removed when it ends,
/// whether it succeeds or fails, except those handed over (keep).
class TempFiles {
 public:
  explicit TempFiles(std::string dir) : dir_(std::move(dir)) {}
  ~TempFiles() {
    std::error_code ec;
    for (const auto& p : paths_) std::filesystem::remove(p, ec);
  }
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  /// A new empty file (the compiler replaces it, or writes to the descriptor given with `fd`).
  std::string create(const std::string& suffix, int* fd = nullptr) {
    std::string path;
    const int d = create_private_file(dir_, suffix, path);
    paths_.push_back(path);
    if (fd)
      *fd = d;
    else
      close(d);
    return path;
  }
  std::string write(const std::string& suffix, const std::string& text) {
    int fd = -1;
    const std::string path = create(suffix, &fd);
    write_all(fd, text, path);
    close(fd);
    return path;
  }
  void keep(const std::string& path) { paths_.erase(std::remove(paths_.begin(), paths_.end(), path), paths_.end()); }

 private:
  std::string dir_;
  std::vector<std::string> paths_;
};

/// One compiler or linker run: its command and its messages' file (open descriptor and path).
struct Job {
  std::vector<std::string> argv;
  int log_fd = -1;
  std::string log;
  int rc = 0;
};

/// Run the jobs, at most `at_once` at a time, in order; after one fails (or cannot start) no further job starts
/// and those running are waited for. Each job's rc: its exit status, -1 if it could not start, 0 if not run.
void run_jobs(std::vector<Job>& jobs, std::size_t at_once) {
  std::vector<std::size_t> running;  // in the order started; the oldest is waited for first
  std::size_t next = 0;
  bool failed = false;
  while ((!failed && next < jobs.size()) || !running.empty()) {
    if (!failed && next < jobs.size() && running.size() < at_once) {
      Job& j = jobs[next];
      const pid_t pid = start_program(j.argv, j.log_fd);
      if (pid < 0) {
        j.rc = -1;
        failed = true;
      } else {
        j.rc = static_cast<int>(pid);
        running.push_back(next);
      }
      ++next;
      continue;
    }
    Job& j = jobs[running.front()];
    running.erase(running.begin());
    j.rc = wait_program(static_cast<pid_t>(j.rc));
    failed = failed || j.rc != 0;
  }
}

/// The translation units of a generated source (split at detail::kUnitMarker).
std::vector<std::string> split_units(const std::string& source) {
  std::vector<std::string> units;
  const std::string marker = detail::kUnitMarker;
  std::size_t from = 0;
  for (std::size_t at; (at = source.find(marker, from)) != std::string::npos; from = at + marker.size())
    units.push_back(source.substr(from, at - from));
  units.push_back(source.substr(from));
  return units;
}

/// The CompileError for a job that failed: a compiler that could not start, or its command, exit code and first
/// 2000 characters of messages, with where the unit's source is kept (`kept`, empty for none).
CompileError job_error(const Job& j, const std::string& kept) {
  if (j.rc < 0 || j.rc == 127)
    return CompileError("the C++ compiler '" + j.argv[0] +
                        "' could not be started; a user model is compiled at run time: install g++ (Debian: apt-get "
                        "install g++) or name a compiler in ROLLSIM_CXX");
  std::string text = read_text(j.log);
  if (text.size() > 2000) text = text.substr(0, 2000) + "\n[...]";
  return CompileError("compiling the model failed (" + quoted_for_message(j.argv) + ", exit " + std::to_string(j.rc) +
                      "); the generated source is kept in " + kept + "; the compiler said:\n" + text);
}

}  // namespace

std::shared_ptr<CompiledKernels> CompiledKernels::load(const std::string& source, const std::string& key,
                                                       const SplitOptions& split) {
  const std::string dir = checked_cache_folder(true);
  const std::string digest = library_digest(key, split);
  const std::string path = dir + "/model-" + digest + ".so";
  const auto start = std::chrono::steady_clock::now();
  const auto loaded = [&start](void* h, const std::string& at, bool from_cache) {
    std::shared_ptr<CompiledKernels> k(new CompiledKernels());
    k->handle_ = h;
    k->path_ = at;
    k->from_cache_ = from_cache;
    if (!from_cache) k->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return k;
  };
  CompileLock lock(dir + "/model-" + digest + ".lock");
  std::string found;
  if (void* h = find_library(key, split, found, false))  // compiled by a concurrent run while this one waited
    return loaded(h, found, true);

  std::vector<std::string> units = split_units(source);
  units.front() += std::string("extern \"C\" __attribute__((visibility(\"default\"), used)) const char ") +
                   kDigestSymbol + "[] = \"" + embedded_digest_text(digest) + "\";\n";
  TempFiles files(dir);
  std::vector<std::string> cpp;
  for (const auto& u : units) cpp.push_back(files.write(".cpp", u));
  const std::string so = files.create(".so");  // the compiler (or linker) replaces this new, private file
  const bool one_unit = units.size() == 1;
  std::vector<Job> jobs(units.size());
  std::string objects_line;
  for (std::size_t u = 0; u < units.size(); ++u) {
    Job& j = jobs[u];
    j.argv = split_words(compiler_command());
    for (auto& f : split_words(kFlags)) j.argv.push_back(f);
    j.argv.push_back(optimisation_flag(static_cast<std::size_t>(std::count(units[u].begin(), units[u].end(), '\n'))));
    j.argv.insert(j.argv.end(), {one_unit ? "-shared" : "-c", "-o", one_unit ? so : files.create(".o"), cpp[u]});
  }
  for (auto& j : jobs) j.log = files.create(".log", &j.log_fd);
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  run_jobs(jobs, std::min(cores, jobs.size()));
  for (auto& j : jobs) close(j.log_fd);
  for (std::size_t u = 0; u < jobs.size(); ++u) {
    if (jobs[u].rc == 0) continue;
    if (jobs[u].rc > 0 && jobs[u].rc != 127) files.keep(cpp[u]);
    throw job_error(jobs[u], cpp[u]);
  }
  if (!one_unit) {  // one link of the units' objects into the library
    Job link;
    link.argv = split_words(compiler_command());
    for (auto& f : split_words(kLinkFlags)) link.argv.push_back(f);
    link.argv.insert(link.argv.end(), {"-o", so});
    for (const auto& j : jobs) link.argv.push_back(j.argv[j.argv.size() - 2]);
    link.log = files.create(".log", &link.log_fd);
    std::vector<Job> one{link};
    run_jobs(one, 1);
    close(link.log_fd);
    if (one[0].rc != 0) {
      std::string kept;
      for (const auto& c : cpp) {
        files.keep(c);
        kept += (kept.empty() ? "" : ", ") + c;
      }
      throw job_error(one[0], kept);
    }
  }
  // The compiler's file has the mode its umask gives; the cache's libraries are writable by their owner alone.
  if (chmod(so.c_str(), 0644) != 0 || rename(so.c_str(), path.c_str()) != 0) {
    const int e = errno;
    throw IoError("cannot move the compiled model into " + path + ": " + std::strerror(e));
  }
  files.keep(so);
  std::string why;
  void* h = open_library(path, digest, why);
  if (!h) throw CompileError("the compiled model " + path + " cannot be loaded: " + why);
  return loaded(h, path, false);
}

}  // namespace rollsim::symbolic
