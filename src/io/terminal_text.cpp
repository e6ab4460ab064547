#include "rollsim/io/terminal_text.hpp"

#include <vector>

namespace rollsim {

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-+=./,:@%") == std::string::npos)
    return word;
  std::string q = "'";
  for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shorten(const std::string& text, std::size_t keep, const std::string& what) {
  // Character boundaries: every byte that does not continue a UTF-8 sequence starts a character.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  const std::size_t n = starts.size();
  if (n <= 2 * keep + 20) return text;
  return text.substr(0, starts[keep]) + "\u2026 (" + std::to_string(n) + " " + what + ") \u2026" +
         text.substr(starts[n - keep]);
}

}  // namespace rollsim
