#include "supervisor/exit_status.hpp"

#include <cstring>

#include <sys/wait.h>

#include "common/config_error.hpp"

namespace fg::supervisor {

std::string describe_exit(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")" +
           (WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return "ended with wait status " + std::to_string(wait_status);
}

bool is_config_error(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == config_error_exit;
}

}  // namespace fg::supervisor
