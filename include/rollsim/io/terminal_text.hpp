#pragma once
/// \file Text for the terminal and for provenance: a command line that can be re-run, long values shortened.
#include <cstddef>
#include <string>

namespace rollsim {

/// `word` as one POSIX shell word: unchanged if it holds only safe characters, else in single quotes with
/// each ' written as '\''.
std::string shell_quote(const std::string& word);

/// A long text shortened for the terminal: the first and last `keep` characters (UTF-8 aware) with the count of
/// characters between them, e.g. "+-0+0… (2547 symbols) …-0+0" (the count is of the whole text). Texts of up to
/// 2 keep + 20 characters come back whole. `what` names the characters ("symbols", "characters").
std::string shorten(const std::string& text, std::size_t keep = 30, const std::string& what = "characters");

}  // namespace rollsim
