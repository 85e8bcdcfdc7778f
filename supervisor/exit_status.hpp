// A waitpid() status in words, for the crash log.
#pragma once

#include <string>

namespace fg::supervisor {

// "exited with status 3", "killed by signal 9 (Killed)".
std::string describe_exit(int wait_status);

// Both children exit 2 on a bad option or environment value; restarting them
// cannot help.
bool is_usage_error(int wait_status);

}  // namespace fg::supervisor
