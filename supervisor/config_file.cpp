#include "supervisor/config_file.hpp"

#include <fstream>
#include <stdexcept>
#include <string_view>

#include "supervisor/passthrough.hpp"

namespace fg::supervisor {

namespace {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string_view unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

std::vector<config_entry> read_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read config file '" + path + "'");
  std::vector<config_entry> entries;
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const auto where = path + ":" + std::to_string(number) + ": ";
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) throw std::runtime_error(where + "expected 'name = value'");
    std::string_view name = trim(line.substr(0, eq));
    if (name.substr(0, 2) == "--") name.remove_prefix(2);  // tolerate names copied from the command line
    if (!is_valid_option_name(name)) throw std::runtime_error(where + "bad option name '" + std::string(name) + "'");
    entries.push_back({std::string(name), std::string(unquote(trim(line.substr(eq + 1)))), number});
  }
  if (in.bad()) throw std::runtime_error("error reading config file '" + path + "'");
  return entries;
}

}  // namespace fg::supervisor
