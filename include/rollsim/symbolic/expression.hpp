#pragma once
/// \file Expressions of user models: text parsed into GiNaC expressions over named symbols, with the position
/// of every error inside the text.
///
/// Grammar (whitespace between tokens is free):
///   expr    := term (('+' | '-') term)*
///   term    := unary (('*' | '/') unary)*
///   unary   := ('+' | '-') unary | power
///   power   := primary ('^' unary)?          (right-associative: a^b^c = a^(b^c); -a^2 = -(a^2))
///   primary := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
/// Names: letters, digits and '_', not starting with a digit. The functions are those of functions();
/// `pi` is the constant; `t` is time. der(x) is the time derivative of coordinate x (allowed only where the
/// caller permits rates); der2(x) its second derivative (where the caller permits accelerations).
///
/// GiNaC's own parser reports no position for an error (line 0, column 0 for every error, as GiNaC 1.8.6
/// does), so this front end parses the text itself and builds the GiNaC expression; GiNaC then does the
/// algebra (differentiation, substitution, expansion).
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <ginac/ginac.h>

namespace rollsim::symbolic {

/// The GiNaC function behind step(z) (1 for z > 0, 0 for z < 0, 1/2 at 0, derivative 0), by its name in GiNaC.
inline constexpr const char* kStepFunctionName = "rollsim_step";
unsigned step_function_serial();

/// A number as an exponent lies in [-kMaxExponent, kMaxExponent] (exact powers are computed digit by digit,
/// and powers of sums are expanded where expressions are simplified).
inline constexpr int kMaxExponent = 64;
/// An exact number's numerator and denominator have at most this many bits: a number literal reaches
/// 10^400 (1329 bits), and 10^308, the end of double precision, has 1024.
inline constexpr int kMaxNumberBits = 1400;

/// An error inside an expression: the message and the 0-based offset of the offending character.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(std::size_t offset, const std::string& what) : std::runtime_error(what), offset(offset) {}
  std::size_t offset;
};

/// The names an expression may use.
struct NameTable {
  std::map<std::string, GiNaC::ex> symbols;  ///< parameters, coordinates, t
  std::map<std::string, GiNaC::ex> rates;    ///< coordinate name -> its rate symbol, for der(name)
  std::map<std::string, GiNaC::ex> accelerations;  ///< coordinate name -> its acceleration symbol, for der2(name)
  bool rates_allowed = true;                 ///< false: der() is an error (e.g. in a potential)
  std::string rates_forbidden_reason;        ///< said when der() appears where rates are not allowed
  bool accelerations_allowed = false;        ///< der2() is allowed (outputs and events only)
};

/// The functions an expression may call, with their number of arguments.
const std::vector<std::pair<std::string, int>>& functions();

/// Parse `text` with `names`. Throws ExpressionError with the offset of the problem.
GiNaC::ex parse_expression(const std::string& text, const NameTable& names);

}  // namespace rollsim::symbolic
