#include "rollsim/symbolic/codegen.hpp"
#include "rollsim/core/error.hpp"
#include "rollsim/symbolic/expression.hpp"
#include "codegen_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

namespace rollsim::symbolic {

using GiNaC::ex;

namespace {

using detail::kGeneratorVersion;

std::string number_text(double v) {
  if (std::isnan(v)) return "(0.0/0.0)";
  if (std::isinf(v)) return v > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

/// How a statement refers to temporary k until its kernel is written: its number between the bytes 1 and 2, which
/// no other text of the source holds; write_kernel replaces it with the temporary's C++ name.
std::string temporary_ref(std::size_t k) { return "\x01" + std::to_string(k) + "\x02"; }

/// `text` with each temporary_ref(k) replaced by name(k) (and, with `used`, each k appended to it).
template <class Name>
std::string with_names(const std::string& text, const Name& name, std::vector<std::size_t>* used = nullptr) {
  std::string r;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x01') {
      r += text[i];
      continue;
    }
    const std::size_t end = text.find('\x02', i);
    const auto k = static_cast<std::size_t>(std::stoul(text.substr(i + 1, end - i - 1)));
    if (used) used->push_back(k);
    r += name(k);
    i = end;
  }
  return r;
}

/// The temporaries `text` refers to.
std::vector<std::size_t> temporaries_in(const std::string& text) {
  std::vector<std::size_t> v;
  with_names(text, [](std::size_t) { return std::string(); }, &v);
  return v;
}

/// One function of the generated source, with the number of statements it holds (the measure of its compile cost).
struct Piece {
  std::string text;
  std::size_t statements = 0;
};

/// The functions of the kernel `name`(in, out), which computes `statements` (statement k defines temporary k) and
/// sets out[i] to values[i]. A kernel of at most `part_size` statements is one function. A longer one is written
/// as parts of `part_size` statements, each its own function (hidden, not inlined) that reads in[] and the
/// workspace w[] and writes w[], and a driver, the exported kernel, that calls the parts in order and then sets
/// every output: a temporary used in a later part than its own, or by an output, is kept in w[] (a slot of its
/// own, written once, by its own part, before any later part runs), the others are locals of their part. Every
/// statement is the same expression as in the one-function form, so the results are the same doubles; no output
/// is written before every input is read, as in the one-function form. The driver comes first: it declares its
/// parts, so that each piece compiles in any translation unit. A workspace of more than `stack_workspace` doubles
/// is on the heap.
std::vector<Piece> write_kernel(const std::string& name, const std::vector<std::string>& statements,
                                const std::vector<std::string>& values, std::size_t part_size,
                                std::size_t stack_workspace) {
  const std::size_t n = statements.size();
  const auto local = [](std::size_t k) { return "t" + std::to_string(k); };
  std::ostringstream os;
  if (n <= part_size) {
    os << "extern \"C\" void " << name << "(const double* in, double* out) {\n";
    for (std::size_t k = 0; k < n; ++k) os << "  const double t" << k << " = " << with_names(statements[k], local) << ";\n";
    for (std::size_t i = 0; i < values.size(); ++i) os << "  out[" << i << "] = " << with_names(values[i], local) << ";\n";
    os << "  (void)in;\n}\n";
    return {{os.str(), n}};
  }
  const std::size_t parts = (n + part_size - 1) / part_size;
  const auto part_of = [part_size](std::size_t k) { return k / part_size; };
  std::vector<char> shared(n, 0);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j : temporaries_in(statements[k])) shared[j] |= part_of(j) != part_of(k);
  for (const auto& v : values)
    for (std::size_t j : temporaries_in(v)) shared[j] = 1;
  std::vector<std::size_t> slot(n, 0);
  std::size_t slots = 0;
  for (std::size_t k = 0; k < n; ++k)
    if (shared[k]) slot[k] = slots++;
  const auto named = [&](std::size_t k) { return shared[k] ? "w[" + std::to_string(slot[k]) + "]" : local(k); };
  const auto part_name = [&](std::size_t p) { return name + "_part" + std::to_string(p); };
  const auto part_signature = [&](std::size_t p) {
    return "extern \"C\" __attribute__((visibility(\"hidden\"), noinline)) void " + part_name(p) +
           "(const double* in, double* __restrict w)";
  };
  std::vector<Piece> pieces(1);
  for (std::size_t p = 0; p < parts; ++p) os << part_signature(p) << ";\n";
  os << "extern \"C\" void " << name << "(const double* in, double* out) {\n";
  const bool heap = slots > stack_workspace;
  os << (heap ? "  double* w = new double[" + std::to_string(slots) + "];\n" : "  double w[" + std::to_string(slots) + "];\n");
  for (std::size_t p = 0; p < parts; ++p) os << "  " << part_name(p) << "(in, w);\n";
  for (std::size_t i = 0; i < values.size(); ++i) os << "  out[" << i << "] = " << with_names(values[i], named) << ";\n";
  os << (heap ? "  delete[] w;\n" : "") << "}\n";
  pieces[0] = {os.str(), values.size()};
  for (std::size_t p = 0; p < parts; ++p) {
    std::ostringstream part;
    part << part_signature(p) << " {\n";
    const std::size_t end = std::min(n, (p + 1) * part_size);
    for (std::size_t k = p * part_size; k < end; ++k)
      part << (shared[k] ? "  " : "  const double ") << named(k) << " = " << with_names(statements[k], named) << ";\n";
    part << "  (void)in;\n  (void)w;\n}\n";
    pieces.push_back({part.str(), end - p * part_size});
  }
  return pieces;
}

/// The C library's functions the kernels call, declared rather than included: <cmath> alone takes about 0.3 s
/// of each compiler process (measured with g++ 12), and these are the same functions std::sin etc. name.
constexpr const char* kMathDeclarations =
    "extern \"C\" {\n"
    "double sin(double) noexcept; double cos(double) noexcept; double tan(double) noexcept;\n"
    "double asin(double) noexcept; double acos(double) noexcept; double atan(double) noexcept;\n"
    "double sinh(double) noexcept; double cosh(double) noexcept; double tanh(double) noexcept;\n"
    "double exp(double) noexcept; double log(double) noexcept; double fabs(double) noexcept;\n"
    "double sqrt(double) noexcept; double atan2(double, double) noexcept; double pow(double, double) noexcept;\n"
    "}\n";

class Emitter {
 public:
  explicit Emitter(const std::map<ex, int, GiNaC::ex_is_less>& inputs) : in_(inputs) {}

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
    std::string value = node(e);
    const std::string name = temporary_ref(statements_.size());
    statements_.push_back(std::move(value));
    memo_.emplace(e, name);
    return name;
  }

  /// The temporaries' values in the order computed: statement k defines temporary k and refers to earlier ones
  /// as temporary_ref(j).
  const std::vector<std::string>& statements() const { return statements_; }

 private:
  static std::string to_text(const ex& e) {
    std::ostringstream o;
    o << e;
    return o.str();
  }

  /// A hash of e that does not depend on the process: GiNaC orders the terms of sums and products by hashes
  /// that involve addresses, which differ from run to run; the emitted source orders them by this instead. That
  /// does not make the source the same every run: the same addresses steer GiNaC's derivation to different but
  /// equal expressions (the crank-and-slider's rod gives (x - r cos(theta))^2 in one process, (r cos(theta) - x)^2
  /// in another; with address randomisation off, setarch -R, every run gives the same source), so two processes
  /// can compile sources that round differently. The cache keeps the first one compiled.
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
          {"sin", "sin"},   {"cos", "cos"},   {"tan", "tan"},   {"asin", "asin"},
          {"acos", "acos"}, {"atan", "atan"}, {"sinh", "sinh"}, {"cosh", "cosh"},
          {"tanh", "tanh"}, {"exp", "exp"},   {"log", "log"},   {"abs", "fabs"}};
      if (auto u = unary.find(f); u != unary.end() && e.nops() == 1) return u->second + "(" + (*this)(e.op(0)) + ")";
      if (f == "atan2" && e.nops() == 2) return "atan2(" + (*this)(e.op(0)) + ", " + (*this)(e.op(1)) + ")";
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
      if (n == GiNaC::numeric(1, 2)) return "sqrt(" + b + ")";
      if (n == GiNaC::numeric(-1, 2)) return "1.0/sqrt(" + b + ")";
      if (n == GiNaC::numeric(3, 2)) return b + "*sqrt(" + b + ")";
      if (n == GiNaC::numeric(-3, 2)) return "1.0/(" + b + "*sqrt(" + b + "))";
    }
    return "pow(" + b + ", " + (*this)(expo) + ")";
  }

  const std::map<ex, int, GiNaC::ex_is_less>& in_;
  std::vector<std::string> statements_;
  std::map<ex, std::string, GiNaC::ex_is_less> memo_;
  std::map<ex, std::uint64_t, GiNaC::ex_is_less> keys_;
};

}  // namespace

std::string SplitOptions::text() const {
  return "parts of " + std::to_string(part_statements) + " statements, units of " + std::to_string(unit_statements) +
         ", a workspace of up to " + std::to_string(stack_workspace) + " doubles on the stack";
}

std::string generate_source(const std::vector<Kernel>& kernels, const std::vector<ex>& inputs,
                            const SplitOptions& split) {
  std::map<ex, int, GiNaC::ex_is_less> index;
  for (std::size_t k = 0; k < inputs.size(); ++k) index.emplace(inputs[k], static_cast<int>(k));
  // The pieces (whole kernels, drivers, parts) in order, packed into units of at most unit_statements statements
  // (a piece larger than that is a unit of its own).
  std::vector<std::string> units(1);
  std::size_t in_unit = 0;
  for (const auto& k : kernels) {
    Emitter emit(index);
    std::vector<std::string> values;
    for (const auto& e : k.outputs) values.push_back(emit(e));
    for (auto& piece : write_kernel(k.name, emit.statements(), values, std::max<std::size_t>(split.part_statements, 1),
                                    split.stack_workspace)) {
      if (in_unit > 0 && in_unit + piece.statements > split.unit_statements) {
        units.emplace_back();
        in_unit = 0;
      }
      units.back() += piece.text;
      in_unit += piece.statements;
    }
  }
  std::string source;
  for (std::size_t u = 0; u < units.size(); ++u)
    source += (u ? detail::kUnitMarker : "") + std::string("// Generated by rollsim (") + kGeneratorVersion +
              "): compiled evaluation of a user model, translation unit " + std::to_string(u + 1) + " of " +
              std::to_string(units.size()) + ".\n" + kMathDeclarations + units[u];
  return source;
}

}  // namespace rollsim::symbolic
