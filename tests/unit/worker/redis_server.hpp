// A throwaway redis-server for tests: 127.0.0.1 on a free port, no
// persistence, stopped by PID. Tests skip when redis-server is not
// installed (tools/setup.sh installs it).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

extern char** environ;

namespace fg::test {

class redis_server {
 public:
  static bool installed() { return ::access("/usr/bin/redis-server", X_OK) == 0; }

  redis_server() : port_(free_port()) {}
  // A node of a Redis Cluster listens on a second port, its own + 10000
  // (the cluster bus): both must be free, so the port is picked below the
  // ephemeral range (where the bus port of a free port may be taken).
  struct cluster_node_tag {};
  explicit redis_server(cluster_node_tag) : port_(free_cluster_port()) {}
  ~redis_server() { kill(); }
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // Starts it (again, on the same port) and waits until it answers PING.
  bool start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{
        "redis-server", "--port", std::to_string(port_), "--bind",  "127.0.0.1", "--save",   "",
        "--appendonly", "no",     "--loglevel",          "warning", "--logfile", "/dev/null"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawn(&pid_, "/usr/bin/redis-server", nullptr, nullptr, argv.data(), environ) != 0) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string pong = command({"PING"});
      if (pong == "PONG" || pong.starts_with("NOAUTH")) return true;  // up (maybe with --requirepass)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // SIGKILL, like a crash; waits for the process.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // SIGSTOP / SIGCONT: a server that keeps its connections open and answers
  // nothing (a hung host) until resumed.
  void freeze() const {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void thaw() const {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }

  // Runs one command on a fresh blocking connection; the reply as text
  // (integers in decimal, arrays joined by spaces), "" on failure.
  std::string command(const std::vector<std::string>& args) const {
    const timeval tv{1, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr || c->err != 0) {
      if (c != nullptr) redisFree(c);
      return "";
    }
    std::vector<const char*> argv;
    std::vector<std::size_t> len;
    for (const auto& a : args) {
      argv.push_back(a.data());
      len.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), len.data()));
    std::string out = text_of(r);
    if (r != nullptr) freeReplyObject(r);
    redisFree(c);
    return out;
  }

  // calls=N of `cmd` in INFO commandstats (0 when never called).
  std::uint64_t calls(const std::string& cmd) const {
    const std::string info = command({"INFO", "commandstats"});
    const std::string key = "cmdstat_" + cmd + ":calls=";
    const auto at = info.find(key);
    return at == std::string::npos ? 0 : std::stoull(info.substr(at + key.size()));
  }

 private:
  static std::string text_of(const redisReply* r) {
    if (r == nullptr) return "";
    switch (r->type) {
      case REDIS_REPLY_STRING:
      case REDIS_REPLY_STATUS:
      case REDIS_REPLY_ERROR: return std::string(r->str, r->len);
      case REDIS_REPLY_INTEGER: return std::to_string(r->integer);
      case REDIS_REPLY_ARRAY: {
        std::string out;
        for (std::size_t i = 0; i < r->elements; ++i) out += (i ? " " : "") + text_of(r->element[i]);
        return out;
      }
      default: return "";
    }
  }

  static std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    ::close(fd);
    return ntohs(a.sin_port);
  }

  // True when 127.0.0.1:port can be bound now.
  static bool bindable(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
  }

  static std::uint16_t free_cluster_port() {
    std::random_device rd;
    for (int attempt = 0; attempt < 200; ++attempt) {
      const auto port = static_cast<std::uint16_t>(10000 + rd() % 12768);
      if (bindable(port) && bindable(static_cast<std::uint16_t>(port + 10000))) return port;
    }
    return 0;
  }

  std::uint16_t port_;
  pid_t pid_ = -1;
};

}  // namespace fg::test
