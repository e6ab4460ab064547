#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/symbolic/expression.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace rollsim::symbolic {

using GiNaC::ex;

namespace {

/// Bumped whenever the generated code's meaning changes, so that old cache entries are not reused.
constexpr const char* kGeneratorVersion = "rollsim-kernels-2";
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

/// Run argv (no shell), stderr and stdout to `log`; the exit status, or -1 if it could not start.
int run_program(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
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
  return std::filesystem::temp_directory_path().string() + "/rollsim-cache";
}

std::string content_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
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

std::string library_path_for(const std::string& key) {
  const std::string id =
      content_hash(std::string(kGeneratorVersion) + "\n" + compiler_command() + "\n" + kFlags + "\n" + key);
  return cache_directory() + "/model-" + id + ".so";
}

}  // namespace

std::shared_ptr<CompiledKernels> CompiledKernels::find(const std::string& key) {
  const std::string path = library_path_for(key);
  if (!std::filesystem::exists(path)) return nullptr;
  std::shared_ptr<CompiledKernels> k(new CompiledKernels());
  k->path_ = path;
  k->from_cache_ = true;
  k->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!k->handle_)
    throw CompileError(std::string("cannot load the compiled model ") + path + ": " + dlerror() +
                       "; delete it to have it compiled again");
  return k;
}

std::shared_ptr<CompiledKernels> CompiledKernels::load(const std::string& source, const std::string& key) {
  const std::string dir = cache_directory();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw CompileError("cannot create the model cache folder " + dir + ": " + ec.message() +
                       "; set XDG_CACHE_HOME to a writable folder");
  const std::string path = library_path_for(key);
  const auto start = std::chrono::steady_clock::now();
  const std::string stem = dir + "/tmp-" + content_hash(key) + "-" + std::to_string(getpid());
  {
    std::ofstream out(stem + ".cpp");
    out << source;
    if (!out) throw CompileError("cannot write " + stem + ".cpp; set XDG_CACHE_HOME to a writable folder");
  }
  std::vector<std::string> argv = split_words(compiler_command());
  for (auto& f : split_words(kFlags)) argv.push_back(f);
  argv.insert(argv.end(), {"-o", stem + ".so", stem + ".cpp"});
  const int rc = run_program(argv, stem + ".log");
  if (rc != 0) {
    std::string log;
    {
      std::ifstream in(stem + ".log");
      std::stringstream ss;
      ss << in.rdbuf();
      log = ss.str();
    }
    if (log.size() > 2000) log = log.substr(0, 2000) + "\n[...]";
    std::filesystem::remove(stem + ".so", ec);
    std::filesystem::remove(stem + ".log", ec);
    if (rc < 0 || rc == 127) {
      std::filesystem::remove(stem + ".cpp", ec);
      throw CompileError("the C++ compiler '" + argv[0] +
                         "' could not be started; a user model is compiled at run time: install g++ (Debian: apt-get "
                         "install g++) or name a compiler in ROLLSIM_CXX");
    }
    throw CompileError("compiling the model failed (" + quoted_for_message(argv) + ", exit " + std::to_string(rc) +
                       "); the generated source is kept in " + stem + ".cpp; the compiler said:\n" + log);
  }
  std::filesystem::rename(stem + ".so", path, ec);  // atomic: a concurrent run sees all of it or none
  if (ec) throw CompileError("cannot move the compiled model into " + path + ": " + ec.message());
  std::filesystem::remove(stem + ".cpp", ec);
  std::filesystem::remove(stem + ".log", ec);
  auto k = find(key);
  if (!k) throw CompileError("the compiled model " + path + " vanished from the cache while loading it");
  k->from_cache_ = false;
  k->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return k;
}

}  // namespace rollsim::symbolic
