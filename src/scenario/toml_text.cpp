#include "rollsim/scenario/toml_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rollsim::toml_text {

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest of %.15g, %.16g and %.17g that reads back as v (%.15g keeps integers up to 1e15 in full,
  // "1000000000000"). std::to_chars with a precision writes what printf's %.*g writes, and from_chars reads
  // as strtod does, both without the locale and the stream machinery (a sweep formats a value per point).
  char buf[40];
  std::to_chars_result r{};
  for (int prec = 15; prec <= 17; ++prec) {
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, prec);
    double back = 0;
    std::from_chars(buf, r.ptr, back);
    if (back == v) break;
  }
  return std::string(buf, r.ptr);
}

std::string float_text(double v) {
  std::string s = number(v);
  // TOML wants a digit before the exponent's fraction part, which %g always gives; "1e+20" is valid TOML.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string integer_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string string_text(const std::string& s) {
  std::string r = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\r': r += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
          r += buf;
        } else {
          r += ch;
        }
    }
  }
  return r + "\"";
}

std::string key_text(const std::string& k) {
  if (k.empty()) return "\"\"";
  for (const char c : k)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return string_text(k);
  return k;
}

}  // namespace rollsim::toml_text
