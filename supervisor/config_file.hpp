// The --config file: one `name = value` per line, `#` starts a comment line,
// blank lines are ignored, names are the long option names without dashes.
// The format is what --print-config writes, so its output can be saved and
// loaded again.
#pragma once

#include <string>
#include <vector>

namespace fg::supervisor {

struct config_entry {
  std::string name;
  std::string value;
  int line = 0;  // for error messages
};

// Throws std::runtime_error (file cannot be read, "FILE:LINE: ..." for a bad
// line). A value wrapped in matching double or single quotes loses them.
std::vector<config_entry> read_config_file(const std::string& path);

}  // namespace fg::supervisor
