// Small conversions of command-line values, shared by every framegate binary.
#pragma once

#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace fg {

// "a, b,,c" -> {"a", "b", "c"}: comma-separated items, blanks trimmed, empties dropped.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

// Options give durations in (fractional) seconds.
inline std::chrono::milliseconds seconds_to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000.0)));
}

}  // namespace fg
