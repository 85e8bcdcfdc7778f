#include "supervisor/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fg::supervisor {

namespace {

// NUL-terminated pointer arrays for posix_spawn; the strings stay owned here.
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

void check(int rc, const char* what) {
  if (rc != 0) throw std::system_error(rc, std::generic_category(), what);
}

// RAII for the posix_spawn attribute and file-action objects.
struct spawn_setup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};

  explicit spawn_setup(int output_fd) {
    check(posix_spawnattr_init(&attr), "posix_spawnattr_init");
    check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init");
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    // Signals the supervisor catches or ignores must not stay ignored in the child.
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
    check(posix_spawnattr_setsigmask(&attr, &none), "posix_spawnattr_setsigmask");
    check(posix_spawnattr_setsigdefault(&attr, &defaults), "posix_spawnattr_setsigdefault");
    check(posix_spawnattr_setpgroup(&attr, 0), "posix_spawnattr_setpgroup");
    check(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP),
          "posix_spawnattr_setflags");
    check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "posix_spawn_file_actions_addopen");
    check(posix_spawn_file_actions_adddup2(&actions, output_fd, 1), "posix_spawn_file_actions_adddup2");
    check(posix_spawn_file_actions_adddup2(&actions, output_fd, 2), "posix_spawn_file_actions_adddup2");
  }
  ~spawn_setup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
};

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
  int rc = 0;
  {
    spawn_setup setup(fds[1]);
    rc = ::posix_spawnp(&pid, spec_.program.c_str(), &setup.actions, &setup.attr, argv.get(), env.get());
  }
  ::close(fds[1]);  // the child holds the only write end now
  if (rc != 0) {
    ::close(fds[0]);
    throw std::system_error(rc, std::generic_category(), "cannot start " + spec_.program);
  }
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
