// Line-level checks of text output (metrics expositions, logs).
#pragma once

#include <sstream>
#include <string>

namespace fg::test {

// True when `text` holds `line` as one whole line.
inline bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

}  // namespace fg::test
