// The compiled-model cache is a code-loading path: its folder and libraries are the user's alone, temporary files
// are created without following links, each library is named by and embeds a SHA-256 digest of what it was built
// from, and no scenario text reaches the compiler's command line.
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <regex>
#include <sstream>

#include "rollsim/core/error.hpp"
#include "rollsim/symbolic/codegen.hpp"
#include "support.hpp"

namespace rollsim {

namespace {

/// Sets an environment variable (or unsets it, for nullopt) for the life of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A fresh cache for one test: XDG_CACHE_HOME points into a new temporary folder.
struct FreshCache {
  test::TempDir dir;
  ScopedEnv xdg{"XDG_CACHE_HOME", (dir.path / "cache").string()};
  ScopedEnv cxx{"ROLLSIM_CXX", std::nullopt};
  std::string folder() const { return (dir.path / "cache" / "rollsim").string(); }
};

/// One kernel, out[0] = in[0]^2 + 3 in[1], whose value at (2, 5) is 19.
struct SampleModel {
  GiNaC::symbol a{"a"}, b{"b"};
  std::string source;
  std::string key;
  explicit SampleModel(const std::string& tag = "sample") {
    symbolic::Kernel k{"k_sum", {GiNaC::pow(a, 2) + 3 * b}};
    source = symbolic::generate_source({k}, {a, b});
    key = "model cache test: " + tag + "\n";
  }
  static double value(const symbolic::CompiledKernels& lib) {
    const double in[2] = {2.0, 5.0};
    double out[1] = {0.0};
    lib.get("k_sum")(in, out);
    return out[0];
  }
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Compile `source` into a shared library at `path` with the system compiler (a library planted by someone else).
void compile_planted(const std::string& source, const std::string& path) {
  const std::string src = path + ".planted.cpp";
  std::ofstream(src) << source;
  const std::string cmd = "c++ -shared -fPIC -o '" + path + "' '" + src + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::filesystem::remove(src);
  REQUIRE(chmod(path.c_str(), 0644) == 0);
}

}  // namespace

TEST_CASE("model cache: the digest is SHA-256, and the library's name changes with the model, compiler and version") {
  // FIPS 180-2, appendix B.1, and the digest of the empty text.
  CHECK(symbolic::content_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(symbolic::content_digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  FreshCache cache;
  const std::string d = symbolic::library_digest("model text A");
  CHECK(std::regex_match(d, std::regex("[0-9a-f]{64}")));
  CHECK(d != symbolic::library_digest("model text B"));
  CHECK(symbolic::library_path("model text A") == cache.folder() + "/model-" + d + ".so");
  {
    ScopedEnv other("ROLLSIM_CXX", "g++");
    CHECK(symbolic::library_digest("model text A") != d);
  }
  CHECK(symbolic::library_digest("model text A") == d);
}

TEST_CASE("model cache: a new cache folder has mode 0700, a compiled model is found again by its embedded digest") {
  FreshCache cache;
  SampleModel m;
  CHECK(symbolic::CompiledKernels::find(m.key) == nullptr);  // no folder yet: nothing, and nothing created
  CHECK_FALSE(std::filesystem::exists(cache.folder()));
  auto lib = symbolic::CompiledKernels::load(m.source, m.key);
  REQUIRE(lib);
  CHECK_FALSE(lib->from_cache());
  CHECK(SampleModel::value(*lib) == 19.0);  // 2^2 + 3*5
  struct stat st;
  REQUIRE(stat(cache.folder().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(st.st_uid == geteuid());
  REQUIRE(lstat(lib->library_path().c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & (S_IWGRP | S_IWOTH)) == 0);
  CHECK(lib->library_path() == symbolic::library_path(m.key));
  CHECK(contains(test::read_file(lib->library_path()),
                 symbolic::embedded_digest_text(symbolic::library_digest(m.key))));
  // Only the library is left: no temporary file, no lock file.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(cache.folder())) ++files;
  CHECK(files == 1);
  auto again = symbolic::CompiledKernels::find(m.key);
  REQUIRE(again);
  CHECK(again->from_cache());
  CHECK(SampleModel::value(*again) == 19.0);
}

TEST_CASE("model cache: a folder that group or others can write is refused with what to do") {
  FreshCache cache;
  SampleModel m;
  REQUIRE(symbolic::CompiledKernels::load(m.source, m.key));
  for (mode_t mode : {0777, 0720, 0702}) {
    CAPTURE(mode);
    REQUIRE(chmod(cache.folder().c_str(), mode) == 0);
    const std::string found = message_of([&] { symbolic::CompiledKernels::find(m.key); });
    CHECK(contains(found, cache.folder()));
    CHECK(contains(found, "group or others can write it"));
    CHECK(contains(found, "chmod 700 " + cache.folder()));
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    CHECK(contains(found, octal));
    CHECK(contains(message_of([&] { symbolic::CompiledKernels::load(m.source, m.key); }), "chmod 700"));
  }
  REQUIRE(chmod(cache.folder().c_str(), 0700) == 0);
  CHECK(symbolic::CompiledKernels::find(m.key) != nullptr);
  // A library that others can write is refused too (its folder is fine).
  REQUIRE(chmod(symbolic::library_path(m.key).c_str(), 0666) == 0);
  const std::string lib = message_of([&] { symbolic::CompiledKernels::find(m.key); });
  CHECK(contains(lib, symbolic::library_path(m.key)));
  CHECK(contains(lib, "0666"));
  CHECK(contains(lib, "remove it"));
}

TEST_CASE("model cache: the rollsim binary exits 4 for an unsafe cache folder, and names the variables without one") {
  test::TempDir dir;
  const std::string file = dir.file("m.toml",
                                    "model = \"lagrangian\"\n[parameters]\nm = 1.0\nk = 4.0\n[coordinates]\nx = \"m\"\n"
                                    "[lagrangian]\nkinetic = \"1/2*m*der(x)^2\"\npotential = \"1/2*k*x^2\"\n"
                                    "[simulation]\nt_end = 0.1\n");
  const auto folder = dir.path / "cache" / "rollsim";
  std::filesystem::create_directories(folder);
  REQUIRE(chmod(folder.c_str(), 0777) == 0);
  std::string out;
  const std::string args = "run " + file + " -o " + (dir.path / "m.h5").string();
  CHECK(test::run_binary(args, out, "env XDG_CACHE_HOME=" + (dir.path / "cache").string()) == 4);
  CHECK(contains(out, "chmod 700 " + folder.string()));
  CHECK_FALSE(std::filesystem::exists(dir.path / "m.h5"));
  // Neither XDG_CACHE_HOME nor HOME: no shared fallback folder, but a message naming the variable to set.
  const auto old_fallback = std::filesystem::temp_directory_path() / "rollsim-cache";
  const bool existed = std::filesystem::exists(old_fallback);
  CHECK(test::run_binary(args, out, "env -u XDG_CACHE_HOME -u HOME") == 4);
  CHECK(contains(out, "set XDG_CACHE_HOME"));
  if (!existed) CHECK_FALSE(std::filesystem::exists(old_fallback));
}

TEST_CASE("model cache: a folder or a library owned by another user is refused, the user's own and root's are not") {
  struct stat st {};
  st.st_mode = S_IFDIR | 0700;
  st.st_uid = geteuid() == 0 ? 65534 : geteuid() + 1;  // "nobody" when run as root
  const std::string other = message_of([&] { symbolic::check_private("/some/cache/rollsim", st, true); });
  CHECK(contains(other, "/some/cache/rollsim"));
  CHECK(contains(other, "belongs to the user with uid " + std::to_string(st.st_uid)));
  CHECK(contains(other, "XDG_CACHE_HOME"));
  st.st_mode = S_IFREG | 0644;
  CHECK(contains(message_of([&] { symbolic::check_private("/c/model-x.so", st, false); }), "belongs to the user"));
  st.st_uid = geteuid();
  CHECK(message_of([&] { symbolic::check_private("/c/model-x.so", st, false); }).empty());
  st.st_uid = 0;  // root's (an administrator's read-only cache)
  CHECK(message_of([&] { symbolic::check_private("/c/model-x.so", st, false); }).empty());
  st.st_mode = S_IFLNK | 0777;
  CHECK(contains(message_of([&] { symbolic::check_private("/c/model-x.so", st, false); }), "not a regular file"));
  if (geteuid() == 0) {
    // As root (CI): the real folder, handed to nobody.
    FreshCache cache;
    SampleModel m("owned by nobody");
    REQUIRE(symbolic::CompiledKernels::load(m.source, m.key));
    REQUIRE(chown(cache.folder().c_str(), 65534, 65534) == 0);
    CHECK(contains(message_of([&] { symbolic::CompiledKernels::find(m.key); }), "belongs to the user with uid 65534"));
    REQUIRE(chown(cache.folder().c_str(), 0, 0) == 0);
    REQUIRE(chown(symbolic::library_path(m.key).c_str(), 65534, 65534) == 0);
    CHECK(contains(message_of([&] { symbolic::CompiledKernels::find(m.key); }), "belongs to the user with uid 65534"));
  }
}

TEST_CASE("model cache: a cache of root's that others can only read serves its models to another user") {
  if (geteuid() != 0) {  // needs root, to build the cache and to run as another user
    MESSAGE("not run: needs root");
    return;
  }
  FreshCache cache;
  SampleModel m("shared"), missing("not in the shared cache");
  REQUIRE(symbolic::CompiledKernels::load(m.source, m.key));
  REQUIRE(chmod(cache.dir.path.c_str(), 0755) == 0);
  REQUIRE(chmod(cache.folder().c_str(), 0755) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 0;
    try {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
      auto lib = symbolic::CompiledKernels::find(m.key);
      if (!lib || !lib->from_cache() || SampleModel::value(*lib) != 19.0) code |= 1;
      const std::string why = message_of([&] { symbolic::CompiledKernels::load(missing.source, missing.key); });
      if (!contains(why, "set XDG_CACHE_HOME to a writable folder")) code |= 2;
    } catch (...) {
      code |= 4;
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 1: not loaded, 2: no clear message for a model it lacks, 4: an exception
}

TEST_CASE("model cache: a planted library without the model's digest is compiled again and never run") {
  FreshCache cache;
  SampleModel m("planted");
  const std::string marker = (cache.dir.path / "constructor-ran").string();
  const std::string path = symbolic::library_path(m.key);
  std::filesystem::create_directories(cache.folder());
  REQUIRE(chmod(cache.folder().c_str(), 0700) == 0);
  // Its constructor would leave a marker file; its kernel gives a wrong value. The second one even carries the
  // digest text, of another model.
  const std::string planted =
      "#include <cstdio>\n"
      "__attribute__((constructor)) static void planted() { std::FILE* f = std::fopen(\"" + marker +
      "\", \"w\"); if (f) std::fclose(f); }\n"
      "extern \"C\" void k_sum(const double*, double* out) { out[0] = -1; }\n";
  for (const std::string& extra :
       {std::string(),
        "extern \"C\" const char rollsim_kernels_digest[] = \"" +
            symbolic::embedded_digest_text(symbolic::library_digest("another model")) + "\";\n"}) {
    compile_planted(planted + extra, path);
    CHECK(symbolic::CompiledKernels::find(m.key) == nullptr);
    CHECK_FALSE(std::filesystem::exists(marker));
    auto lib = symbolic::CompiledKernels::load(m.source, m.key);
    REQUIRE(lib);
    CHECK_FALSE(lib->from_cache());  // compiled again, replacing the planted file
    CHECK(lib->library_path() == path);
    CHECK(SampleModel::value(*lib) == 19.0);
    CHECK_FALSE(std::filesystem::exists(marker));
    lib.reset();
  }
  // The control: loaded directly, the planted library's constructor does leave the marker.
  const std::string direct = (cache.dir.path / "direct.so").string();
  compile_planted(planted, direct);
  void* h = dlopen(direct.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  CHECK(std::filesystem::exists(marker));
  dlclose(h);
  std::filesystem::remove(marker);
  // A symbolic link at the library's name is not followed: refused, naming it.
  std::filesystem::remove(path);
  std::filesystem::create_symlink(cache.dir.path / "elsewhere.so", path);
  CHECK(contains(message_of([&] { symbolic::CompiledKernels::find(m.key); }), "is a symbolic link"));
  CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("model cache: a symbolic link planted at a temporary name is not followed") {
  FreshCache cache;
  const std::string dir = cache.dir.path.string();
  const std::string victim = dir + "/victim.txt";
  std::ofstream(victim) << "the victim's file";
  std::filesystem::create_symlink(victim, dir + "/planted.cpp");
  std::filesystem::create_symlink(dir + "/absent.txt", dir + "/dangling.cpp");
  const std::vector<std::string> stems{"planted", "dangling", "fresh"};
  std::size_t next = 0;
  std::string path;
  const int fd = symbolic::create_private_file(dir, ".cpp", path, [&] { return stems.at(next++); });
  REQUIRE(fd >= 0);
  CHECK(write(fd, "new", 3) == 3);
  close(fd);
  CHECK(path == dir + "/fresh.cpp");
  CHECK(test::read_file(victim) == "the victim's file");
  CHECK_FALSE(std::filesystem::exists(dir + "/absent.txt"));
  CHECK(std::filesystem::is_symlink(dir + "/planted.cpp"));
  struct stat st;
  REQUIRE(lstat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // Every name taken: an error, not a followed link.
  next = 0;
  CHECK(contains(message_of([&] { symbolic::create_private_file(dir, ".cpp", path, [] { return "planted"; }); }),
                 "100 names were taken"));
  CHECK(test::read_file(victim) == "the victim's file");
  // The compilation's lock file: a link there is refused, not followed.
  SampleModel m("lock");
  std::filesystem::create_directories(cache.folder());
  REQUIRE(chmod(cache.folder().c_str(), 0700) == 0);
  std::filesystem::create_symlink(victim, cache.folder() + "/model-" + symbolic::library_digest(m.key) + ".lock");
  CHECK(contains(message_of([&] { symbolic::CompiledKernels::load(m.source, m.key); }), "symbolic link"));
  CHECK(test::read_file(victim) == "the victim's file");
}

TEST_CASE("model cache: two processes compiling the same model at once both succeed and load the same library") {
  FreshCache cache;
  SampleModel m("concurrent");
  int go[2], results[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(results) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(go[1]);
      char c;
      while (read(go[0], &c, 1) > 0) {
      }  // both start when the parent closes the pipe
      int code = 1;
      char line[128] = "failed\n";
      try {
        auto lib = symbolic::CompiledKernels::load(m.source, m.key);
        struct stat st;
        if (lib && SampleModel::value(*lib) == 19.0 && stat(lib->library_path().c_str(), &st) == 0) {
          std::snprintf(line, sizeof line, "%llu %d\n", static_cast<unsigned long long>(st.st_ino),
                        lib->from_cache() ? 1 : 0);
          code = 0;
        }
      } catch (...) {
      }
      if (write(results[1], line, std::strlen(line)) < 0) code = 2;
      _exit(code);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(results[1]);
  close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(results[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  close(results[0]);
  std::istringstream is(text);
  unsigned long long ino[2] = {0, 0};
  int cached[2] = {-1, -1};
  REQUIRE((is >> ino[0] >> cached[0] >> ino[1] >> cached[1]));
  CHECK(ino[0] == ino[1]);                // the same file
  CHECK(cached[0] + cached[1] == 1);      // compiled once: the other waited and loaded it
  struct stat st;
  REQUIRE(stat(symbolic::library_path(m.key).c_str(), &st) == 0);
  CHECK(st.st_ino == ino[0]);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(cache.folder())) ++files;
  CHECK(files == 1);
}

TEST_CASE("model cache: no scenario text reaches the compiler's command line or the source") {
  test::TempDir dir;
  // A compiler that records its arguments and the source it is given, then compiles with c++.
  const std::string record = (dir.path / "argv.txt").string(), copy = (dir.path / "source.cpp").string();
  const std::string script = dir.file("cxx.sh", "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + record +
                                                    "'; done\nfor a in \"$@\"; do last=\"$a\"; done\ncp \"$last\" '" +
                                                    copy + "'\nexec c++ \"$@\"\n");
  REQUIRE(chmod(script.c_str(), 0700) == 0);
  const std::string file =
      dir.file("m.toml",
               "model = \"lagrangian\"\n[parameters]\nmass_zqx = 1.0\nstiff_zqx = 4.0\n[coordinates]\npos_zqx = \"m\"\n"
               "[lagrangian]\nkinetic = \"1/2*mass_zqx*der(pos_zqx)^2\"\npotential = \"1/2*stiff_zqx*pos_zqx^2\"\n"
               "[simulation]\nt_end = 0.1\n");
  const std::string folder = (dir.path / "cache" / "rollsim").string();
  std::string out;
  REQUIRE(test::run_binary("run " + file + " -o " + (dir.path / "m.h5").string(), out,
                           "env XDG_CACHE_HOME=" + (dir.path / "cache").string() + " ROLLSIM_CXX=" + script) == 0);
  const std::string argv = test::read_file(record), source = test::read_file(copy);
  REQUIRE_FALSE(argv.empty());
  REQUIRE_FALSE(source.empty());
  CHECK_FALSE(contains(argv, "zqx"));
  CHECK_FALSE(contains(source, "zqx"));
  // Every argument is a fixed flag, -o, or a temporary file of the cache folder with a random name.
  const std::regex temporary(std::regex_replace(folder, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                             "/tmp-[0-9a-f]{16}\\.(so|cpp)");
  const std::vector<std::string> flags{"-std=c++17", "-O2", "-fPIC", "-shared", "-fno-semantic-interposition", "-o"};
  std::istringstream is(argv);
  for (std::string a; std::getline(is, a);) {
    CAPTURE(a);
    CHECK((std::find(flags.begin(), flags.end(), a) != flags.end() || std::regex_match(a, temporary)));
  }
  CHECK(contains(source, "rollsim_kernels_digest"));
}

}  // namespace rollsim

namespace rollsim {

namespace {

/// A kernel list big enough to be written in parts: a recurrence over six inputs whose every step makes new
/// subexpressions (sums, products, powers, the C library's functions) and reuses some of every earlier step (the
/// cosines and roots of the inputs), with outputs taken along the way; and a second kernel with a literal and an
/// input among its outputs. Each step uses the previous one once, so the expressions' trees stay small.
struct LongModel {
  std::vector<GiNaC::symbol> x{GiNaC::symbol("x0"), GiNaC::symbol("x1"), GiNaC::symbol("x2"),
                               GiNaC::symbol("x3"), GiNaC::symbol("x4"), GiNaC::symbol("x5")};
  std::vector<symbolic::Kernel> kernels;
  std::vector<GiNaC::ex> inputs;
  LongModel() {
    for (const auto& s : x) inputs.push_back(s);
    GiNaC::ex a = x[0];
    symbolic::Kernel k{"k_long", {}};
    for (int i = 0; i < 80; ++i) {
      a = GiNaC::sin(a * x[i % 6] + i) + GiNaC::cos(x[(i + 1) % 6]) * GiNaC::sqrt(1 + GiNaC::pow(x[(i + 2) % 6], 2)) +
          (i + 1) * GiNaC::pow(x[(i + 3) % 6], 3) / (2 + GiNaC::pow(x[(i + 4) % 6], 2)) + GiNaC::exp(-GiNaC::abs(x[(i + 5) % 6]) * i);
      if (i % 5 == 0) k.outputs.push_back(a * x[(i + 1) % 6]);
    }
    kernels.push_back(k);
    kernels.push_back({"k_mixed", {GiNaC::ex(2.5), x[3], a - x[1], GiNaC::atan2(a, x[2])}});
  }
};

std::size_t count_of(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::vector<std::string> folder_entries(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(folder)) names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("model cache: a kernel in parts and units gives the same doubles as in one function") {
  FreshCache cache;
  const LongModel m;
  const symbolic::SplitOptions whole{1000000, 1000000}, tiny{7, 40};
  const std::string one = symbolic::generate_source(m.kernels, m.inputs, whole);
  const std::string split = symbolic::generate_source(m.kernels, m.inputs, tiny);
  CHECK(count_of(one, "_part") == 0);
  CHECK(count_of(one, "translation unit 1 of 1") == 1);
  // The long kernel has far more than 7 statements: parts of 7, spread over several units.
  CHECK(count_of(split, "k_long_part") > 20);
  CHECK(count_of(split, "rollsim: next translation unit") >= 5);
  CHECK(symbolic::library_digest("long model", whole) != symbolic::library_digest("long model", tiny));
  auto lib_one = symbolic::CompiledKernels::load(one, "long model", whole);
  auto lib_split = symbolic::CompiledKernels::load(split, "long model", tiny);
  REQUIRE(lib_one);
  REQUIRE(lib_split);
  CHECK(lib_one->library_path() != lib_split->library_path());
  // Nothing but the two libraries is left in the folder.
  CHECK(folder_entries(cache.folder()).size() == 2);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  const std::size_t n_long = m.kernels[0].outputs.size();
  std::size_t compared = 0, differing = 0;
  double worst_vs_ginac = 0;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> in(6);
    for (auto& v : in) v = u(rng);
    for (const auto& k : m.kernels) {
      std::vector<double> a(k.outputs.size(), -1.0), b(k.outputs.size(), -2.0);
      lib_one->get(k.name)(in.data(), a.data());
      lib_split->get(k.name)(in.data(), b.data());
      for (std::size_t i = 0; i < a.size(); ++i, ++compared) differing += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
      if (trial == 0 && k.name == "k_long") {
        // An independent value: GiNaC's own evaluation of the same expressions at the same point.
        GiNaC::exmap at;
        for (std::size_t j = 0; j < 6; ++j) at[m.x[j]] = in[j];
        for (std::size_t i = 0; i < a.size(); ++i) {
          const double g = GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(k.outputs[i].subs(at))).to_double();
          worst_vs_ginac = std::max(worst_vs_ginac, std::abs(a[i] - g) / (1 + std::abs(g)));
        }
      }
    }
  }
  CHECK(compared == 50 * (n_long + 4));
  CHECK(differing == 0);
  CHECK(worst_vs_ginac < 1e-12);
}

TEST_CASE("model cache: a translation unit that fails to compile keeps its source, names it, and leaves nothing else") {
  FreshCache cache;
  const LongModel m;
  const symbolic::SplitOptions tiny{7, 40};
  std::string source = symbolic::generate_source(m.kernels, m.inputs, tiny);
  // The third unit is broken: it ends in text that is not C++.
  const std::string marker = "// rollsim: next translation unit\n";
  std::size_t third = source.find(marker);
  REQUIRE(third != std::string::npos);
  third = source.find(marker, third + 1);
  REQUIRE(third != std::string::npos);
  const std::size_t fourth = source.find(marker, third + 1);
  REQUIRE(fourth != std::string::npos);
  source.insert(fourth, "this is not C++ (broken_unit_zq)\n");
  std::string message;
  try {
    symbolic::CompiledKernels::load(source, "broken model", tiny);
  } catch (const symbolic::CompileError& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(contains(message, "compiling the model failed ("));
  CHECK(contains(message, "broken_unit_zq"));  // the compiler's message about the broken line
  const std::string kept_label = "the generated source is kept in ";
  const std::size_t at = message.find(kept_label);
  REQUIRE(at != std::string::npos);
  const std::string kept = message.substr(at + kept_label.size(), message.find(';', at) - at - kept_label.size());
  CHECK(contains(test::read_file(kept), "this is not C++ (broken_unit_zq)"));
  // The broken unit's source is the only file left: no other unit, object, log, library or lock.
  const std::vector<std::string> left = folder_entries(cache.folder());
  CHECK(left.size() == 1);
  CHECK(std::filesystem::path(kept).filename().string() == (left.empty() ? "" : left.front()));
  CHECK(symbolic::CompiledKernels::find("broken model", tiny) == nullptr);
}

TEST_CASE("model cache: a kernel in parts with a workspace too large for the stack (on the heap) is right") {
  // The geometric series x^5 + x^6 + ... + x^604: each power a temporary, all used by the one sum in the last part,
  // so the powers of the parts before the last (hundreds) are kept in the workspace, more than the 64 doubles this
  // split keeps on the stack. (The default, 16,384, needs a series 28 times as long, whose compile took 47 s of this
  // test's 48 s in a sanitizer tree.) At x = 1/2 the sum is 2 (x^5 - x^605) = 1/16 to within rounding.
  FreshCache cache;
  GiNaC::symbol x("x");
  GiNaC::ex sum = 0;
  for (int j = 5; j <= 604; ++j) sum += GiNaC::pow(x, j);
  symbolic::SplitOptions split;
  split.stack_workspace = 64;
  const std::string source = symbolic::generate_source({{"k_series", {sum}}}, {x}, split);
  CHECK(contains(source, "new double["));
  CHECK_FALSE(contains(symbolic::generate_source({{"k_series", {sum}}}, {x}), "new double["));
  auto lib = symbolic::CompiledKernels::load(source, "series model", split);
  REQUIRE(lib);
  const double in[1] = {0.5};
  double out[1] = {0.0};
  lib->get("k_series")(in, out);
  CHECK(std::abs(out[0] - 0.0625) <= 1e-15);
}

}  // namespace rollsim
