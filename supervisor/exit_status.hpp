// A waitpid() status in words, for the crash log.
#pragma once

#include <string>

namespace fg::supervisor {

// "exited with status 3", "killed by signal 9 (Killed)".
std::string describe_exit(int wait_status);

// Both children exit fg::config_error_exit (2) on a bad option or
// environment value, an unreadable secret file or a configured port that is
// taken; restarting them cannot help.
bool is_config_error(int wait_status);

}  // namespace fg::supervisor
