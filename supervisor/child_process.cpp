#include "supervisor/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fg::supervisor {

namespace {

// NUL-terminated pointer arrays for execve; the strings stay owned here.
struct c_strings {
  std::vector<std::string> owned;
  std::vector<char*> pointers;

  char** get() {
    pointers.clear();
    for (auto& s : owned) pointers.push_back(s.data());
    pointers.push_back(nullptr);
    return pointers.data();
  }
};

c_strings make_env(const std::vector<std::pair<std::string, std::string>>& overrides) {
  c_strings env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [name, value] : overrides) replaced = replaced || name == key;
    if (!replaced) env.owned.emplace_back(entry);
  }
  for (const auto& [name, value] : overrides) env.owned.push_back(name + "=" + value);
  return env;
}

// posix_spawnp's PATH search, done before fork so the child only calls execve.
std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  throw std::system_error(ENOENT, std::generic_category(), "PATH lookup of " + program);
}

// In the forked child: hands errno to the parent and ends.
[[noreturn]] void report_and_exit(int report_fd) {
  const int err = errno;
  [[maybe_unused]] const auto n = ::write(report_fd, &err, sizeof err);
  ::_exit(127);
}

// Runs in the forked child, so it makes only async-signal-safe calls. An error
// before execve reaches the parent as an errno on `report_fd` (close-on-exec,
// so a successful execve closes it with nothing written).
[[noreturn]] void exec_child(pid_t supervisor, int output_fd, int report_fd, const char* program, char** argv,
                             char** envp) {
  const auto fail = [report_fd]() { report_and_exit(report_fd); };
  // The children end with the supervisor even when it is SIGKILLed and gets no
  // chance to stop them: the kernel sends SIGTERM (a gateway drains, a worker
  // and redis-server stop) when the supervisor's thread exits. A supervisor
  // gone before prctl took effect has already reparented us: end here.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) fail();
  if (::getppid() != supervisor) ::_exit(127);
  // Its own process group, so that a terminal's Ctrl-C reaches only the
  // supervisor, which then stops the children in order.
  if (::setpgid(0, 0) != 0) fail();
  // Signals the supervisor catches or ignores must not stay ignored in the child.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail();
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // dup2 clears the flag on fd 0
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(output_fd, 1) < 0 || ::dup2(output_fd, 2) < 0) fail();
  ::execve(program, argv, envp);
  report_and_exit(report_fd);
}

// Forks a child that runs exec_child; argv and envp are built by the caller,
// so the child allocates nothing. Returns the pid once execve has
// succeeded, or throws with the errno that stopped it.
pid_t fork_exec(const std::string& program, char** argv, char** envp, int output_fd) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(supervisor, output_fd, report[1], program.c_str(), argv, envp);
  int error = pid < 0 ? errno : 0;
  ::close(report[1]);
  if (pid > 0) {
    ssize_t n = 0;
    do {
      n = ::read(report[0], &error, sizeof error);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(sizeof error)) error = 0;  // end of file: execve succeeded
  }
  ::close(report[0]);
  if (error == 0) return pid;
  if (pid > 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  throw std::system_error(error, std::generic_category(), "execve");
}

}  // namespace

child_process::child_process(boost::asio::io_context& io, child_spec spec) : io_(io), spec_(std::move(spec)) {}

child_process::~child_process() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void child_process::spawn(line_relay::line_handler on_line, line_relay::closed_handler on_output_closed) {
  // Close-on-exec: no child may inherit another child's pipe, or that pipe
  // would never reach end of file.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  c_strings argv;
  argv.owned.push_back(spec_.program);
  argv.owned.insert(argv.owned.end(), spec_.args.begin(), spec_.args.end());
  c_strings env = make_env(spec_.env);

  pid_t pid = -1;
  try {
    pid = fork_exec(find_program(spec_.program), argv.get(), env.get(), fds[1]);
  } catch (const std::system_error& e) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(e.code(), "cannot start " + spec_.program);
  }
  ::close(fds[1]);  // the child holds the only write end now
  pid_ = pid;
  started_ = std::chrono::steady_clock::now();
  relay_ = line_relay::start(io_, fds[0], std::move(on_line), std::move(on_output_closed));
}

bool child_process::output_open() const { return relay_ && relay_->open(); }

void child_process::send_signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> child_process::try_reap() {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return std::nullopt;
  pid_ = -1;
  return status;
}

}  // namespace fg::supervisor
