// What a client write costs the gateway's thread: one send() per socket,
// or send_batch's groups in one io_uring submission each. A thousand
// loopback TCP connections, 64 bytes to each per iteration in groups of
// 1, 4 or 16, with a ring and without; the receivers are drained outside
// the timing. On a VM whose system calls are dear, the ring's per-send
// time falls with the group (docs/BENCHMARKS.md, "Thirteenth step").
//
//   build/bin/framegate-micro-bench --benchmark_filter=client_writes
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include <benchmark/benchmark.h>

#include "gateway/net/send_batch.hpp"

namespace {

constexpr int kConnections = 1000;

// kConnections loopback TCP connections: the server ends written, the
// client ends drained.
class loopback_connections {
 public:
  loopback_connections() {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener, kConnections) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("no loopback listener");
    for (int i = 0; i < kConnections; ++i) {
      const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      // Non-blocking: EINPROGRESS, and the handshake completes as it is accepted below.
      if (c < 0 || (::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS))
        throw std::runtime_error("no loopback connection");
      const int s = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
      if (s < 0) throw std::runtime_error("out of descriptors");
      const int one = 1;
      ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      clients_.push_back(c);
      servers_.push_back(s);
    }
    ::close(listener);
  }
  ~loopback_connections() {
    for (const int fd : clients_) ::close(fd);
    for (const int fd : servers_) ::close(fd);
  }
  loopback_connections(const loopback_connections&) = delete;
  loopback_connections& operator=(const loopback_connections&) = delete;

  [[nodiscard]] const std::vector<int>& servers() const noexcept { return servers_; }
  void drain() const {
    std::array<char, 65536> buf{};
    for (const int fd : clients_) {
      while (::recv(fd, buf.data(), buf.size(), 0) > 0) {
      }
    }
  }

 private:
  std::vector<int> clients_, servers_;
};

// Arguments: the group (sockets per submission), and 1 for a ring.
void bm_client_writes(benchmark::State& state) {
  const auto group = static_cast<std::size_t>(state.range(0));
  fg::gateway::send_batch batch(state.range(1) != 0);
  if (state.range(1) != 0 && !batch.uses_ring()) {
    state.SkipWithError(batch.ring_problem().c_str());
    return;
  }
  const loopback_connections connections;
  const std::array<std::uint8_t, 64> message{};
  std::size_t calls = 0;
  for (auto _ : state) {
    const auto& fds = connections.servers();
    for (std::size_t i = 0; i < fds.size(); i += group) {
      batch.clear();
      for (std::size_t j = i; j < i + group && j < fds.size(); ++j) batch.add(fds[j], message);
      calls += batch.submit();
      for (std::size_t k = 0; k < batch.size(); ++k) {
        if (batch.result(k).bytes != message.size()) state.SkipWithError("a socket did not take a small write");
      }
    }
    state.PauseTiming();
    connections.drain();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kConnections);
  state.counters["sends_per_call"] =
      static_cast<double>(state.iterations()) * kConnections / static_cast<double>(calls == 0 ? 1 : calls);
}

}  // namespace

BENCHMARK(bm_client_writes)
    ->ArgNames({"group", "ring"})
    ->Args({1, 0})
    ->Args({16, 0})
    ->Args({4, 1})
    ->Args({16, 1})
    ->MeasureProcessCPUTime()
    ->UseRealTime();
