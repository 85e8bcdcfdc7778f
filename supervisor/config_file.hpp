// The --config file: one `name = value` per line, `#` starts a comment line,
// blank lines are ignored, names are the long option names without dashes.
// The format is what --print-config writes, so its output can be saved and
// loaded again.
//
// Why not CLI11's own set_config() (CLI11 2.1.2, Debian 12): it reads the
// same lines but cannot keep this file's contract.
//  - It runs before the environment, and an option the file set is no longer
//    read from its variable: FRAMEGATE_X would lose to the file, not win.
//  - Names it does not know (allow_config_extras capture) come back without
//    their values, so pass-through entries could not reach the children.
//  - A value is cut at `#` and split at spaces or commas unless quoted
//    (`static-dir = /srv/my site` becomes two values), and a line without
//    `=` is taken as a flag set to true; errors name no line.
// The gateway and the worker take no --config: they read flags and their
// FRAMEGATE_* variables, which is how the supervisor hands them this file's
// pass-through entries.
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
