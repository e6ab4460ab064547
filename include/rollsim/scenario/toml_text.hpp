#pragma once
/// \file TOML text written by the program (the resolved scenario in every result file, a sweep point's
/// overrides): one writer, so that every value reads back as the same value.
#include <string>

namespace rollsim::toml_text {

/// The first of %.15g, %.16g, %.17g that reads back as the same double: "0.02", "1e-12", "1000000000000",
/// "inf", "nan". Not always a TOML float ("1" is an integer): see float_text.
std::string number(double v);

/// A double as a TOML float literal: number() plus ".0" where it would read as an integer ("1.0", "-0.0").
std::string float_text(double v);

/// A whole double as a TOML integer literal ("3"), for an integer key.
std::string integer_text(double v);

/// A TOML basic string: quotes, backslashes and every control character (U+0000-U+001F and DEL, U+007F)
/// escaped.
std::string string_text(const std::string& s);

/// A key: bare when it is made of A-Z a-z 0-9 _ -, else quoted.
std::string key_text(const std::string& k);

}  // namespace rollsim::toml_text
