#include "rollsim/scenario/parameters.hpp"

#include "rollsim/scenario/toml_text.hpp"

namespace rollsim::parameters_detail {

std::string with_default_text(const std::string& description, const std::string& shown) {
  static const std::string mark = "{default}";
  std::string s = description;
  for (auto at = s.find(mark); at != std::string::npos; at = s.find(mark, at + shown.size()))
    s.replace(at, mark.size(), shown);
  return s;
}

std::string number_text(double v) { return toml_text::number(v); }

std::size_t find_name(const std::vector<std::string>& paths, const std::string& name, const std::string& what) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    const std::string leaf = path.substr(path.find('.') + 1);
    if (name == path || name == leaf) return i;
    names.push_back(leaf);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  std::string msg = "'" + name + "' is not one of the " + what + "; allowed names: " + list;
  const std::string near = closest_match(name, names);
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  throw InputError(msg);
}

}  // namespace rollsim::parameters_detail
