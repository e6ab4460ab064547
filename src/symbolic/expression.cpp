#include "rollsim/symbolic/expression.hpp"

#include <cctype>
#include <cstdlib>

#include "rollsim/scenario/scenario.hpp"

namespace rollsim::symbolic {

using GiNaC::ex;

// step(z): 1 for z > 0, 0 for z < 0, 1/2 at 0, with derivative 0 (it switches between pieces that meet
// continuously, so its jump carries no impulse; docs/user-models.md).
namespace {
ex rs_step_eval(const ex& z) {
  if (GiNaC::is_a<GiNaC::numeric>(z) && GiNaC::ex_to<GiNaC::numeric>(z).is_real()) {
    const auto& n = GiNaC::ex_to<GiNaC::numeric>(z);
    return n.is_positive() ? ex(1) : n.is_zero() ? ex(GiNaC::numeric(1, 2)) : ex(0);
  }
  return GiNaC::function(step_function_serial(), z).hold();
}
ex rs_step_derivative(const ex&, unsigned) { return 0; }
}  // namespace

unsigned step_function_serial() {
  static const unsigned serial = GiNaC::function::register_new(
      GiNaC::function_options(kStepFunctionName, 1).eval_func(rs_step_eval).derivative_func(rs_step_derivative));
  return serial;
}

const std::vector<std::pair<std::string, int>>& functions() {
  static const std::vector<std::pair<std::string, int>> f{
      {"sin", 1},  {"cos", 1},  {"tan", 1},  {"asin", 1}, {"acos", 1}, {"atan", 1}, {"atan2", 2},
      {"sinh", 1}, {"cosh", 1}, {"tanh", 1}, {"exp", 1},  {"log", 1},  {"sqrt", 1}, {"abs", 1},
      {"step", 1}, {"der", 1},  {"der2", 1},
  };
  return f;
}

namespace {

class Parser {
 public:
  Parser(const std::string& text, const NameTable& names) : s_(text), names_(names) {}

  ex parse() {
    skip();
    if (pos_ == s_.size()) fail(pos_, "the expression is empty");
    ex e = expr();
    check_numbers(0, e);
    skip();
    if (pos_ != s_.size()) {
      if (s_[pos_] == ')') fail(pos_, "unbalanced ')': no '(' opens it");
      fail(pos_, "unexpected '" + std::string(1, s_[pos_]) + "' after a complete expression (an operator missing?)");
    }
    return e;
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const { throw ExpressionError(at, what); }

  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  ex expr() {
    ex e = term();
    for (;;) {
      if (eat('+')) e = e + term();
      else if (eat('-')) e = e - term();
      else return e;
    }
  }
  ex term() {
    ex e = unary();
    for (;;) {
      if (eat('*')) {
        if (pos_ < s_.size() && s_[pos_] == '*') fail(pos_ - 1, "'**' is not an operator here; write a^b for a power");
        e = e * unary();
      } else if (eat('/')) {
        const std::size_t at = pos_;
        ex d = unary();
        if (d.is_zero()) fail(at, "division by zero");
        e = e / d;
      } else {
        return e;
      }
    }
  }
  ex unary() {
    if (eat('-')) return -unary();
    if (eat('+')) return unary();
    return power();
  }
  ex power() {
    const std::size_t base_at = pos_;
    ex b = primary();
    if (eat('^')) {
      const std::size_t at = pos_;
      ex p = unary();
      if (b.is_zero() && GiNaC::is_a<GiNaC::numeric>(p) && GiNaC::ex_to<GiNaC::numeric>(p).is_negative())
        fail(at, "zero to a negative power");
      // GiNaC computes a power of exact numbers digit by digit, and expands powers of sums when it
      // simplifies (the linearity checks do): 3^(1e8), or any power once the rates in its exponent are
      // set to zero, would take hours. So exponents are bounded, and free of rates.
      if (GiNaC::is_a<GiNaC::numeric>(p)) {
        const auto& n = GiNaC::ex_to<GiNaC::numeric>(p);
        if (!n.is_real() || GiNaC::abs(n) > kMaxExponent)
          fail(at, "the exponent " + source(at) + " is out of range: a number as an exponent must lie in [-" +
                       std::to_string(kMaxExponent) + ", " + std::to_string(kMaxExponent) + "]");
      }
      for (const auto* table : {&names_.rates, &names_.accelerations})
        for (const auto& [name, symbol] : *table)
          if (p.has(symbol))
            fail(at, "an exponent may not depend on a rate or an acceleration (here der" +
                         std::string(table == &names_.rates ? "" : "2") + "(" + name + "))");
      check_numbers(base_at, b);
      ex r = GiNaC::pow(b, p);
      check_numbers(base_at, r);
      return r;
    }
    return b;
  }
  /// The text read since `from`, without surrounding blanks.
  std::string source(std::size_t from) const {
    std::string t = s_.substr(from, pos_ - from);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(t.begin());
    return "'" + t + "'";
  }
  /// Fails where an exact number in e has a numerator or a denominator over kMaxNumberBits: far outside
  /// double precision, and costly to carry through the derivation.
  void check_numbers(std::size_t at, const ex& e) const {
    for (auto it = e.preorder_begin(); it != e.preorder_end(); ++it) {
      if (!GiNaC::is_a<GiNaC::numeric>(*it)) continue;
      const auto& n = GiNaC::ex_to<GiNaC::numeric>(*it);
      for (const auto& part : {n.real(), n.imag()})
        if (part.is_rational() && (part.numer().int_length() > kMaxNumberBits || part.denom().int_length() > kMaxNumberBits))
          fail(at, "a number here exceeds 2^" + std::to_string(kMaxNumberBits) +
                       " in its numerator or denominator: out of double precision range (about 10^-308 to 10^308)");
    }
  }
  ex primary() {
    skip();
    if (pos_ == s_.size()) fail(pos_, "the expression ends where a number, a name or '(' was expected");
    const char c = s_[pos_];
    if (c == '(') {
      const std::size_t open = pos_++;
      ex e = expr();
      if (!eat(')')) fail(pos_ < s_.size() ? pos_ : open, "missing ')' for the '(' at position " + std::to_string(open + 1));
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    fail(pos_, "unexpected '" + std::string(1, c) + "' where a number, a name or '(' was expected");
  }
  ex number() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) ++pos_;
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      std::size_t p = pos_ + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) {
        pos_ = p;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      }
    }
    const std::string text = s_.substr(start, pos_ - start);
    if (std::count(text.begin(), text.end(), '.') > 1 || text == ".") fail(start, "malformed number '" + text + "'");
    // Exact where the text is: an integer or a decimal fraction becomes a rational, so that 1/2 and 0.5 agree.
    const auto e_at = text.find_first_of("eE");
    const std::string mant = text.substr(0, e_at);
    long exp10 = e_at == std::string::npos ? 0 : std::strtol(text.c_str() + e_at + 1, nullptr, 10);
    std::string digits;
    for (char d : mant)
      if (d == '.') exp10 -= static_cast<long>(mant.size() - mant.find('.') - 1);
      else digits += d;
    if (std::abs(exp10) > 400) fail(start, "the number '" + text + "' is out of double precision range");
    GiNaC::numeric v(digits.c_str());
    v = v * GiNaC::pow(GiNaC::numeric(10), GiNaC::numeric(exp10));
    return v;
  }
  ex name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    const std::string id = s_.substr(start, pos_ - start);
    skip();
    if (pos_ < s_.size() && s_[pos_] == '(') return call(id, start);
    if (id == "pi") return GiNaC::Pi;
    auto it = names_.symbols.find(id);
    if (it != names_.symbols.end()) return it->second;
    for (const auto& [f, n] : functions())
      if (f == id) fail(start, "'" + id + "' is a function: write " + id + "(...)");
    std::vector<std::string> known{"pi"};
    for (const auto& [k, v] : names_.symbols) known.push_back(k);
    std::string msg = "unknown name '" + id + "'";
    const std::string near = closest_match(id, known);
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    else msg += "; names allowed here: parameters, coordinates, t, pi";
    fail(start, msg);
  }
  ex call(const std::string& id, std::size_t start) {
    int arity = -1;
    for (const auto& [f, n] : functions())
      if (f == id) arity = n;
    if (arity < 0) {
      std::vector<std::string> fs;
      for (const auto& [f, n] : functions()) fs.push_back(f);
      std::string msg = "unknown function '" + id + "'";
      const std::string near = closest_match(id, fs);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      else {
        msg += "; allowed functions:";
        for (const auto& f : fs) msg += " " + f;
      }
      fail(start, msg);
    }
    ++pos_;  // '('
    if (id == "der" || id == "der2") return derivative(start, id == "der2");
    std::vector<ex> args;
    do args.push_back(expr());
    while (eat(','));
    if (!eat(')')) fail(pos_, "missing ')' after the arguments of " + id + "()");
    if (static_cast<int>(args.size()) != arity)
      fail(start, id + "() takes " + std::to_string(arity) + " argument" + (arity == 1 ? "" : "s") + ", not " +
                      std::to_string(args.size()));
    const ex& a = args[0];
    if (id == "sin") return GiNaC::sin(a);
    if (id == "cos") return GiNaC::cos(a);
    if (id == "tan") return GiNaC::tan(a);
    if (id == "asin") return GiNaC::asin(a);
    if (id == "acos") return GiNaC::acos(a);
    if (id == "atan") return GiNaC::atan(a);
    if (id == "atan2") return GiNaC::atan2(a, args[1]);
    if (id == "sinh") return GiNaC::sinh(a);
    if (id == "cosh") return GiNaC::cosh(a);
    if (id == "tanh") return GiNaC::tanh(a);
    if (id == "exp") return GiNaC::exp(a);
    if (id == "log") return GiNaC::log(a);
    if (id == "sqrt") return GiNaC::sqrt(a);
    if (id == "step") return GiNaC::function(step_function_serial(), a);
    return GiNaC::abs(a);  // "abs"
  }
  ex derivative(std::size_t start, bool second) {
    const std::string f = second ? "der2()" : "der()";
    if (!names_.rates_allowed) fail(start, f + " is not allowed here: " + names_.rates_forbidden_reason);
    if (second && !names_.accelerations_allowed)
      fail(start, "der2() (an acceleration) is allowed only in outputs and events; the equations of motion give it");
    skip();
    const std::size_t at = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    const std::string id = s_.substr(at, pos_ - at);
    const auto& table = second ? names_.accelerations : names_.rates;
    auto it = table.find(id);
    if (it == table.end()) {
      std::vector<std::string> coords;
      for (const auto& [k, v] : table) coords.push_back(k);
      std::string msg = f + " takes one coordinate name";
      msg += id.empty() ? "" : ", and '" + id + "' is not a coordinate";
      const std::string near = id.empty() ? "" : closest_match(id, coords);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      fail(at, msg);
    }
    if (!eat(')')) fail(pos_, f + " takes one coordinate name: missing ')'");
    return it->second;
  }

  const std::string& s_;
  const NameTable& names_;
  std::size_t pos_ = 0;
};

}  // namespace

ex parse_expression(const std::string& text, const NameTable& names) { return Parser(text, names).parse(); }

}  // namespace rollsim::symbolic
